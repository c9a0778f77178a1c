// LevelAudit (store/history/level_audit.h) over real stores: reruns recorded with
// kistore's own API (record_rerun), and attacks made with stock git (unsigned
// merges, signed commits that change two runs' levels or name evidence that
// is no rerun, replayed signatures), each checked against the level that
// SPEC §1's function of the history gives.
#include "store/history/level_audit.h"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "objects/blob.h"
#include "objects/json.h"
#include "refs/index.h"
#include "refs/index_facts.h"
#include "refs/index_lines.h"
#include "refs/layout.h"
#include "store/core/index_trees.h"
#include "store/write/add.h"
#include "store/query/query.h"
#include "store/write/rerun.h"
#include "store/history/trust.h"
#include "store/verify/verify.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

std::string data(const std::string& rel) { return read_file(std::string(KISTORE_SOURCE_DIR) + "/tests/data/" + rel); }

const char kFixture[] = "refs/seed-run-tiled-geglu-backward.json";
const Digest kRun = *Digest::parse("sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0");

Json seed_bundle() { return parse_json(data(kFixture), kFixture); }

// The seed bundle's run rerun with another median (ns), no source record.
InputItem rerun_item(double median_ns) {
  Json bundle = seed_bundle();
  Json* spec = bundle.find("run")->find("spec");
  spec->find("timing")->find("latencyNs")->set("median", median_ns);
  spec->set("observedAt", "2026-11-30T09:00:00.000Z");
  spec->erase("sourceNative");
  return InputItem{Location{"rerun.json", ""}, Bundle::from_json(bundle, Location{"rerun.json", ""})};
}

// A store with the seed bundle and a second run of the same implementation in
// its group (another median and source id); the controller key is trusted.
struct AuditStore {
  TempDir tmp;
  std::string dir = tmp.path + "/store";
  Store store = (setenv("KISTORE_AUTHOR", "Test <t@example.com>", 1), Store::init(dir));
  std::shared_ptr<const SshPrivateKey> controller =
      std::make_shared<const SshPrivateKey>(SshPrivateKey::parse(data("keys/controller"), "controller"));
  std::vector<AllowedSigner> trust{{{"controller@example.org"}, "", controller->public_key()}};
  std::string key_file = tmp.path + "/controller";
  Digest run2 = Digest::of("");

  AuditStore() {
    Json bundle = seed_bundle();
    std::vector<Document> docs = Bundle::from_json(bundle, Location{"seed.json", ""}).documents();
    Json other = *bundle.find("run");
    other.find("spec")->find("timing")->find("latencyNs")->set("median", 2700000);
    other.find("spec")->find("sourceNative")->set("externalId", "tiled_geglu/backward/other/run");
    docs.push_back(Document::from_json(other, Location{"other.json", ""}));
    run2 = docs.back().digest();
    std::vector<AddedDocument> in;
    for (const Document& d : docs) in.push_back({&d, "seed.json"});
    add_documents(store, in, AddOptions{});
    save_trust(store, trust);
    write_file(key_file, data("keys/controller"));
    must("chmod 600 " + quote(key_file));
  }

  std::string git() const {
    return "GIT_CONFIG_NOSYSTEM=1 HOME=" + quote(tmp.path) + " GIT_AUTHOR_NAME=m GIT_AUTHOR_EMAIL=m@example.com "
           "GIT_COMMITTER_NAME=m GIT_COMMITTER_EMAIL=m@example.com git --git-dir=" + quote(dir) + " ";
  }
  std::string head() const { return trim(must(git() + "rev-parse main")); }
  std::string rev(const std::string& what) const { return trim(must(git() + "rev-parse " + quote(what))); }

  // A signed rerun recorded by kistore; returns its commit and the rerun.
  std::pair<std::string, Digest> rerun(double median_ns) {
    RerunOptions o;
    o.key = controller;
    o.key_source = "controller";
    RerunResult r = record_rerun(store, kRun.str(), rerun_item(median_ns), o);
    return {*r.commit, r.rerun};
  }

