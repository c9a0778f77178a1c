// What a Store (store/core/store.h) asks of libgit2's repository beyond its
// objects: making and finding one, the branch HEAD names, where a branch
// points and the tree of its commit, moving the branch by compare-and-swap,
// kistore's settings in git's config, and a fresh look at the object
// database after another writer's pack. Private to store/.
//
// Every failure is Error(kIO) "<what>: <libgit2's message>", with `what`
// given by the caller (it names the store), so that the Store's messages
// stay as they were when it called libgit2 itself.
//
// Thread-safety: as libgit2's: `repo` belongs to one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "store/git/git.h"

namespace kistore::git {

class RepoObjects;

// Whether libgit2 finds a repository at `dir` itself (not above it).
bool repository_exists(const std::string& dir);

// A new bare repository at `dir` (made with its parents, never over an
// existing one) whose HEAD names refs/heads/`branch`, with `description`.
// Error(kIO) "<dir>: creating the store: <why>".
std::shared_ptr<RepoObjects> create_bare_repository(const std::string& dir, const std::string& branch,
                                                    const std::string& description);

// The reference HEAD names ("refs/heads/main"); nullopt when HEAD is
// detached. Error(kIO) "<what>: <why>" when HEAD cannot be read.
std::optional<std::string> head_target(git_repository* repo, const std::string& what);

// Where the reference `name` points, not resolved: nullopt when there is no
// such reference (libgit2's error cleared); the all-zero id, which names no
// object, for a symbolic reference. Error(kIO) "<what>: <why>" when it
// cannot be read.
std::optional<git_oid> ref_id(git_repository* repo, const std::string& name, const std::string& what);
// The name of the first reference matching `glob` ("refs/heads/*"), or
// nullopt. Error(kIO) "listing references: <why>".
std::optional<std::string> first_ref_matching(git_repository* repo, const char* glob);


// The id `text` starts with (its first 40 characters, hex digits in either
// case, as libgit2 reads them); false when they are not one.
bool oid_from_hex(const std::string& text, git_oid& out);

// After `name` moved: its loose file, its log and the folders libgit2 made
// for them get a shared repository's group bits (store/edge/files.h
// share_under); nothing in a repository that is not shared. Never fails.
void share_ref_files(git_repository* repo, const std::string& name);

// How move_branch went.
enum class BranchMove {
  kMoved,
  kRaced,   // the branch had moved, or appeared, since `from`
  kLocked,  // another writer held its lock
};
// Moves the reference `name` to `to` if it still points at `from`, or, with
// `from` null, if it does not exist yet (move_ref: checked under the
// reference's lock), recording `log`. kRaced or kLocked (libgit2's error
// cleared) when another writer came first. Error(kIO) "<what>: <why>" for
// any other failure.
BranchMove move_branch(git_repository* repo, const std::string& name, const git_oid& to, const git_oid* from,
                       const std::string& log, const std::string& what);

// What a clone lacks that kistore needs, in a few words for the person, or
// "" for a whole repository: a shallow clone (git's `shallow` file: its
// history stops at commits fetched without their parents) or a partial one
// (extensions.partialClone, or a remote marked promisor: objects left on
// the server). Never fails: a config that cannot be read says nothing here
// (opening the store reports it).
std::string incomplete_clone(git_repository* repo);

// The git folder of the clone when `repo` is a linked worktree of it (`git
// worktree add`: its own git folder holds none of the clone's objects, which
// kistore's readers and writers look for there), else "".
std::string linked_worktree_of(git_repository* repo);

// Makes the repository's object database look again for packs and loose
// objects written since it last looked (other writers'). False when the
// database cannot be opened (nothing was refreshed).
bool refresh_objects(git_repository* repo);

// The value of `key` ("kistore.<name>") in the repository's git config, as it
// was when read; nullopt when it has none. Error(kIO) "<where>: reading
// config: <why>" when the config cannot be read.
std::optional<std::string> config_value(git_repository* repo, const std::string& key, const std::string& where);
// Sets `key` in the repository's own git config. Error(kIO) "<where>:
// opening config: <why>" or "<where>: writing config: <why>".
void set_config_value(git_repository* repo, const std::string& key, const std::string& value,
                      const std::string& where);
void set_config_number(git_repository* repo, const std::string& key, std::int32_t value, const std::string& where);

}  // namespace kistore::git
