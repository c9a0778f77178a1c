// The commit-reading door: what the rooms above git/ know of a repository's
// commits (history, verify), through one interface, so that none of them
// calls libgit2 and a unit test can hand them a repository made in memory
// (tests/store/git/memory_commits.h), as libgit2's own tests fake their
// object-database backends.
//
// A CommitGraph offers: a commit as a value (CommitInfo: its id, tree,
// parents, author, committer time, message and summary); its signature and
// the bytes the signature covers; a walk of the ancestors of some commits,
// in an order, with the ancestors of other commits hidden; whether one
// commit descends from another; the repository's trees (a TreeReader) and
// its blobs, bounded. Commits are named by CommitId (objects/commit_id.h);
// trees and blobs by git_oid, as the TreeReader names them.
//
// repository_commits() is the implementation over a libgit2 repository.
// Its answers, orders and error messages are libgit2's, word for word: a
// walk that meets a commit it cannot read fails before it visits any (as
// libgit2 prepares a sorted walk), and a commit is no descendant of itself
// (as git_graph_descendant_of says).
//
// Thread-safety: one thread at a time, as the repository it reads.
#pragma once

#include <git2.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "objects/commit_id.h"
#include "store/git/incoming_walk.h"
#include "store/git/raw_tree.h"

namespace kistore::git {

// Between the door's CommitId and libgit2's git_oid (no libgit2 call).
inline git_oid to_oid(const CommitId& id) {
  git_oid out;
  std::memcpy(out.id, id.bytes().data(), CommitId::kSize);
  return out;
}
inline CommitId to_commit_id(const git_oid& id) { return CommitId::from_bytes(id.id); }
// The commit id `text` names (CommitId::parse). Error(kIO) "not a git object
// id: "<text>"" otherwise.
CommitId parse_commit_id(const std::string& text);

// A commit, read.
struct CommitInfo {
  CommitId id;
  git_oid tree{};
  std::vector<CommitId> parents;  // in the commit's order; the first is the first parent
  std::string author_name, author_email;
  std::int64_t author_time = 0;   // seconds since the epoch
  int author_offset_minutes = 0;
  std::int64_t committer_time = 0;  // seconds since the epoch
  std::string message;  // everything after the header, trailers included
  std::string summary;  // the first paragraph, its lines joined by spaces (git_commit_summary)
};

// A commit's SSH (or GPG) signature, armored, and the exact bytes it signs
// (the commit without its gpgsig header); both empty for an unsigned commit.
struct CommitSignature {
  std::string signature;
  std::string payload;
};

enum class WalkOrder {
  kAny,              // whatever order the repository finds cheapest
  kTopological,      // every commit before its parents
  kTimeTopological,  // topological, and otherwise newest (committer time) first
};

// A walk of ancestors: every commit reachable from `from` (themselves
// included) and from none of `hidden`.
struct AncestorWalk {
  std::vector<CommitId> from;
  std::vector<CommitId> hidden;
  WalkOrder order = WalkOrder::kAny;
  std::string what = "walking history";  // names the walk in its errors
};

class CommitGraph {
 public:
  virtual ~CommitGraph() = default;

  // The commit `id`; nullopt when it cannot be read or is no commit, with
  // `*why` (when given) saying why (libgit2's message).
  virtual std::optional<CommitInfo> find(const CommitId& id, std::string* why = nullptr) = 0;
  // The commit `id`. Error(kIO) "reading commit <hex>: <why>" when find has none.
  CommitInfo read(const CommitId& id);

  // The commit's signature and signed bytes; both empty when it is unsigned
  // or cannot be read. Never fails.
  virtual CommitSignature signature(const CommitId& id) = 0;

  // Calls visit(id) for each commit of `walk`, in its order, until visit
  // returns false. Error(kIO) "<what>: <why>" when a commit of `from` or
  // `hidden` cannot be read. Returns "" when the walk ended (or visit stopped
  // it), else why it stopped early (a commit below could not be read);
  // libgit2's walk then visits none.
  virtual std::string walk(const AncestorWalk& walk, const std::function<bool(const CommitId&)>& visit) = 0;

  // Whether `commit` descends from `ancestor` (false when they are the same
  // commit); nullopt when it cannot tell (a commit cannot be read).
  virtual std::optional<bool> descends_from(const CommitId& commit, const CommitId& ancestor) = 0;

  // The best common ancestor of `a` and `b` (git_merge_base: one that no
  // other common ancestor descends from); nullopt when they have none or it
  // cannot be found. Never fails.
  virtual std::optional<CommitId> merge_base(const CommitId& a, const CommitId& b) = 0;

  // A reader of the repository's trees, with `options` (its packs are
  // ignored: the door reads through its own source). Errors as TreeReader's.
  virtual std::unique_ptr<TreeReader> trees(TreeReader::Options options) = 0;

  // The bytes of the blob `id`; nullopt when it is no blob or is longer than
  // `max` (read no further than its header then). Error(kIO) "reading blob
  // <id>: <why>" when it cannot be read.
  virtual std::optional<std::string> blob(const git_oid& id, std::size_t max) = 0;
};

// The door over the libgit2 repository `repo`, which must outlive it.
// Error(kIO) when its object database cannot be opened.
std::unique_ptr<CommitGraph> repository_commits(git_repository* repo);

// The shape of the tree of commit `commit` of the repository whose git
// folder `repo` has (check_tree_shape), read through a repository handle of
// its own, so that it may run on a thread of its own beside other readers
// of `repo`. Error(kIO) when that handle cannot be opened or the commit
// cannot be read.
WalkResult check_commit_tree_shape(git_repository* repo, const CommitId& commit, const std::string& label);

}  // namespace kistore::git