  using Edit = std::pair<std::string, std::optional<std::string>>;
  // Format 3: the edit of the file of `family` that holds `key` in the tree
  // of commit `base`, with that key's line replaced by `line` (inserted in
  // key order) or removed (nullopt). The trie's shape is left as it is (these
  // stores have a few lines a file).
  Edit line_edit(const std::string& base, Family family, const std::string& key, const std::optional<std::string>& line) {
    Snapshot snap = store.snapshot_at(base);
    const std::string path = fact_file(snap, family, key);
    std::map<std::string, std::string> lines;  // by key
    if (std::optional<std::string> bytes = snap.read(path)) {
      std::istringstream in(*bytes);
      for (std::string l; std::getline(in, l);) lines[l.substr(9, key.size())] = l + "\n";  // {"@key":"<key>"
    }
    if (line) lines[key] = *line;
    else lines.erase(key);
    std::string out;
    for (const auto& [k, l] : lines) out += l;
    return {path, out.empty() ? std::nullopt : std::optional<std::string>(out)};
  }
  // The edit that gives `run` a level line (`level`, `evidence`), or removes its line.
  Edit level_line(const std::string& base, const Digest& run, std::optional<std::pair<Level, Digest>> to) {
    return line_edit(base, Family::kLevels, run.hex(),
                     to ? std::optional<std::string>(render_line(LevelFact{run, to->first, to->second})) : std::nullopt);
  }

  // A commit made with stock git: the tree of `base` with `edits` (path ->
  // bytes, nullopt removes), the given parents and message, signed with the
  // controller key when `sign`. Does not move any branch.
  std::string forge(const std::string& base, const std::vector<std::pair<std::string, std::optional<std::string>>>& edits,
                    const std::vector<std::string>& parents, const std::string& message, bool sign) {
    std::string work = tmp.path + "/forge";
    must("mkdir -p " + quote(work));
    std::string script = "set -e\nexport GIT_INDEX_FILE=" + quote(work + "/index") + "\n" + git() + "read-tree " +
                         quote(base) + "\n: > " + quote(work + "/info") + "\n";
    int n = 0;
    for (const auto& [path, bytes] : edits) {
      if (bytes) {
        std::string file = work + "/blob" + std::to_string(n++);
        write_file(file, *bytes);
        script += "printf '100644 %s\\t%s\\n' \"$(" + git() + "hash-object -w " + quote(file) + ")\" " + quote(path) +
                  " >> " + quote(work + "/info") + "\n";
      } else {
        script += "printf '0 " + std::string(40, '0') + "\\t%s\\n' " + quote(path) + " >> " + quote(work + "/info") + "\n";
      }
    }
    write_file(work + "/message", message);
    std::string ps;
    for (const std::string& p : parents) ps += " -p " + quote(p);
    std::string signing = sign ? "-c gpg.format=ssh -c user.signingkey=" + quote(key_file) + " " : "";
    script += git() + "update-index --index-info < " + quote(work + "/info") + "\n" + git() + signing +
              "commit-tree " + (sign ? "-S " : "") + "\"$(" + git() + "write-tree)\"" + ps + " -F " +
              quote(work + "/message") + "\n";
    write_file(work + "/forge.sh", script);
    return trim(must("sh " + quote(work + "/forge.sh")));
  }

