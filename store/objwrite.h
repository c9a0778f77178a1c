// Writing git objects without libgit2's write path, private to store/.
//
// libgit2 1.5 looks every written object up in all backends first (and
// rescans objects/pack on a miss), builds trees through a hash map of every
// entry, and packs through its packbuilder, which re-reads, re-deflates and
// re-indexes what it was given. kistore's writes are simpler than git's
// general case: new blobs whose ids it computes itself, trees that differ
// from the head's in a few paths, one commit. So it hashes (SHA-1, git's
// object ids), deflates and writes them itself:
//
//   - PackWriter: one pack (version 2, no deltas: kistore's blobs are zstd
//     frames, which neither deflate nor delta) and its index (version 2), for
//     bulk changes and pushes. The pack is written under a temporary name and
//     renamed into objects/pack/ before its index, as git does, so a reader
//     never sees an index without its pack; a crash leaves only a tmp_ file.
//   - PackStream: the same pack format handed to a sink as it is made, for
//     sending over git's smart protocol (receive_pack.h).
//   - LooseWriter: loose objects (objects/xx/<38 hex>), for small changes.
//   - build_tree: the new root tree from a base tree and a sorted set of
//     changed paths, reading only the base trees on the changed paths and
//     copying their unchanged entries byte for byte.
//
// Both writers skip objects they already wrote; LooseWriter also skips
// objects the repository has. Objects become visible to the repository's
// readers once the writer is finished (PackWriter::finish) or written
// (LooseWriter), before the branch moves.
#pragma once

#include <git2.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "objects/sha1.h"

namespace kistore::git {

// git's id of an object: SHA-1 of "<type> <size>\0" + data.
git_oid object_id(git_object_t type, std::string_view data);

struct OidHash {
  std::size_t operator()(const git_oid& id) const noexcept {
    std::size_t h;
    __builtin_memcpy(&h, id.id, sizeof h);
    return h;
  }
};
struct OidEq {
  bool operator()(const git_oid& a, const git_oid& b) const noexcept { return git_oid_equal(&a, &b); }
};

class ObjectWriter {
 public:
  virtual ~ObjectWriter() = default;
  // Writes an object (deflated at `level`, 0-9: 0 for data that does not
  // compress, such as zstd frames) and returns its id.
  git_oid write(git_object_t type, std::string_view data, int level) {
    git_oid id = object_id(type, data);
    write(id, type, data, level);
    return id;
  }
  // Writes an object whose id the caller already computed (object_id).
  virtual void write(const git_oid& id, git_object_t type, std::string_view data, int level) = 0;
};

class PackWriter final : public ObjectWriter {
 public:
  // A pack to be placed in `pack_dir` (the repository's objects/pack).
  explicit PackWriter(std::string pack_dir);
  ~PackWriter() override;  // removes the temporary file unless finished
  PackWriter(const PackWriter&) = delete;
  PackWriter& operator=(const PackWriter&) = delete;

  using ObjectWriter::write;
  void write(const git_oid& id, git_object_t type, std::string_view data, int level) override;
  bool has(const git_oid& id) const { return seen_.contains(id); }
  std::size_t count() const { return entries_.size(); }
  std::uint64_t bytes() const { return offset_; }

  // Completes the pack and its index and moves both into place; returns the
  // pack's name (pack-<hex>), or "" when nothing was written (no files are
  // left). Error(kIO) naming the file on failure.
  std::string finish();

 private:
  struct Entry {
    git_oid id;
    std::uint32_t crc;
    std::uint64_t offset;
  };
  void put(const void* data, std::size_t n);
  void flush();

  std::string dir_, tmp_path_;
  int fd_ = -1;
  std::uint64_t offset_ = 0;
  std::string buffer_, deflated_;
  std::vector<Entry> entries_;
  std::unordered_set<git_oid, OidHash, OidEq> seen_;
  bool finished_ = false;
};

// A pack (version 2, no deltas) handed to `sink` piece by piece (in pieces
// of about `piece` bytes) as it is made: the header, then each object, then
// the SHA-1 trailer. The header holds the object count, so it is fixed up
// front. No index: the receiver builds its own.
class PackStream {
 public:
  using Sink = std::function<void(std::string_view)>;
  PackStream(std::uint32_t count, Sink sink, std::size_t piece = 1 << 18);
  ~PackStream();
  PackStream(const PackStream&) = delete;
  PackStream& operator=(const PackStream&) = delete;

