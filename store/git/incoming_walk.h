// What the commits of a pull bring, read and checked before anything else
// uses it, private to store/.
//
// A remote's commits, trees and blobs may be made by an attacker. Before the
// index checks (sync's IncomingChecker) parse a single tree, IncomingWalk
// reads every commit the store does not have, from the remote's head down to
// the commits the store has, and for each one every tree and blob its tree
// holds that its first parent's tree does not (subtrees with equal ids and
// modes are skipped, so the cost follows what is new, not the store's size).
// Each object is read through an ObjectSource that bounds its size before
// reading it and rehashes it (git's SHA-1 over "<type> <size>\0" + bytes)
// before its bytes are used. The walk refuses, naming the commit and path:
//
//   - an object that is missing, of another type than its tree says, larger
//     than PackLimits allows for its type, or whose bytes have another id;
//   - a tree entry whose mode is not 100644 (a file) or 40000 (a folder):
//     executables, links and submodules have no place in a store;
//   - an entry name that is empty, ".", "..", or holds a "/";
//   - a path more than kMaxTreeDepth folders deep (a tree 100,000 levels deep
//     is refused after reading 17 of them: no recursion follows the input);
//   - a commit whose text does not start with its tree and parents.
//
// Each problem's kind is one of verify's (refs/problem.h).
//
// Two sources: QuarantineSource reads a quarantine's repository after a
// network fetch (its objects came through IncomingPack; a missing one is the
// remote's fault); CopyingSource reads a repository on this machine (a path
// or file:// remote) and writes every object the store lacks, rehashed, into
// a PackWriter in the quarantine: nothing is taken under the id the remote
// claims, and no more bytes than PackLimits::max_inflated_bytes in all.
//
// Thread-safety: one thread at a time; sources and walks are independent.
#pragma once

#include <git2.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "refs/problem.h"
#include "store/git/git.h"
#include "store/git/objwrite.h"
#include "store/git/pack_indexer.h"
#include "store/git/packread.h"

namespace kistore::git {

// Why an object cannot be taken: its kind (object-corrupt: missing,
// unreadable, of another type, too large, or bytes with another id; a
// commit's: history-missing) and what was expected and found. The walk adds
// the commit and the path.
struct ObjectRefusal {
  ProblemKind kind;
  std::string detail;
};

// An object's bytes, shared: a source may keep them (CopyingSource keeps the
// trees it copied) without copying them for every reader.
using ObjectBytes = std::shared_ptr<const std::string>;

class ObjectSource {
 public:
  virtual ~ObjectSource() = default;
  // Reads object `id`, which its referrer says is a `type`, into `*out`
  // (or, with `out` null, only makes sure it is there and is one, copying it
  // when the source copies). Bounds its size by PackLimits before reading and
  // rehashes what it reads. Returns a refusal, or nullopt when all is well.
  // Local failures throw Error(kIO).
  virtual std::optional<ObjectRefusal> read(const git_oid& id, git_object_t type, ObjectBytes* out) = 0;
  // Whether the store has `id` (its objects are trusted: the walk stops there).
  virtual bool in_store(const git_oid& id) = 0;
  // For an `id` in_store: a refusal when the store's object is not a `type`
  // (a remote's tree may name the store's tree as a blob, or its blob as a
  // folder), else nullopt.
  virtual std::optional<ObjectRefusal> stored_as(const git_oid& id, git_object_t type) = 0;
};

// What the walk found: problems name the store path (or the commit id, for
// a commit) and say "commit <12 hex>: …"; a mode, a name or a depth outside
// the store's shape is a layout problem (SPEC §2), an object that cannot be
// taken is object-corrupt, a commit that cannot be read history-missing.
// What a walk found wrong, finer than its ProblemKind, for a caller that
// treats some faults apart (verify leaves submodules to its own check, and
// reports a tree's order here): matched by this code, never by the text.
enum class WalkFault {
  kUnreadable,   // an object missing, of another type, too large, or not hashing to its id
  kBadCommit,    // a commit that does not start with its tree and parents
  kTreeOrder,    // a tree lists an entry out of order or twice
  kTreeFormat,   // a tree's bytes are no tree
  kBadName,      // an entry named "", ".", ".." or holding "/"
  kBadMode,      // an entry whose mode is neither 100644 nor 40000 (nor 160000)
  kSubmodule,    // an entry of mode 160000
  kTooDeep,      // a path past kMaxTreeDepth
  kEmptyTree,    // a folder with nothing in it (kistore writes none; git keeps none in a work tree)
};

struct WalkResult {
  std::vector<git_oid> commits;   // new to the store, oldest first (for a linear history)
  std::size_t objects = 0;        // commits, trees and blobs new to the store, each once
  std::vector<Problem> problems;  // empty: everything holds
  std::vector<WalkFault> faults;  // faults[i] is what problems[i] is, finer than its kind
  bool too_deep = false;          // a path went past kMaxTreeDepth (its problem is among them)
};

// Walks what `head` brings that the store lacks, through `source`. Stops
// after `max_problems` problems. `progress(objects)` is called now and then.
WalkResult walk_incoming(ObjectSource& source, const git_oid& head, std::size_t max_problems = 50,
                         const std::function<void(std::size_t)>& progress = nullptr);

// Checks the shape of one tree and everything below it (modes, names,
// depth, order, each tree rehashed), reading no blob: what verify needs of
// a store's head tree before it walks it. Problems name the path; `label`
// takes the place of "commit <id>" in their detail.
WalkResult check_tree_shape(ObjectSource& source, const git_oid& tree, const std::string& label,
                            std::size_t max_problems = 50);

// Reads one repository's objects: whole stored objects through a PackReader
// of its packs first (no libgit2 machinery: most of kistore's objects), else
// through libgit2, each bounded by PackLimits before it is read.
class ObjectReader {
 public:
  ObjectReader(git_repository* repo, const char* what, const PackLimits& limits);
  // Into `out` (replaced): a refusal when it is missing, unreadable, of
  // another type or too large; not rehashed (the caller decides).
  std::optional<ObjectRefusal> read(const git_oid& id, git_object_t type, std::string& out);
  // Whether the repository holds `id`, as its packs' indexes and loose
  // object folders were when first asked (one listing, no system call per
  // object: every new object a pull brings is a miss). An object another
  // writer added meanwhile is then copied again, which costs a copy, never
  // a wrong answer.
  bool has(const git_oid& id);
  // A refusal when the object `id` it holds is not a `type` (its header
  // only; an object it cannot read is left to read, nullopt here).
  std::optional<ObjectRefusal> check_type(const git_oid& id, git_object_t type);

