#include "refs/index_plan.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "objects/digest.h"
#include "objects/error.h"

namespace kistore {
namespace {

// A levels line for `key` (64 digits), one of two for each key: check_trie
// reads real lines, and a replacement changes a line's bytes.
std::string level_line(const std::string& key, bool disputed = false) {
  return render_line(
      LevelFact{*Digest::parse_hex(key), disputed ? Level::kDisputed : Level::kReproduced, Digest::of("rerun " + key)});
}
std::string pad(const std::string& digits) { return digits + std::string(64 - digits.size(), '0'); }

// The family as the tests hold it: key -> line.
using Lines = std::map<std::string, std::string>;

TrieFiles built(const Lines& lines, std::size_t t) {
  std::vector<KeyedLine> sorted;
  for (const auto& [k, l] : lines) sorted.push_back({k, l});
  return build_trie(sorted, t);
}
Lines lines_of(const std::vector<std::string>& keys) {
  Lines out;
  for (const auto& k : keys) out[k] = level_line(k);
  return out;
}

// A TrieReader that counts what it is asked.
struct CountingReader : TrieFilesReader {
  using TrieFilesReader::TrieFilesReader;
  std::size_t lists = 0, reads = 0;
  std::vector<Entry> list(const std::string& path) override {
    ++lists;
    return TrieFilesReader::list(path);
  }
  std::string read(const std::string& path) override {
    ++reads;
    return TrieFilesReader::read(path);
  }
};

// A plan as text: "write 1/0: 10…, 11…", "remove 345", "move 34/5 <- 345".
std::vector<std::string> describe(const TriePlan& plan) {
  std::vector<std::string> out;
  for (const auto& [path, edit] : plan) {
    switch (edit.kind) {
      case TrieEdit::Kind::kRemove: out.push_back("remove " + path); break;
      case TrieEdit::Kind::kMove: out.push_back("move " + path + " <- " + edit.from); break;
      case TrieEdit::Kind::kWrite: {
        std::string keys;
        for (std::size_t at = 0; at < edit.bytes.size(); at = edit.bytes.find('\n', at) + 1)
          keys += (keys.empty() ? "" : ", ") + edit.bytes.substr(at + 9, 4) +
                  (edit.bytes.find("disputed", at) < edit.bytes.find('\n', at) ? " disputed" : "");
        out.push_back("write " + path + ": " + keys);
      }
    }
  }
  return out;
}

std::string joined(const Lines& lines, const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) out += lines.at(k);
  return out;
}

// A change to the family as the tests make them.
struct Step {
  std::vector<std::string> put, put_disputed, remove;
};

// Plans `step` on `files` (holding `lines`), applies it, and checks the
// result is build_trie of the new lines and passes check_trie. Returns the plan.
TriePlan step(TrieFiles& files, Lines& lines, const Step& s, std::size_t t) {
  TrieChanges changes;
  for (const auto& k : s.put) {
    changes.put.push_back({k, level_line(k)});
    lines[k] = level_line(k);
  }
  for (const auto& k : s.put_disputed) {
    changes.put.push_back({k, level_line(k, true)});
    lines[k] = level_line(k, true);
  }
  for (const auto& k : s.remove) {
    changes.remove.push_back(k);
    lines.erase(k);
  }
  TrieFilesReader reader(files);
  const TriePlan plan = plan_trie_update(reader, changes, t);
  // Nothing of a plan lies beneath a path it writes or moves.
  for (auto it = plan.begin(); it != plan.end(); ++it)
    if (it->second.kind != TrieEdit::Kind::kRemove)
      for (auto below = std::next(it); below != plan.end() && below->first.starts_with(it->first); ++below)
        CHECK_FALSE(below->first.starts_with(it->first + "/"));
  apply_trie_plan(files, plan);
  const TrieFiles expected = built(lines, t);
  REQUIRE(files == expected);
  CHECK(check_trie(Family::kLevels, files, t).empty());
  return plan;
}

struct Golden {
  std::string name;
  std::vector<std::string> before;
  Step change;
  std::vector<std::string> plan;
};

const std::string k10 = pad("10"), k11 = pad("11"), k12 = pad("12"), k2 = pad("2"), k30 = pad("30"),
                  k3450 = pad("3450"), k3451 = pad("3451"), k3452 = pad("3452"), k347 = pad("347");

TEST_CASE("plan_trie_update at T=2: each transition's exact edits", "[index_plan]") {
  const std::vector<Golden> goldens = {
      {"insert into a file", {k10, k2}, {{k11}, {}, {}}, {"write 1: 1000, 1100"}},
      {"a new file", {k10}, {{k2}, {}, {}}, {"write 2: 2000"}},
      {"a file past T becomes a folder of files",
       {k10, k11, k2},
       {{k12}, {}, {}},
       {"remove 1", "write 1/0: 1000", "write 1/1: 1100", "write 1/2: 1200"}},
      {"... named through its keys' shared digits",
       {k3450, k3451},
       {{k3452}, {}, {}},
       {"remove 3", "write 345/0: 3450", "write 345/1: 3451", "write 345/2: 3452"}},
      {"a key leaving a folded name partway splits the folder",
       {k3450, k3451, k3452},
       {{k347}, {}, {}},
       {"move 34/5 <- 345", "write 34/7: 3470", "remove 345"}},
      {"a folder falling to T lines is one file again", {k10, k11, k12}, {{}, {}, {k12}}, {"write 1: 1000, 1100"}},
      {"... a folded one too", {k3450, k3451, k3452}, {{}, {}, {k3451}}, {"write 3: 3450, 3452", "remove 345"}},
      {"a folder left with one entry folds it into its name",
       {k30, k3450, k3451, k3452},
       {{}, {}, {k30}},
       {"remove 3", "move 345 <- 3/45"}},
      {"an empty family",
       {},
       {{k3450, k3451, k3452, k10}, {}, {}},
       {"write 1: 1000", "write 345/0: 3450", "write 345/1: 3451", "write 345/2: 3452"}},
      {"the last line goes", {k10}, {{}, {}, {k10}}, {"remove 1"}},
      {"a line replaced (a level that changes)", {k10, k11, k12}, {{}, {k11}, {}}, {"write 1/1: 1100 disputed"}},
      {"a line put again as it is, a key removed that has no line: nothing", {k10, k11}, {{k11}, {}, {k2}}, {}},
      {"an insert and a split in one change",
       {k3450, k3451, k3452},
       {{k347, pad("3453")}, {}, {}},
       {"move 34/5/0 <- 345/0", "move 34/5/1 <- 345/1", "move 34/5/2 <- 345/2", "write 34/5/3: 3453",
        "write 34/7: 3470", "remove 345"}},
  };
  for (const Golden& g : goldens) {
    INFO(g.name);
    Lines lines = lines_of(g.before);
    TrieFiles files = built(lines, 2);
    CHECK(describe(step(files, lines, g.change, 2)) == g.plan);
  }
}

TEST_CASE("a plan's edits carry the exact bytes and sources", "[index_plan]") {
  Lines lines = lines_of({k3450, k3451, k3452});
  TrieFiles files = built(lines, 2);
  const TriePlan plan = step(files, lines, {{k347}, {}, {}}, 2);
  CHECK(plan == TriePlan{{"34/5", trie_move("345")}, {"34/7", trie_write(level_line(k347))}, {"345", trie_remove()}});
  const TriePlan replace = step(files, lines, {{}, {k3451}, {}}, 2);
  CHECK(replace == TriePlan{{"34/5/1", trie_write(level_line(k3451, true))}});
  CHECK(files.at("34/5/1") == joined(lines, {k3451}));
}

// Keys drawn to share long prefixes: a few stems, then digits from a small
// alphabet, then random ones.
std::vector<std::string> key_pool(std::mt19937& rng, std::size_t n) {
  const std::vector<std::string> stems = {"", "ab", "abcd0123", "abcd0f", "5555555555", "55555f"};
  std::set<std::string> keys;
  while (keys.size() < n) {
    std::string k = stems[rng() % stems.size()];
    const std::size_t narrow = rng() % 6;
    for (std::size_t i = 0; i < narrow; ++i) k += "012"[rng() % 3];
    k += Digest::of(std::to_string(rng())).hex();
    keys.insert(k.substr(0, 64));
  }
  return {keys.begin(), keys.end()};
}

TEST_CASE("random puts, replacements and removals: after each plan the tree is build_trie of the lines",
          "[index_plan]") {
  std::map<std::string, int> seen;  // how often each kind of edit came up
  for (std::size_t t : {1, 2, 3, 4, 16}) {
    for (unsigned seed = 1; seed <= 3; ++seed) {
      std::mt19937 rng(seed * 100 + static_cast<unsigned>(t));
      const std::vector<std::string> pool = key_pool(rng, 70);
      Lines lines;
      TrieFiles files;
      for (int i = 0; i < 120; ++i) {
        Step s;
        std::set<std::string> used;
        const std::size_t batch = rng() % 4 == 0 ? 1 + rng() % 12 : 1;
        for (std::size_t j = 0; j < batch; ++j) {
          const std::string& k = pool[rng() % pool.size()];
          if (!used.insert(k).second) continue;
          // Lean to puts while the family is small, to removals once it is large.
          const bool grow = rng() % 70 >= lines.size();
          if (!lines.contains(k)) (grow ? s.put : s.remove).push_back(k);
          else if (rng() % 3 == 0) (rng() % 2 ? s.put_disputed : s.put).push_back(k);
          else (grow ? s.put : s.remove).push_back(k);
        }
        INFO("T=" << t << " seed " << seed << " step " << i);
        const TrieFiles before = files;
        for (const auto& [path, edit] : step(files, lines, s, t)) {
          const bool was_folder = before.lower_bound(path + "/") != before.lower_bound(path + "0");
          const auto depth = [](const std::string& p) { return std::count(p.begin(), p.end(), '/'); };
          if (edit.kind == TrieEdit::Kind::kMove) ++seen[depth(path) > depth(edit.from) ? "split" : "refold"];
          if (edit.kind == TrieEdit::Kind::kWrite && before.contains(path)) ++seen["rewrite"];
          if (edit.kind == TrieEdit::Kind::kRemove && before.contains(path)) ++seen["file out"];
          if (edit.kind != TrieEdit::Kind::kMove && was_folder) ++seen["folder out"];
          if (edit.kind == TrieEdit::Kind::kWrite && !before.contains(path)) ++seen["new file"];
        }
      }
    }
  }
  // Every transition happened, many times.
  for (const char* what : {"split", "refold", "rewrite", "file out", "folder out", "new file"}) {
    INFO(what);
    CHECK(seen[what] > 20);
  }
}

TEST_CASE("the same facts in any order and any batching give the same tree", "[index_plan]") {
  for (std::size_t t : {1, 2, 4, 16}) {
    std::mt19937 rng(static_cast<unsigned>(t));
    const std::vector<std::string> facts = key_pool(rng, 60);
    const std::vector<std::string> passing = key_pool(rng, 20);  // added, then removed again
    const TrieFiles expected = built(lines_of(facts), t);
    for (int order = 0; order < 6; ++order) {
      std::vector<std::string> keys = facts;
      keys.insert(keys.end(), passing.begin(), passing.end());
      std::shuffle(keys.begin(), keys.end(), rng);
      Lines lines;
      TrieFiles files;
      // order 0: one commit of everything; else batches of random sizes.
      for (std::size_t at = 0; at < keys.size();) {
        const std::size_t n = order == 0 ? keys.size() : 1 + rng() % (order * 3);
        Step s;
        s.put.assign(keys.begin() + at, keys.begin() + std::min(keys.size(), at + n));
        at += s.put.size();
        step(files, lines, s, t);
      }
      std::shuffle(keys.begin(), keys.end(), rng);
      for (std::size_t at = 0; at < passing.size();) {
        Step s;
        const std::size_t n = 1 + rng() % 5;
        s.remove.assign(passing.begin() + at, passing.begin() + std::min(passing.size(), at + n));
        at += s.remove.size();
        step(files, lines, s, t);
      }
      INFO("T=" << t << " order " << order);
      CHECK(files == expected);
    }
  }
}

// How many folders a path has below refs/<family>/, plus one for refs/<family>/.
std::size_t listings_on_path(const std::string& file) {
  return static_cast<std::size_t>(std::count(file.begin(), file.end(), '/')) + 1;
}

TEST_CASE("a plan reads the folders on its key's path and its file, not the family", "[index_plan]") {
  std::mt19937 rng(3);
  std::vector<std::string> keys;
  for (int i = 0; i < 20000; ++i) keys.push_back(Digest::of("run " + std::to_string(rng())).hex());
  // A group-like crowd under one long shared prefix, as `groups` keys are.
  for (int i = 0; i < 3000; ++i) keys.push_back("abcdef0123" + Digest::of(std::to_string(rng())).hex().substr(10));
  Lines lines = lines_of(keys);
  const std::size_t t = 4;
  TrieFiles files = built(lines, t);
  REQUIRE(files.size() > 5000);
  std::set<std::string> folders;
  for (const auto& [path, bytes] : files)
    for (std::size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1))
      folders.insert(path.substr(0, slash));
  for (int i = 0; i < 200; ++i) {
    const bool add = i % 2 == 0;
    const std::string key = add ? (i % 4 ? Digest::of("new " + std::to_string(i)).hex()
                                         : "abcdef0123" + Digest::of(std::to_string(i)).hex().substr(10))
                                : keys[rng() % keys.size()];
    if (add == lines.contains(key)) continue;
    const TrieSlot slot = locate_in_trie(key, folders);
    CountingReader reader(files);
    TrieChanges changes;
    if (add) changes.put.push_back({key, level_line(key)});
    else changes.remove.push_back(key);
    const TriePlan plan = plan_trie_update(reader, changes, t);
    INFO(key << " -> " << slot.path);
    // The folders down to the key's file (one more where a file becomes a
    // folder, or where a removal weighs its folder's files), and its file.
    CHECK(reader.lists <= listings_on_path(slot.path) + 1);
    CHECK(reader.reads <= (add ? 1u : 1u + 16u));
    CHECK(plan.size() <= 2 + 16);
  }
  // And a plan still gives build_trie's tree on this family.
  Step s;
  s.put = {Digest::of("one more").hex()};
  s.remove = {keys[0], keys[20000]};
  step(files, lines, s, t);
}