  // `target` with the signature of `signed_commit` copied into it.
  std::string replay_signature(const std::string& signed_commit, const std::string& target) {
    std::string py = tmp.path + "/replay.py";
    write_file(py,
               "import subprocess, sys\n"
               "gd, signed, target = sys.argv[1:]\n"
               "raw = lambda c: subprocess.check_output(['git', '--git-dir=' + gd, 'cat-file', 'commit', c])\n"
               "head = raw(signed).split(b'\\n\\n', 1)[0].split(b'\\n')\n"
               "i = next(k for k, l in enumerate(head) if l.startswith(b'gpgsig '))\n"
               "j = i + 1\n"
               "while j < len(head) and head[j].startswith(b' '): j += 1\n"
               "th, tb = raw(target).split(b'\\n\\n', 1)\n"
               "forged = th + b'\\n' + b'\\n'.join(head[i:j]) + b'\\n\\n' + tb\n"
               "out = subprocess.run(['git', '--git-dir=' + gd, 'hash-object', '-t', 'commit', '-w', '--stdin'],\n"
               "                     input=forged, capture_output=True, check=True).stdout\n"
               "print(out.decode().strip())\n");
    return trim(must("python3 " + quote(py) + " " + quote(dir) + " " + quote(signed_commit) + " " + quote(target)));
  }
};

std::string entry_bytes(const std::optional<Digest>& evidence) { return level_entry(evidence); }

LevelEntryValue entry(Level l, const std::optional<Digest>& evidence) { return LevelEntryValue{l, evidence}; }

TEST_CASE("level audit: signed reruns decide, the newest by ancestry", "[store][level_audit]") {
  AuditStore s;
  LevelAudit none(s.store, s.trust);
  std::string base = s.head();
  CHECK(none.decide(cid(base), kRun, Level::kSourceNative).entry == entry(Level::kSourceNative, std::nullopt));
  CHECK(none.rerun_commits(cid(base)).empty());

  auto [c1, e1] = s.rerun(2650000);  // +1.7 %: reproduced
  auto [c2, e2] = s.rerun(3400000);  // +30 %: disputed
  LevelAudit audit(s.store, s.trust);
  LevelDecision at1 = audit.decide(cid(c1), kRun, Level::kSourceNative);
  CHECK(at1.entry == entry(Level::kReproduced, e1));
  REQUIRE(at1.deciding.size() == 1);
  CHECK(at1.deciding[0].commit == c1);
  LevelDecision at2 = audit.decide(cid(c2), kRun, Level::kSourceNative);
  CHECK(at2.entry == entry(Level::kDisputed, e2));
  CHECK(audit.decide(cid(c2), s.run2, Level::kSourceNative).entry == entry(Level::kSourceNative, std::nullopt));
  // The rerun documents are runs of their own, entering at their default level.
  CHECK(audit.decide(cid(c2), e2, Level::kReported).entry == entry(Level::kReported, std::nullopt));

  auto reruns = audit.rerun_commits(cid(c2));
  REQUIRE(reruns.size() == 2);
  CHECK(reruns[0]->commit == c2);
  CHECK(reruns[1]->commit == c1);
  for (const auto* r : reruns) {
    INFO(r->commit);
    CHECK(r->signature.state == SignatureStatus::kTrusted);
    REQUIRE(r->valid);
    CHECK(r->valid->first == kRun);
    CHECK(r->facts.level_changes.size() == 1);  // the rerun's own new level is no change
  }
  CHECK(audit.rerun_commits(cid(c2))[0] == reruns[0]);  // facts are computed once per commit

  LevelJudgement ok = audit.judge(cid(c2), kRun, Level::kSourceNative, entry(Level::kDisputed, e2));
  CHECK(ok.agrees);
  LevelJudgement stale = audit.judge(cid(c2), kRun, Level::kSourceNative, entry(Level::kReproduced, e1));
  CHECK_FALSE(stale.agrees);
  CHECK(stale.why == "the signed history says disputed");
  CHECK(stale.detail == "expected disputed " + entry_bytes(e2) + " (decided by rerun commit " + c2 +
                            "), found reproduced " + entry_bytes(e1));
}

