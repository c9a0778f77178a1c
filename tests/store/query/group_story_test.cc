// read_group_story (store/query/group_story.h) against real stores: a group built
// in several commits (runs added so that ranks move, an attestation, a signed
// rerun, a commit of another group between them), and the format-1 fixture
// across its upgrade, where every path of the group is renamed.
#include "store/query/group_story.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "objects/error.h"
#include "objects/json.h"
#include "refs/index.h"
#include "store/write/add.h"
#include "store/write/rerun.h"
#include "store/history/trust.h"
#include "store/write/upgrade.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

std::string data(const std::string& rel) { return read_file(std::string(KISTORE_SOURCE_DIR) + "/tests/data/" + rel); }

const char kFixture[] = "refs/seed-run-tiled-geglu-backward.json";
const Digest kSeedRun = *Digest::parse("sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0");

// The seed bundle with its run changed: another median (ns), implementation,
// externalId and, with `workload`, another comparison group.
Json variant(double median_ns, const std::string& implementation, const std::string& workload = "") {
  Json bundle = parse_json(data(kFixture), kFixture);
  Json* spec = bundle.find("run")->find("spec");
  spec->find("timing")->find("latencyNs")->set("median", median_ns);
  spec->set("implementationDigest", Digest::of(implementation).str());
  // <kernel>/<pass>/<provider>/...: the provider part is what implementation_name shows.
  Json* native = spec->find("sourceNative");
  std::string id = native->find("externalId")->as_string();
  std::size_t a = id.find('/', id.find('/') + 1) + 1, b = id.find('/', a);
  native->set("externalId", id.substr(0, a) + implementation + id.substr(b));
  if (!workload.empty()) spec->set("workloadDigest", Digest::of(workload).str());
  return bundle;
}

Document run_of(const Json& bundle) { return Bundle::from_json(bundle, Location{"v.json", ""}).run(); }

// The story this test tells, commit by commit (oldest first):
//   1. add the seed run: the group's only member, rank 1;
//   2. add a faster run (rank 1, the seed moves to 2) and a slower one (3);
//   3. add a run of another group (no part of this story);
//   4. attest the seed;
//   5. a signed rerun of the seed within tolerance: reproduced.
struct StoryStore {
  TempDir tmp;
  Store store = (setenv("KISTORE_AUTHOR", "Test <t@example.com>", 1), Store::init(tmp.path + "/store"));
  std::shared_ptr<const SshPrivateKey> controller =
      std::make_shared<const SshPrivateKey>(SshPrivateKey::parse(data("keys/controller"), "controller"));
  Json fast = variant(1000000, "fast"), slow = variant(9000000, "slow"), elsewhere = variant(5, "other", "w2");
  Digest attestation = kSeedRun;
  Digest rerun = kSeedRun;  // the rerun recorded

  StoryStore() {
    add({parse_json(data(kFixture), kFixture)});
    add({fast, slow});
    add({elsewhere});
    Json att = parse_json(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Attestation",
        "spec":{"type":"note","author":"Ann <a@example.com>","body":"seen"}})",
                          "att");
    att.find("spec")->set("subject", kSeedRun.str());
    Document att_doc = Document::from_json(att, Location{"att.json", ""});
    attestation = att_doc.digest();
    add_documents(store, {AddedDocument{&att_doc, "att.json"}}, AddOptions{});
    save_trust(store, {AllowedSigner{{"controller@example.org"}, "namespaces=\"git\"", controller->public_key()}});
    RerunOptions o;
    o.key = controller;
    o.key_source = "controller";
    Json again = parse_json(data(kFixture), kFixture);
    Json* spec = again.find("run")->find("spec");
    spec->find("timing")->find("latencyNs")->set("median", 2650000);
    spec->erase("sourceNative");
    rerun = record_rerun(store, kSeedRun.str(),
                         InputItem{Location{"rerun.json", ""}, Bundle::from_json(again, Location{"rerun.json", ""})}, o)
                .rerun;
  }
  void add(const std::vector<Json>& bundles) {
    std::vector<Bundle> parsed;
    for (const Json& b : bundles) parsed.push_back(Bundle::from_json(b, Location{"v.json", ""}));
    std::vector<Document> docs;
    for (const Bundle& b : parsed)
      for (const Document& d : b.documents()) docs.push_back(d);
    std::vector<AddedDocument> in;
    for (const Document& d : docs) in.push_back(AddedDocument{&d, "v.json"});
    add_documents(store, in, AddOptions{});
  }
  Digest key() const { return comparison_key(store.snapshot().document(kSeedRun, false).spec()); }
};

