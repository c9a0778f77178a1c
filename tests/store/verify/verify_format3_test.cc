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

std::string data(const std::string& rel) { return read_file(std::string(KISTORE_SOURCE_DIR) + "/tests/data/" + rel); }
const char kFixture[] = "refs/seed-run-tiled-geglu-backward.json";

CommitOptions as(const char* author) {
  CommitOptions o;
  o.author = author;
  o.time = 1767225600;
  return o;
}

// A format-3 store holding the seed bundle, two more runs of its group, an
// attestation and a signed rerun of the seed run.
struct Format3Store {
  TempDir tmp;
  std::string dir = tmp.path + "/store";
  Store store = Store::init(dir);
  std::shared_ptr<const SshPrivateKey> controller =
      std::make_shared<const SshPrivateKey>(SshPrivateKey::parse(data("keys/controller"), "controller"));
  Digest run = Digest::of("unset"), rerun = Digest::of("unset");

  Format3Store() {
    make_format3(store, "T <t@example.org>");
    Json bundle = parse_json(data(kFixture), kFixture);
    Bundle seed = Bundle::from_json(bundle, Location{"seed.json", ""});
    std::vector<Document> more;
    for (int i = 1; i <= 2; ++i) {
      Json r = *bundle.find("run");
      r.find("spec")->find("timing")->find("latencyNs")->set("median", 2600000 + i);
      r.find("spec")->find("sourceNative")->set("externalId", "variant/" + std::to_string(i));
      more.push_back(Document::from_json(r, Location{"more.json", ""}));
    }
    run = seed.run().digest();
    Json note = parse_json(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Attestation","spec":{"type":"note","author":"Ann <a@example.com>","body":"ok"}})", "att");
    note.find("spec")->set("subject", run.str());
    more.push_back(Document::from_json(note, Location{"att.json", ""}));
    std::vector<AddedDocument> docs;
    for (const Document& d : seed.documents()) docs.push_back({&d, "seed.json"});
    for (const Document& d : more) docs.push_back({&d, "more.json"});
    AddOptions options;
    options.commit = as("T <t@example.org>");
    add_documents(store, docs, options);
    save_trust(store, {AllowedSigner{{"controller@example.org"}, "namespaces=\"git\"", controller->public_key()}});
    Json again = bundle;
    Json* spec = again.find("run")->find("spec");
    spec->find("timing")->find("latencyNs")->set("median", 2650000);
    spec->set("observedAt", "2026-11-30T09:00:00.000Z");
    spec->erase("sourceNative");
    RerunOptions o;
    o.tolerance = 0.10;
    o.key = controller;
    o.key_source = "controller";
    o.author = "Controller <c@example.org>";
    rerun = record_rerun(store, run.str(), InputItem{Location{"rerun.json", ""}, Bundle::from_json(again, Location{"rerun.json", ""})}, o).rerun;
  }
  VerifyReport verify() const {
    VerifyOptions o;
    o.trust = load_trust(store);
    return verify_store(store, o);
  }
  // Commits raw changes made by hand, as an attacker with stock git would.
  void tamper(const std::function<void(const Snapshot&, ChangeSet&)>& edit) {
    store.commit(
        [&](const Snapshot& head) -> std::optional<ChangeSet> {
          ChangeSet c;
          edit(head, c);
          c.op = "add";
          c.summary = "tamper";
          return c;
        },
        as("Mallory <m@example.org>"));
  }
  std::string file_of(Family family, const std::string& key) const { return fact_file(store.snapshot(), family, key); }
};

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
      if (d.hex()[0] == '7') keyed.push_back({d.hex(), render_line(MetadataFact{d, parse_json(R"({"x":1})", "m")})});
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
