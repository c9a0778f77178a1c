// Format 3's index written through a store's commits (store/core/index_trees.h):
// whatever order and batching the facts come in, the refs/ tree is
// build_trie of them, and stock git agrees the trees are well formed.
#include "store/core/index_trees.h"

#include "store/core/index_diff.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "objects/digest.h"
#include "objects/error.h"
#include "store/core/layout_trees.h"
#include "refs/index_trie.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

Digest digest_of(const std::string& text) { return Digest::of(text); }

// Runs in a few groups (so that the groups family folds a group's 64 digits
// into one folder name and splits below it), a claim of each upstream id,
// some levels and reruns.
std::vector<IndexFact> facts(std::size_t runs) {
  std::vector<IndexFact> out;
  for (std::size_t i = 0; i < runs; ++i) {
    const Digest run = digest_of("run " + std::to_string(i));
    const Digest key = digest_of("group " + std::to_string(i % 3));
    out.push_back(GroupFact{key, run, Measurement{"latency", "median", "ns", 1000.0 + static_cast<double>(i)}});
    out.push_back(SourceFact{"liger", "op/" + std::to_string(i), run});
    if (i % 7 == 0) {
      const Digest rerun = digest_of("rerun " + std::to_string(i));
      out.push_back(LevelFact{run, Level::kReproduced, rerun});
      out.push_back(RerunFact{run, rerun, Level::kReproduced, 1.01});
    }
  }
  return out;
}

// Commits `all` in batches of the given sizes (cycled), in that order.
std::string commit_in_batches(Store& store, const std::vector<IndexFact>& all, const std::vector<std::size_t>& sizes) {
  std::size_t at = 0, turn = 0;
  while (at < all.size()) {
    const std::size_t n = std::min(sizes[turn++ % sizes.size()], all.size() - at);
    store.commit(
        [&](const Snapshot& base) -> std::optional<ChangeSet> {
          IndexChanges changes;
          for (std::size_t i = at; i < at + n; ++i) changes.put(all[i]);
          ChangeSet change;
          apply_index_changes(base, changes, change);
          change.op = "add";
          change.summary = "add facts";
          return change;
        },
        CommitOptions{.author = "T <t@example.org>", .time = 1700000000});
    at += n;
  }
  Snapshot head = store.snapshot();
  for (const Snapshot::Entry& e : head.entries(""))
    if (e.name == "refs") return e.id;
  FAIL("no refs/");
  return "";
}

// One family's files as build_trie would hold them, read back from the store.
TrieFiles files_of(const Snapshot& snapshot, Family family) {
  TrieFiles files;
  std::vector<std::string> dirs = {""};
  while (!dirs.empty()) {
    std::string dir = dirs.back();
    dirs.pop_back();
    for (const Snapshot::Entry& e : snapshot.entries(dir.empty() ? family_dir(family) : family_dir(family) + "/" + dir)) {
      const std::string path = dir.empty() ? e.name : dir + "/" + e.name;
      if (e.folder) dirs.push_back(path);
      else files[path] = *snapshot.read(family_dir(family) + "/" + path);
    }
  }
  return files;
}

TEST_CASE("format 3's index: the same facts make the same refs/ tree in any order and batching",
          "[index3][store]") {
  const std::vector<IndexFact> all = facts(900);  // 300 runs a group: each group a folder of files
  TempDir tmp;
  Store one = Store::init(tmp.path + "/one");
  const std::string whole = commit_in_batches(one, all, {all.size()});

  std::vector<IndexFact> shuffled = all;
  std::mt19937 rng(7);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  Store two = Store::init(tmp.path + "/two");
  CHECK(commit_in_batches(two, shuffled, {1, 37, 5, 200, 2}) == whole);

  std::vector<IndexFact> reversed(all.rbegin(), all.rend());
  Store three = Store::init(tmp.path + "/three");
  CHECK(commit_in_batches(three, reversed, {450}) == whole);

  // What is there is build_trie of the facts, family by family, and its check holds.
  Snapshot head = one.snapshot();
  for (Family family : kFamilies) {
    INFO(family_name(family));
    std::vector<KeyedLine> lines;
    for (const IndexFact& f : all)
      if (family_of(f) == family) lines.push_back(KeyedLine{fact_key(f), render_line(f)});
    std::sort(lines.begin(), lines.end(), [](const KeyedLine& a, const KeyedLine& b) { return a.key < b.key; });
    const TrieFiles files = files_of(head, family);
    CHECK(files == build_trie(lines));
    CHECK(check_trie(family, files).empty());
  }
  // A group's runs: the groups family holds 900 lines, so it is folders.
  CHECK(files_of(head, Family::kGroups).size() > 3);
  CHECK(sh("git --git-dir=" + quote(tmp.path + "/two") + " fsck --strict --no-dangling").rc == 0);
}

