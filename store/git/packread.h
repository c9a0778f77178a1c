// Reading whole objects straight from a store's pack files, private to store/.
//
// kistore writes its documents and trees into packs as whole objects in
// zlib's stored format (objwrite.h). Reading one of them needs no inflate
// state, no window cache and no lock: find its offset in the pack's index,
// check the stored blocks' lengths and the Adler-32 of the content, copy.
// libgit2 spends most of a whole-store read on that per-object machinery,
// so verify (and lookups in the index's big trees) read this way first.
//
// PackReader only answers for what it can check completely: an object in a
// version-2 index whose pack entry is a whole (not delta) object, of stored
// blocks with lengths, sizes and Adler-32 consistent, or deflated (the trees
// of a small change, commits) to exactly its declared size with a sound
// Adler-32. For anything else (loose objects, deltas after `git gc`, damage)
// it answers "not here" and the caller reads through libgit2, which reports
// damage.
// read_any() also inflates deflated entries and rebuilds deltas (a store
// after `git gc`), for the read-only commands' own reader (native_objects.h).
//
// Thread-safety: after construction, read() and read_any() may be called
// from any thread.
#pragma once

#include <git2.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kistore::git {

class PackReader {
 public:
  // Maps every objects/pack/*.idx (version 2) of the repository at `gitdir`
  // (ending in '/') and its pack, and those of the object folders its
  // objects/info/alternates names (one level). Packs that cannot be opened
  // are skipped.
  explicit PackReader(const std::string& gitdir);
  ~PackReader();
  PackReader(const PackReader&) = delete;
  PackReader& operator=(const PackReader&) = delete;

  // Whether one of the packs' indexes lists `id` (what its entry holds is
  // not checked).
  bool has(const git_oid& id) const;

  // If `id` is a whole object in one of the packs (stored blocks, or deflated
  // to exactly its declared size), of at most `max_size` bytes, sets `type`,
  // replaces `out` with its content and returns true. Never allocates more
  // than the pack file holds (stored blocks) or twice what the stream
  // inflates to (deflated), whatever size the entry's header declares.
  bool read(const git_oid& id, git_object_t& type, std::string& out, std::uint64_t max_size = UINT64_MAX) const;

  // As read, for every kind of entry: whole objects stored or deflated, and
  // deltas (OFS_DELTA, and REF_DELTA on a base in these packs) rebuilt with
  // pack_delta.h, at most kMaxDeltaChain deep. False when the entry cannot
  // be read completely and consistently (absent, cut short, inflating to
  // another size, a delta that does not fit its base, a chain too deep):
  // the caller then asks libgit2, which says what is wrong. No object is
  // re-hashed. Allocates at most what the entry's compressed bytes can
  // inflate to (deflate's ratio is at most 1032:1) and 4 GiB.
  bool read_any(const git_oid& id, git_object_t& type, std::string& out) const;

  // How many objects the packs' indexes list (an object in two packs counts
  // twice): the total a whole-store walk's progress is measured against.
  std::uint64_t object_count() const;

  static constexpr unsigned kMaxDeltaChain = 4096;

 private:
  struct Pack;
  bool read_entry(const Pack& pack, std::uint64_t at, unsigned depth, git_object_t& type, std::string& out) const;
  bool read_any_at(const git_oid& id, unsigned depth, git_object_t& type, std::string& out) const;
  void add_packs(const std::string& dir);
  const Pack* locate(const git_oid& id, std::uint64_t& at) const;
  std::vector<std::unique_ptr<Pack>> packs_;
  mutable std::atomic<std::size_t> hint_{0};  // the pack of the last hit (any thread's)
};

}  // namespace kistore::git
