// kistore upgrade at the store layer (store/write/upgrade.h), on the stores the
// format-1 and format-2 releases made (tests/data/format1/store.bundle and
// tests/data/format2/store.bundle, see their READMEs): the index becomes
// format 3's lines, format 1's reruns the signed history adds move to
// refs/reruns, nothing else changes meaning, and the level audit sees no
// level change across it.
#include "store/write/upgrade.h"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "objects/error.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "store/history/level_audit.h"
#include "store/query/query.h"
#include "store/history/trust.h"
#include "store/core/index_trees.h"
#include "refs/index_lines.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

const Digest kReproduced = *Digest::parse("sha256:628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354");
const Digest kDisputed = *Digest::parse("sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0");
const Digest kCloseRerun = *Digest::parse("sha256:588a4b483894c9c688ffed3529e59df566d7696c5e2475e264d0f5de598240f9");
const Digest kFarRerun = *Digest::parse("sha256:6971164a9d6216d5f020f22b4f4cb7ad58ace0c441c9fb71a9665dd82f310f5c");

// A bare clone of the format-1 (or format-2) fixture, its controller trusted or not.
struct Format1Store {
  TempDir tmp;
  std::string dir = tmp.path + "/store";
  explicit Format1Store(bool trusted, const std::string& fixture = "format1") {
    const std::string data = std::string(KISTORE_SOURCE_DIR) + "/tests/data/";
    must("git clone -q --bare " + quote(data + fixture + "/store.bundle") + " " + quote(dir));
    must("git --git-dir=" + quote(dir) + " symbolic-ref HEAD refs/heads/main");
    if (trusted) {
      Store s = Store::open(dir);
      save_trust(s, parse_allowed_signers("controller@example.org " + read_file(data + "keys/controller.pub"), "trust"));
    }
  }
  std::string git() const { return "git --git-dir=" + quote(dir) + " "; }
};

CommitOptions fixed_options() {
  CommitOptions o;
  o.author = "Upgrade Test <upgrade@example.org>";
  o.time = 1767225600;
  return o;
}

// Every path below refs/ of main is a file of format 3's trie: named by one hex digit.
void check_trie_paths(const Format1Store& f) {
  const std::string paths = must(f.git() + "ls-tree -r --name-only main refs");
  for (std::size_t a = 0, b; a < paths.size(); a = b + 1) {
    b = paths.find('\n', a);
    const std::string path = paths.substr(a, b - a);
    INFO(path);
    CHECK(path.size() >= 2);
    CHECK(path[path.size() - 2] == '/');  // a file named by one digit
    CHECK(std::isxdigit(static_cast<unsigned char>(path.back())));
  }
}

