// record_rerun (store/write/rerun.h) against a real store: the level a controlled
// rerun sets, the commit it makes, and every refusal, each of which must
// leave the branch where it was.
#include "store/write/rerun.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "objects/error.h"
#include "objects/json.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "store/write/add.h"
#include "store/query/query.h"
#include "store/history/trust.h"
#include "store/core/index_trees.h"
#include "store/history/level_audit.h"
#include "store/query/stats.h"
#include "store/query/run_story.h"
#include "store/history/history.h"
#include "tests/store/support.h"
#include "tests/store/format3.h"

namespace kistore {
namespace {

using namespace test_support;

std::string data(const std::string& rel) { return read_file(std::string(KISTORE_SOURCE_DIR) + "/tests/data/" + rel); }

const char kFixture[] = "refs/seed-run-tiled-geglu-backward.json";
const char kSeedRun[] = "sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0";
const char kSeedProtocol[] = "sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8";
constexpr double kSeedMedianNs = 2606080;

std::shared_ptr<const SshPrivateKey> key(const std::string& name) {
  return std::make_shared<const SshPrivateKey>(SshPrivateKey::parse(data("keys/" + name), name));
}

// A store holding the seed bundle, with the controller key in its trust list.
struct RerunStore {
  TempDir tmp;
  std::string dir = tmp.path + "/store";
  Store store = (setenv("KISTORE_AUTHOR", "Test <t@example.com>", 1), Store::init(dir));
  std::shared_ptr<const SshPrivateKey> controller = key("controller");

