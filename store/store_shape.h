// Whether a git repository is a kistore store, before anything writes to it.
//
// `--store` may name any directory, and a user's own repository must never be
// written by mistake (SPEC §2: "a git repository whose tree is not a kistore
// store is refused, never written"). The rule:
//  - the branch HEAD names has no commits: the repository must hold no branch
//    or tag (refs/heads/*, refs/tags/*) and HEAD name refs/heads/main, as `kistore init` or a
//    clone of an empty store leave it; the first commit then touches no
//    branch of the user's.
//  - the branch has commits: its tree must not be empty (kistore never commits
//    an empty tree; a user's `git commit --allow-empty` often is one), and its
//    root holds only kistore's top-level names (objects/, refs/,
//    dictionaries/ as trees, FORMAT as a blob), objects/ only sha256/, refs/
//    only kistore's index folders. A plain `git clone` of a store passes.
// A repository that breaks the rule but whose root holds some of kistore's
// names is a store that was tampered with: it opens, so that `verify` can
// report every problem, but no writer commits onto it. One that holds none of
// them is not opened at all. Only the root and two folders are read: the
// check costs the same at any size.
//
// Thread-safety: reads `repo` (or the trees given) only; as safe as libgit2
// reads on one repository.
#pragma once

#include <functional>
#include <string>

struct git_repository;

namespace kistore {
namespace git {
class RawTree;
}

struct StoreShape {
  std::string refuse_open;   // why no command may use it ("its branch master holds README.md"), or ""
  std::string refuse_write;  // why no writer may commit onto it (refuse_open included), or ""
};

// The verdict on the repository whose HEAD names `branch` ("refs/heads/main").
// Throws Error(kIO) when the repository cannot be read.
StoreShape store_shape(git_repository* repo, const std::string& branch);
// The same verdict on a branch with commits whose root tree is `root`;
// subtree(name) gives the root's folder `name` (null when it is not a tree).
// Error(kCorruption) when a tree is malformed, or as subtree throws.
StoreShape store_shape(const git::RawTree& root, const std::function<const git::RawTree*(const char*)>& subtree,
                       const std::string& branch);

}  // namespace kistore