TEST_CASE("upgrade: the format-1 fixture becomes format 3, its reruns beside their runs", "[store][upgrade]") {
  Format1Store f(true);
  Store store = Store::open(f.dir);
  const std::string old_head = store.snapshot().commit_id();
  const std::string old_objects = trim(must(f.git() + "rev-parse main:objects"));
  REQUIRE(store.snapshot().format() == Format::k1);
  const Digest key = comparison_key(store.snapshot().document(kReproduced).spec());
  CHECK(store.snapshot().exists(group_path(Format::k1, key, kCloseRerun)));  // format 1: a competitor

  UpgradeResult r = upgrade_store(store, fixed_options());
  REQUIRE(r.commit.has_value());
  CHECK(r.from == Format::k1);
  CHECK(r.reruns == 2);
  Snapshot snap = store.snapshot();
  CHECK(snap.format() == Format::k3);
  CHECK(snap.read("FORMAT") == "kistore 3\n");
  CHECK(r.files > 10);
  CHECK(trim(must(f.git() + "rev-parse main^")) == old_head);
  CHECK(trim(must(f.git() + "rev-parse main:objects")) == old_objects);
  CHECK(commit_op(must(f.git() + "log -1 --format=%B main")) == "upgrade");
  // No path of format 1 is left below refs/.
  check_trie_paths(f);
  // The reruns: out of the group, beside their runs, with their verdicts.
  CHECK_FALSE(find_fact(snap, Family::kGroups, key.hex() + kCloseRerun.hex()));
  CHECK(find_fact(snap, Family::kGroups, key.hex() + kReproduced.hex()));
  auto close = reruns_of(snap, kReproduced);
  REQUIRE(close.size() == 1);
  CHECK(close[0].rerun == kCloseRerun);
  CHECK(close[0].verdict == Level::kReproduced);
  CHECK(close[0].ratio == Approx(2650000.0 / 2606080.0));
  auto far = reruns_of(snap, kDisputed);
  REQUIRE(far.size() == 1);
  CHECK(far[0].rerun == kFarRerun);
  CHECK(far[0].verdict == Level::kDisputed);
  // Levels, entry for entry.
  CHECK(recorded_level(snap, kReproduced) == Level::kReproduced);
  CHECK(recorded_level(snap, kDisputed) == Level::kDisputed);
  CHECK(find_fact(snap, Family::kLevels, kReproduced.hex()) ==
        std::optional<IndexFact>(LevelFact{kReproduced, Level::kReproduced, kCloseRerun}));
  CHECK(attestations_of(snap, kReproduced).size() == 1);

  // The level function over the history sees no level change across the upgrade.
  LevelAudit audit(store, load_trust(store));
  CHECK(audit.level_changes(cid(old_head), cid(*r.commit)).empty());
  CHECK(audit.judge(cid(*r.commit), kReproduced, Level::kSourceNative,
                    audit.entry_at(cid(*r.commit), kReproduced)).agrees);
  CHECK(audit.judge(cid(*r.commit), kDisputed, Level::kSourceNative, audit.entry_at(cid(*r.commit), kDisputed)).agrees);

  UpgradeResult again = upgrade_store(store, fixed_options());
  CHECK_FALSE(again.commit.has_value());
  CHECK(again.from == Format::k3);
  CHECK(store.snapshot().commit_id() == *r.commit);
}

TEST_CASE("level audit: across trees of two formats, a moved entry is no change, a changed one is", "[store][upgrade][level_audit]") {
  Format1Store f(true);
  Store store = Store::open(f.dir);
  const std::string old_head = store.snapshot().commit_id();
  std::string upgraded = *upgrade_store(store, fixed_options()).commit;
  // A forged "upgrade" that also gives a run a level line (no rerun gave
  // it): that run, and only it, changed.
  const Digest other = *Digest::parse("sha256:fe4cf9df9ebc5952e31cb96ce6ac3ef0bc213d6a6c11b52fac0d6690189246be");
  const Snapshot up = store.snapshot();
  const std::string file = fact_file(up, Family::kLevels, other.hex());
  std::string bytes = up.read(file).value_or("") + render_line(LevelFact{other, Level::kReproduced, kCloseRerun});
  std::vector<std::string> lines;  // in key order
  for (std::size_t a = 0, b; a < bytes.size(); a = b + 1) lines.push_back(bytes.substr(a, (b = bytes.find('\n', a)) + 1 - a));
  std::sort(lines.begin(), lines.end());
  bytes.clear();
  for (const std::string& l : lines) bytes += l;
  const std::string idx = f.tmp.path + "/index", work = f.tmp.path + "/line";
  write_file(work, bytes);
  const std::string env = "GIT_INDEX_FILE=" + quote(idx) + " ";
  must(env + f.git() + "read-tree main");
  const std::string blob = trim(must(f.git() + "hash-object -w " + quote(work)));
  must(env + f.git() + "update-index --add --cacheinfo 100644," + blob + "," + quote(file));
  const std::string tree = trim(must(env + f.git() + "write-tree"));
  const std::string forged = trim(must(f.git() + "-c user.name=f -c user.email=f@example.org commit-tree " + tree + " -p " +
                                       old_head + " -m 'upgrade' -m 'Kistore-Op: upgrade'"));
  LevelAudit audit(store, load_trust(store));
  CHECK(audit.level_changes(cid(old_head), cid(upgraded)).empty());
  CHECK(audit.level_changes(cid(old_head), cid(forged)) == std::set<Digest>{other});
}