  explicit RerunStore(bool format3 = false) {
    if (format3) make_format3(store);  // refs/layout.h: taught room by room
    Bundle seed = Bundle::from_json(parse_json(data(kFixture), kFixture), Location{"seed.json", ""});
    std::vector<AddedDocument> docs;
    for (const Document& d : seed.documents()) docs.push_back({&d, "seed.json"});
    add_documents(store, docs, AddOptions{});
    save_trust(store, {AllowedSigner{{"controller@example.org"}, "namespaces=\"git\"", controller->public_key()}});
  }
  std::string git() const { return "git --git-dir=" + quote(dir) + " "; }
  std::string head() const { return trim(sh(git() + "rev-parse --verify -q refs/heads/main").out); }
  RerunOptions options(double tolerance = 0.10) const {
    RerunOptions o;
    o.tolerance = tolerance;
    o.key = controller;
    o.key_source = "controller";
    return o;
  }
};

// The seed bundle's run rerun: another median (in ns), no source record.
Json rerun_bundle(double median_ns) {
  Json bundle = parse_json(data(kFixture), kFixture);
  Json* spec = bundle.find("run")->find("spec");
  spec->find("timing")->find("latencyNs")->set("median", median_ns);
  spec->set("observedAt", "2026-11-30T09:00:00.000Z");
  spec->erase("sourceNative");
  return bundle;
}

InputItem bundle_item(const Json& bundle) {
  return InputItem{Location{"rerun.json", ""}, Bundle::from_json(bundle, Location{"rerun.json", ""})};
}

InputItem run_item(const Json& run) {
  return InputItem{Location{"rerun.json", ""}, Document::from_json(run, Location{"rerun.json", ""})};
}

TEST_CASE("rerun: within tolerance the run is reproduced, in one signed rerun commit", "[store][rerun]") {
  RerunStore s;
  std::string before = s.head();
  RerunResult r = record_rerun(s.store, "334face3", bundle_item(rerun_bundle(2650000)), s.options());
  CHECK(r.run.str() == kSeedRun);
  CHECK(r.level == Level::kReproduced);
  CHECK(r.difference == Approx((2650000 - kSeedMedianNs) / kSeedMedianNs));
  REQUIRE(r.commit.has_value());
  CHECK(*r.commit == s.head());
  CHECK(trim(must(s.git() + "rev-parse main^")) == before);
  std::string commit = must(s.git() + "cat-file commit main");
  CHECK_THAT(commit, Catch::Matchers::Contains("-----BEGIN SSH SIGNATURE-----"));
  CHECK_THAT(commit, Catch::Matchers::Contains("\nKistore-Op: rerun\n"));
  CHECK_THAT(commit, Catch::Matchers::Contains("rerun: " + std::string(kSeedRun) + " reproduced (1.69% off, tolerance 10%)"));
  Digest run = *Digest::parse(kSeedRun);
  Snapshot snap = s.store.snapshot();
  CHECK(recorded_level(snap, run) == Level::kReproduced);
  CHECK(snap.has_object(r.rerun));
  // Format 3: the run's level line names the rerun.
  CHECK(find_fact(snap, Family::kLevels, run.hex()) == std::optional<IndexFact>(LevelFact{run, Level::kReproduced, r.rerun}));
  // What the commit changed: the rerun's object, the files of its own lines
  // (metadata), the run's level line and the rerun line.
  std::string changed = must(s.git() + "diff --no-renames --name-status main^ main");
  const std::string h = run.hex();
  CHECK_THAT(changed, Catch::Matchers::Contains("A\trefs/levels/" + h.substr(0, 1) + "\n"));
  CHECK_THAT(changed, Catch::Matchers::Contains("A\t" + object_path(r.rerun)));
  // The rerun is indexed beside the run (verdict and ratio), not in its group.
  CHECK_THAT(changed, Catch::Matchers::Contains("A\trefs/reruns/" + h.substr(0, 1) + "\n"));
  CHECK(changed.find("refs/groups/") == std::string::npos);
  const double ratio = *rerun_ratio(snap.document(run).spec(), snap.document(r.rerun).spec());
  CHECK(std::abs(ratio - 1) == Approx(r.difference));
  CHECK(find_fact(snap, Family::kReruns, h + r.rerun.hex()) ==
        std::optional<IndexFact>(RerunFact{run, r.rerun, Level::kReproduced, ratio}));
  const Digest key = comparison_key(snap.document(run).spec());
  CHECK_FALSE(find_fact(snap, Family::kGroups, key.hex() + r.rerun.hex()));
  CHECK(find_fact(snap, Family::kGroups, key.hex() + run.hex()));
  REQUIRE(reruns_of(snap, run).size() == 1);
  CHECK(reruns_of(snap, run)[0].rerun == r.rerun);
  CHECK(reruns_of(snap, run)[0].verdict == Level::kReproduced);
}

TEST_CASE("rerun: outside tolerance the run is disputed; the tolerance is inclusive", "[store][rerun]") {
  RerunStore s;
  RerunResult far = record_rerun(s.store, kSeedRun, bundle_item(rerun_bundle(3400000)), s.options());
  CHECK(far.level == Level::kDisputed);
  CHECK(recorded_level(s.store.snapshot(), far.run) == Level::kDisputed);
  // 30 % off reproduces under a tolerance of 1 (100 %), the largest there is.
  RerunResult wide = record_rerun(s.store, kSeedRun, bundle_item(rerun_bundle(3400001)), s.options(1.0));
  CHECK(wide.level == Level::kReproduced);
  CHECK(recorded_level(s.store.snapshot(), wide.run) == Level::kReproduced);
  // The second verdict replaces the first: one level line, naming the wide rerun.
  CHECK(find_fact(s.store.snapshot(), Family::kLevels, wide.run.hex()) ==
        std::optional<IndexFact>(LevelFact{wide.run, Level::kReproduced, wide.rerun}));
}

TEST_CASE("rerun: a second verdict at the same level replaces the entry's evidence", "[store][rerun]") {
  RerunStore s;
  RerunResult first = record_rerun(s.store, kSeedRun, bundle_item(rerun_bundle(3400000)), s.options());
  RerunResult second = record_rerun(s.store, kSeedRun, bundle_item(rerun_bundle(3500000)), s.options());
  REQUIRE(first.level == Level::kDisputed);
  REQUIRE(second.level == Level::kDisputed);
  Snapshot snap = s.store.snapshot();
  CHECK(recorded_level(snap, second.run) == Level::kDisputed);
  CHECK(find_fact(snap, Family::kLevels, second.run.hex()) ==
        std::optional<IndexFact>(LevelFact{second.run, Level::kDisputed, second.rerun}));
}

TEST_CASE("rerun: a run document alone, whose other documents the store has, is a rerun too", "[store][rerun]") {
  RerunStore s;
  Json run = *rerun_bundle(2600000).find("run");
  RerunResult r = record_rerun(s.store, kSeedRun, run_item(run), s.options());
  CHECK(r.level == Level::kReproduced);
  CHECK(s.store.snapshot().has_object(r.rerun));
}

// The message record_rerun throws (InvalidInput), or "" when it returns.
std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidInput);
    return e.what();
  }
  return "";
}