TEST_CASE("level audit: an unsigned merge cannot restore an old signed rerun's level", "[store][level_audit][attack]") {
  AuditStore s;
  auto [c1, e1] = s.rerun(2650000);
  auto [c2, e2] = s.rerun(3400000);
  // Parents (c2, c1); the tree of c2 with the run put back at reproduced, naming e1.
  std::string merge = s.forge(c2, {s.level_line(c2, kRun, {{Level::kReproduced, e1}})}, {c2, c1},
                              "merge\n\nKistore-Op: merge\n", false);
  LevelAudit audit(s.store, s.trust);
  CHECK(audit.decide(cid(merge), kRun, Level::kSourceNative).entry == entry(Level::kDisputed, e2));
  LevelJudgement j = audit.judge(cid(merge), kRun, Level::kSourceNative, entry(Level::kReproduced, e1));
  CHECK_FALSE(j.agrees);
  CHECK_THAT(j.detail, Catch::Matchers::StartsWith("expected disputed " + entry_bytes(e2) +
                                                   " (decided by rerun commit " + c2 + ")"));
  // Signed by the controller and labelled a rerun, it is still no valid rerun
  // commit: it adds no rerun (e1 is already in its first parent's tree).
  std::string signed_merge = s.forge(c2, {s.level_line(c2, kRun, {{Level::kReproduced, e1}})}, {c2, c1},
                                     "restore\n\nKistore-Op: rerun\n", true);
  LevelAudit again(s.store, s.trust);
  CHECK(again.decide(cid(signed_merge), kRun, Level::kSourceNative).entry == entry(Level::kDisputed, e2));
  auto reruns = again.rerun_commits(cid(signed_merge));
  REQUIRE(reruns.size() == 3);
  CHECK(reruns[0]->commit == signed_merge);
  CHECK(reruns[0]->signature.state == SignatureStatus::kTrusted);
  CHECK(reruns[0]->checks.at(kRun).invalid == "adds no rerun of this run");
  CHECK_FALSE(reruns[0]->valid);
}

TEST_CASE("level audit: concurrent reruns by two controllers resolve to disputed", "[store][level_audit]") {
  AuditStore s;
  std::string base = s.head();
  auto [x, ex] = s.rerun(2650000);  // reproduced on one side
  must(s.git() + "update-ref refs/heads/main " + base);
  auto [y, ey] = s.rerun(3400000);  // disputed on the other
  REQUIRE(s.rev(y + "^") == base);
  LevelAudit audit(s.store, s.trust);
  CHECK(audit.decide(cid(x), kRun, Level::kSourceNative).entry == entry(Level::kReproduced, ex));
  LevelDecision both = audit.decide(std::vector<CommitId>{cid(x), cid(y)}, kRun, Level::kSourceNative);
  CHECK(both.entry == entry(Level::kDisputed, ey));
  CHECK(both.deciding.size() == 2);
  CHECK(audit.runs_rerun_since({cid(x), cid(y)}, {cid(base)}) == std::set<Digest>{kRun});
  CHECK(audit.runs_rerun_since({cid(x), cid(y)}, {cid(x), cid(y)}).empty());
  // What the trees hold: every run whose level line differs (the rerun
  // documents enter at their default level, which has no line), the line, the default.
  CHECK(audit.level_changes(cid(base), cid(x)) == std::set<Digest>{kRun});
  CHECK(audit.level_changes(cid(x), cid(y)) == std::set<Digest>{kRun});
  CHECK(audit.level_changes(std::nullopt, cid(base)).empty());
  CHECK(audit.entry_at(cid(x), kRun) == entry(Level::kReproduced, ex));
  CHECK(audit.entry_at(cid(x), ey) == std::nullopt);
  CHECK(audit.default_level_at(cid(x), kRun) == Level::kSourceNative);
  CHECK(audit.default_level_at(cid(x), ex) == Level::kReported);
  CHECK(audit.default_level_at(cid(x), Digest::of("no such run")) == std::nullopt);
  // A merge commit of the two (made by stock git, tree of x) decides the same.
  std::string merge = s.forge(x, {}, {x, y}, "merge\n\nKistore-Op: merge\n", false);
  CHECK(audit.decide(cid(merge), kRun, Level::kSourceNative).entry == entry(Level::kDisputed, ey));
  CHECK_FALSE(audit.judge(cid(merge), kRun, Level::kSourceNative, entry(Level::kReproduced, ex)).agrees);
}

