// Turning an untrusted git pack into trustworthy objects, private to store/.
//
// A pull receives a remote's pack; the remote may be an attacker. libgit2
// 1.5's indexer trusts the sizes a pack declares (a corrupt pack drove it to
// 23.5 GB) and a path remote's objects would be taken under the ids the
// remote claims. IncomingPack trusts nothing in the pack: it reads the bytes
// as they arrive (version 2 or 3: "PACK", version, count, entries, SHA-1
// trailer), keeps them in a temporary file inside the destination folder,
// bounds every declared size before it allocates anything, inflates each
// entry to exactly its declared size, resolves OFS_DELTA and REF_DELTA
// entries against bases in the same pack (or, for a thin pack, against bases
// a caller-given lookup reads from the store's own trusted objects), computes every object's git id itself, and writes every object whole into a
// new pack and index (objwrite.h's PackWriter) in the destination folder.
// Only commits, trees and blobs are accepted; a kistore store holds nothing
// else.
//
// Anything that fails a check is refused with Error(kRefused), naming the
// entry's offset, what was expected and what was found, e.g.
//   "pack entry at offset 1234 declares 1099511627776 bytes; the limit for a
//    blob is 16842752 bytes (16.1 MiB)".
// A refused or abandoned pack leaves nothing in the destination folder: no
// pack, no index, no temporary file. Objects written are not checked for
// meaning (tree modes, layout, documents): that is the quarantine's job,
// which reads them from the destination folder afterwards.
//
// Resources: memory follows the largest object (a few copies of it, plus a
// bounded cache of delta bases, PackLimits::delta_cache_bytes) and the number
// of entries (a few hundred bytes each), never what a header claims nor the
// pack's size. Time follows the bytes inflated and built, which
// `max_inflated_bytes` bounds whatever the pack's shape: each entry is
// inflated as it arrives, and again when deltas are resolved; a base that has
// left the cache is rebuilt down its chain, and those bytes count too (each
// step at least kDeltaStepCost, so a chain of tiny deltas counts as well). For packs git makes (deltas close to their bases) that is
// about twice the objects' size. Disk use is the received pack plus the new
// pack, bounded by `max_pack_bytes` and `max_inflated_bytes`.
//
// Thread-safety: an IncomingPack is used by one thread at a time; separate
// instances are independent.
#pragma once

#include <git2.h>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kistore::git {

// What one step of rebuilding a delta base counts against
// PackLimits::max_inflated_bytes at least, however small the object it
// builds: the budget then bounds the number of steps, not only their bytes.
inline constexpr std::uint64_t kDeltaStepCost = 64;

// Bounds on what one received pack may make kistore do. Every default fits
// any store kistore writes with room to spare (a store of 20,000 runs is a
// 31 MB pack of 120,493 objects); a caller may tighten them (tests do).
struct PackLimits {
  // Bytes of the pack as received, header and trailer included (4 GiB).
  std::uint64_t max_pack_bytes = std::uint64_t{4} << 30;
  // Entries the header may declare (2^23, a store of over a million runs).
  std::uint32_t max_objects = std::uint32_t{1} << 23;
  // Inflated size of one blob: a document's zstd frame is at most a 16 MiB
  // document plus zstd's overhead (16 MiB + 64 KiB).
  std::uint64_t max_blob_bytes = (std::uint64_t{16} << 20) + (std::uint64_t{64} << 10);
  // Inflated size of one tree: format-1 stores keep flat folders of one
  // entry per document, so their trees are large (64 MiB).
  std::uint64_t max_tree_bytes = std::uint64_t{64} << 20;
  // Inflated size of one commit: a message, a signature, parents (1 MiB).
  std::uint64_t max_commit_bytes = std::uint64_t{1} << 20;
  // Inflated size of one delta's instructions (64 MiB, the largest object:
  // a delta that rebuilds an object is about its size at most in practice).
  std::uint64_t max_delta_bytes = std::uint64_t{64} << 20;
  // Deltas between an object and the whole object it is rebuilt from. No
  // limit by default, as git's index-pack has none: git makes chains of 50 by
  // default, `gc --aggressive` made 250 before git 2.18, and pack.depth
  // allows 4095. A chain is at most as deep as the pack has entries, and the
  // work of rebuilding along it counts in max_inflated_bytes (every step at
  // least kDeltaStepCost bytes), so depth bounds neither memory nor time;
  // a caller may still set one (tests do).
  std::uint32_t max_delta_depth = UINT32_MAX;
  // Total bytes inflated and built: every entry as received (objects and
  // delta instructions), every entry read again to resolve deltas, every
  // object built from deltas, bases rebuilt included (16 GiB). Bounds the
  // work and the new pack's size against tiny entries that expand hugely (a
  // zip bomb) and against deltas arranged to defeat the cache of bases.
  std::uint64_t max_inflated_bytes = std::uint64_t{16} << 30;
  // Memory kept for delta bases between uses (32 MiB); a larger base is
  // rebuilt each time it is needed.
  std::uint64_t delta_cache_bytes = std::uint64_t{32} << 20;
};