TEST_CASE("upgrade: without the store's controllers no rerun moves", "[store][upgrade]") {
  Format1Store f(false);
  Store store = Store::open(f.dir);
  UpgradeResult r = upgrade_store(store, fixed_options());
  REQUIRE(r.commit.has_value());
  CHECK(r.reruns == 0);
  Snapshot snap = store.snapshot();
  const Digest key = comparison_key(snap.document(kReproduced).spec());
  CHECK(find_fact(snap, Family::kGroups, key.hex() + kCloseRerun.hex()));  // still listed in its group, as before
  CHECK(reruns_of(snap, kReproduced).empty());
}

TEST_CASE("writers refuse a format-1 store before writing anything; an empty store is format 3", "[store][upgrade][errors]") {
  Format1Store f(true);
  Store store = Store::open(f.dir);
  const std::string head = store.snapshot().commit_id();
  bool built = false;
  auto build = [&](const Snapshot&) -> std::optional<ChangeSet> {
    built = true;
    ChangeSet c;
    c.op = "add";
    c.summary = "add: nothing";
    return c;
  };
  try {
    store.commit(build, fixed_options());
    FAIL("a writer committed onto a format-1 store");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kIO);
    CHECK_THAT(e.what(), Catch::Matchers::Contains("this store is format 1") &&
                             Catch::Matchers::Contains("run `kistore upgrade` first; nothing was written"));
  }
  CHECK_FALSE(built);
  CHECK(store.snapshot().commit_id() == head);

  TempDir empty;
  Store fresh = Store::init(empty.path + "/new");
  CHECK(fresh.snapshot().format() == Format::k3);
  CHECK(fresh.commit(build, fixed_options()).has_value());
  CHECK(fresh.snapshot().read("FORMAT") == "kistore 3\n");
}