TEST_CASE("level audit: signed commits that break a rule of a valid rerun commit decide nothing",
          "[store][level_audit][attack]") {
  AuditStore s;
  std::string base = s.head();
  auto [c1, e1] = s.rerun(2650000);
  const Digest run2 = s.run2;

  SECTION("a rerun commit that also changes another run's level") {
    std::string two = s.forge(c1, {s.level_line(c1, run2, {{Level::kReproduced, e1}})}, {base},
                              "rerun: two\n\nKistore-Op: rerun\n", true);
    LevelAudit audit(s.store, s.trust);
    auto reruns = audit.rerun_commits(cid(two));
    REQUIRE(reruns.size() == 1);
    CHECK(reruns[0]->facts.level_changes.size() == 2);
    CHECK(reruns[0]->checks.at(kRun).invalid == "changes the levels of 2 runs");
    CHECK(reruns[0]->checks.at(run2).invalid == "changes the levels of 2 runs");
    CHECK(audit.decide(cid(two), kRun, Level::kSourceNative).entry == entry(Level::kSourceNative, std::nullopt));
    CHECK(audit.decide(cid(two), run2, Level::kSourceNative).entry == entry(Level::kSourceNative, std::nullopt));
    LevelJudgement j = audit.judge(cid(two), run2, Level::kSourceNative, entry(Level::kReproduced, e1));
    CHECK(j.why == "changes the levels of 2 runs");
    CHECK_THAT(j.detail, Catch::Matchers::Contains("rerun commit " + two +
                                                   " is no valid rerun commit for this run: changes the levels of 2 runs"));
  }
  SECTION("a signed rerun commit naming evidence that is no rerun it adds") {
    for (const Digest& evidence : {run2, Digest::of("no such document")}) {
      std::string bad = s.forge(base, {s.level_line(base, kRun, {{Level::kReproduced, evidence}})}, {base},
                                "rerun: bad\n\nKistore-Op: rerun\n", true);
      LevelAudit audit(s.store, s.trust);
      auto reruns = audit.rerun_commits(cid(bad));
      REQUIRE(reruns.size() == 1);
      CHECK(reruns[0]->checks.at(kRun).invalid == "adds no rerun of this run");
      CHECK(audit.decide(cid(bad), kRun, Level::kSourceNative).entry == entry(Level::kSourceNative, std::nullopt));
      CHECK(audit.judge(cid(bad), kRun, Level::kSourceNative, entry(Level::kReproduced, evidence)).why ==
            "adds no rerun of this run");
    }
  }
  SECTION("a rerun of another implementation (a run of the group that is not RUN's code)") {
    Json bundle = seed_bundle();
    Json* spec = bundle.find("run")->find("spec");
    spec->set("implementationDigest", Digest::of("another implementation").str());
    spec->find("timing")->find("latencyNs")->set("median", 2650000);
    spec->erase("sourceNative");
    Document other = Document::from_json(*bundle.find("run"), Location{"other", ""});
    std::string group_line;
    for (const IndexFact& f : document_facts(other, "other"))
      if (std::holds_alternative<GroupFact>(f)) group_line = render_line(f);
    REQUIRE_FALSE(group_line.empty());
    const std::string group_key = comparison_key(other.spec()).hex() + other.digest().hex();
    std::string bad = s.forge(base,
                              {{object_path(other.digest()), encode_object(other.canonical())},
                               s.line_edit(base, Family::kGroups, group_key, group_line),
                               s.level_line(base, kRun, {{Level::kReproduced, other.digest()}})},
                              {base}, "rerun: other code\n\nKistore-Op: rerun\n", true);
    LevelAudit audit(s.store, s.trust);
    auto reruns = audit.rerun_commits(cid(bad));
    REQUIRE(reruns.size() == 1);
    CHECK(reruns[0]->facts.level_changes.size() == 1);
    CHECK(reruns[0]->checks.at(kRun).invalid == "adds no rerun of this run");
  }
  SECTION("a replayed signature") {
    // c1's change, its message and its signature, on top of a later commit.
    auto [c2, e2] = s.rerun(3400000);
    std::string unsigned_copy = s.forge(c1, {}, {c2},
                                        trim(must(s.git() + "log -1 --format=%B " + c1)) + "\n", false);
    std::string replayed = s.replay_signature(c1, unsigned_copy);
    REQUIRE(replayed != unsigned_copy);
    LevelAudit audit(s.store, s.trust);
    auto reruns = audit.rerun_commits(cid(replayed));
    REQUIRE(reruns.size() == 3);
    CHECK(reruns[0]->commit == replayed);
    CHECK(reruns[0]->signature.state == SignatureStatus::kInvalid);
    CHECK_FALSE(reruns[0]->valid);
    CHECK(audit.judge(cid(replayed), kRun, Level::kSourceNative, entry(Level::kReproduced, e1)).why == "invalid signature");
    CHECK(audit.decide(cid(replayed), kRun, Level::kSourceNative).entry == entry(Level::kDisputed, e2));
  }
}

