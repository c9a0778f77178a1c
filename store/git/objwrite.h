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
//     never sees an index without its pack; a crash leaves only a temporary file
//     named for its writer's pid, which the next writer removes
//     (store/edge/tempfiles.h).
//   - PackStream: the same pack format handed to a sink as it is made, for
//     sending over git's smart protocol (receive_pack.h).
//   - LooseWriter: loose objects (objects/xx/<38 hex>), for small changes,
//     each synced and renamed from a temporary file in objects/; sync()
//     syncs their folders before the branch moves, as for a pack.
//   - TreeStream and build_tree (tree_build.cc): the new root tree
//     from a base tree and changed paths in path order, reading only the
//     base trees on the changed paths (raw_tree.h) and copying their
//     unchanged entries byte for byte. TreeStream takes the paths one at a
//     time and holds only the folders on the current path, so a bulk add's
//     millions of paths need never be in memory at once.
//   - commit_text: a commit object's text, as git writes it.
//
// Both writers skip objects they already wrote; LooseWriter also skips
// objects the repository has. Objects become visible to the repository's
// readers once the writer is finished (PackWriter::finish) or written
// (LooseWriter), before the branch moves. Writes that fail throw
// Error(kIO) naming the file; a base tree that cannot be read,
// Error(kCorruption).
//
// Thread-safety: object_id and commit_text are reentrant; a writer (and a
// PackStream) belongs to one thread.
#pragma once

#include <git2.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "objects/record_index.h"
#include "objects/sha1.h"
#include "store/git/git.h"

namespace kistore {
class NewFile;  // store/edge/files.h
}

namespace kistore::git {

// git's id of an object: SHA-1 of "<type> <size>\0" + data.
git_oid object_id(git_object_t type, std::string_view data);

// The zlib level a blob is written at: 0 (zlib's stored format, read with
// no inflate, packread.h) for what deflate cannot shrink, zstd frames and
// dictionaries, and for blobs under 128 bytes (format 2's index entries),
// where it saves nothing; 1 for the rest, the index's JSON Lines files above
// all, as git itself writes a new object (core.looseCompression's default).
// Their hex keys and repeated member names deflate to about 0.3 of their
// size at any level (a 120,000-run store's 98 MB of refs/: 0.324 at level
// 1, 0.301 at 6); level 6 took 14 % of a 20,000-run nvbench import's CPU
// for those 7 % (docs/benchmarks.md, "Importers"). A pack's objects keep
// their level through git's repack, which reuses them as they are.
inline int blob_level(std::string_view data) {
  if (data.size() < 128) return 0;
  const auto* b = reinterpret_cast<const unsigned char*>(data.data());
  const bool zstd_frame = b[0] == 0x28 && b[1] == 0xB5 && b[2] == 0x2F && b[3] == 0xFD;
  const bool zstd_dictionary = b[0] == 0x37 && b[1] == 0xA4 && b[2] == 0x30 && b[3] == 0xEC;
  return zstd_frame || zstd_dictionary ? 0 : 1;
}

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
  // Writes a blob at its blob_level: how every store blob is written.
  git_oid write_blob(std::string_view data) { return write(GIT_OBJECT_BLOB, data, blob_level(data)); }
  void write_blob(const git_oid& id, std::string_view data) { write(id, GIT_OBJECT_BLOB, data, blob_level(data)); }
  // Writes blobs as write_blob one after the other would, in that order, and
  // returns their ids; a writer may hash and deflate them on every core
  // first (PackWriter: the bytes written are the same).
  virtual std::vector<git_oid> write_blobs(const std::vector<std::string_view>& blobs) {
    std::vector<git_oid> ids;
    ids.reserve(blobs.size());
    for (std::string_view b : blobs) ids.push_back(write_blob(b));
    return ids;
  }
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
  // Hashes and deflates the blobs on every core (objects/parallel.h), then
  // writes them in order: the pack's bytes are write_blob's.
  std::vector<git_oid> write_blobs(const std::vector<std::string_view>& blobs) override;
  bool has(const git_oid& id) const;
  std::size_t count() const { return entries_.size(); }
  std::uint64_t bytes() const { return offset_; }

  // Completes the pack and its index and moves both into place; returns the
  // pack's name (pack-<hex>), or "" when nothing was written (no files are
  // left). Error(kIO) naming the file on failure: then neither the pack nor
  // its index nor a temporary file is left (the one exception: when only
  // the final sync of the folder fails, the complete pack and index stay in
  // place, named by nothing yet, as a crash there would leave them). A pack
  // of the same name already in place (the same bytes: its name is their
  // checksum) is kept, never replaced.
  std::string finish();

 private:
  struct Entry {
    git_oid id;
    std::uint32_t crc;
    std::uint64_t offset;
  };
  void put(const void* data, std::size_t n);
  void flush();
  // Writes the object `id` of `size` bytes whose zlib stream `deflated` is
  // made: the entry write() would make.
  void write_deflated(const git_oid& id, git_object_t type, std::uint64_t size, std::string_view deflated);
  std::string seal();
  std::vector<std::uint32_t> sorted_by_id() const;
  void write_index(NewFile& out, const std::string& checksum);
  std::string place(const std::string& checksum);
  // The id of entry `n`, for by_id_.
  auto entry_id() const {
    return [this](std::uint32_t n) -> const git_oid& { return entries_[n].id; };
  }