TEST_CASE("format 3's index of the format-2 fixture: its facts, and the same lines as format 1's where they agree",
          "[store][upgrade][index3]") {
  Format1Store one_store(true);
  Store store1 = Store::open(one_store.dir);
  const Snapshot one = store1.snapshot();
  const Format3Index from1 = format3_index(one, valid_reruns(store1, one));
  CHECK(from1.reruns == 2);
  Format1Store f(true, "format2");
  Store store = Store::open(f.dir);
  const Snapshot two = store.snapshot();
  REQUIRE(two.format() == Format::k2);
  const Format3Index from2 = format3_index(two, {});
  CHECK(from2.reruns == 0);  // format 2 indexes them already
  CHECK(from2.claims_added == 0);  // the one id two runs have is the first run's in both formats
  // The two releases' stores hold the same documents but their far reruns:
  // a fact both have is the same line.
  std::size_t common = 0;
  for (const auto& [family, lines] : from2.lines) {
    if (!from1.lines.count(family)) continue;
    std::map<std::string, std::string> by_key;
    for (const KeyedLine& l : from1.lines.at(family)) by_key[l.key] = l.line;
    for (const KeyedLine& l : lines)
      if (auto it = by_key.find(l.key); it != by_key.end()) {
        INFO(l.line);
        // The far reruns differ, and with them 334face3's level line; the
        // close rerun's metadata differs.
        if (family != Family::kMetadata && family != Family::kLevels) CHECK(it->second == l.line);
        ++common;
      }
  }
  CHECK(common > 40);

  // The facts, family by family, as the fixture's history gives them.
  const Digest key = comparison_key(two.document(kReproduced).spec());
  auto has = [&](Family family, const IndexFact& fact) {
    for (const KeyedLine& l : from2.lines.at(family))
      if (l.key == fact_key(fact)) return l.line == render_line(fact);
    return false;
  };
  CHECK(has(Family::kLevels, LevelFact{kReproduced, Level::kReproduced, kCloseRerun}));
  CHECK(from2.lines.at(Family::kLevels).size() == 2);  // default levels have no line
  const Digest far = *Digest::parse("sha256:8e1805325e224c0b70c0f2ffe2fd07dea40b50a51a56a8f9decbded536005d22");
  CHECK(has(Family::kLevels, LevelFact{kDisputed, Level::kDisputed, far}));
  CHECK(has(Family::kReruns, RerunFact{kReproduced, kCloseRerun, Level::kReproduced, 2650000.0 / 2606080.0}));
  CHECK(has(Family::kGroups, GroupFact{key, kReproduced, primary_measurement(two.document(kReproduced).spec())}));
  for (const KeyedLine& l : from2.lines.at(Family::kGroups)) {
    INFO(l.line);
    CHECK_FALSE(l.key.ends_with(kCloseRerun.hex()));  // a rerun is no competitor
  }
  CHECK(from2.lines.at(Family::kAttestations).size() == attestations_of(two, kReproduced).size() +
                                                           attestations_of(two, kDisputed).size());

  // Written in one commit: objects untouched, FORMAT 3, the trie of the lines.
  const std::string old_objects = trim(must(f.git() + "rev-parse main:objects"));
  CommitOptions options = fixed_options();
  options.upgrade = true;
  REQUIRE(store.commit([&](const Snapshot&) -> std::optional<ChangeSet> { return format3_change(from2, Format::k2); },
                       options));
  CHECK(trim(must(f.git() + "rev-parse main:objects")) == old_objects);
  CHECK(must(f.git() + "show main:FORMAT") == "kistore 3\n");
  // The level function over the history sees no level change across it, and
  // the format-3 tree records what the signed history gives.
  {
    const CommitId before = cid(trim(must(f.git() + "rev-parse main^"))), after = cid(trim(must(f.git() + "rev-parse main")));
    LevelAudit audit(store, load_trust(store));
    CHECK(audit.level_changes(before, after).empty());
    CHECK(audit.entry_at(after, kReproduced) == LevelEntryValue{Level::kReproduced, kCloseRerun});
    CHECK(audit.judge(after, kReproduced, Level::kSourceNative, audit.entry_at(after, kReproduced)).agrees);
    CHECK(audit.judge(after, kDisputed, Level::kSourceNative, audit.entry_at(after, kDisputed)).agrees);
    // A run without a line stands at its default, which the history agrees with.
    const Digest other = std::get<GroupFact>(facts_with_prefix(store.snapshot_at(after.hex()), Family::kGroups, "").back()).run;
    if (other != kReproduced && other != kDisputed) {
      auto entry = audit.entry_at(after, other);
      REQUIRE(entry);
      CHECK_FALSE(entry->evidence);
      CHECK(audit.judge(after, other, entry->level, entry).agrees);
    }
  }
  CHECK(commit_op(must(f.git() + "log -1 --format=%B main")) == "upgrade");
  const Snapshot three = store.snapshot_at(trim(must(f.git() + "rev-parse main")));
  for (const auto& [family, lines] : from2.lines) {
    INFO(family_name(family));
    std::size_t n = 0;
    for (const IndexFact& fact : facts_with_prefix(three, family, "")) {
      REQUIRE(n < lines.size());
      CHECK(render_line(fact) == lines[n++].line);
    }
    CHECK(n == lines.size());
  }
  // Nothing of format 2 is left below refs/: every path is a trie file.
  check_trie_paths(f);
  CHECK(sh(f.git() + "fsck --strict --no-dangling").rc == 0);
}

}  // namespace
}  // namespace kistore
