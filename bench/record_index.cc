// RecordIndex (objects/record_index.h) against the standard containers that
// could take its place, on N random 32-byte keys held in one array (as bulk
// add holds document digests and a pack writer its entries' ids): bytes
// allocated per record (mallinfo2) and nanoseconds per insert and per
// lookup. Built on request: ninja -C build bench_record_index, then
//   build/bench_record_index [N]        (default 1000000)
#include <malloc.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "objects/record_index.h"

namespace {

using Key = std::array<unsigned char, 32>;
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    std::size_t h;
    std::memcpy(&h, k.data(), sizeof h);
    return h;
  }
};

std::size_t allocated() {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;  // small blocks and mmapped ones
}
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

template <typename Insert, typename Find>
void measure(const char* name, std::size_t n, Insert&& insert, Find&& find) {
  std::size_t before = allocated();
  double t0 = now();
  for (std::uint32_t r = 0; r < n; ++r) insert(r);
  double t1 = now();
  std::size_t found = 0;
  for (std::uint32_t r = 0; r < n; ++r) found += find(r);
  double t2 = now();
  std::size_t bytes = allocated() - before;
  std::printf("%-44s %6.1f bytes/record  %6.1f ns/insert  %6.1f ns/lookup  (%zu found)\n", name,
              double(bytes) / n, (t1 - t0) * 1e9 / n, (t2 - t1) * 1e9 / n, found);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  std::vector<Key> keys(n);
  std::mt19937_64 rng(1);
  for (Key& k : keys)
    for (std::size_t i = 0; i < k.size(); i += 8) {
      std::uint64_t v = rng();
      std::memcpy(k.data() + i, &v, 8);
    }
  std::printf("%zu records, 32-byte keys held elsewhere\n", n);
  {
    kistore::RecordIndex<Key, KeyHash> index;
    auto key_of = [&](std::uint32_t r) -> const Key& { return keys[r]; };
    measure("RecordIndex (open addressing, 4-byte slots)", n, [&](std::uint32_t r) { index.insert(r, key_of); },
            [&](std::uint32_t r) { return index.find(keys[r], key_of).has_value(); });
  }
  {
    // The record number in a node-based set, hashed and compared through the key.
    struct ByKey {
      using is_transparent = void;
      const std::vector<Key>* keys;
      std::size_t operator()(std::uint32_t r) const { return KeyHash{}((*keys)[r]); }
      std::size_t operator()(const Key& k) const { return KeyHash{}(k); }
      bool operator()(std::uint32_t a, std::uint32_t b) const { return a == b; }
      bool operator()(const Key& k, std::uint32_t b) const { return k == (*keys)[b]; }
      bool operator()(std::uint32_t a, const Key& k) const { return (*keys)[a] == k; }
    };
    std::unordered_set<std::uint32_t, ByKey, ByKey> set(0, ByKey{&keys}, ByKey{&keys});
    measure("std::unordered_set<uint32_t> (transparent)", n, [&](std::uint32_t r) { set.insert(r); },
            [&](std::uint32_t r) { return set.find(keys[r]) != set.end(); });
  }
  {
    std::unordered_map<Key, std::uint32_t, KeyHash> map;
    measure("std::unordered_map<Key, uint32_t> (key copied)", n, [&](std::uint32_t r) { map.emplace(keys[r], r); },
            [&](std::uint32_t r) { return map.find(keys[r]) != map.end(); });
  }
}
