// Resolving the deltas of a received pack (pack_indexer_impl.h): every
// delta entry becomes the object it encodes, bases first, each within
// PackLimits.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "objects/error.h"
#include "store/git/pack_indexer_impl.h"

namespace kistore::git {
using namespace pack_detail;  // this pack reader's own constants and helpers

std::uint64_t IncomingPack::Impl::entry_end(std::uint32_t index) const {
  return index + 1 < entries_.size() ? entries_[index + 1].offset : position_;
}

// The entry's inflated bytes, read again from the received file (sizes were
// checked as it arrived; checked again, as cheap as trusting them). Counted
// as inflated bytes again: the limit bounds the work, rebuilds included.
void IncomingPack::Impl::read_entry(std::uint32_t index, std::string& out) {
  const Entry& e = entries_[index];
  count_inflated(e.size, e.offset);
  out.resize(e.size);
  if (inflateReset(&z_) != Z_OK) throw IOError("zlib: cannot reset inflate");
  std::uint64_t at = e.offset + e.header_length, end = entry_end(index), made = 0;
  z_.avail_in = 0;
  unsigned char overflow;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (z_.avail_in == 0) {
      if (at == end) break;
      std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(scratch_.size(), end - at));
      ssize_t r = ::pread(fd_, scratch_.data(), want, static_cast<off_t>(at));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) throw IOError(incoming_path_ + ": cannot read back: " + (r < 0 ? errno_text() : "file is short"));
      at += static_cast<std::uint64_t>(r);
      z_.next_in = scratch_.data();
      z_.avail_in = static_cast<uInt>(r);
    }
    bool full = made == e.size;
    z_.next_out = full ? &overflow : reinterpret_cast<Bytef*>(out.data()) + made;
    z_.avail_out = full ? 1 : static_cast<uInt>(std::min<std::uint64_t>(e.size - made, 1u << 30));
    uInt room = z_.avail_out;
    rc = inflate(&z_, Z_NO_FLUSH);
    made += room - z_.avail_out;
    if (made > e.size || (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)) break;
  }
  if (rc != Z_STREAM_END || made != e.size)
    throw Refused(entry_at(e.offset) + " inflates differently when read again");
}

// Resolves every delta from the whole objects up: each resolved object's
// children (OFS_DELTA entries naming its offset, REF_DELTA entries naming its
// id) are built from it and then resolve their own children, depth first, so
// that a base is usually still in the cache when its next child needs it.
void IncomingPack::Impl::resolve_deltas() {
  flush_saved();
  std::sort(ofs_bases_.begin(), ofs_bases_.end());
  auto id_less = [](const std::pair<git_oid, std::uint32_t>& a, const std::pair<git_oid, std::uint32_t>& b) {
    int c = std::memcmp(a.first.id, b.first.id, 20);
    return c < 0 || (c == 0 && a.second < b.second);
  };
  std::sort(ref_bases_.begin(), ref_bases_.end(), id_less);
  for (std::uint32_t root = 0; root < entries_.size() && shown_.resolved_deltas < deltas_; ++root)
    if (!is_delta(entries_[root].kind)) resolve_from(root);
  if (shown_.resolved_deltas == deltas_) return;
  // Left over: deltas whose chain ends in a REF_DELTA against an id that no
  // object of the pack has (or a cycle of REF_DELTAs, which comes to the same).
  // A thin pack's bases are read from the store, each once.
  if (bases_) {
    std::vector<git_oid> outside;
    for (const auto& [id, index] : ref_bases_)
      if (!entries_[index].resolved && !by_id_.contains(id) && (outside.empty() || !git_oid_equal(&outside.back(), &id)))
        outside.push_back(id);
    for (const git_oid& id : outside) {
      if (shown_.resolved_deltas == deltas_) return;
      if (by_id_.contains(id)) continue;  // built from another base meanwhile
      std::uint32_t root = add_external_base(id);
      if (root != kNone) resolve_from(root);
    }
    if (shown_.resolved_deltas == deltas_) return;
  }
  for (const auto& [id, index] : ref_bases_) {
    if (entries_[index].resolved || by_id_.contains(id)) continue;
    throw Refused(entry_at(entries_[index].offset) + " is a delta against object " + oid_str(id) + ", which " +
                  (bases_ ? "neither the pack nor the store holds" : "the pack does not hold (kistore accepts no thin packs)"));
  }
  throw Refused("pack has deltas that cannot be resolved");  // unreachable: every chain ends in a REF_DELTA
}

// Resolves every delta built, directly or through other deltas, from the
// resolved entry `root`.
void IncomingPack::Impl::resolve_from(std::uint32_t root) {
  std::vector<std::uint32_t> todo{root};
  while (!todo.empty()) {
    std::uint32_t base = todo.back();
    todo.pop_back();
    auto ofs = std::equal_range(ofs_bases_.begin(), ofs_bases_.end(), std::make_pair(base, std::uint32_t{0}),
                                [](const auto& a, const auto& b) { return a.first < b.first; });
    auto ref = std::equal_range(ref_bases_.begin(), ref_bases_.end(), std::make_pair(entries_[base].id, 0u),
                                [](const auto& a, const auto& b) { return std::memcmp(a.first.id, b.first.id, 20) < 0; });
    for (auto it = ofs.first; it != ofs.second; ++it) {
      if (entries_[it->second].resolved) continue;
      resolve(base, it->second);
      todo.push_back(it->second);
    }
    for (auto it = ref.first; it != ref.second; ++it) {
      if (entries_[it->second].resolved) continue;
      resolve(base, it->second);
      todo.push_back(it->second);
    }
  }
}