// How far indexing is, handed to the progress callback after each entry
// received and each delta resolved.
struct PackProgress {
  std::uint32_t total_objects = 0;     // entries the header declares
  std::uint32_t received_objects = 0;  // entries received and checked
  std::uint64_t received_bytes = 0;    // bytes of the pack received
  std::uint32_t total_deltas = 0;      // delta entries among those received
  std::uint32_t resolved_deltas = 0;   // delta entries rebuilt into objects
};
// An exception thrown by the callback propagates out of append()/finish()
// (or index_untrusted_pack), and the pack is abandoned as on a refusal.
using PackProgressFn = std::function<void(const PackProgress&)>;

// Where a thin pack's delta bases come from: the objects a REF_DELTA names
// that the pack itself does not hold. Given the base's id and the most bytes
// any object may have (the largest of PackLimits' sizes), sets its type and
// bytes and returns true, or returns false when there is no such object. It
// must bound the object's size before reading it (an object over
// `max_bytes` is an Error(kRefused)). The base must be a trusted object (the
// store's, never the quarantine's); its bytes are rehashed against `id` all
// the same, and checked against the limit for its type. Bases are read when
// the pack is finished, each once (again if the cache of bases lost it), and
// are not written into the new pack: the store has them.
using ExternalBaseFn =
    std::function<bool(const git_oid& id, std::uint64_t max_bytes, git_object_t& type, std::string& bytes)>;

struct IndexedObject {
  git_oid id;           // computed here from the object's bytes
  git_object_t type;    // GIT_OBJECT_COMMIT, GIT_OBJECT_TREE or GIT_OBJECT_BLOB
};

// What a pack held, once indexed.
struct IndexedPack {
  std::string name;                    // "pack-<hex>" in the destination folder; "" when the pack had no entries
  std::uint32_t entries = 0;           // entries of the received pack
  std::uint64_t pack_bytes = 0;        // bytes of the received pack
  std::uint64_t inflated_bytes = 0;    // sum of the sizes of `objects`
  std::vector<IndexedObject> objects;  // each distinct object once, in the order written
};

class IncomingPack {
 public:
  // A pack to be received into `dest_dir` (an existing folder, typically a
  // quarantine's objects/pack). Creates the temporary file for the received
  // bytes there: Error(kIO) naming the folder if it cannot.
  // With `bases`, a REF_DELTA against an object outside the pack is
  // resolved against what `bases` reads; without, it is refused.
  explicit IncomingPack(std::string dest_dir, PackLimits limits = {}, PackProgressFn progress = nullptr,
                        ExternalBaseFn bases = nullptr);
  // Removes the temporary files and anything written unless finish() returned.
  ~IncomingPack();
  IncomingPack(const IncomingPack&) = delete;
  IncomingPack& operator=(const IncomingPack&) = delete;

  // Takes the next bytes of the pack, in pieces of any size, as they arrive.
  // Checks what it can as soon as it can (header, entry headers, sizes, zlib
  // streams, whole objects): Error(kRefused) on the first violation,
  // Error(kIO) if the temporary file cannot be written. After an error the
  // pack is abandoned: every later call throws the same error again.
  void append(std::string_view bytes);

  // The pack is complete: checks the trailer and that every declared entry
  // arrived, resolves the deltas, and moves the new pack and its index into
  // the destination folder (the pack first, then its index). Removes the
  // temporary file of received bytes. Error(kRefused) on a violation,
  // Error(kIO) on a file system failure; either way nothing is left behind.
  IndexedPack finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads a whole pack from `fd` (until end of file, retrying on EINTR; the
// caller keeps and closes it) or from `in` (until its end) into `dest_dir`,
// as IncomingPack does. A read error is Error(kIO); the stream's own
// exceptions, if enabled, propagate. Either way nothing is left behind.
IndexedPack index_untrusted_pack(int fd, const std::string& dest_dir, const PackLimits& limits = {},
                                 const PackProgressFn& progress = nullptr);
IndexedPack index_untrusted_pack(std::istream& in, const std::string& dest_dir, const PackLimits& limits = {},
                                 const PackProgressFn& progress = nullptr);

}  // namespace kistore::git
