// Sync with a repository on this machine (a path or a file:// URL) through
// kistore's own pack writer instead of libgit2's local transport, private to
// store/ (pull.cc, push.cc).
//
// libgit2 1.5's local fetch walks every tree the store has (and takes each
// object under the id the remote claims), and its local push packs through
// the packbuilder (walking the remote head's whole tree)
// and then moves the remote's branch unconditionally, so that two
// concurrent pushes could lose one. Here only what the new commits bring is
// copied (new_objects.h), as one pack written straight into the pull's
// quarantine. A push goes through the receiving repository's own
// receive-pack, as git push's does.
//
// Errors: Error(kRemote) when the remote's repository cannot be opened or
// refuses the push (its branch is checked out in a work tree, or cannot be
// moved); Error(kIO) when the pack cannot be written.
//
// Thread-safety: one thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "refs/problem.h"
#include "store/git/quarantine_odb.h"
#include "store/edge/process.h"
#include "store/git/remote_receive_pack.h"
#include "store/sync/connection.h"

namespace kistore {

// Copies what `head` of the remote repository at the connection's URL
// brings that the store `store` lacks into one new pack in `quarantine`,
// object by object as incoming_walk.h's CopyingSource reads them: each
// bounded before it is read and rehashed, its tree's modes, names and depth
// checked. Reports "receiving" progress through `conn`. Returns the number
// of objects copied; when the walk refuses something, `problems` says what
// and nothing is written. Moves no reference.
std::size_t fetch_local(git_repository* store, git::Quarantine& quarantine, const Connection& conn,
                        const git_oid& head, const std::string& branch, std::vector<Problem>& problems);

// Pushes `local` to the remote repository on this machine through its own
// `git receive-pack` (store/git/remote_receive_pack.h), found and started
// as `process` says: its hooks, receive.fsckObjects and
// core.sharedRepository apply, as to git push. The request (the update of
// `branch` from `theirs`, the remote's head as listed, none when it has no
// such branch, to `local`, and a pack of what `local` brings beyond
// `theirs`) is written to a temporary file first. Reports "sending" through
// `conn` as it goes (progress). Error(kRemote) when git cannot be found or
// started, or does not report; the caller reads the report (LocalPush) as
// a network push's.
struct LocalPush {
  git::ReceivePack::Result result;  // its report, and its stderr's lines as `messages`
  std::size_t count = 0;            // objects sent
  std::uint64_t bytes = 0;          // bytes of the request
};
LocalPush push_local(git_repository* repo, Connection& conn, const std::string& branch, const git_oid& local,
                     const std::optional<git_oid>& theirs, const ProcessContext& process);

}  // namespace kistore