TEST_CASE("TrieFilesReader lists a folder's files and folders", "[index_plan]") {
  const TrieFiles files = {{"0/a0/0", "x"}, {"0/a0/1", "x"}, {"0/b", "x"}, {"1", "x"}, {"10/0", "x"}};
  TrieFilesReader reader(files);
  using E = TrieReader::Entry;
  CHECK(reader.list("") == std::vector<E>{{"0", true}, {"1", false}, {"10", true}});
  CHECK(reader.list("0") == std::vector<E>{{"a0", true}, {"b", false}});
  CHECK(reader.list("0/a0") == std::vector<E>{{"0", false}, {"1", false}});
  CHECK(reader.list("7").empty());
  CHECK(reader.read("0/b") == "x");
  CHECK_THROWS_AS(reader.read("0"), Error);
  const TrieFiles none;
  CHECK(TrieFilesReader(none).list("").empty());
}

TEST_CASE("plan_trie_update refuses changes that are not a family's keyed lines", "[index_plan]") {
  const TrieFiles files = built(lines_of({k10, k11}), 2);
  TrieFilesReader reader(files);
  auto plan = [&](TrieChanges c) { return plan_trie_update(reader, c, 2); };
  CHECK_THROWS_AS(plan({{{k2, level_line(k2)}, {k2, level_line(k2, true)}}, {}}), std::invalid_argument);
  CHECK_THROWS_AS(plan({{{k2, level_line(k2)}}, {k2}}), std::invalid_argument);
  CHECK_THROWS_AS(plan({{}, {k2, k2}}), std::invalid_argument);
  CHECK_THROWS_AS(plan({{{k2, level_line(k10)}}, {}}), std::invalid_argument);              // another key's line
  CHECK_THROWS_AS(plan({{{k2, "{\"@key\":\"" + k2 + "\"}"}}, {}}), std::invalid_argument);  // no "\n"
  // Keys of another length than the files': the files are what is wrong.
  CHECK_THROWS_WITH(plan({{}, {"12"}}), Catch::Contains("index file 1:1: expected a key of 2 hex digits"));
  CHECK_THROWS_AS(plan({{}, {std::string(64, 'A')}}), std::invalid_argument);
  CHECK_THROWS_AS(plan_trie_update(reader, {{}, {k2}}, 0), std::invalid_argument);
  // A file that is not sorted lines under its path's digits.
  const TrieFiles bad = {{"1", level_line(k11) + level_line(k10)}};
  TrieFilesReader bad_reader(bad);
  CHECK_THROWS_AS(plan_trie_update(bad_reader, {{{k12, level_line(k12)}}, {}}, 2), Error);
  const TrieFiles stray = {{"2", level_line(k10)}};
  TrieFilesReader stray_reader(stray);
  CHECK_THROWS_AS(plan_trie_update(stray_reader, {{{pad("21"), level_line(pad("21"))}}, {}}, 2), Error);
}

