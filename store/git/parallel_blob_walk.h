// Every blob below a folder of a tree, read on every core: verify's walk of
// a whole store (Snapshot::walk_parallel, store/core/store.h). Private to
// store/.
//
// The folder's tree is split into parts: the folders three levels below the
// root (objects/sha256/ab, refs/levels/x, ...) and the blobs above them, in
// tree order. Parts run at once on `threads` threads (0: one per core, at
// most 8; objects/parallel.h), each through a repository handle of its own
// (libgit2 wants one per thread), reading whole stored objects through the
// pack reader (packread.h) and the rest through libgit2's object database.
//
// Thread-safety: the callbacks run as ParallelBlobWalk says; `repo` is used
// on the calling thread only.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

struct git_repository;
struct git_oid;

namespace kistore::git {

// What a walk hands out, and to whom.
struct ParallelBlobWalk {
  using Count = std::function<void(std::size_t)>;
  using Blob = std::function<void(std::size_t, const std::string&, const std::string_view*, const std::string&)>;
  using Other = std::function<void(const std::string&)>;
  using SelfChecked = std::function<bool(const std::string&)>;
  using Progress = std::function<void(std::size_t, std::size_t)>;

  // Called first, with the number of parts.
  Count count;
  // blob(part, path, bytes, error) for every blob: concurrently for
  // different parts, in tree order within a part (so parts 0..n-1
  // concatenated are the tree order). bytes is null and error says why when
  // the blob cannot be read (its git object is damaged, of another kind, or
  // holds content with another id).
  Blob blob;
  // other(path) for entries that are neither blobs nor trees (submodule
  // links), from any thread but one call at a time; may be empty.
  Other other;
  // Whether the caller checks the blob at `path` itself (verify's objects,
  // named by their sha256): then it is not hashed against its git id. May
  // be empty (every blob is hashed).
  SelfChecked self_checked;
  // progress(done, total) on the calling thread, in git objects (blobs and
  // trees read, of the objects the store's packs list; total 0 when not
  // known); may be empty.
  Progress progress;
};

// Walks every blob below the folder `dir` ("" the root) of the tree
// `root` (null: an empty tree, which has no parts) of `repo`. A tree that
// cannot be read (or holds content with another id) throws
// Error(kCorruption); with `trees_checked` (the caller hashes every tree
// below `dir` itself: verify's shape check) trees are not hashed here.
// Folders more than kMaxTreeDepth + 1 deep are not entered (no store's
// are). Error(kIO) "<git dir>: opening for reading: <why>" when a worker's
// handle cannot be opened. The first error of any part is what the walk
// throws; parts not yet started then do not start.
void walk_blobs_parallel(git_repository* repo, const git_oid* root, std::string_view dir, unsigned threads,
                         const ParallelBlobWalk& walk, bool trees_checked = false);

}  // namespace kistore::git