TEST_CASE("rerun: refusals are InvalidInput, name what is wrong and write nothing", "[store][rerun][errors]") {
  RerunStore s;
  const std::string impl =
      parse_json(data(kFixture), kFixture).find("run")->find("spec")->find("implementationDigest")->as_string();
  const std::string other_digest = Digest::of("another implementation").str();
  auto edited = [](const std::function<void(Json& spec)>& edit) {
    Json bundle = rerun_bundle(2650000);
    edit(*bundle.find("run")->find("spec"));
    return bundle;
  };
  Json other_impl = edited([&](Json& spec) { spec.set("implementationDigest", other_digest); });
  Json other_group = edited([&](Json& spec) { spec.set("workloadDigest", other_digest); });
  Json no_primary = edited([](Json& spec) {
    spec.erase("timing");
    spec.set("measurements", Json::array());
  });
  Json same_run = parse_json(data(kFixture), kFixture);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* name;
    std::function<void()> call;
    std::string message;  // a part of the message
  };
  auto with = [&](const Json& bundle, RerunOptions o, std::string run = kSeedRun) {
    return [&s, bundle, o, run] { record_rerun(s.store, run, bundle_item(bundle), o); };
  };
  RerunOptions no_key = s.options();
  no_key.key.reset();
  RerunOptions outsider = s.options();
  outsider.key = key("outsider");
  outsider.key_source = "outsider";
  const Json good = rerun_bundle(2650000);
  const std::vector<Case> cases = {
      {"tolerance nan", with(good, s.options(nan)), "tolerance: expected a finite number greater than 0 and at most 1"},
      {"tolerance 0", with(good, s.options(0)), "found 0"},
      {"tolerance -1", with(good, s.options(-1)), "found -1"},
      {"tolerance 1.5", with(good, s.options(1.5)), "found 1.5"},
      {"tolerance inf", with(good, s.options(inf)), "found inf"},
      {"no key", with(good, no_key), "a controlled rerun must be signed"},
      {"key not a controller", with(good, outsider), "outsider: key SHA256:"},
      {"unknown run", with(good, s.options(), "deadbeefdeadbeef"), "no object in the store matches"},
      {"malformed run ref", with(good, s.options(), "xyz"), "xyz"},
      {"run ref names a protocol", with(good, s.options(), kSeedProtocol), "expected a run, found a BenchmarkProtocol"},
      {"the rerun is the run itself", with(same_run, s.options()), "the rerun is RUN itself"},
      {"another comparison group", with(other_group, s.options()),
       "rerun.json: /run/spec: expected a rerun in RUN's comparison group"},
      {"another implementation", with(other_impl, s.options()),
       "rerun.json: /run/spec/implementationDigest: expected RUN's implementation " + impl +
           " (a controlled rerun times the same code), found " + other_digest},
      {"no primary measurement", with(no_primary, s.options()),
       "rerun.json: /run/spec: expected a primary measurement in ns, found none"},
  };
  const std::string before = s.head();
  for (const Case& c : cases) {
    INFO(c.name);
    std::string message = refusal(c.call);
    CHECK_THAT(message, Catch::Matchers::Contains(c.message));
    CHECK(s.head() == before);
  }
  // A rerun item that is neither a run nor a bundle.
  Json protocol = *parse_json(data(kFixture), kFixture).find("protocol");
  std::string message = refusal([&] { record_rerun(s.store, kSeedRun, run_item(protocol), s.options()); });
  CHECK(message == "rerun.json: /kind: expected \"BenchmarkRun\" (or a bundle), found \"BenchmarkProtocol\"");
  CHECK(s.head() == before);
}

TEST_CASE("tolerance_problem: (0, 1] and finite, nothing else", "[store][rerun]") {
  for (double ok : {1e-9, 0.01, 0.10, 0.5, 1.0}) CHECK_FALSE(tolerance_problem(ok).has_value());
  for (double bad : {0.0, -0.0, -0.1, 1.0000001, 2.0, 10.0, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()})
    CHECK(tolerance_problem(bad).has_value());
}


