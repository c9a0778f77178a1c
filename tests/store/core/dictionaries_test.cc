// The dictionary cache (store/core/dictionaries.h): reads each dictionaries/<id>
// once, bounds what it keeps, and keeps refusing a damaged one without
// reading it again.
#include "store/core/dictionaries.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "objects/error.h"

namespace kistore {
namespace {

// A dictionary `zstd --train` makes with Dictionary_ID `id`.
std::string trained(unsigned id) {
  namespace fs = std::filesystem;
  char tmpl[] = "/tmp/kistore-dict-test-XXXXXX";
  REQUIRE(::mkdtemp(tmpl));
  const std::string dir = tmpl;
  for (int i = 0; i < 200; ++i)
    std::ofstream(dir + "/" + std::to_string(i)) << R"({"kind":"Implementation","spec":{"name":"k)" << i
                                                 << R"(","repo":"https://github.com/x/y)" << i * 7 << "\"}}";
  std::string cmd = "zstd -q -f --train '" + dir + "'/* --maxdict=2048 --dictID=" + std::to_string(id) + " -o '" +
                    dir + "/dict' 2>/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream in(dir + "/dict", std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  fs::remove_all(dir);
  return out.str();
}

}  // namespace

TEST_CASE("dictionary cache: each dictionary read once, at most kCachedDictionaries kept, damage remembered",
          "[dictionaries]") {
  const std::string d7 = trained(7);
  std::map<std::string, int> reads;
  std::map<std::string, std::string> tree = {{"dictionaries/7", d7}, {"dictionaries/9", "not a dictionary"}};
  DictionaryCache cache([&](const std::string& path) -> std::optional<std::string> {
    ++reads[path];
    auto it = tree.find(path);
    if (it == tree.end()) return std::nullopt;
    return it->second;
  });
  auto seven = cache.find(7);
  REQUIRE(seven);
  CHECK(seven->id() == 7);
  CHECK(cache.find(7) == seven);
  CHECK(reads["dictionaries/7"] == 1);

  CHECK_FALSE(cache.find(8));
  CHECK_FALSE(cache.lookup()(8));
  CHECK(reads["dictionaries/8"] == 1);  // an absent one is remembered too

  for (int i = 0; i < 2; ++i) {
    try {
      cache.find(9);
      FAIL("a damaged dictionary was accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kCorruption);
      CHECK_THAT(e.what(), Catch::Matchers::Contains("dictionaries/9"));
    }
  }
  CHECK(reads["dictionaries/9"] == 1);

  // More IDs than the cache keeps: the least recently used (7, then 8, 9)
  // is read again, and a dictionary handed out stays usable after it goes.
  for (std::uint32_t id = 100; id < 100 + DictionaryCache::kCachedDictionaries; ++id) cache.find(id);
  CHECK(seven->id() == 7);
  cache.find(7);
  CHECK(reads["dictionaries/7"] == 2);
  cache.find(100 + DictionaryCache::kCachedDictionaries - 1);
  CHECK(reads["dictionaries/" + std::to_string(100 + DictionaryCache::kCachedDictionaries - 1)] == 1);
}

}  // namespace kistore