std::vector<std::string> ops_of(const std::vector<GroupStoryEntry>& story) {
  std::vector<std::string> out;
  for (const GroupStoryEntry& e : story) out.push_back(e.commit.op);
  return out;
}

TEST_CASE("group story: runs added, ranks moved, an attestation and a signed rerun, newest first",
          "[store][group_story]") {
  StoryStore s;
  const Digest fast = run_of(s.fast).digest(), slow = run_of(s.slow).digest();
  std::vector<GroupStoryEntry> story = read_group_story(s.store, s.key(), {});
  // The commit of the other group is no part of it.
  REQUIRE(ops_of(story) == std::vector<std::string>{"rerun", "add", "add", "add"});
  const GroupStoryEntry &rerun = story[0], &attest = story[1], &second = story[2], &first = story[3];

  REQUIRE(first.added.size() == 1);
  CHECK(first.added[0].run == kSeedRun);
  CHECK(first.added[0].rank == 1);
  CHECK(first.added[0].level == Level::kSourceNative);
  CHECK(first.added[0].primary->value == 2606080);
  CHECK(first.added[0].primary->unit == "ns");
  CHECK(first.ranks.empty());
  CHECK(first.members == 1);

  // The second add: the faster run takes rank 1, the seed moves from 1 to 2.
  REQUIRE(second.added.size() == 2);
  CHECK(second.added[0].run == fast);
  CHECK(second.added[0].rank == 1);
  CHECK(second.added[1].run == slow);
  CHECK(second.added[1].rank == 3);
  REQUIRE(second.ranks.size() == 1);
  CHECK(second.ranks[0].run == kSeedRun);
  CHECK(second.ranks[0].from == 1);
  CHECK(second.ranks[0].to == 2);
  CHECK(second.members == 3);
  CHECK(second.ranked == 3);
  CHECK(second.levels.empty());  // the new runs' levels are in `added`

  // The attestation (an add commit, its op "add" as add_documents makes it).
  CHECK(attest.added.empty());
  CHECK(attest.ranks.empty());
  REQUIRE(attest.attestations.size() == 1);
  CHECK(attest.attestations[0].run == kSeedRun);
  CHECK(attest.attestations[0].attestation == s.attestation);
  CHECK(attest.attestations[0].added);

  // The rerun: source-native -> reproduced, with the rerun as evidence; no rank moves.
  REQUIRE(rerun.levels.size() == 1);
  CHECK(rerun.levels[0].run == kSeedRun);
  CHECK(rerun.levels[0].from == Level::kSourceNative);
  CHECK(rerun.levels[0].to == Level::kReproduced);
  CHECK(rerun.levels[0].evidence == s.rerun);
  REQUIRE(rerun.reruns.size() == 1);
  CHECK(rerun.reruns[0].rerun.rerun == s.rerun);
  CHECK(rerun.reruns[0].rerun.verdict == Level::kReproduced);
  CHECK(rerun.ranks.empty());
  CHECK(rerun.added.empty());
  CHECK(rerun.members == 3);  // the rerun is evidence, not a member

  const std::string seed = kSeedRun.hex().substr(0, 12), evidence = s.rerun.hex().substr(0, 12);
  auto as_given = [](double v, const std::string& unit) { return format_number(v) + " " + unit; };
  CHECK(group_story_texts(second, as_given) ==
        std::vector<std::string>{fast.hex().substr(0, 12) + " fast: added, 1000000 ns, source-native, rank 1 of 3",
                                 slow.hex().substr(0, 12) + " slow: added, 9000000 ns, source-native, rank 3 of 3",
                                 seed + " liger_tiled: rank 1 → 2"});
  CHECK(group_story_texts(rerun, as_given) ==
        std::vector<std::string>{seed + " liger_tiled: level source-native → reproduced (rerun " + evidence + ")",
                                 seed + " liger_tiled: rerun " + evidence + " recorded (reproduced, ratio 1.017)"});
}

