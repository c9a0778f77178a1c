// What verify keeps of every object between the walk and the index checks,
// compactly (store/verify/verify_state.h): a million runs would otherwise
// hold a million ObjectFacts, each with its strings and optionals (~640
// bytes and ~350 more on the heap). Here a run is ~80 bytes beside its
// digest: the digests it names are numbers in a table shared by all (a
// store's runs name few protocols, environments and comparison keys), its
// primary measurement a value and the number of its (metric, statistic,
// unit), its source key bytes in its shard's text. ObjectTable::facts gives
// an ObjectFacts back for the few places (problems, reruns) that weigh one.
//
// Thread-safety: every member function may be called from any thread.
// put() locks the object's shard and the shards of the digest table it
// interns into, in that order; the readers (find, facts, digest, measurement)
// may run at once only after every put() returned.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "objects/digest.h"
#include "refs/index.h"

namespace kistore::verifying {

inline constexpr std::uint32_t kNone = 0xffffffffu;

// An open-addressed index over a dense array kept by its owner: slot ->
// place in the array (kNone: empty), probed linearly from the key's hash.
// A lookup is one probe into 4-byte slots and one key compare, where a
// node-based map walked a bucket's list and allocated a node an entry.
// The keys stay in the owner's array: `same(place)` says whether the key at
// a place is the one asked for, `hash_at(place)` hashes the key at a place
// (to grow). Not thread-safe: the owner locks.
class PlaceSlots {
 public:
  template <typename Same>
  std::uint32_t find(std::size_t hash, const Same& same) const {
    if (slots_.empty()) return kNone;
    for (std::size_t i = hash & mask();; i = (i + 1) & mask()) {
      const std::uint32_t place = slots_[i];
      if (place == kNone || same(place)) return place;
    }
  }
  // The place of the key, or `next` (the array's size, where the caller
  // then puts it) and true when it was not there.
  template <typename Same, typename HashAt>
  std::pair<std::uint32_t, bool> insert(std::size_t hash, std::uint32_t next, const Same& same, const HashAt& hash_at) {
    if ((used_ + 1) * 4 > slots_.size() * 3) grow(hash_at);
    for (std::size_t i = hash & mask();; i = (i + 1) & mask()) {
      const std::uint32_t place = slots_[i];
      if (place == kNone) {
        slots_[i] = next, ++used_;
        return {next, true};
      }
      if (same(place)) return {place, false};
    }
  }
  void clear() { std::vector<std::uint32_t>().swap(slots_), used_ = 0; }
  // Room for `n` keys without growing (an empty table; otherwise nothing).
  void reserve(std::size_t n) {
    if (!slots_.empty()) return;
    std::size_t size = 16;
    while (size * 3 < n * 4) size *= 2;
    slots_.assign(size, kNone);
  }

 private:
  std::size_t mask() const { return slots_.size() - 1; }
  template <typename HashAt>
  void grow(const HashAt& hash_at) {
    std::vector<std::uint32_t> old(slots_.empty() ? 16 : slots_.size() * 2, kNone);
    old.swap(slots_);
    for (std::uint32_t place : old)
      if (place != kNone)
        for (std::size_t i = hash_at(place) & mask();; i = (i + 1) & mask())
          if (slots_[i] == kNone) {
            slots_[i] = place;
            break;
          }
  }
  std::vector<std::uint32_t> slots_;  // a power of two, at most three quarters used
  std::size_t used_ = 0;
};

// PlaceSlots keyed by digests, hashed by bits that the tables' shards (a
// digest's first byte) leave free; `at(place)` gives the digest at a place.
class DigestSlots {
 public:
  template <typename At>
  std::uint32_t find(const Digest& d, const At& at) const {
    return slots_.find(hash(d), [&](std::uint32_t place) { return at(place) == d; });
  }
  template <typename At>
  std::pair<std::uint32_t, bool> insert(const Digest& d, std::uint32_t next, const At& at) {
    return slots_.insert(hash(d), next, [&](std::uint32_t place) { return at(place) == d; },
                         [&](std::uint32_t place) { return hash(at(place)); });
  }
  void clear() { slots_.clear(); }