TEST_CASE("format 3's index: find_fact and facts_with_prefix read the file a key is in", "[index3][store]") {
  const std::vector<IndexFact> all = facts(900);
  TempDir tmp;
  Store store = Store::init(tmp.path + "/s");
  commit_in_batches(store, all, {300});
  Snapshot head = store.snapshot();
  for (std::size_t i : {0u, 7u, 450u, 899u}) {
    const Digest run = digest_of("run " + std::to_string(i));
    INFO(i);
    auto level = find_fact(head, Family::kLevels, run.hex());
    CHECK(level.has_value() == (i % 7 == 0));
    auto source = find_fact(head, Family::kSources, source_key("liger", "op/" + std::to_string(i)));
    REQUIRE(source);
    CHECK(std::get<SourceFact>(*source).run == run);
  }
  CHECK_FALSE(find_fact(head, Family::kSources, source_key("liger", "op/900")));
  // A group's members: every line under the group key's 64 digits.
  const Digest key = digest_of("group 1");
  auto members = facts_with_prefix(head, Family::kGroups, key.hex());
  CHECK(members.size() == 300);
  CHECK(std::is_sorted(members.begin(), members.end(),
                       [](const IndexFact& a, const IndexFact& b) { return fact_key(a) < fact_key(b); }));
  for (const IndexFact& f : members) CHECK(std::get<GroupFact>(f).key == key);
  CHECK(facts_with_prefix(head, Family::kGroups, "").size() == 900);
  CHECK(facts_with_prefix(head, Family::kAttestations, "").empty());
}

TEST_CASE("format 3's index: a file out of order is refused with its path, nothing written", "[index3][store][errors]") {
  TempDir tmp;
  Store store = Store::init(tmp.path + "/s");
  commit_in_batches(store, facts(40), {40});
  // One of refs/sources/'s files with two lines swapped, committed as it is.
  const std::string file = "refs/sources/" + store.snapshot().entries("refs/sources").front().name;
  std::string bytes = *store.snapshot().read(file);
  const std::size_t first = bytes.find('\n') + 1, second = bytes.find('\n', first) + 1;
  REQUIRE(second != 0);
  const std::string swapped = bytes.substr(first, second - first) + bytes.substr(0, first) + bytes.substr(second);
  store.commit(
      [&](const Snapshot&) -> std::optional<ChangeSet> {
        ChangeSet change;
        change.upserts[file] = swapped;
        change.op = "add";
        change.summary = "tamper";
        return change;
      },
      CommitOptions{.author = "T <t@example.org>", .time = 1700000000});
  Snapshot head = store.snapshot();
  IndexChanges changes;
  for (std::size_t i = 0; i < 40; ++i) {
    // A new claim whose key goes into the tampered file.
    SourceFact claim{"liger", "new/" + std::to_string(i), digest_of("x")};
    if (source_key(claim.source, claim.external_id).substr(0, 1) == file.substr(file.size() - 1)) {
      changes.put(claim);
      break;
    }
  }
  REQUIRE_FALSE(changes.empty());
  ChangeSet change;
  try {
    apply_index_changes(head, changes, change);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kCorruption);
    CHECK_THAT(e.what(), Catch::Matchers::Contains(file));
  }
  // Reading a key of that file is refused the same way.
  const std::string in_file = bytes.substr(9, 64);  // {"@key":"<64 hex>"
  CHECK_THROWS_WITH(find_fact(head, Family::kSources, in_file), Catch::Contains(file));
  // A file in shape whose one line is no longer its RFC 8785 form: a lookup
  // reads the line it needs, so another key is found, and that line's key is
  // refused naming the file and the line.
  {
    TempDir tmp2;
    Store other = Store::init(tmp2.path + "/s");
    commit_in_batches(other, facts(40), {40});
    const std::string f = "refs/sources/" + other.snapshot().entries("refs/sources").front().name;
    std::string text = *other.snapshot().read(f);
    const std::size_t second = text.find('\n') + 1;
    REQUIRE(text.find('\n', second) != std::string::npos);
    const std::string good_key = text.substr(9, 64), bad_key = text.substr(second + 9, 64);
    text.insert(text.find(",\"run\":", second), " ");  // valid JSON, not its canonical form
    other.commit(
        [&](const Snapshot&) -> std::optional<ChangeSet> {
          ChangeSet change;
          change.upserts[f] = text;
          change.op = "add";
          change.summary = "tamper";
          return change;
        },
        CommitOptions{.author = "T <t@example.org>", .time = 1700000000});
    Snapshot tampered = other.snapshot();
    CHECK(find_fact(tampered, Family::kSources, good_key));
    CHECK_THROWS_WITH(find_fact(tampered, Family::kSources, bad_key), Catch::Contains(f + ":2:"));
  }
  // A fact put twice is a programming error, refused before anything is read.
  IndexChanges twice;
  twice.put(SourceFact{"liger", "op/1", digest_of("run 1")});
  twice.put(SourceFact{"liger", "op/1", digest_of("run 2")});
  CHECK_THROWS_AS(apply_index_changes(head, twice, change), std::invalid_argument);
}


