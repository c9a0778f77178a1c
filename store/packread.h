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
// version-2 index whose pack entry is a whole (not delta) object of stored
// blocks, with lengths, sizes and Adler-32 consistent. For anything else
// (loose objects, deltas after `git gc`, deflated data, damage) it answers
// "not here" and the caller reads through libgit2, which reports damage.
//
// Thread-safety: after construction, read() may be called from any thread.
#pragma once

#include <git2.h>

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

  // If `id` is a whole object of stored blocks in one of the packs, of at
  // most `max_size` bytes, sets `type`, replaces `out` with its content and
  // returns true. Never allocates more than the pack file holds.
  bool read(const git_oid& id, git_object_t& type, std::string& out, std::uint64_t max_size = UINT64_MAX) const;

 private:
  struct Pack;
  void add_packs(const std::string& dir);
  std::vector<std::unique_ptr<Pack>> packs_;
};

}  // namespace kistore::git