TEST_CASE("level audit: without the controller in the trust list its reruns decide nothing", "[store][level_audit]") {
  AuditStore s;
  auto [c1, e1] = s.rerun(3400000);
  LevelAudit untrusting(s.store, {});
  CHECK(untrusting.decide(cid(c1), kRun, Level::kSourceNative).entry == entry(Level::kSourceNative, std::nullopt));
  LevelJudgement j = untrusting.judge(cid(c1), kRun, Level::kSourceNative, entry(Level::kDisputed, e1));
  CHECK_FALSE(j.agrees);
  CHECK(j.why == "signer not trusted");
  CHECK_THAT(j.detail, Catch::Matchers::StartsWith("expected source-native {\"evidence\":null} (no valid rerun commit: "
                                                   "default level source-native), found disputed " + entry_bytes(e1)));
  CHECK_THAT(j.detail, Catch::Matchers::Contains("is not signed by a trusted controller (good signature by untrusted key SHA256:"));
}

TEST_CASE("level_standing: every reader's level is the one the history gives under the trust list",
          "[store][level_audit][query]") {
  AuditStore s;
  s.rerun(2650000);
  Snapshot snap = s.store.snapshot();
  Document run = snap.document(kRun, false);
  Document run2 = snap.document(s.run2, false);
  LevelAudit trusting(s.store, s.trust);
  LevelStanding ok = level_standing(snap, trusting, run);
  CHECK(ok.level == Level::kReproduced);
  CHECK(ok.stored == Level::kReproduced);
  CHECK(ok.checked);
  CHECK(ok.justified);
  CHECK(ok.why.empty());
  // The signer left the trust list: the level is what verify computes (the
  // default), and the stored entry is beside it, not the level.
  LevelAudit untrusting(s.store, {});
  LevelStanding doubt = level_standing(snap, untrusting, run);
  CHECK(doubt.level == Level::kSourceNative);
  CHECK(doubt.level == untrusting.decide(snap.commit(), kRun, Level::kSourceNative).entry.level);
  CHECK(doubt.stored == Level::kReproduced);
  CHECK(doubt.checked);
  CHECK_FALSE(doubt.justified);
  CHECK(doubt.why == "signer not trusted");
  // No reruns and the default level: not checked, and costs no history walk.
  LevelStanding plain = level_standing(snap, untrusting, run2, false);
  CHECK(plain.level == Level::kSourceNative);
  CHECK_FALSE(plain.checked);
  CHECK(plain.justified);
  // A level entry that a plain commit forged is not the level, whoever is trusted.
  std::string forged = s.forge(s.head(), {s.level_line(s.head(), s.run2, {{Level::kReproduced, kRun}})}, {s.head()},
                               "promote\n", false);
  must(s.git() + "update-ref refs/heads/main " + forged);
  Snapshot now = s.store.snapshot();
  LevelAudit fresh(s.store, s.trust);
  LevelStanding promoted = level_standing(now, fresh, run2);
  CHECK(promoted.level == Level::kSourceNative);
  CHECK(promoted.stored == Level::kReproduced);
  CHECK_FALSE(promoted.justified);
  CHECK(promoted.why == "no signed rerun");
}

