// verify_store on format-3 stores (refs/layout.h: taught room by room): a
// store the writers made verifies clean, and each way a hand could break the
// index files (SPEC §2: unsorted or duplicate lines, a line in the wrong
// file, a file past T, a folder that should be a file, a level line no
// signed rerun gives, a line taken out) is a problem naming the file and the
// key.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "objects/error.h"
#include "objects/json.h"
#include "refs/index.h"
#include "refs/index_lines.h"
#include "refs/index_trie.h"
#include "store/core/index_trees.h"
#include "store/history/trust.h"
#include "store/verify/verify.h"
#include "store/write/add.h"
#include "store/write/rerun.h"
#include "tests/store/support.h"
#include "tests/store/format3.h"

namespace kistore {
namespace {

using namespace test_support;

std::string problems_of(const VerifyReport& r) {
  std::string out;
  for (const Problem& p : r.problems) out += std::string(problem_kind_name(p.kind)) + " " + p.path + ": " + p.detail + "\n";
  return out;
}

TEST_CASE("verify: a format-3 store the writers made is clean", "[verify][index3]") {
  Format3Store s;
  VerifyReport r = s.verify();
  INFO(problems_of(r));
  CHECK(r.ok());
  CHECK(r.objects == 7);  // 3 of the seed, 2 runs, an attestation, the rerun (its protocol and environment are the seed's)
}

TEST_CASE("verify: each break of a format-3 index is a problem naming the file and the key", "[verify][index3][errors]") {
  Format3Store s;
  const std::string group_key = comparison_key(s.store.snapshot().document(s.run).spec()).hex();
  const std::string group_file = s.file_of(Family::kGroups, group_key + s.run.hex());
  const std::string group_bytes = *s.store.snapshot().read(group_file);
  REQUIRE(std::count(group_bytes.begin(), group_bytes.end(), '\n') == 3);
  std::string expected;

  SECTION("lines out of order") {
    const std::size_t second = group_bytes.find('\n') + 1;
    const std::string swapped = group_bytes.substr(second, group_bytes.find('\n', second) + 1 - second) +
                                group_bytes.substr(0, second) + group_bytes.substr(group_bytes.find('\n', second) + 1);
    s.tamper([&](const Snapshot&, ChangeSet& c) { c.upserts[group_file] = swapped; });
    expected = group_file + ":2: /@key: expected keys in ascending order";
  }
  SECTION("a line twice") {
    s.tamper([&](const Snapshot&, ChangeSet& c) {
      c.upserts[group_file] = group_bytes.substr(0, group_bytes.find('\n') + 1) + group_bytes;
    });
    expected = group_file + ":2: /@key: expected each key once";
  }
  SECTION("a line in the wrong file") {
    const std::string other = "refs/groups/" + std::string(1, group_key[0] == '0' ? '1' : '0');
    s.tamper([&](const Snapshot&, ChangeSet& c) { c.upserts[other] = group_bytes; });
    expected = other + ":1: ";
  }
  SECTION("a file past T") {
    // Sorted lines under one digit: the keys of the padding that start with '7', and more made to.
    std::vector<KeyedLine> keyed;
    for (int i = 0; keyed.size() < kTrieMaxLines + 1; ++i) {
      const Digest d = Digest::of("padding " + std::to_string(i));
      if (d.hex()[0] == '7') keyed.push_back({d.hex(), render_line(MetadataFact{d, R"({"x":1})"})});
    }
    std::sort(keyed.begin(), keyed.end(), [](const KeyedLine& a, const KeyedLine& b) { return a.key < b.key; });
    std::string file;
    for (const KeyedLine& l : keyed) file += l.line;
    s.tamper([&](const Snapshot&, ChangeSet& c) { c.upserts["refs/metadata/7"] = file; });
    expected = "refs/metadata/7: expected a file of at most 256 lines";
  }
  SECTION("a folder that should be a file") {
    const std::string moved = "refs/groups/" + group_key.substr(0, 3) + "/" + group_key.substr(3, 1);
    s.tamper([&](const Snapshot&, ChangeSet& c) {
      c.removals.push_back(group_file);
      c.upserts[moved] = group_bytes;
    });
    expected = "refs/groups/" + group_key.substr(0, 3) + ": expected a folder of more than 256 lines";
  }
  SECTION("a level line no signed rerun gives") {
    // The variant run claims the seed run's rerun as its evidence.
    const Digest variant = std::get<GroupFact>(facts_with_prefix(s.store.snapshot(), Family::kGroups, group_key)[0]).run == s.run
                               ? std::get<GroupFact>(facts_with_prefix(s.store.snapshot(), Family::kGroups, group_key)[1]).run
                               : std::get<GroupFact>(facts_with_prefix(s.store.snapshot(), Family::kGroups, group_key)[0]).run;
    s.tamper([&](const Snapshot& head, ChangeSet& c) {
      IndexChanges changes;
      changes.put(LevelFact{variant, Level::kReproduced, s.rerun});
      apply_index_changes(head, changes, c);
    });
    expected = s.file_of(Family::kLevels, variant.hex()) + " @" + variant.hex();
  }
  SECTION("the rerun's level line taken out") {
    s.tamper([&](const Snapshot& head, ChangeSet& c) {
      IndexChanges changes;
      changes.remove(Family::kLevels, s.run.hex());
      apply_index_changes(head, changes, c);
    });
    expected = " @" + s.run.hex() + ": run " + s.run.str() + " has no level line, so stands at its default; expected reproduced";
  }
  SECTION("a group line taken out") {
    s.tamper([&](const Snapshot& head, ChangeSet& c) {
      IndexChanges changes;
      changes.remove(Family::kGroups, group_key + s.run.hex());
      apply_index_changes(head, changes, c);
    });
    expected = group_file + " @" + group_key + s.run.hex();
  }
  VerifyReport r = s.verify();
  INFO(problems_of(r));
  CHECK_FALSE(r.ok());
  CHECK_THAT(problems_of(r), Catch::Matchers::Contains(expected));
}

}  // namespace
}  // namespace kistore
