// read_history along a run's story paths (store/history/history.h, what `log --run`
// shows) and along a group's (store/query/group_story.h), against git's own diff.
// read_history compares raw trees along the paths only; before, it asked
// libgit2 for a tree diff with the same paths as pathspecs. Here, for every
// commit of histories with a bulk add, attestations, a signed rerun (a level
// changed, a rerun entry), a merge and an upgrade from format 1 (every path
// renamed), the changes must be exactly those `git diff --name-status` of the
// commit against its first parent lists for run_story_paths as pathspecs, in
// the same order, for every run, and the commits kept exactly those it names.
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "objects/json.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "store/write/add.h"
#include "store/query/group_story.h"
#include "store/git/raw_tree.h"
#include "store/history/history.h"
#include "store/query/query.h"
#include "store/write/rerun.h"
#include "store/sync/sync.h"
#include "store/history/trust.h"
#include "store/write/upgrade.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

std::string data(const std::string& rel) { return read_file(std::string(KISTORE_SOURCE_DIR) + "/tests/data/" + rel); }

const char kFixture[] = "refs/seed-run-tiled-geglu-backward.json";
const Digest kSeedRun = *Digest::parse("sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0");
const char kEmptyTree[] = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

// The seed bundle with another median (ns) and implementation: the same group.
Json variant(double median_ns, const std::string& implementation) {
  Json bundle = parse_json(data(kFixture), kFixture);
  Json* spec = bundle.find("run")->find("spec");
  spec->find("timing")->find("latencyNs")->set("median", median_ns);
  spec->set("implementationDigest", Digest::of(implementation).str());
  Json* native = spec->find("sourceNative");
  native->set("externalId", "tiled_geglu/backward/" + implementation + "/1024");
  return bundle;
}

void add(Store& store, const std::vector<Json>& bundles) {
  std::vector<Bundle> parsed;
  for (const Json& b : bundles) parsed.push_back(Bundle::from_json(b, Location{"v.json", ""}));
  std::vector<Document> docs;
  for (const Bundle& b : parsed)
    for (const Document& d : b.documents()) docs.push_back(d);
  std::vector<AddedDocument> in;
  for (const Document& d : docs) in.push_back(AddedDocument{&d, "v.json"});
  add_documents(store, in, AddOptions{});
}

Digest attest(Store& store, const Digest& run, const std::string& body) {
  Json att = parse_json(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Attestation",
      "spec":{"type":"note","author":"Ann <a@example.com>","body":""}})",
                        "att");
  att.find("spec")->set("subject", run.str());
  att.find("spec")->set("body", body);
  Document doc = Document::from_json(att, Location{"att.json", ""});
  add_documents(store, {AddedDocument{&doc, "att.json"}}, AddOptions{});
  return doc.digest();
}

std::string git_dir(const Store& store) { return "git --git-dir=" + quote(store.dir()) + " "; }

// What git says commit `id` changed for `paths` against its first parent,
// as "<status> <path>" lines in its order.
std::vector<std::string> git_changes(const Store& store, const std::string& id, const std::vector<std::string>& paths) {
  std::string parents = trim(must(git_dir(store) + "rev-list --parents -n 1 " + id));
  std::string first = parents.size() >= 81 ? parents.substr(41, 40) : kEmptyTree;
  std::string cmd = git_dir(store) + "diff --no-renames --name-status " + first + " " + id + " --";
  for (const std::string& p : paths) cmd += " " + quote(p);
  std::vector<std::string> out;
  std::string text = must(cmd);
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    if (!line.empty()) out.push_back(line.substr(0, 1) + " " + line.substr(line.find('\t') + 1));
    at = end + 1;
  }
  return out;
}

std::vector<std::string> lines_of(const std::vector<PathChange>& changes) {
  std::vector<std::string> out;
  for (const PathChange& c : changes) out.push_back(std::string(1, c.status) + " " + c.path);
  return out;
}