TEST_CASE("Store::snapshot_at reads the tree of an older commit; a bad id is kIO naming it", "[store][snapshot]") {
  StoryStore s;
  std::vector<GroupStoryEntry> story = read_group_story(s.store, s.key(), {});
  REQUIRE(story.size() == 4);
  Snapshot before_rerun = s.store.snapshot_at(story[0].commit.parents.at(0));
  CHECK(before_rerun.commit_id() == story[0].commit.parents[0]);
  CHECK(recorded_level(before_rerun, kSeedRun) == Level::kSourceNative);
  CHECK(recorded_level(s.store.snapshot_at(story[0].commit.id), kSeedRun) == Level::kReproduced);
  CHECK_FALSE(s.store.snapshot_at(story[3].commit.id).has_object(run_of(s.fast).digest()));
  for (const std::string& bad : {std::string("nope"), std::string(40, '0')}) {
    INFO(bad);
    try {
      s.store.snapshot_at(bad);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kIO);
      CHECK_THAT(e.what(), Catch::Contains(bad));
    }
  }
}

TEST_CASE("group story: the limit and the op filter, and an unknown key", "[store][group_story]") {
  StoryStore s;
  GroupStoryQuery q;
  q.limit = 2;
  CHECK(ops_of(read_group_story(s.store, s.key(), q)) == std::vector<std::string>{"rerun", "add"});
  q.limit = 0;
  q.op = "rerun";
  CHECK(ops_of(read_group_story(s.store, s.key(), q)) == std::vector<std::string>{"rerun"});
  q.op = "import";
  CHECK(read_group_story(s.store, s.key(), q).empty());
  // The other group's story is its own one commit.
  const Digest other = comparison_key(run_of(s.elsewhere).spec());
  CHECK(ops_of(read_group_story(s.store, other, {})) == std::vector<std::string>{"add"});
  CHECK(read_group_story(s.store, Digest::of("no such group"), {}).empty());
}

TEST_CASE("group story across an upgrade: renamed paths are no change; the reruns leave the group",
          "[store][group_story][upgrade]") {
  TempDir tmp;
  const std::string dir = tmp.path + "/store";
  must("git clone -q --bare " + quote(std::string(KISTORE_SOURCE_DIR) + "/tests/data/format1/store.bundle") + " " +
       quote(dir));
  must("git --git-dir=" + quote(dir) + " symbolic-ref HEAD refs/heads/main");
  Store store = Store::open(dir);
  save_trust(store, parse_allowed_signers("controller@example.org " + data("keys/controller.pub"), "trust"));
  const Digest reproduced = *Digest::parse("sha256:628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354");
  const Digest close_rerun = *Digest::parse("sha256:588a4b483894c9c688ffed3529e59df566d7696c5e2475e264d0f5de598240f9");
  const Digest key = comparison_key(store.snapshot().document(reproduced, false).spec());
  CommitOptions o;
  o.author = "Upgrade Test <upgrade@example.org>";
  REQUIRE(upgrade_store(store, o).commit);

  std::vector<GroupStoryEntry> story = read_group_story(store, key, {});
  REQUIRE(ops_of(story) == std::vector<std::string>{"upgrade", "rerun", "attest", "import"});
  const GroupStoryEntry& upgrade = story[0];
  // Format 1 ranked the rerun as a member; format 2 keeps it beside its run.
  REQUIRE(upgrade.removed.size() == 1);
  CHECK(upgrade.removed[0].run == close_rerun);
  REQUIRE(upgrade.reruns.size() == 1);
  CHECK(upgrade.reruns[0].run == reproduced);
  CHECK(upgrade.reruns[0].rerun.rerun == close_rerun);
  CHECK(upgrade.added.empty());
  CHECK(upgrade.levels.empty());        // every level entry renamed, none changed
  CHECK(upgrade.attestations.empty());  // the attestation renamed, not added
  CHECK(upgrade.members == 4);
  // The format-1 rerun commit, read in format-1 trees.
  REQUIRE(story[1].levels.size() == 1);
  CHECK(story[1].levels[0].to == Level::kReproduced);
  CHECK(story[1].levels[0].evidence == close_rerun);
  CHECK(story[2].attestations.size() == 1);
  CHECK(story[3].added.size() == 4);
}

}  // namespace
}  // namespace kistore
