// git's delta format, read as untrusted data, private to store/.
//
// A pack's OFS_DELTA and REF_DELTA entries hold, once inflated, the sizes of
// their base and of the object they build (7 bits a byte, least significant
// first), then instructions: copy a range of the base, or insert the next
// 1-127 bytes of the delta. pack_indexer.h rebuilds objects from a remote's
// deltas with these; every size and range is checked against the base, the
// delta and the declared result before a byte is copied, so a hostile delta
// can do nothing but be refused.
//
// Thread-safety: the functions are pure; a DeltaBaseCache belongs to one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace kistore::git {

struct DeltaHeader {
  std::uint64_t base_size = 0;    // the base the delta applies to
  std::uint64_t result_size = 0;  // the object it builds
  std::size_t length = 0;         // bytes the two sizes take
};

// Reads the two sizes at the start of `delta`; false when they are cut
// short or do not fit in 64 bits.
bool read_delta_header(std::string_view delta, DeltaHeader& header);

// Replaces `out` with the object that `delta` (whose header is `header`)
// builds from `base`: exactly header.result_size bytes, which the caller has
// bounded and checked that base.size() == header.base_size. Error(kRefused)
// naming the pack entry at `offset` when an instruction copies outside the
// base, reads past the delta's end, writes past the declared result, is the
// reserved instruction 0, or the result comes out shorter than declared.
void apply_delta(std::string_view base, std::string_view delta, const DeltaHeader& header, std::string& out,
                 std::uint64_t offset);

// "16842752 bytes (16.1 MiB)": a size exactly, and rounded for a person.
std::string bytes_text(std::uint64_t n);

// Objects rebuilt from deltas (or read whole), by pack entry, kept for the
// deltas that build on them: the least recently used go first once their
// bytes pass the budget; an object larger than the budget is not kept.
// Shared pointers: a caller keeps what it got even when it is dropped here.
// Not thread-safe.
class DeltaBaseCache {
 public:
  using Data = std::shared_ptr<const std::string>;
  explicit DeltaBaseCache(std::uint64_t budget) : budget_(budget) {}
  Data get(std::uint32_t entry) {
    auto it = where_.find(entry);
    if (it == where_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }
  // Each entry costs its bytes and kEntryCost more (its list and map nodes,
  // the string and its shared owner), so that a pack of many tiny objects
  // cannot fill memory through the cache.
  static constexpr std::uint64_t kEntryCost = 128;
  void put(std::uint32_t entry, Data data) {
    if (data->size() + kEntryCost > budget_ || where_.contains(entry)) return;
    order_.emplace_front(entry, data);
    where_[entry] = order_.begin();
    bytes_ += data->size() + kEntryCost;
    while (bytes_ > budget_) {
      bytes_ -= order_.back().second->size() + kEntryCost;
      where_.erase(order_.back().first);
      order_.pop_back();
    }
  }

 private:
  std::uint64_t budget_, bytes_ = 0;
  std::list<std::pair<std::uint32_t, Data>> order_;
  std::unordered_map<std::uint32_t, std::list<std::pair<std::uint32_t, Data>>::iterator> where_;
};

}  // namespace kistore::git