TEST_CASE("rerun into a format-3 store: a level line, a rerun line, no group line", "[store][rerun][index3]") {
  RerunStore s(true);
  REQUIRE(s.store.snapshot().format() == Format::k3);
  const Digest run = *Digest::parse(kSeedRun);
  RerunResult r = record_rerun(s.store, "334face3", bundle_item(rerun_bundle(2650000)), s.options());
  REQUIRE(r.commit);
  CHECK(r.level == Level::kReproduced);
  Snapshot snap = s.store.snapshot();
  CHECK(recorded_level(snap, run) == Level::kReproduced);
  CHECK(run_level(snap, snap.document(run)) == Level::kReproduced);
  REQUIRE(find_fact(snap, Family::kLevels, run.hex()));
  CHECK(std::get<LevelFact>(*find_fact(snap, Family::kLevels, run.hex())) == LevelFact{run, Level::kReproduced, r.rerun});
  const double ratio = *rerun_ratio(snap.document(run).spec(), snap.document(r.rerun).spec());
  REQUIRE(reruns_of(snap, run).size() == 1);
  CHECK(reruns_of(snap, run)[0].rerun == r.rerun);
  CHECK(reruns_of(snap, run)[0].ratio == ratio);
  const Digest key = comparison_key(snap.document(run).spec());
  auto members = group_members(snap, key);
  REQUIRE(members.size() == 1);  // the rerun is no competitor
  CHECK(members[0].run == run);
  CHECK(members[0].level == Level::kReproduced);
  // git show of the rerun commit reads as the facts it added.
  const std::string shown = must(s.git() + "show --format= main -- refs/levels refs/reruns");
  CHECK_THAT(shown, Catch::Matchers::Contains("+" + render_line(LevelFact{run, Level::kReproduced, r.rerun})));
  CHECK_THAT(shown, Catch::Matchers::Contains("+" + render_line(RerunFact{run, r.rerun, Level::kReproduced, ratio})));
  CHECK(must(s.git() + "diff --name-only main^ main -- refs/groups").empty());
  CHECK(recorded_entry(snap, run) == LevelEntryValue{Level::kReproduced, r.rerun});
  CHECK(store_stats(s.store).runs == 2);  // the run's group line and the rerun's line
  // log --run reads the lines a commit changed by format 2's names of their facts.
  {
    LogQuery q;
    q.paths = run_story_paths(run);
    q.with_changes = true;
    std::vector<LogEntry> story = read_history(s.store, q);
    REQUIRE(story.size() == 2);  // the rerun, then the add of the run
    CHECK(story[0].op == "rerun");
    std::set<std::string> changed;
    for (const PathChange& c : story[0].changes) changed.insert(std::string(1, c.status) + " " + c.path);
    CHECK(changed == std::set<std::string>{"A " + level_path(Format::k2, Level::kReproduced, run),
                                           "A " + rerun_path(run, r.rerun)});
    CHECK(story[1].op == "add");
    RunStories stories = read_run_stories(s.store);
    REQUIRE(stories.by_run.count(run));
    std::string told;
    for (const StoryEvent& e : stories.by_run.at(run))
      for (const PathChange& c : e.changes) told += story_change_text(c) + "\n";
    CHECK_THAT(told, Catch::Matchers::Contains("entered level reproduced") && Catch::Matchers::Contains("rerun recorded " + r.rerun.str()));
  }
  // The signed history gives what the tree records, and the rerun commit
  // changes that run's level and no other's.
  {
    LevelAudit audit(s.store, load_trust(s.store));
    const CommitId head = cid(*r.commit), parent = cid(trim(must(s.git() + "rev-parse main^")));
    CHECK(audit.level_changes(parent, head) == std::set<Digest>{run});
    CHECK(audit.judge(head, run, Level::kSourceNative, audit.entry_at(head, run)).agrees);
    LevelStanding standing = level_standing(snap, audit, snap.document(run));
    CHECK(standing.level == Level::kReproduced);
    CHECK(standing.justified);
    REQUIRE(audit.rerun_commits(head).size() == 1);
    CHECK(audit.rerun_commits(head)[0]->valid);
  }
  SECTION("a level line written without a controller's signature is refused by the history") {
    CommitOptions o;
    o.author = "Mallory <m@example.org>";
    s.store.commit(
        [&](const Snapshot& head) -> std::optional<ChangeSet> {
          IndexChanges changes;
          changes.put(LevelFact{run, Level::kDisputed, r.rerun});
          ChangeSet c;
          apply_index_changes(head, changes, c);
          c.op = "rerun";
          c.summary = "rerun: forged";
          return c;
        },
        o);
    const CommitId forged = cid(s.head());
    LevelAudit audit(s.store, load_trust(s.store));
    CHECK(audit.level_changes(cid(*r.commit), forged) == std::set<Digest>{run});
    LevelJudgement j = audit.judge(forged, run, Level::kSourceNative, audit.entry_at(forged, run));
    CHECK_FALSE(j.agrees);
    CHECK(j.decision.entry.level == Level::kReproduced);  // the signed rerun still decides
    LevelStanding standing = level_standing(s.store.snapshot(), audit, snap.document(run));
    CHECK(standing.level == Level::kReproduced);
    CHECK(standing.stored == Level::kDisputed);
    CHECK_FALSE(standing.justified);
    return;
  }

  // A second verdict replaces the line: the diff removes one and adds one.
  RerunResult second = record_rerun(s.store, kSeedRun, bundle_item(rerun_bundle(3400000)), s.options());
  CHECK(second.level == Level::kDisputed);
  Snapshot after = s.store.snapshot();
  CHECK(recorded_level(after, run) == Level::kDisputed);
  CHECK(reruns_of(after, run).size() == 2);
  const std::string diff = must(s.git() + "diff main^ main -- refs/levels");
  CHECK_THAT(diff, Catch::Matchers::Contains("-" + render_line(LevelFact{run, Level::kReproduced, r.rerun})));
  CHECK_THAT(diff, Catch::Matchers::Contains("+" + render_line(LevelFact{run, Level::kDisputed, second.rerun})));
}

}  // namespace
}  // namespace kistore