TEST_CASE("verify: every level entry, default levels included, is what the signed history gives",
          "[store][level_audit][verify]") {
  AuditStore s;
  auto [c1, e1] = s.rerun(3400000);  // disputed
  VerifyOptions trusting;
  trusting.trust = s.trust;
  VerifyReport clean = verify_store(s.store, trusting);
  INFO(clean.problems.size());
  CHECK(clean.ok());

  SECTION("without the controller, its dispute is unjustified") {
    VerifyReport r = verify_store(s.store, VerifyOptions{});
    // The level, and the rerun line that no valid rerun commit adds.
    REQUIRE(r.problems.size() == 2);
    CHECK(r.problems[0].kind == ProblemKind::kRerunMismatch);
    CHECK_THAT(r.problems[0].path, Catch::Matchers::EndsWith(" @" + kRun.hex() + e1.hex()));
    CHECK_THAT(r.problems[0].detail, Catch::Matchers::StartsWith("no valid rerun commit (signed by a controller) adds"));
    CHECK(r.problems[1].kind == ProblemKind::kLevelUnjustified);
    CHECK_THAT(r.problems[1].path, Catch::Matchers::EndsWith(" @" + kRun.hex()));
    CHECK_THAT(r.problems[1].detail, Catch::Matchers::StartsWith("expected source-native {\"evidence\":null} (no valid "
                                                                 "rerun commit: default level source-native)"));
  }
  SECTION("an unsigned commit putting the run back at its default level") {
    std::string reset = s.forge(c1, {s.level_line(c1, kRun, std::nullopt)}, {c1}, "reset\n", false);
    must(s.git() + "update-ref refs/heads/main " + reset);
    VerifyReport r = verify_store(s.store, trusting);
    REQUIRE(r.problems.size() == 1);
    // Format 3: the removed line is a missing level (the history gives one).
    CHECK(r.problems[0].kind == ProblemKind::kMissingLevel);
    CHECK_THAT(r.problems[0].path, Catch::Matchers::EndsWith(" @" + kRun.hex()));
    CHECK_THAT(r.problems[0].detail, Catch::Matchers::Contains("has no level line, so stands at its default; expected disputed " +
                                                               entry_bytes(e1) + " (decided by rerun commit " + c1 + ")"));
  }
  SECTION("the right level naming other evidence") {
    std::string other = s.forge(c1, {s.level_line(c1, kRun, {{Level::kDisputed, s.run2}})}, {c1}, "swap\n", false);
    must(s.git() + "update-ref refs/heads/main " + other);
    VerifyReport r = verify_store(s.store, trusting);
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].kind == ProblemKind::kLevelUnjustified);
    CHECK_THAT(r.problems[0].detail, Catch::Matchers::Contains("found disputed " + entry_bytes(s.run2)));
  }
}

TEST_CASE("level audit: parse_level_entry accepts exactly what level_entry writes", "[store][level_audit]") {
  Digest d = Digest::of("x");
  CHECK(parse_level_entry(level_entry(std::nullopt)) == entry(Level::kReported, std::nullopt));
  CHECK(parse_level_entry(level_entry(d))->evidence == d);
  for (std::string bad : {"", "{}", "{\"evidence\": null}", "{\"evidence\":1}", "{\"evidence\":\"sha256:00\"}",
                          "{\"evidence\":null,\"x\":1}", "[]", "not json"}) {
    INFO(bad);
    CHECK_FALSE(parse_level_entry(bad));
  }
}

}  // namespace
}  // namespace kistore
