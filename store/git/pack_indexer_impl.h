// The state of an IncomingPack (pack_indexer.h) while it receives and
// indexes one pack, private to store/pack_indexer*.cc: receiving and
// finishing are in pack_indexer.cc, resolving deltas in pack_resolve.cc.
//
// Thread-safety: as IncomingPack, one thread at a time.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "objects/sha1.h"
#include "store/git/git.h"
#include "store/git/objwrite.h"
#include "store/git/pack_delta.h"
#include "store/git/pack_indexer.h"

namespace kistore::git::pack_detail {

// Pack entry types (git's pack format): 5 is reserved, 0 invalid.
enum PackType : std::uint8_t { kCommit = 1, kTree = 2, kBlob = 3, kTag = 4, kOfsDelta = 6, kRefDelta = 7 };

constexpr std::uint32_t kNone = UINT32_MAX;
constexpr std::size_t kHeaderBytes = 12, kTrailerBytes = 20;

inline bool is_delta(std::uint8_t kind) { return kind == kOfsDelta || kind == kRefDelta; }

inline const char* type_word(std::uint8_t kind) {
  switch (kind) {
    case kCommit: return "commit";
    case kTree: return "tree";
    case kBlob: return "blob";
    default: return "object";
  }
}

inline std::string entry_at(std::uint64_t offset) { return "pack entry at offset " + std::to_string(offset); }

std::string errno_text();

// SHA-1 of the pack's bytes (objects/sha1.h owns the hashing library).
class PackDigest {
 public:
  PackDigest() { sha_.init(); }
  void update(const void* p, std::size_t n) { sha_.update(p, n); }
  void final(unsigned char out[20]) { sha_.final(out); }

 private:
  kistore::Sha1 sha_;
};

}  // namespace kistore::git::pack_detail

namespace kistore::git {

class IncomingPack::Impl {
 public:
  Impl(std::string dest_dir, PackLimits limits, PackProgressFn progress, ExternalBaseFn bases);
  ~Impl() { discard(); }

  void append(std::string_view bytes);
  IndexedPack finish();
  void discard();  // removes every file made so far

 private:
  // One entry of the received pack, in the order received (so by offset).
  struct Entry {
    std::uint64_t offset;         // of its header
    std::uint64_t size;           // inflated size it declares (object or delta instructions)
    git_oid id;                   // once resolved
    std::uint32_t base = pack_detail::kNone;   // the base entry of a delta (OFS: when received; REF: when resolved)
    std::uint8_t header_length;   // bytes before its zlib stream
    std::uint8_t kind;            // PackType
    std::uint8_t type = 0;        // its object's PackType once resolved
    std::uint32_t depth = 0;      // deltas down to a whole object once resolved
    bool resolved = false;
    bool external = false;        // a thin pack's base, read through bases_ (not in the received file)
  };
  enum class State { kHeader, kEntryHeader, kEntryData, kDone };

  void receive(const unsigned char* p, std::size_t n);  // the bytes before the trailer
  std::size_t take_pack_header(const unsigned char* p, std::size_t n);
  std::size_t take_entry_header(const unsigned char* p, std::size_t n);
  bool entry_header_complete(std::uint64_t offset);
  std::uint32_t ofs_base(std::uint64_t offset, std::uint64_t distance) const;
  void start_entry();
  std::size_t take_entry_data(const unsigned char* p, std::size_t n);
  void end_entry();
  void check_entry_size(std::uint8_t kind, std::uint64_t size, const std::string& what) const;
  void count_inflated(std::uint64_t n, std::uint64_t offset);
  void check_inflated_room(std::uint64_t n, std::uint64_t offset) const;
  void store_object(std::uint32_t index, std::uint8_t type, std::string_view data);
  void save(const char* p, std::size_t n);
  void flush_saved();

  void resolve_deltas();
  void resolve_from(std::uint32_t root);
  std::uint32_t add_external_base(const git_oid& id);
  void read_external(std::uint32_t index, std::string& out);
  void resolve(std::uint32_t base, std::uint32_t child);
  DeltaBaseCache::Data object_of(std::uint32_t index);
  void read_entry(std::uint32_t index, std::string& out);
  std::uint64_t entry_end(std::uint32_t index) const;
  std::string finish_writer();
  void report();

  std::string dest_, incoming_path_;
  PackLimits limits_;
  PackProgressFn progress_;
  ExternalBaseFn bases_;
  PackProgress shown_;
  int fd_ = -1;                          // the received bytes, for re-reading bases
  std::string unsaved_;                  // received bytes not yet written to fd_
  std::unique_ptr<PackWriter> writer_;   // the new pack
  pack_detail::PackDigest digest_;                    // of everything before the trailer
  std::string tail_;                     // the last bytes received: the trailer once the pack ends
  std::uint64_t received_ = 0, position_ = 0, inflated_ = 0, object_bytes_ = 0;
  std::exception_ptr failed_;
  bool finished_ = false;

  // Parsing state.
  State state_ = State::kHeader;
  unsigned char head_[32];  // the pack header or an entry header, as it arrives
  std::size_t head_length_ = 0;
  std::uint32_t declared_ = 0;
  z_stream z_{};
  bool z_ready_ = false;
  std::string object_;           // the entry's inflated bytes (whole objects only)
  std::uint64_t produced_ = 0;   // inflated bytes of the entry so far
  std::string delta_start_;      // a delta entry's first inflated bytes: its header
  std::vector<unsigned char> scratch_;

  std::vector<Entry> entries_;
  std::vector<std::pair<git_oid, std::uint32_t>> ref_bases_;         // REF_DELTA: base id, entry
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ofs_bases_;   // OFS_DELTA: base entry, entry
  std::unordered_map<git_oid, std::uint32_t, OidHash, OidEq> by_id_;  // resolved objects, first entry
  std::vector<IndexedObject> objects_;
  std::uint32_t deltas_ = 0;
  DeltaBaseCache cache_;
  std::string delta_buffer_;
};

}  // namespace kistore::git