// A thin pack's base `id`, read through bases_ into an entry of its own
// (after the received ones, at the end of the pack's content, never written
// into the new pack), or kNone when there is no such object.
std::uint32_t IncomingPack::Impl::add_external_base(const git_oid& id) {
  std::uint64_t largest = std::max({limits_.max_blob_bytes, limits_.max_tree_bytes, limits_.max_commit_bytes});
  git_object_t type = GIT_OBJECT_INVALID;
  auto bytes = std::make_shared<std::string>();
  if (!bases_(id, largest, type, *bytes)) return kNone;
  std::string what = "the base " + oid_str(id) + " of a delta in the pack";
  if (type != GIT_OBJECT_COMMIT && type != GIT_OBJECT_TREE && type != GIT_OBJECT_BLOB)
    throw Refused(what + " is a " + git_object_type2string(type) + "; only commits, trees and blobs can be bases");
  check_entry_size(static_cast<std::uint8_t>(type), bytes->size(), what + " has");
  git_oid actual = object_id(type, *bytes);
  if (!git_oid_equal(&actual, &id)) throw Corruption(what + " holds bytes whose id is " + oid_str(actual));
  count_inflated(bytes->size(), position_);
  Entry e;
  e.offset = position_;
  e.size = bytes->size();
  e.id = id;
  e.header_length = 0;
  e.kind = static_cast<std::uint8_t>(type);
  e.type = e.kind;
  e.resolved = true;
  e.external = true;
  std::uint32_t index = static_cast<std::uint32_t>(entries_.size());
  entries_.push_back(e);
  cache_.put(index, std::move(bytes));
  return index;
}

// An external base again, after the cache let it go.
void IncomingPack::Impl::read_external(std::uint32_t index, std::string& out) {
  const Entry& e = entries_[index];
  git_object_t type = GIT_OBJECT_INVALID;
  count_inflated(e.size, e.offset);
  if (!bases_(e.id, e.size, type, out) || out.size() != e.size || type != static_cast<git_object_t>(e.type))
    throw Corruption("the base " + oid_str(e.id) + " of a delta in the pack reads differently when read again");
}

void IncomingPack::Impl::resolve(std::uint32_t base, std::uint32_t child) {
  Entry& e = entries_[child];
  const Entry& b = entries_[base];
  if (b.depth + 1u > limits_.max_delta_depth)
    throw Refused(entry_at(e.offset) + " is a delta " + std::to_string(b.depth + 1u) +
                  " deep (deltas down to a whole object); the limit is " + std::to_string(limits_.max_delta_depth));
  DeltaBaseCache::Data source = object_of(base);
  read_entry(child, delta_buffer_);
  DeltaHeader h;
  if (!read_delta_header(delta_buffer_, h))
    throw Refused(entry_at(e.offset) + " is a delta without a valid header of base and result sizes");
  if (h.base_size != source->size())
    throw Refused(entry_at(e.offset) + " is a delta against a base of " + bytes_text(h.base_size) + "; its base, the " +
                  type_word(b.type) + " at offset " + std::to_string(b.offset) + ", has " + bytes_text(source->size()));
  check_entry_size(b.type, h.result_size, entry_at(e.offset) + " is a delta building");
  count_inflated(h.result_size, e.offset);
  auto built = std::make_shared<std::string>();
  apply_delta(*source, delta_buffer_, h, *built, e.offset);
  e.base = base;
  e.depth = b.depth + 1;
  store_object(child, b.type, *built);
  cache_.put(child, std::move(built));
  ++shown_.resolved_deltas;
  report();
}

// A resolved entry's object: from the cache, or rebuilt from the nearest
// entry down its chain that is cached or whole. Every entry on the chain was
// resolved, so its sizes hold; the rebuilt bytes, each step at least
// kDeltaStepCost, count against max_inflated_bytes, so a pack shaped to push
// its bases out of the cache (deep chains of tiny objects included) cannot
// make this unbounded work.
DeltaBaseCache::Data IncomingPack::Impl::object_of(std::uint32_t index) {
  if (DeltaBaseCache::Data hit = cache_.get(index)) return hit;
  std::vector<std::uint32_t> chain;
  std::uint32_t at = index;
  DeltaBaseCache::Data data;
  while (!(data = cache_.get(at)) && is_delta(entries_[at].kind)) {
    chain.push_back(at);
    at = entries_[at].base;
  }
  if (!data) {
    auto whole = std::make_shared<std::string>();
    if (entries_[at].external) read_external(at, *whole);
    else read_entry(at, *whole);
    data = std::move(whole);
    cache_.put(at, data);
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    read_entry(*it, delta_buffer_);
    DeltaHeader h;
    if (!read_delta_header(delta_buffer_, h) || h.base_size != data->size())
      throw Refused(entry_at(entries_[*it].offset) + " reads differently when read again");
    count_inflated(std::max(h.result_size, kDeltaStepCost), entries_[*it].offset);
    auto built = std::make_shared<std::string>();
    apply_delta(*data, delta_buffer_, h, *built, entries_[*it].offset);
    data = std::move(built);
    cache_.put(*it, data);
  }
  return data;
}

}  // namespace kistore::git