// The refs/ tree of the head, and the head's root tree id.
const git_oid* head_tree(const Snapshot& s) { return s.tree_id(); }

TEST_CASE("diff_facts: the lines two trees differ by, reading only the files that changed", "[index3][diff]") {
  const std::vector<IndexFact> all = facts(900);
  TempDir tmp;
  Store store = Store::init(tmp.path + "/s");
  commit_in_batches(store, all, {all.size()});
  Snapshot first = store.snapshot();
  LayoutTrees trees(store.repo());

  SECTION("from nothing: every line, added, in key order") {
    auto changes = diff_facts(trees, nullptr, head_tree(first), Family::kGroups);
    REQUIRE(changes.size() == 900);
    CHECK(std::is_sorted(changes.begin(), changes.end(),
                         [](const FactChange& a, const FactChange& b) { return a.key < b.key; }));
    for (const FactChange& c : changes) CHECK((!c.before && c.after && c.after->starts_with("{\"@key\":\"" + c.key)));
    CHECK(diff_facts(trees, head_tree(first), head_tree(first), Family::kGroups).empty());
  }
  SECTION("a group that splits a folded folder name: one line, though a folder moved") {
    // The group whose folder sits alone at the root, named by its 64 digits.
    std::optional<Digest> alone;
    for (const auto& e : first.entries(family_dir(Family::kGroups)))
      for (int i = 0; i < 3; ++i)
        if (e.folder && e.name == digest_of("group " + std::to_string(i)).hex()) alone = digest_of("group " + std::to_string(i));
    REQUIRE(alone);
    const Digest g0 = *alone;
    std::optional<Digest> near;
    for (int i = 0; i < 1000 && !near; ++i) {
      Digest d = digest_of("other group " + std::to_string(i));
      if (d.hex()[0] == g0.hex()[0] && d.hex()[1] != g0.hex()[1]) near = d;
    }
    REQUIRE(near);
    const GroupFact added{*near, digest_of("lonely run"), std::nullopt};
    commit_in_batches(store, {added}, {1});
    Snapshot second = store.snapshot();
    // The group's folder now sits one level down, the same tree.
    const std::string new_folder = family_dir(Family::kGroups) + "/" + g0.hex().substr(0, 1);
    std::string old_id, new_id;
    for (const auto& e : first.entries(family_dir(Family::kGroups)))
      if (e.name == g0.hex()) old_id = e.id;
    for (const auto& e : second.entries(new_folder))
      if (e.name == g0.hex().substr(1)) new_id = e.id;
    REQUIRE_FALSE(old_id.empty());
    CHECK(new_id == old_id);
    auto changes = diff_facts(trees, head_tree(first), head_tree(second), Family::kGroups);
    REQUIRE(changes.size() == 1);
    CHECK(changes[0] == FactChange{fact_key(added), std::nullopt, render_line(added)});
    CHECK(diff_facts(trees, head_tree(second), head_tree(first), Family::kGroups) ==
          std::vector<FactChange>{FactChange{fact_key(added), render_line(added), std::nullopt}});
  }
  SECTION("a line replaced: both sides") {
    const Digest run = digest_of("run 7");
    const LevelFact disputed{run, Level::kDisputed, digest_of("rerun 7b")};
    commit_in_batches(store, {disputed}, {1});
    auto changes = diff_facts(trees, head_tree(first), head_tree(store.snapshot()), Family::kLevels);
    REQUIRE(changes.size() == 1);
    CHECK(changes[0].key == run.hex());
    CHECK(changes[0].before == render_line(LevelFact{run, Level::kReproduced, digest_of("rerun 7")}));
    CHECK(changes[0].after == render_line(disputed));
  }
}