  std::string dir_, tmp_path_;
  std::unique_ptr<NewFile> pack_;  // the pack under its temporary name, until finish
  bool made_dir_ = false;          // whether dir_ was made for it (removed again if it fails)
  std::uint64_t offset_ = 0;
  std::string buffer_, deflated_;
  std::deque<Entry> entries_;         // grows without copying: a bulk pack holds millions
  RecordIndex<git_oid, OidHash, OidEq> by_id_;  // entries_ by id (has)
  bool finished_ = false;
};

// Many small commits (single adds) each write a small pack. When the pack
// folder `pack_dir` of the repository `repo` holds more than `max_small`
// packs under `small_bytes` each, their objects are written into one pack
// and the small ones removed (index first, as git's repack does), so that
// lookups do not slow down with every add. Returns how many packs were
// merged (0 when there were few enough). Objects stay readable throughout:
// the merged pack is in place before a small one goes. Error(kIO) when the
// merged pack cannot be written (the small packs are then kept).
std::size_t merge_small_packs(git_repository* repo, const std::string& pack_dir, std::size_t max_small = 32,
                              std::uint64_t small_bytes = 4u << 20);

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
  // Writes the object `id` of `size` bytes whose zlib stream `deflated` is
  // made: the entry write() would make.
  void write_deflated(const git_oid& id, git_object_t type, std::uint64_t size, std::string_view deflated);

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
  // Writes the object through the file gate (store/edge/files.h, NewFile):
  // a temporary file in objects/, synced, renamed to objects/xx/<38 hex>.
  // Error(kIO) naming the file when that fails; then no file of it is left
  // (nor its fan-out folder, when this write made it).
  void write(const git_oid& id, git_object_t type, std::string_view data, int level) override;
  // Makes the objects written so far durable (each file is synced as it is
  // written; this syncs the folders that name them), as PackWriter::finish
  // does for a pack. Call it before the branch names them. Error(kIO)
  // naming the folder; the objects already written stay (complete, named by
  // nothing yet: another writer may have found them there and relied on
  // them, so they are not removed).
  void sync();

 private:
  git_repository* repo_;
  std::string objects_;
  std::set<std::string> folders_;  // fan-out folders written to since the last sync
  bool new_folders_ = false;       // whether one of them was made
  git_odb* odb_ = nullptr;
  std::unordered_set<git_oid, OidHash, OidEq> seen_;
};

// A change to one path of a tree: a blob (upsert), a folder given whole by
// its tree's id (a folder moved: nothing is read or written beneath it), or
// nothing (removal).
struct PathChange {
  std::optional<git_oid> blob;  // nullopt: remove the path
  bool tree = false;            // `blob` is the id of a tree the store holds
};

// A change of at most this many paths is small: its trees are deflated
// (TreeStream's `small`, build_tree), a bigger one's stored.
constexpr std::size_t kSmallTreeChange = 1024;

// The tree that `base` (null: the empty tree) becomes with changes handed
// over one path at a time, in strictly increasing bytewise order of their
// full paths (which is git's tree order, folder by folder; a folder given
// whole is named with a trailing "/", as "refs/groups/3/"). Every new tree is
// written to `out` as soon as its folder is complete; only the folders on the
// current path (at most the tree depth) are held. Folders left empty
// disappear; a change to a name replaces the base entry of that name,
// whatever its kind, and a removal followed by paths beneath its name makes
// a new folder there without the old one's entries. Error(kIO) when a path comes out of order, is empty or
// has an empty segment, or names as a folder what a change just made a
// blob or a whole folder; Error(kCorruption) when a base tree cannot be read.
class TreeStream {
 public:
  // `repo` reads the base trees; `out` must outlive the stream. `small`: a
  // change of a few paths, whose trees are deflated (else stored).
  TreeStream(git_repository* repo, const git_oid* base, ObjectWriter& out, bool small = false);
  ~TreeStream();
  TreeStream(const TreeStream&) = delete;
  TreeStream& operator=(const TreeStream&) = delete;

  void change(std::string_view path, const PathChange& change);
  // Completes every open folder and returns the new root tree's id (the
  // empty tree's when nothing is left). Call once, after the last change.
  git_oid finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Builds the tree that `base` (null: the empty tree) becomes with `changes`
// (full paths, '/'-separated) applied, writing every new tree to `out`.
// Folders left empty disappear. Returns the new root tree's id (the empty
// tree's id when nothing is left). `repo` reads the base trees. The trees of
// a change of up to kSmallTreeChange paths are deflated, those of a bigger
// one stored.
git_oid build_tree(git_repository* repo, const git_oid* base, const std::map<std::string, PathChange>& changes,
                   ObjectWriter& out);

// The git object text of a commit kistore writes (as libgit2's
// git_commit_create_buffer and git write it), with `signature` (an armored
// SSH signature, may be empty) as its gpgsig header.
std::string commit_text(const git_oid& tree, const std::vector<git_oid>& parents, const git_signature& author,
                        const git_signature& committer, std::string_view message, std::string_view signature = {});

}  // namespace kistore::git