// For every run the store ever held and every commit: the story read_history
// gives is git's diff along run_story_paths, commit for commit, for commits
// of formats 1 and 2 (one blob per fact); for a commit of format 3, whose
// index lines are named by format 2's paths of their facts, it is the
// commit's whole list of changes (checked line by line in rerun_test and
// history_test) kept along those paths. Returns how many changes were
// compared, for the caller to check the history had some.
std::size_t check_against_git(const Store& store) {
  std::vector<LogEntry> all = read_history(store, {});
  LogQuery every_change;
  every_change.with_changes = true;
  std::map<std::string, std::vector<std::string>> format3;  // a format-3 commit's changes, by commit
  for (const LogEntry& e : read_history(store, every_change))
    if (store.snapshot_at(e.id).format() == Format::k3) format3[e.id] = lines_of(e.changes);
  std::vector<Digest> runs;
  for (const std::string& d : std::vector<std::string>{"disputed", "reported", "reproduced", "source-native"})
    for (const Digest& r : runs_at_level(store.snapshot(), *parse_level(d))) runs.push_back(r);
  REQUIRE(runs.size() >= 4);
  std::size_t compared = 0;
  for (const Digest& run : runs) {
    INFO("run " << run.str());
    LogQuery q;
    q.paths = run_story_paths(run);
    q.with_changes = true;
    std::vector<LogEntry> story = read_history(store, q);
    std::size_t at = 0;
    for (const LogEntry& commit : all) {
      INFO("commit " << commit.id << " (" << commit.op << ")");
      std::vector<std::string> expected;
      if (auto f3 = format3.find(commit.id); f3 != format3.end()) {
        const git::PathPatterns patterns(q.paths);
        for (const std::string& line : f3->second)
          if (patterns.matches(line.substr(2))) expected.push_back(line);
      } else {
        expected = git_changes(store, commit.id, q.paths);
      }
      if (expected.empty()) continue;
      REQUIRE(at < story.size());
      CHECK(story[at].id == commit.id);
      CHECK(lines_of(story[at].changes) == expected);
      compared += expected.size();
      ++at;
    }
    CHECK(at == story.size());
  }
  // Every change below refs/ and objects/ (the site's stories, run_story.h).
  LogQuery q;
  q.with_changes = true;
  std::vector<LogEntry> every = read_history(store, q);
  REQUIRE(every.size() == all.size());
  for (const LogEntry& commit : every) {
    INFO("commit " << commit.id);
    if (!format3.count(commit.id)) CHECK(lines_of(commit.changes) == git_changes(store, commit.id, {"refs/", "objects/"}));
  }
  return compared;
}

