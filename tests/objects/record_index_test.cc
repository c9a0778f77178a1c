// RecordIndex (objects/record_index.h): records found by their keys, across
// growth, with colliding hashes, and none found that was not added.
#include "objects/record_index.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

namespace kistore {
namespace {

// Every key hashes alike: each find walks the probe sequence.
struct OneBucket {
  std::size_t operator()(const std::string&) const { return 7; }
};

TEST_CASE("RecordIndex finds every record added, across growth, and nothing else", "[record_index]") {
  std::vector<std::uint64_t> keys;
  std::mt19937_64 rng(42);
  std::unordered_set<std::uint64_t> seen;
  while (keys.size() < 100000)
    if (std::uint64_t k = rng(); seen.insert(k).second) keys.push_back(k);
  RecordIndex<std::uint64_t> index;
  auto key_of = [&](std::uint32_t r) { return keys[r]; };
  for (std::uint32_t r = 0; r < keys.size(); ++r) {
    REQUIRE_FALSE(index.find(keys[r], key_of));
    index.insert(r, key_of);
  }
  CHECK(index.size() == keys.size());
  for (std::uint32_t r = 0; r < keys.size(); ++r) REQUIRE(index.find(keys[r], key_of) == r);
  for (int i = 0; i < 1000; ++i) {
    std::uint64_t k = rng();
    if (!seen.count(k)) REQUIRE_FALSE(index.find(k, key_of));
  }
  // At most half full: a power of two of at least twice the records.
  CHECK(index.bytes() >= 2 * keys.size() * sizeof(std::uint32_t));
  CHECK(index.bytes() <= 4 * keys.size() * sizeof(std::uint32_t));
}

TEST_CASE("RecordIndex with every hash alike still tells keys apart", "[record_index]") {
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; ++i) keys.push_back("key-" + std::to_string(i));
  RecordIndex<std::string, OneBucket> index;
  auto key_of = [&](std::uint32_t r) -> const std::string& { return keys[r]; };
  for (std::uint32_t r = 0; r < keys.size(); ++r) index.insert(r, key_of);
  for (std::uint32_t r = 0; r < keys.size(); ++r) REQUIRE(index.find(keys[r], key_of) == r);
  CHECK_FALSE(index.find("key-3000", key_of));
  CHECK_FALSE(index.find("", key_of));
}

TEST_CASE("RecordIndex: empty, and a record number it cannot hold", "[record_index]") {
  RecordIndex<int> index;
  std::vector<int> keys{5};
  auto key_of = [&](std::uint32_t r) { return keys[r]; };
  CHECK_FALSE(index.find(5, key_of));
  CHECK(index.size() == 0);
  CHECK_THROWS_AS(index.insert(UINT32_MAX, key_of), std::length_error);
  CHECK(index.size() == 0);
}

}  // namespace
}  // namespace kistore