TEST_CASE("plan_trie_update refuses, as build_trie does, a key that would need a file past the depth bound",
          "[index_plan]") {
  // At T=1, each key 0…010…0 leaves the others one folder further down.
  std::vector<std::string> keys = {std::string(64, '0')};
  for (std::size_t i = 0; i <= kTrieMaxFolders; ++i)
    keys.push_back(std::string(i, '0') + "1" + std::string(63 - i, '0'));
  Lines lines = lines_of(keys);
  TrieFiles files = built(lines, 1);
  const std::string deeper = std::string(kTrieMaxFolders + 1, '0') + "1" + std::string(62 - kTrieMaxFolders, '0');
  TrieFilesReader reader(files);
  CHECK_THROWS_AS(plan_trie_update(reader, {{{deeper, level_line(deeper)}}, {}}, 1), Error);
  lines[deeper] = level_line(deeper);
  CHECK_THROWS_AS(built(lines, 1), Error);
}

}  // namespace
}  // namespace kistore

namespace kistore {
namespace {

TEST_CASE("find_line: a binary search of the one file, every line of it checked", "[index_plan]") {
  Lines lines = lines_of({pad("10"), pad("12"), pad("3"), pad("31"), pad("32"), pad("33"), pad("4")});
  TrieFiles files = built(lines, 2);
  TrieFilesReader reader(files);
  for (const auto& [key, line] : lines) CHECK(find_line(reader, key) == line);
  CHECK_FALSE(find_line(reader, pad("11")));
  CHECK_FALSE(find_line(reader, pad("5")));
  CHECK_FALSE(find_line(reader, pad("34")));

  // A file's lines out of order, a line under another file's digits, a line
  // without its "\n": each found by any lookup in that file, even one whose
  // own line comes before the wrong one, and named by file and line.
  const std::string a = level_line(pad("10")), b = level_line(pad("12")), c = level_line(pad("31"));
  struct Bad {
    const char* what;
    std::string bytes;
    const char* message;
  };
  for (const Bad& bad : {Bad{"unsorted", a + level_line(pad("15")) + b, "index file 1:3: /@key: expected keys in ascending order, found "},
                         Bad{"another file's key", a + b + c, "index file 1:3: expected a line beginning {\"@key\":\"1…\""},
                         Bad{"duplicate", a + b + b, "index file 1:3: /@key: expected each key once, found "},
                         Bad{"no newline", a + b.substr(0, b.size() - 1), "index file 1:2: expected a line ending in"}}) {
    INFO(bad.what);
    TrieFiles broken = {{"1", bad.bytes}};
    TrieFilesReader r(broken);
    try {
      find_line(r, pad("10"));
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kCorruption);
      CHECK_THAT(e.what(), Catch::Contains(bad.message));
    }
  }
}

}  // namespace
}  // namespace kistore
