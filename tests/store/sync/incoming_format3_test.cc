// What a pull checks of each incoming commit of a format-3 store
// (store/sync/incoming.h; refs/layout.h: taught room by room): the commits
// the writers made pass, and each hand-made break of the index files, of the
// trie's shape or of the level rules is a problem naming the file or the
// key.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "objects/blob.h"
#include "objects/error.h"
#include "refs/index_lines.h"
#include "refs/index_trie.h"
#include "store/core/layout_trees.h"
#include "store/git/git.h"
#include "store/history/level_audit.h"
#include "store/sync/incoming.h"
#include "tests/store/format3.h"

namespace kistore {
namespace {

using namespace test_support;

// Checks every commit of the branch, oldest first, as a pull would; their problems.
std::string check_all(Format3Store& s) {
  LayoutTrees trees(s.store.repo());
  LevelAudit audit(s.store, load_trust(s.store));
  IncomingChecker checker(trees, audit);
  std::istringstream ids(must("git --git-dir=" + quote(s.dir) + " rev-list --reverse main"));
  for (std::string id; std::getline(ids, id);) {
    checker.check_commit(git::parse_oid(id));
  }
  std::string out;
  for (const Problem& p : checker.problems()) out += std::string(problem_kind_name(p.kind)) + " " + p.path + ": " + p.detail + "\n";
  return out;
}

TEST_CASE("incoming: the commits of a format-3 store its writers made pass a pull's checks", "[sync][incoming][index3]") {
  Format3Store s;
  CHECK(check_all(s).empty());
}

TEST_CASE("incoming: each hand-made break of a format-3 index is refused", "[sync][incoming][index3][errors]") {
  Format3Store s;
  const Snapshot head = s.store.snapshot();
  const std::string group_key = comparison_key(head.document(s.run).spec()).hex();
  const std::string group_file = s.file_of(Family::kGroups, group_key + s.run.hex());
  const std::string group_bytes = *head.read(group_file);
  std::string expected;

  SECTION("lines out of order") {
    const std::size_t second = group_bytes.find('\n') + 1, third = group_bytes.find('\n', second) + 1;
    const std::string swapped = group_bytes.substr(second, third - second) + group_bytes.substr(0, second) + group_bytes.substr(third);
    s.tamper([&](const Snapshot&, ChangeSet& c) { c.upserts[group_file] = swapped; });
    expected = group_file + ":2: /@key: expected keys in ascending order";
  }
  SECTION("a line in the wrong file") {
    const std::string other = "refs/groups/" + std::string(1, group_key[0] == '0' ? '1' : '0');
    s.tamper([&](const Snapshot&, ChangeSet& c) { c.upserts[other] = group_bytes; });
    expected = other + ":1: ";
  }
  SECTION("a file past T") {
    std::vector<KeyedLine> keyed;
    for (int i = 0; keyed.size() < kTrieMaxLines + 1; ++i) {
      const Digest d = Digest::of("padding " + std::to_string(i));
      if (d.hex()[0] == '7') keyed.push_back({d.hex(), render_line(MetadataFact{d, R"({"x":1})"})});
    }
    std::sort(keyed.begin(), keyed.end(), [](const KeyedLine& a, const KeyedLine& b) { return a.key < b.key; });
    std::string file;
    for (const KeyedLine& l : keyed) file += l.line;
    s.tamper([&](const Snapshot&, ChangeSet& c) { c.upserts["refs/metadata/7"] = file; });
    expected = "layout refs/metadata/7: commit";
  }
  SECTION("a folder that should be a file") {
    const std::string moved = "refs/groups/" + group_key.substr(0, 3) + "/" + group_key.substr(3, 1);
    s.tamper([&](const Snapshot&, ChangeSet& c) {
      c.removals.push_back(group_file);
      c.upserts[moved] = group_bytes;
    });
    expected = "layout " + moved + ": commit";
  }
  SECTION("a level line no signed rerun gives") {
    s.tamper([&](const Snapshot& h, ChangeSet& c) {
      IndexChanges changes;
      changes.put(LevelFact{s.run, Level::kDisputed, s.rerun});
      apply_index_changes(h, changes, c);
    });
    expected = "level-unjustified refs/levels @" + s.run.hex();
  }
  SECTION("a group line taken out") {
    s.tamper([&](const Snapshot& h, ChangeSet& c) {
      IndexChanges changes;
      changes.remove(Family::kGroups, group_key + s.run.hex());
      apply_index_changes(h, changes, c);
    });
    expected = "index-removed refs/groups @" + group_key + s.run.hex();
  }
  SECTION("a run added without its lines") {
    Json run = *parse_json(format3_data(kFormat3Fixture), kFormat3Fixture).find("run");
    run.erase("metadata");
    run.find("spec")->find("timing")->find("latencyNs")->set("median", 2700000);
    run.find("spec")->find("sourceNative")->set("externalId", "lonely");
    const Document doc = Document::from_json(run, Location{"lonely.json", ""});
    s.tamper([&](const Snapshot&, ChangeSet& c) { c.upserts[object_path(doc.digest())] = encode_object(doc.canonical()); });
    expected = "missing-group refs/groups @" + group_key + doc.digest().hex();
    const std::string problems = check_all(s);
    CHECK_THAT(problems, Catch::Matchers::Contains("missing-source refs/sources @"));
  }
  const std::string problems = check_all(s);
  INFO(problems);
  CHECK_THAT(problems, Catch::Matchers::Contains(expected));
}

}  // namespace
}  // namespace kistore
