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
#include <optional>
#include <string>
#include <vector>

#include "refs/problem.h"

struct git_repository;
struct git_oid;

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

// For a remote's branch `branch` at `commit` (in `repo`) whose shape was
// refused: when the commit's root holds none of kistore's top-level names,
// the problem to report first ("not a kistore store: the remote's main holds
// README.md … and nothing of kistore's"); else nullopt (as for a tree that
// cannot be read: the caller reports that).
std::optional<Problem> not_a_store(git_repository* repo, const git_oid& commit, const std::string& branch);

// `problems` (of the remote's shape), led by `summary` when there is one and
// then cut to its first two, so that a repository that is no store is one
// line and two examples, not a line per file.
void lead_with(std::optional<Problem> summary, std::vector<Problem>& problems);

}  // namespace kistore
