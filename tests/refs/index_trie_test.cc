#include "refs/index_trie.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "objects/digest.h"
#include "objects/error.h"

namespace kistore {
namespace {

// Lines whose bytes are their key: build_trie never reads a line.
std::vector<KeyedLine> bare(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end());
  std::vector<KeyedLine> out;
  for (auto& k : keys) out.push_back({k, k + "\n"});
  return out;
}

TEST_CASE("build_trie at T=2: files by one digit, folders through their keys' common digits", "[index_trie]") {
  const TrieFiles files = build_trie(bare({"0a00", "0a01", "0a02", "0b00", "1000", "1234", "1235", "1236", "f000"}), 2);
  const TrieFiles expected = {
      {"0/a0/0", "0a00\n"}, {"0/a0/1", "0a01\n"}, {"0/a0/2", "0a02\n"}, {"0/b", "0b00\n"},  {"1/0", "1000\n"},
      {"1/23/4", "1234\n"}, {"1/23/5", "1235\n"}, {"1/23/6", "1236\n"}, {"f", "f000\n"},
  };
  CHECK(files == expected);
}

TEST_CASE("build_trie folds a long shared prefix into one folder name", "[index_trie]") {
  const std::vector<KeyedLine> lines = bare({"abcdef00", "abcdef01", "abcdef02", "abcdef03", "abcdef14", "12345678"});
  CHECK(build_trie(lines, 3) == TrieFiles{{"1", "12345678\n"},
                                          {"abcdef/0/0", "abcdef00\n"},
                                          {"abcdef/0/1", "abcdef01\n"},
                                          {"abcdef/0/2", "abcdef02\n"},
                                          {"abcdef/0/3", "abcdef03\n"},
                                          {"abcdef/1", "abcdef14\n"}});
  // One more line a file may hold: the four keys under abcdef0 are one file.
  CHECK(build_trie(lines, 4) == TrieFiles{{"1", "12345678\n"},
                                          {"abcdef/0", "abcdef00\nabcdef01\nabcdef02\nabcdef03\n"},
                                          {"abcdef/1", "abcdef14\n"}});
  // At most T lines in all: still one file per first digit, never one file at refs/<family>/.
  CHECK(build_trie(lines, 6) == TrieFiles{{"1", "12345678\n"},
                                          {"a", "abcdef00\nabcdef01\nabcdef02\nabcdef03\nabcdef14\n"}});
  CHECK(build_trie({}, 3).empty());
}

// 128-digit keys: `groups` runs under group keys.
std::vector<std::string> group_keys(std::mt19937& rng, int groups, int runs) {
  std::vector<std::string> keys;
  std::vector<std::string> group;
  for (int g = 0; g < groups; ++g) group.push_back(Digest::of("group " + std::to_string(rng())).hex());
  for (int r = 0; r < runs; ++r) keys.push_back(group[r % groups] + Digest::of("run " + std::to_string(rng())).hex());
  return keys;
}

TEST_CASE("a group of many runs sits one folder below its 64 digits, not 64 folders", "[index_trie]") {
  std::mt19937 rng(7);
  const std::vector<std::string> keys = group_keys(rng, 1, 5000);
  const TrieFiles files = build_trie(bare(keys), 64);
  const std::string group = keys[0].substr(0, 64);
  std::size_t deepest = 0;
  for (const auto& [path, bytes] : files) {
    INFO(path);
    // The group's folder name holds its 64 digits (and no run digit: 5000
    // random runs do not all share one).
    REQUIRE(path.starts_with(group + "/"));
    deepest = std::max<std::size_t>(deepest, std::count(path.begin(), path.end(), '/'));
  }
  // 5000 runs / 16 / 16 < 64: two digits of the run's below the group's folder.
  CHECK(deepest == 2);
}

TEST_CASE("build_trie refuses input that is not sorted unique lines of one key length", "[index_trie]") {
  CHECK_THROWS_AS(build_trie(bare({"ab", "ab"}), 2), std::invalid_argument);
  CHECK_THROWS_AS(build_trie({{"b0", "b0\n"}, {"a0", "a0\n"}}, 2), std::invalid_argument);
  CHECK_THROWS_AS(build_trie(bare({"ab", "abc"}), 2), std::invalid_argument);
  CHECK_THROWS_AS(build_trie(bare({"AB"}), 2), std::invalid_argument);
  CHECK_THROWS_AS(build_trie({{"ab", "ab"}}, 2), std::invalid_argument);
  CHECK_THROWS_AS(build_trie(bare({"ab"}), 0), std::invalid_argument);
}

TEST_CASE("build_trie refuses keys that would need a file past the depth bound", "[index_trie]") {
  // At T=1, each key 0…010…0 leaves the others one folder further down.
  std::vector<std::string> keys = {std::string(64, '0')};
  for (std::size_t i = 0; i <= kTrieMaxFolders + 1; ++i) keys.push_back(std::string(i, '0') + "1" + std::string(63 - i, '0'));
  CHECK_THROWS_AS(build_trie(bare(keys), 1), Error);
  keys.pop_back();  // 14 folders: the bound itself
  const TrieFiles files = build_trie(bare(keys), 1);
  std::string deepest;
  for (std::size_t i = 0; i < kTrieMaxFolders; ++i) deepest += "0/";
  CHECK(files.at(deepest + "0") == std::string(64, '0') + "\n");
  CHECK(files.at(deepest + "1") == keys.back() + "\n");
}

TEST_CASE("trie_prefix joins a path's names", "[index_trie]") {
  CHECK(trie_prefix("04a2/7/c") == "04a27c");
  CHECK(trie_prefix("f") == "f");
}

TEST_CASE("locate_in_trie finds the file of every key, and where a new key would go", "[index_trie]") {
  std::mt19937 rng(11);
  for (std::size_t t : {1, 2, 3, 8}) {
    const std::vector<std::string> keys = group_keys(rng, 3, 60);
    const std::vector<KeyedLine> lines = bare(keys);
    const TrieFiles files = build_trie(lines, t);
    std::set<std::string> folders;
    for (const auto& [path, bytes] : files)
      for (std::size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1))
        folders.insert(path.substr(0, slash));
    for (const KeyedLine& l : lines) {
      const TrieSlot slot = locate_in_trie(l.key, folders);
      INFO(l.key);
      CHECK_FALSE(slot.split_folder);
      REQUIRE(files.contains(slot.path));
      CHECK(files.at(slot.path).find(l.line) != std::string::npos);
    }
    // A new key: after the add, it is in the file locate named (when that
    // file had room, or the key split a folder's name).
    for (int i = 0; i < 200; ++i) {
      std::string key = keys[rng() % keys.size()];
      key.replace(rng() % 128, std::string::npos, Digest::of(std::to_string(rng())).hex() + std::string(128, '0'));
      key.resize(128);
      if (std::binary_search(keys.begin(), keys.end(), key)) continue;
      const TrieSlot slot = locate_in_trie(key, folders);
      std::vector<std::string> more = keys;
      more.push_back(key);
      const TrieFiles after = build_trie(bare(more), t);
      const bool had_room = !files.contains(slot.path) ||
                            std::count(files.at(slot.path).begin(), files.at(slot.path).end(), '\n') <
                                static_cast<std::ptrdiff_t>(t);
      INFO(key << " -> " << slot.path);
      if (slot.split_folder || had_room) {
        REQUIRE(after.contains(slot.path));
        CHECK(after.at(slot.path).find(key + "\n") != std::string::npos);
      }
      if (slot.split_folder) {
        // The old folder's entries now sit one folder down, under the rest of its name.
        CHECK_FALSE(folders.contains(slot.path.substr(0, slot.path.rfind('/'))));
      }
    }
  }
}

}  // namespace
}  // namespace kistore