// Commits raw upserts (tampering as stock git could), returning the new head.
Snapshot tamper(Store& store, const std::map<std::string, std::string>& upserts) {
  store.commit(
      [&](const Snapshot&) -> std::optional<ChangeSet> {
        ChangeSet change;
        change.upserts = upserts;
        change.op = "add";
        change.summary = "tamper";
        return change;
      },
      CommitOptions{.author = "T <t@example.org>", .time = 1700000000});
  return store.snapshot();
}

TEST_CASE("added_keys: the keys the later tree gained, as diff_facts finds them", "[index3][diff]") {
  const std::vector<IndexFact> all = facts(900);
  TempDir tmp;
  Store store = Store::init(tmp.path + "/s");
  commit_in_batches(store, {all.begin(), all.begin() + 600}, {600});
  Snapshot first = store.snapshot();
  commit_in_batches(store, {all.begin() + 600, all.end()}, {all.size()});
  Snapshot second = store.snapshot();
  LayoutTrees trees(store.repo());
  // The keys diff_facts reports as added (no line before), for comparison.
  auto added_by_diff = [&](const git_oid* from, const git_oid* to, Family family) {
    std::vector<std::string> out;
    for (const FactChange& c : diff_facts(trees, from, to, family))
      if (c.after && !c.before) out.push_back(c.key);
    return out;
  };
  for (Family family : {Family::kGroups, Family::kLevels, Family::kSources}) {
    INFO(family_dir(family));
    for (auto [from, to] : {std::pair{head_tree(first), head_tree(second)}, std::pair{(const git_oid*)nullptr, head_tree(first)},
                            std::pair{head_tree(second), head_tree(first)}, std::pair{head_tree(first), head_tree(first)}}) {
      std::vector<std::string> keys = added_keys(trees, from, to, family);
      CHECK(keys == added_by_diff(from, to, family));
      CHECK(std::is_sorted(keys.begin(), keys.end()));
    }
  }
  CHECK(added_keys(trees, head_tree(first), head_tree(second), Family::kGroups).size() > 0);
  CHECK(added_keys(trees, head_tree(second), head_tree(first), Family::kGroups).empty());
  // A line that does not start with its key is corruption, named by file and line.
  const std::string dir = family_dir(Family::kGroups) + "/";
  std::string path = dir;
  for (;;) {
    auto entries = second.entries(path.substr(0, path.size() - 1));
    REQUIRE_FALSE(entries.empty());
    if (!entries.front().folder) {
      path += entries.front().name;
      break;
    }
    path += entries.front().name + "/";
  }
  std::string bytes = *second.read(path);
  bytes.insert(1, " ");
  Snapshot bad = tamper(store, {{path, bytes}});
  CHECK_THROWS_WITH(added_keys(trees, head_tree(second), head_tree(bad), Family::kGroups),
                    Catch::Contains(path + ":1: expected a line that starts with its 128-digit \"@key\""));
}

