// What store/sync/ asks of a repository beyond a remote connection
// (remote_connection.h), the quarantine (quarantine_odb.h) and the commit
// door (commit_graph.h): whether an object is there, a branch moved by
// compare-and-swap, the commits a pull brings, the merge base, HEAD, and the
// second handle a push packs through.
//
// Errors: as each function says; Error(kIO) carries libgit2's message.
//
// Thread-safety: as the repository's.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/git/git.h"

namespace kistore::git {

// Closes a repository handle (out of line, so that its owners call no libgit2).
struct RepositoryCloser {
  void operator()(git_repository* repo) const;
};
using OwnedRepository = std::unique_ptr<git_repository, RepositoryCloser>;

// Whether the repository has the object `id`. Never fails.
bool has_object(git_repository* repo, const git_oid& id);

// Moves the reference `name` from `from` (null: it must not exist) to `to`
// by compare-and-swap (move_ref). Returns 0; GIT_EMODIFIED, GIT_EEXISTS or
// GIT_ELOCKED when another writer came first; else libgit2's code.
int compare_and_swap_ref(git_repository* repo, const std::string& name, const git_oid& to, const git_oid* from,
                         const std::string& log);

// The commits `incoming` reaches that `hidden` (may be null) does not,
// parents before children. Error(kIO) "walking the incoming history: …"
// when `incoming` cannot be read, "walking history: …" for `hidden`.
std::vector<git_oid> commits_to_take(git_repository* repo, const git_oid& incoming, const git_oid* hidden);

// Points HEAD at the branch `ref`. Error(kIO) "<what>: …" on failure.
void set_head(git_repository* repo, const std::string& ref, const std::string& what);

// The repository whose git folder is `gitdir` (bare or not: no search
// upwards). Error(kIO) "<what>: <why>".
OwnedRepository open_repository(const std::string& gitdir, const std::string& what);
// Makes the objects of the folder `objects` (an objects folder: loose
// objects and pack/, as git's receive-pack quarantine holds them) readable
// through `repo` beside its own, for this handle only. Error(kIO).
void add_object_folder(git_repository* repo, const std::string& objects, const std::string& what);

// A second handle on `repo` (reopened from its git folder), for a push to
// pack through with settings of its own. Error(kIO) "<what>: …".
OwnedRepository reopen(git_repository* repo, const std::string& what);
// Gives the handle `packer` a config of its repository's own file and the
// file `settings` (for this handle only: git's commands keep theirs).
// Error(kIO) "<label>: reading config: …" or "<label>: reading <settings>: …".
void use_settings_file(git_repository* packer, const std::string& settings, const std::string& label);

}  // namespace kistore::git