TEST_CASE("log --run's paths: a bulk add, attestations, a signed rerun and a merge, as git diff finds them",
          "[store][history][run_story]") {
  TempDir tmp;
  setenv("KISTORE_AUTHOR", "Test <t@example.com>", 1);
  Store store = Store::init(tmp.path + "/a");
  auto controller = std::make_shared<const SshPrivateKey>(SshPrivateKey::parse(data("keys/controller"), "controller"));
  std::vector<Json> bulk = {parse_json(data(kFixture), kFixture)};
  for (int i = 0; i < 40; ++i) bulk.push_back(variant(1000000 + 50000 * i, "impl" + std::to_string(i)));
  add(store, bulk);
  attest(store, kSeedRun, "first");
  add(store, {variant(42, "late")});
  save_trust(store, {AllowedSigner{{"controller@example.org"}, "namespaces=\"git\"", controller->public_key()}});
  RerunOptions o;
  o.key = controller;
  o.key_source = "controller";
  Json again = parse_json(data(kFixture), kFixture);
  Json* spec = again.find("run")->find("spec");
  spec->find("timing")->find("latencyNs")->set("median", 2650000);  // within tolerance: reproduced
  spec->erase("sourceNative");
  Digest rerun =
      record_rerun(store, kSeedRun.str(),
                   InputItem{Location{"rerun.json", ""}, Bundle::from_json(again, Location{"rerun.json", ""})}, o)
          .rerun;
  REQUIRE(recorded_level(store.snapshot(), kSeedRun) == Level::kReproduced);

  // A second store attests the seed while this one adds; the pull merges.
  SyncOptions sync;
  sync.trust = load_trust(store);
  REQUIRE_FALSE(clone(store.dir(), tmp.path + "/b", sync).refused());
  Store other = Store::open(tmp.path + "/b");
  Digest from_other = attest(other, kSeedRun, "from the other store");
  add(store, {variant(7, "meanwhile")});
  add_remote(store, "b", tmp.path + "/b");
  PullReport pulled = pull(store, "b", sync);
  REQUIRE(pulled.result == PullResult::kMerge);

  std::vector<LogEntry> all = read_history(store, {});
  REQUIRE(all.front().parents.size() == 2);
  CHECK(check_against_git(store) > 40);

  // The seed's story, as log --run tells it: the other store's attestation,
  // in its own commit and in the merge (against the first parent, which did
  // not have it), and the rerun that moved its level.
  LogQuery q;
  q.paths = run_story_paths(kSeedRun);
  q.with_changes = true;
  std::vector<LogEntry> story = read_history(store, q);
  std::vector<std::string> ops;
  for (const LogEntry& e : story) ops.push_back(e.op);
  REQUIRE(ops == std::vector<std::string>{"merge", "add", "rerun", "add", "add"});
  const std::vector<std::string> other_attestation = {"A " + attestation_path(Format::k2, kSeedRun, from_other)};
  CHECK(lines_of(story[0].changes) == other_attestation);
  CHECK(lines_of(story[1].changes) == other_attestation);
  // Format 3: the default level has no line, so the rerun adds one and removes none.
  CHECK(lines_of(story[2].changes) ==
        std::vector<std::string>{"A " + level_path(Format::k2, Level::kReproduced, kSeedRun), "A " + rerun_path(kSeedRun, rerun)});
  CHECK(lines_of(story[4].changes) == std::vector<std::string>{"A " + object_path(kSeedRun)});

  // The group's story follows the members' paths only: every commit but
  // none (all seven touch a member), each with what it changed.
  const Digest key = comparison_key(store.snapshot().document(kSeedRun, false).spec());
  std::vector<GroupStoryEntry> group = read_group_story(store, key, {});
  REQUIRE(group.size() == all.size());
  CHECK(group.front().commit.op == "merge");
  REQUIRE(group.front().attestations.size() == 1);
  CHECK(group.front().attestations[0].attestation == from_other);
  CHECK(group.front().added.empty());  // "meanwhile" is the first parent's
  CHECK(group.front().members == 43);
  std::size_t attested = 0, reran = 0;
  for (const GroupStoryEntry& e : group) {
    attested += e.attestations.size();
    if (e.commit.op != "rerun") continue;
    ++reran;
    REQUIRE(e.levels.size() == 1);
    CHECK(e.levels[0].run == kSeedRun);
    CHECK(e.levels[0].from == Level::kSourceNative);
    CHECK(e.levels[0].to == Level::kReproduced);
    CHECK(e.levels[0].evidence == rerun);
    REQUIRE(e.reruns.size() == 1);
    CHECK(e.reruns[0].rerun.rerun == rerun);
    CHECK(e.added.empty());
  }
  CHECK(attested == 3);
  CHECK(reran == 1);
  CHECK(group.back().added.size() == 41);
}

TEST_CASE("log --run's paths across an upgrade from format 1, as git diff finds them",
          "[store][history][run_story][upgrade]") {
  TempDir tmp;
  const std::string dir = tmp.path + "/store";
  must("git clone -q --bare " + quote(std::string(KISTORE_SOURCE_DIR) + "/tests/data/format1/store.bundle") + " " +
       quote(dir));
  must("git --git-dir=" + quote(dir) + " symbolic-ref HEAD refs/heads/main");
  Store store = Store::open(dir);
  CommitOptions o;
  o.author = "Upgrade Test <upgrade@example.org>";
  REQUIRE(upgrade_store(store, o).commit);
  setenv("KISTORE_AUTHOR", "Test <t@example.com>", 1);
  const Digest reproduced = *Digest::parse("sha256:628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354");
  attest(store, reproduced, "after the upgrade");
  CHECK(check_against_git(store) > 10);
}

}  // namespace
}  // namespace kistore
