// Trees read through libgit2's git_tree, for the readers whose answers and
// errors must be libgit2's own: a Snapshot where kistore's raw trees
// (raw_tree.h) cannot be read (list, walk, the object digests), and the
// store's shape check (store/core/store_shape.h). Private to store/.
//
// Everything else reads trees raw (raw_tree.h): libgit2 parses every entry
// of a tree into a heap object. What these functions add is libgit2's
// verdict on a damaged tree, word for word, as kistore always reported it.
//
// Thread-safety: as libgit2's: `repo` belongs to one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/git/git.h"

namespace kistore::git {

// An entry of a tree as libgit2 reads it.
struct TreeItem {
  std::string name;
  bool tree = false;          // git_tree_entry_type is GIT_OBJECT_TREE
  std::uint32_t filemode = 0;  // git_tree_entry_filemode: 0100644 for any plain file
};

// The entries of the tree `tree`, in its order. Error(kIO) "<what>: <why>"
// when libgit2 cannot read it.
std::vector<TreeItem> tree_items(git_repository* repo, const git_oid& tree, const std::string& what);
// As tree_items; nullopt (libgit2's error cleared) when it cannot be read.
std::optional<std::vector<TreeItem>> find_tree_items(git_repository* repo, const git_oid& tree);
// The entries of the folder `name` of the tree `tree`; nullopt when `tree`
// has no entry `name` that is a tree. Error(kIO) "reading the tree <name>:
// <why>" when that folder's tree cannot be read, or "<what>: <why>" when
// `tree` itself cannot.
std::optional<std::vector<TreeItem>> folder_items(git_repository* repo, const git_oid& tree, const char* name,
                                                  const std::string& what);

// The tree of the commit `commit`; nullopt (libgit2's error cleared) when
// libgit2 cannot read it as a commit.
std::optional<git_oid> find_commit_tree(git_repository* repo, const git_oid& commit);

// The names in the folder `dir` ("" the root) of the tree `root`, in tree
// order, looked up a folder at a time (so a damaged tree is named by its
// own path); empty when there is no such folder. Error(kIO) "reading the
// head tree: <why>" for the root, "reading <folder>: <why>" for a folder on
// the way.
std::vector<std::string> folder_names(git_repository* repo, const git_oid& root, std::string_view dir);

// Calls fn(path, bytes) for every blob below the folder `dir` of the tree
// `root` (null: none), depth first in tree order, and other(path) (when
// given) for entries that are neither blobs nor trees. Error(kIO) "reading
// the head tree: <why>" or "reading <path>: <why>" naming what libgit2
// cannot read.
void walk_tree_blobs(git_repository* repo, const git_oid* root, std::string_view dir,
                     const std::function<void(const std::string&, std::string_view)>& fn,
                     const std::function<void(const std::string&)>& other);

// Calls fn(a + b + c) for every entry c of every folder b of every folder a
// of the folder `dir` of the tree `root` (null: none), in tree order: the
// names of objects/sha256's entries, joined. Error(kIO) as walk_tree_blobs
// on the way to `dir`, "<what>: <why>" for a folder below it.
void for_each_nested_name(git_repository* repo, const git_oid* root, std::string_view dir, const std::string& what,
                          const std::function<void(const std::string&)>& fn);

}  // namespace kistore::git
