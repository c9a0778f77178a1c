// A set of record numbers found by a key each record holds: the index a
// writer keeps over records it stores elsewhere (bulk add's documents by
// digest, a pack's entries by git id), where the keys must not be stored
// twice.
//
// Open addressing with linear probing, at most half full: a slot is 4 bytes
// (the record number + 1; 0 is empty), 8 to 16 bytes a record, where a
// std::unordered_set<std::uint32_t> with a hash that looks the key up takes
// 40 to 48 (a node and a bucket) and an unordered_map from the key itself
// more (bench/record_index.cc measures both). A miss (every new record is
// one) takes 2.5 probes on average at half full. Records are never removed.
//
// KeyOf is called as key_of(record) and returns the record's key (a value or
// a reference); Hash and Eq are as for std::unordered_set<Key>.
//
// Thread-safety: none; one writer, or readers only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <vector>

namespace kistore {

template <typename Key, typename Hash = std::hash<Key>, typename Eq = std::equal_to<Key>>
class RecordIndex {
 public:
  // The record whose key equals `key`, or nullopt.
  template <typename KeyOf>
  std::optional<std::uint32_t> find(const Key& key, KeyOf&& key_of) const {
    if (slots_.empty()) return std::nullopt;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = Hash{}(key) & mask;; i = (i + 1) & mask) {
      const std::uint32_t s = slots_[i];
      if (s == 0) return std::nullopt;
      if (Eq{}(key_of(s - 1), key)) return s - 1;
    }
  }

  // Adds `record`, whose key no record here has (find first). Throws
  // std::length_error past 2^32 - 2 records.
  template <typename KeyOf>
  void insert(std::uint32_t record, KeyOf&& key_of) {
    if (record == UINT32_MAX) throw std::length_error("RecordIndex: record number out of range");
    if ((size_ + 1) * 2 > slots_.size()) {
      std::vector<std::uint32_t> old(std::max<std::size_t>(1024, slots_.size() * 2), 0);
      old.swap(slots_);
      for (std::uint32_t s : old)
        if (s) place(s, key_of(s - 1));
    }
    place(record + 1, key_of(record));
    ++size_;
  }

  std::size_t size() const { return size_; }
  // Bytes held (the slots), for a caller that reports its memory.
  std::size_t bytes() const { return slots_.capacity() * sizeof(std::uint32_t); }

 private:
  void place(std::uint32_t slot, const Key& key) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = Hash{}(key) & mask;
    while (slots_[i]) i = (i + 1) & mask;
    slots_[i] = slot;
  }

  std::vector<std::uint32_t> slots_;  // a power of two long, or empty
  std::size_t size_ = 0;
};

}  // namespace kistore