TEST_CASE("diff_facts: a tree whose index is not a trie of its lines is refused, naming the path",
          "[index3][diff][errors]") {
  TempDir tmp;
  // The same 20 runs' index in each store (a function of the facts), so
  // each case tampers with a fresh one.
  auto fresh = [&](const std::string& name) {
    Store store = Store::init(tmp.path + "/" + name);
    commit_in_batches(store, facts(20), {20});
    return store;
  };
  Store first = fresh("s");
  Snapshot base = first.snapshot();
  const std::string dir = family_dir(Family::kSources) + "/";
  const std::string name = base.entries(family_dir(Family::kSources)).front().name;
  const std::string bytes = *base.read(dir + name);
  const std::string wrong_digit = name == "0" ? "1" : "0";
  struct Case {
    std::string what;
    std::map<std::string, std::string> upserts;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"a file under another digit", {{dir + wrong_digit, bytes}}, "expected"},
      {"a file named by two digits", {{dir + "00", bytes}}, "named by one lowercase hex digit"},
      {"a folder not named by hex", {{dir + "x/0", bytes}}, "a folder named by lowercase hex digits"},
      {"a key in two files", {{dir + name + "0/" + bytes.substr(10, 1), bytes}}, ""},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    Store store = fresh("c" + std::to_string(&c - cases.data()));
    Snapshot clean = store.snapshot();
    REQUIRE(clean.tree_id());
    Snapshot bad = tamper(store, c.upserts);
    LayoutTrees trees(store.repo());
    try {
      diff_facts(trees, head_tree(clean), head_tree(bad), Family::kSources);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kCorruption);
      CHECK_THAT(e.what(), Catch::Matchers::Contains(dir) && Catch::Matchers::Contains(c.message));
    }
  }
}

TEST_CASE("diff_incoming: diff_facts' changes, each new line parsed once; a bad one named by file and line",
          "[index3][diff][errors]") {
  TempDir tmp;
  Store store = Store::init(tmp.path + "/s");
  commit_in_batches(store, facts(40), {40});
  Snapshot first = store.snapshot();
  std::vector<IndexFact> more = facts(60);
  more.erase(more.begin(), more.begin() + static_cast<std::ptrdiff_t>(facts(40).size()));
  more.push_back(LevelFact{digest_of("run 7"), Level::kDisputed, digest_of("rerun 7b")});
  commit_in_batches(store, more, {more.size()});
  Snapshot second = store.snapshot();
  LayoutTrees trees(store.repo());
  for (Family family : kFamilies) {
    INFO(family_dir(family));
    const std::vector<FactChange> expected = diff_facts(trees, head_tree(first), head_tree(second), family);
    const std::vector<CheckedFactChange> got = diff_incoming(trees, head_tree(first), head_tree(second), family);
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i].change == expected[i]);
      REQUIRE(got[i].after.has_value() == expected[i].after.has_value());
      if (got[i].after) CHECK(render_line(*got[i].after) == *expected[i].after);
    }
  }

  // Tampered as stock git could: a new line that keeps its key in front but
  // is not its RFC 8785 form, and an empty file where lines were.
  const std::string dir = family_dir(Family::kSources) + "/";
  const std::string name = second.entries(family_dir(Family::kSources)).front().name;
  const std::string bytes = *second.read(dir + name);
  REQUIRE(!second.entries(family_dir(Family::kSources)).front().folder);
  const std::size_t last_start = bytes.rfind('\n', bytes.size() - 2) + 1;
  const std::size_t lines = static_cast<std::size_t>(std::count(bytes.begin(), bytes.end(), '\n'));
  std::string spaced = bytes.substr(0, last_start) + bytes.substr(last_start, 76) + " " + bytes.substr(last_start + 76);
  Snapshot bad = tamper(store, {{dir + name, spaced}});
  try {
    diff_incoming(trees, head_tree(second), head_tree(bad), Family::kSources);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kCorruption);
    CHECK_THAT(e.what(), Catch::Matchers::Contains(dir + name + ":" + std::to_string(lines) + ":"));
  }
  Snapshot empty = tamper(store, {{dir + name, ""}});
  try {
    diff_incoming(trees, head_tree(second), head_tree(empty), Family::kSources);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kCorruption);
    CHECK_THAT(e.what(), Catch::Matchers::Contains(dir + name + ":1: expected at least one line"));
  }
}

}  // namespace
}  // namespace kistore