 private:
  void list_loose();
  Odb odb_;
  std::string gitdir_;
  PackReader packs_;
  std::optional<std::unordered_set<git_oid, OidHash, OidEq>> loose_;  // list_loose(), on the first miss
  PackLimits limits_;
  std::string what_;  // "the remote", "the store", for messages
};

// A store's own trees, for check_tree_shape: nothing counts as trusted, and
// blobs are not read.
class StoreTreeSource final : public ObjectSource {
 public:
  explicit StoreTreeSource(git_repository* store, const PackLimits& limits = {});
  std::optional<ObjectRefusal> read(const git_oid& id, git_object_t type, ObjectBytes* out) override;
  bool in_store(const git_oid&) override { return false; }
  std::optional<ObjectRefusal> stored_as(const git_oid&, git_object_t) override { return std::nullopt; }

 private:
  ObjectReader store_;
};

// A quarantine's repository after a network fetch: objects from the store
// or from IncomingPack (through the quarantine's odb, which holds both).
class QuarantineSource final : public ObjectSource {
 public:
  QuarantineSource(git_repository* quarantine, git_repository* store, const PackLimits& limits = {});
  ~QuarantineSource() override;  // out of line: its owners call no libgit2
  std::optional<ObjectRefusal> read(const git_oid& id, git_object_t type, ObjectBytes* out) override;
  bool in_store(const git_oid& id) override { return store_.has(id); }
  std::optional<ObjectRefusal> stored_as(const git_oid& id, git_object_t type) override {
    return store_.check_type(id, type);
  }

 private:
  ObjectReader store_, quarantine_;
  Odb odb_;  // the quarantine's, for headers of objects not read
  PackLimits limits_;
};

// A repository on this machine (a path or file:// remote), copied object by
// object into `out` (a PackWriter in the quarantine) as the walk reads it;
// what the store has is read from the store instead, never from the remote.
class CopyingSource final : public ObjectSource {
 public:
  CopyingSource(git_repository* remote, git_repository* store, PackWriter& out, const PackLimits& limits = {});
  ~CopyingSource() override;  // out of line: its owners call no libgit2
  std::optional<ObjectRefusal> read(const git_oid& id, git_object_t type, ObjectBytes* out) override;
  bool in_store(const git_oid& id) override { return store_.has(id); }
  std::optional<ObjectRefusal> stored_as(const git_oid& id, git_object_t type) override {
    return store_.check_type(id, type);
  }

 private:
  ObjectReader remote_, store_;
  PackWriter& out_;
  PackLimits limits_;
  // Trees copied, kept for the walk to read again (a new commit's tree is
  // the next one's parent tree), up to kKeptBytes: past it the cache starts
  // afresh, and a tree read again is read from the remote again (and not
  // copied twice). Commits are read once and not kept, so a pull's memory
  // does not grow with the trees and commits it copies.
  static constexpr std::size_t kKeptBytes = 32u << 20;
  std::unordered_map<git_oid, ObjectBytes, OidHash, OidEq> kept_;
  std::size_t kept_bytes_ = 0;
  std::uint64_t copied_bytes_ = 0;  // bounded by limits_.max_inflated_bytes
};

// The most bytes an object of `type` may have under `limits`.
std::uint64_t max_object_bytes(const PackLimits& limits, git_object_t type);

}  // namespace kistore::git