  // Appends an object, deflated at `level` (0: zlib's stored format).
  void write(git_object_t type, std::string_view data, int level);
  // Appends the trailer and hands over the rest. Error(kIO) unless exactly
  // the announced number of objects was written.
  void finish();
  std::uint32_t written() const { return written_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  void put(const void* data, std::size_t n);
  void flush();

  std::uint32_t count_, written_ = 0;
  Sink sink_;
  std::size_t piece_;
  std::string buffer_, deflated_;
  std::uint64_t bytes_ = 0;
  std::unique_ptr<Sha1> sha_;  // of everything handed over
};

class LooseWriter final : public ObjectWriter {
 public:
  // Loose objects of the repository `repo` (its objects/ folder).
  explicit LooseWriter(git_repository* repo);
  ~LooseWriter() override;
  LooseWriter(const LooseWriter&) = delete;
  LooseWriter& operator=(const LooseWriter&) = delete;
  using ObjectWriter::write;
  void write(const git_oid& id, git_object_t type, std::string_view data, int level) override;

 private:
  git_repository* repo_;
  std::string objects_;
  git_odb* odb_ = nullptr;
  std::unordered_set<git_oid, OidHash, OidEq> seen_;
};

// One entry of a tree object's bytes: "<mode> <name>\0<20-byte id>".
struct RawEntry {
  std::string_view name;
  std::string_view bytes;  // the whole entry
  bool tree;               // mode 40000
  bool link;               // mode 160000: a submodule link
  const unsigned char* id;
};
// Reads the next entry of `rest` (a tree's bytes) into `e` and advances;
// false at the end. Error(kCorruption) when the bytes are not a tree.
bool next_entry(std::string_view& rest, RawEntry& e);

// Error(kCorruption) naming `where` unless `data` is the tree whose id is `id`.
void check_tree_id(std::string_view data, const git_oid& id, const std::string& where);

// A change to one path of a tree: a blob (upsert) or nothing (removal).
struct PathChange {
  std::optional<git_oid> blob;  // nullopt: remove the path
};

// Builds the tree that `base` (null: the empty tree) becomes with `changes`
// (full paths, '/'-separated) applied, writing every new tree to `out`.
// Folders left empty disappear. Returns the new root tree's id (the empty
// tree's id when nothing is left). `repo` reads the base trees.
git_oid build_tree(git_repository* repo, const git_oid* base, const std::map<std::string, PathChange>& changes,
                   ObjectWriter& out);

// Calls fn(path, id, type) for every entry below the tree `root` (paths
// relative to it, prefixed by `prefix`), depth first in tree order, reading
// trees straight from `odb` (no object cache); trees themselves are not
// reported, submodule links are (type GIT_OBJECT_COMMIT). Each tree's content
// is hashed and checked against its id (Error(kCorruption) on a mismatch),
// so this holds with libgit2's own check turned off.
// With `on_tree`, a subtree is entered only when on_tree(path, id) is true.
// `packs` (may be null) reads stored trees without libgit2.
class PackReader;
void list_tree(git_odb* odb, const git_oid& root, const std::string& prefix,
               const std::function<void(const std::string&, const git_oid&, git_object_t)>& fn,
               const std::function<bool(const std::string&, const git_oid&)>& on_tree = nullptr,
               const PackReader* packs = nullptr);

// Calls fn(path, old, new) for every blob path that `to` lacks (new null) or
// holds with other content than `from` (both set), below `prefix` ("" or
// "dir/": only that folder). Subtrees with equal ids are skipped, so the cost
// follows the change, not the size of the trees. Added paths are not
// reported.
void removed_or_changed(git_odb* odb, const git_oid& from, const git_oid& to, const std::string& prefix,
                        const std::function<void(const std::string&, const git_oid&, const git_oid*)>& fn);

// Calls fn(id, type) for every tree and blob reachable from the tree `to`
// that the tree `from` (null: the empty tree) does not hold at the same path,
// `to` itself excluded: what a commit brings that its parent lacks, in time
// proportional to that (subtrees with equal ids are skipped, submodule links
// are not reported). An object held at two new paths is reported twice.
// Trees are read through `packs` first (may be null), their ids unchecked.
void added_or_changed(git_odb* odb, const PackReader* packs, const git_oid* from, const git_oid& to,
                      const std::function<void(const git_oid&, git_object_t)>& fn);

// The git object text of a commit kistore writes (as libgit2's
// git_commit_create_buffer and git write it), with `signature` (an armored
// SSH signature, may be empty) as its gpgsig header.
std::string commit_text(const git_oid& tree, const std::vector<git_oid>& parents, const git_signature& author,
                        const git_signature& committer, std::string_view message, std::string_view signature = {});

}  // namespace kistore::git