namespace kistore {
namespace {

// A levels line for `key` (64 digits): check_trie reads real lines.
std::string level(const std::string& key) {
  return render_line(LevelFact{*Digest::parse_hex(key), Level::kReproduced, Digest::of("rerun")});
}
std::string pad(const std::string& digits) { return digits + std::string(64 - digits.size(), '0'); }

TrieFiles level_trie(std::vector<std::string> keys, std::size_t t) {
  std::sort(keys.begin(), keys.end());
  std::vector<KeyedLine> lines;
  for (const auto& k : keys) lines.push_back({k, level(k)});
  return build_trie(lines, t);
}

std::vector<std::string> details(const std::vector<Problem>& problems) {
  std::vector<std::string> out;
  for (const Problem& p : problems) {
    CHECK(p.kind == ProblemKind::kLayout);
    out.push_back(p.path + ": " + p.detail);
  }
  return out;
}

const std::string a = pad("0a"), b = pad("0a1"), c = pad("0b"), d = pad("1");

TEST_CASE("check_trie accepts what build_trie writes", "[index_trie]") {
  const TrieFiles good = {{"0/a", level(a) + level(b)}, {"0/b", level(c)}, {"1", level(d)}};
  REQUIRE(level_trie({a, b, c, d}, 2) == good);
  CHECK(check_trie(Family::kLevels, good, 2).empty());
  std::mt19937 rng(5);
  for (std::size_t t : {1, 2, 3, 16}) {
    std::vector<std::string> keys;
    for (int i = 0; i < 300; ++i) keys.push_back(Digest::of(std::to_string(rng())).hex());
    // Some long shared prefixes too.
    for (int i = 0; i < 40; ++i) keys.push_back("abcdef" + Digest::of(std::to_string(rng())).hex().substr(6));
    INFO(t);
    CHECK(details(check_trie(Family::kLevels, level_trie(keys, t), t)).empty());
  }
}

TEST_CASE("check_trie reports each kind of wrong tree", "[index_trie]") {
  std::string deep = "0";  // 15 folders, then a file
  for (int i = 1; i < 15; ++i) deep += "/0";
  const std::string e = pad("2c0"), f = pad("2c1"), g = pad("2c2");
  struct Case {
    TrieFiles files;
    std::size_t t;
    std::vector<std::string> problems;
  };
  const std::vector<Case> table = {
      {{{"0", level(a) + level(b) + level(c)}, {"1", level(d)}}, 2,
       {"refs/levels/0: expected a file of at most 2 lines (more make a folder), found 3 lines"}},
      {{{"0/a", level(a) + level(b)}, {"0/b", level(c)}, {"1", level(d)}}, 3,
       {"refs/levels/0: expected a folder of more than 3 lines (at most 3 make one file), found 3 lines"}},
      {{{"0/a", level(a) + level(b)}, {"0/b", level(c)}, {"1", level(d)}, {"0/B", level(c)}}, 2,
       {"refs/levels/0/B: expected a file named by one lowercase hex digit, found \"B\""}},
      {{{"0/a", level(a) + level(b)}, {"0/b", level(c)}, {"1", level(d)}, {"1x/0", level(d)}}, 2,
       {"refs/levels/1x/0: expected folder names of 1 to 63 lowercase hex digits, found \"1x\""}},
      {{{"0/a", level(a) + level(b)}, {"0/b", level(c)}, {"11", level(d)}}, 2,
       {"refs/levels/11: expected a file named by one lowercase hex digit, found \"11\""}},
      {{{"0/a", level(a) + level(b)}, {"0/b", level(c)}, {"2", level(d)}}, 2,
       {"refs/levels/2: refs/levels/2:1: /@key: expected a key starting with 2 (the digits its file's path stands "
        "for), found " + d}},
      {{{"0/a", level(b) + level(a)}, {"0/b", level(c)}, {"1", level(d)}}, 2,
       {"refs/levels/0/a: refs/levels/0/a:2: /@key: expected keys in ascending order, found " + a +
        " after line 1's " + b}},
      {{{"0/a", level(a) + level(b)}, {"0/b", level(c)}, {"1", level(d)}, {deep + "/0", level(pad("0"))}}, 2,
       {"refs/levels/" + deep + "/0: expected a file at most 14 folders deep, found one 15 deep"}},
      {{{"2/c/0", level(e)}, {"2/c/1", level(f)}, {"2/c/2", level(g)}}, 2,
       {"refs/levels/2: expected the folder's name to run through the digits all its keys share, " + pad("2c").substr(0, 2) +
        ", found a name that stops at 2"}},
      {{{"0/a", level(a) + level(b)}, {"0/b", level(c)}, {"1", level(d)},
        {"0c/0", level(pad("0c0"))}, {"0c/1", level(pad("0c1"))}, {"0c/2", level(pad("0c2"))}}, 2,
       {"refs/levels/: expected one entry for each next digit, found \"0\" and \"0c\""}},
      {{{"0/a", level(a) + level(b)}, {"0/b", level(c)}, {"1", level(d)}, {"1/0", level(d)}, {"1/1", level(d)}}, 1,
       {"refs/levels/1/1: refs/levels/1/1:1: /@key: expected a key starting with 11 (the digits its file's path stands "
        "for), found " + d,
        "refs/levels/0/a: expected a file of at most 1 lines (more make a folder), found 2 lines",
        "refs/levels/1: expected a file or a folder, found both"}},
  };
  for (const Case& c : table) {
    std::vector<std::string> found = details(check_trie(Family::kLevels, c.files, c.t));
    std::vector<std::string> expected = c.problems;
    std::sort(found.begin(), found.end());
    std::sort(expected.begin(), expected.end());
    CHECK(found == expected);
  }
}

}  // namespace
}  // namespace kistore
