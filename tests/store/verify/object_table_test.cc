// verify's compact tables (store/verify/object_table.h): digests interned to
// stable numbers, objects found by digest, through open-addressed slots that
// must survive long probe chains, growth and a digest put twice.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/verify/object_table.h"

namespace kistore::verifying {
namespace {

// A digest whose bytes 8..15 (what the slots hash) are `probe`, its first
// byte (the shard) `shard`, and the rest from `n`: digests with one probe
// value collide in every slot table.
Digest digest_of(unsigned shard, std::uint64_t probe, std::uint64_t n) {
  static const char* hex = "0123456789abcdef";
  unsigned char b[32] = {};
  b[0] = static_cast<unsigned char>(shard);
  __builtin_memcpy(b + 8, &probe, 8);
  __builtin_memcpy(b + 16, &n, 8);
  std::string text;
  for (unsigned char c : b) text += hex[c >> 4], text += hex[c & 15];
  return *Digest::parse_hex(text);
}

TEST_CASE("DigestTable gives one number a digest, whatever collides or grows") {
  DigestTable table;
  std::vector<Digest> all;
  for (std::uint64_t n = 0; n < 3000; ++n) all.push_back(digest_of(7, n % 3 == 0 ? 42 : n, n));  // a third collide
  for (std::uint64_t n = 0; n < 200; ++n) all.push_back(digest_of(static_cast<unsigned>(n), 1, n));
  std::vector<std::uint32_t> ids;
  for (const Digest& d : all) ids.push_back(table.intern(d));
  std::set<std::uint32_t> distinct(ids.begin(), ids.end());
  CHECK(distinct.size() == all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    CHECK(table.at(ids[i]) == all[i]);
    CHECK(table.intern(all[i]) == ids[i]);  // again: the same number, nothing added
    CHECK((ids[i] >> 24) == all[i].bytes()[0]);
  }
  CHECK(table.intern(std::optional<Digest>()) == kNone);
  CHECK(!table.get(kNone));
}

TEST_CASE("DigestTable interns from many threads at once") {
  DigestTable table;
  std::vector<Digest> all;
  for (std::uint64_t n = 0; n < 4000; ++n) all.push_back(digest_of(static_cast<unsigned>(n % 5), n % 7, n));
  std::vector<std::vector<std::uint32_t>> seen(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < seen.size(); ++t)
    threads.emplace_back([&, t] {
      for (const Digest& d : all) seen[t].push_back(table.intern(d));
    });
  for (std::thread& t : threads) t.join();
  for (std::size_t t = 1; t < seen.size(); ++t) CHECK(seen[t] == seen[0]);
  for (std::size_t i = 0; i < all.size(); ++i) CHECK(table.at(seen[0][i]) == all[i]);
}

TEST_CASE("ObjectTable finds what was put, keeps the last of a digest put twice, and clears") {
  ObjectTable table;
  std::vector<Digest> all;
  for (std::uint64_t n = 0; n < 2000; ++n) all.push_back(digest_of(3, n % 2 ? 99 : n, n));
  for (std::size_t i = 0; i < all.size(); ++i) {
    ObjectFacts f;
    f.digest = all[i];
    f.kind = i % 2 ? Kind::kProtocol : Kind::kEnvironment;
    table.put(std::move(f));
  }
  CHECK(table.size() == all.size());
  CHECK(!table.find(digest_of(3, 99, 5000)));  // in a long chain, absent
  CHECK(!table.find(digest_of(4, 0, 0)));      // in an empty shard
  for (std::size_t i = 0; i < all.size(); ++i) {
    const StoredObject* o = table.find(all[i]);
    REQUIRE(o);
    CHECK(o->kind == (i % 2 ? Kind::kProtocol : Kind::kEnvironment));
  }
  ObjectFacts again;
  again.digest = all[11];
  again.kind = Kind::kWorkload;
  table.put(std::move(again));
  CHECK(table.size() == all.size());
  CHECK(table.find(all[11])->kind == Kind::kWorkload);
  std::size_t visited = 0;
  table.for_each([&](const Digest& d, const StoredObject& o) {
    ++visited;
    CHECK(table.find(d) == &o);
  });
  CHECK(visited == all.size());
  table.clear();
  CHECK(table.size() == 0);
  CHECK(!table.find(all[0]));
}

}  // namespace
}  // namespace kistore::verifying

namespace kistore::verifying {
namespace {

TEST_CASE("PlaceSlots finds the first place of each key, through collisions, growth and a reserve") {
  // Keys are strings in the owner's array; the hash is weak on purpose (the
  // length), so that most keys collide.
  std::vector<std::string> keys;
  for (int n = 0; n < 2000; ++n) keys.push_back(std::to_string(n % 700));  // each key up to three times
  for (bool reserved : {false, true}) {
    PlaceSlots slots;
    if (reserved) slots.reserve(keys.size());
    auto hash_at = [&](std::uint32_t p) { return keys[p].size(); };
    std::vector<std::uint32_t> first;
    for (std::uint32_t i = 0; i < keys.size(); ++i) {
      auto [place, added] = slots.insert(keys[i].size(), i, [&](std::uint32_t p) { return keys[p] == keys[i]; }, hash_at);
      CHECK(added == (i < 700));
      CHECK(place == i % 700);
    }
    for (std::uint32_t i = 0; i < keys.size(); ++i) {
      const std::string& k = keys[i];
      CHECK(slots.find(k.size(), [&](std::uint32_t p) { return keys[p] == k; }) == i % 700);
    }
    const std::string absent = "7000";
    CHECK(slots.find(absent.size(), [&](std::uint32_t p) { return keys[p] == absent; }) == kNone);
  }
}

}  // namespace
}  // namespace kistore::verifying
