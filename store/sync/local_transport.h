// Sync with a repository on this machine (a path or a file:// URL) through
// kistore's own pack writer instead of libgit2's local transport, private to
// store/ (pull.cc, push.cc).
//
// libgit2 1.5's local fetch walks every tree the store has (and takes each
// object under the id the remote claims), and its local push packs through
// the packbuilder (walking the remote head's whole tree)
// and then moves the remote's branch unconditionally, so that two
// concurrent pushes could lose one. Here only what the new commits bring is
// copied (new_objects.h), as one pack written straight into the receiving
// repository's objects/pack (for a fetch, the pull's quarantine), and a
// push moves the remote's branch by compare-and-swap.
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

// Copies what `local` brings beyond `theirs` (the remote's branch head as
// listed; none: it has no such branch) from `repo` into the remote
// repository's objects/pack, then moves its `branch` from `theirs` to
// `local` by compare-and-swap. Returns 0, or GIT_EMODIFIED when the branch
// moved meanwhile (nothing else changed, the pack stays: it is unreferenced).
// Records what it sent in `conn`.
int push_local(git_repository* repo, Connection& conn, const std::string& branch, const git_oid& local,
               const std::optional<git_oid>& theirs);

}  // namespace kistore
