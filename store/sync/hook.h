// The server side of a push (SPEC §2 "Hostile input"): what git's
// receive-pack asks a pre-receive hook, answered with the checks a pull
// makes in its quarantine (`kistore hook pre-receive`, cli/cmd_hook.cc).
//
// git's receive-pack holds a push's objects in a quarantine folder of its
// own (GIT_QUARANTINE_PATH, an objects folder below the repository's) while
// its pre-receive hook runs, and moves them in only when the hook exits 0.
// check_push reads the repository with that folder beside its objects and
// judges each ref update:
//   - only the store's branch (the one HEAD names) may be updated; another
//     ref, a deleted branch or a history that does not contain the old head
//     (a forced push) is refused;
//   - every object the new commits bring is read and rehashed, its mode,
//     name, depth and size checked (store/git/incoming_walk.h), and every new
//     commit's change to the index and the levels judged against the signed
//     history and the server store's own trust list (store/sync/incoming.h),
//     as a pull would before taking them.
// So a stock `git push` of a README, of a tree kistore cannot read, or of a
// level no controller signed is refused at the server, and every kistore
// store that pulls from it stays whole.
//
// Errors: Error(kIO) when the repository or the quarantine cannot be read.
//
// Thread-safety: one call at a time per repository.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "objects/ssh_signature.h"
#include "refs/problem.h"

namespace kistore {

// One line of what receive-pack gives a pre-receive hook on its standard
// input: "<old id> <new id> <ref>" (40 zeros for none).
struct RefUpdate {
  std::string old_id, new_id, ref;
};
// The lines of `text`, each "<old> <new> <ref>". Error(kInvalidInput)
// naming the line for one that is not.
std::vector<RefUpdate> parse_ref_updates(const std::string& text);

struct PushVerdict {
  std::vector<Problem> problems;  // empty: take the push
  std::size_t commits = 0;        // new commits checked
  std::size_t objects = 0;        // objects read and rehashed
};

// Judges `updates` to the repository whose git folder is `gitdir`, whose
// pushed objects wait in the objects folder `quarantine` ("" when git gave
// none: they are then among the repository's own), against `trust` (the
// server store's controllers).
PushVerdict check_push(const std::string& gitdir, const std::string& quarantine, const std::vector<RefUpdate>& updates,
                       const std::vector<AllowedSigner>& trust);

}  // namespace kistore