 private:
  static std::size_t hash(const Digest& d) {
    std::uint64_t h;
    __builtin_memcpy(&h, d.bytes().data() + 8, sizeof(h));
    return static_cast<std::size_t>(h);
  }
  PlaceSlots slots_;
};

// Digests by number, interned from any thread: the number's top byte is the
// digest's first byte (the shard it is kept in), the rest its place there.
class DigestTable {
 public:
  std::uint32_t intern(const Digest& d);
  std::uint32_t intern(const std::optional<Digest>& d) { return d ? intern(*d) : kNone; }
  const Digest& at(std::uint32_t id) const { return shards_[id >> 24].digests[id & 0xffffffu]; }
  std::optional<Digest> get(std::uint32_t id) const {
    return id == kNone ? std::nullopt : std::optional<Digest>(at(id));
  }

 private:
  struct Shard {
    std::mutex mutex;
    std::deque<Digest> digests;
    DigestSlots ids;
  };
  std::array<Shard, 256> shards_;
};

// A measurement as its value and the number of its (metric, statistic,
// unit) in MeasurementKinds; kind kNone: no measurement. Two are equal
// exactly when their group_entry bytes are.
struct Primary {
  double value = 0;
  std::uint32_t kind = kNone;
  friend bool operator==(const Primary& a, const Primary& b) {
    return a.kind == b.kind && (a.kind == kNone || a.value == b.value);
  }
};

// The (metric, statistic, unit) triples met, by number; interned from any
// thread (most lines repeat the last triple a thread met: no lock then).
class MeasurementKinds {
 public:
  Primary primary(const std::optional<Measurement>& m) const;
  std::optional<Measurement> measurement(const Primary& p) const;

 private:
  static inline std::atomic<std::uint64_t> tables_{0};
  // This table's number, never reused (a later table at the same address is another).
  const std::uint64_t serial_ = ++tables_;
  mutable std::mutex mutex_;
  mutable std::deque<Measurement> kinds_;  // value 0
};

// What the index checks need of one object; the run's members are kNone /
// empty for other kinds. groups and levels count its entries (through
// std::atomic_ref, from check_in_parallel's threads).
struct StoredObject {
  int groups = 0, levels = 0;
  Primary primary;
  std::uint32_t key = kNone;  // the comparison key, in ObjectTable::digests
  std::array<std::uint32_t, 4> references{kNone, kNone, kNone, kNone};  // by References::kRoles
  std::uint64_t source_at = 0;  // the source key (format 3) or path: its bytes in the shard's text
  std::uint32_t source_size = kNone;  // kNone: none
  Kind kind = Kind::kRun;
  Level default_level = Level::kReported;
  bool valid = false;
};

class ObjectTable {
 public:
  // Keeps what `facts` (of an object path, facts.digest set) says; a digest
  // put twice keeps the last.
  void put(ObjectFacts&& facts);

  const StoredObject* find(const Digest& d) const;
  StoredObject* find(const Digest& d);
  bool contains(const Digest& d) const { return find(d) != nullptr; }
  // The object's facts as object_facts gave them (group_path left empty;
  // an invalid object's problem is a placeholder: only valid() is meant).
  ObjectFacts facts(const Digest& d, const StoredObject& o) const;
  std::optional<ObjectFacts> facts(const Digest& d) const;

  // The run's source key or path; nullopt when it has none.
  std::optional<std::string_view> source(const Digest& d, const StoredObject& o) const;
  std::optional<Digest> key(const StoredObject& o) const { return digests.get(o.key); }
  std::string group_bytes(const StoredObject& o) const { return group_entry(kinds.measurement(o.primary)); }

  std::size_t size() const;
  void clear();
  // fn(digest, object) for every object, shard by shard.
  template <typename F>
  void for_each(F&& fn) const {
    for (const Shard& shard : shards_)
      for (const Entry& e : shard.entries) fn(e.digest, e.object);
  }

  DigestTable digests;
  MeasurementKinds kinds;

 private:
  struct Attested {
    std::optional<Digest> subject;
    std::string bytes;
  };
  struct Entry {
    Digest digest;
    StoredObject object;
  };
  struct Shard {
    std::mutex mutex;
    std::deque<Entry> entries;  // in the order put, found through `slots`
    DigestSlots slots;
    std::string text;  // source keys and paths
    std::unordered_map<Digest, Attested> attestations;
  };
  std::array<Shard, 256> shards_;
};

}  // namespace kistore::verifying
