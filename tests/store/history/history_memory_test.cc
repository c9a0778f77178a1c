// The history room (store/history/) over a repository made in memory
// (tests/store/git/memory_commits.h), behind the git door: the edge cases of
// the signed history that only end-to-end tests reached before, each checked
// for what the audit and the log say (kind, path, message), not only that
// they run.
#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "objects/error.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "store/history/history.h"
#include "store/history/level_audit.h"
#include "tests/store/git/memory_commits.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;
using Spec = MemoryCommits::Spec;

std::string key_text(const std::string& name) {
  return read_file(std::string(KISTORE_SOURCE_DIR) + "/tests/data/keys/" + name);
}

const Digest kRun = Digest::of("the run");
const Digest kRerun = Digest::of("its rerun");

// A history in format 1: a first commit that records kRun at its default
// level (reported), and a commit on it whose message is `message` and that
// moves kRun to reproduced with kRerun as evidence, signed by `signer`.
struct RerunHistory {
  MemoryCommits repo;
  SshPrivateKey controller = SshPrivateKey::parse(key_text("controller"), "controller");
  SshPrivateKey outsider = SshPrivateKey::parse(key_text("outsider"), "outsider");
  std::vector<AllowedSigner> trust{{{"controller@example.org"}, "", controller.public_key()}};
  CommitId base = repo.commit({repo.tree({{level_path(Format::k1, Level::kReported, kRun), level_entry(std::nullopt)}}),
                               {}, "add a run\n\nKistore-Op: add\n", 1700000000});

  CommitId rerun(const std::string& message, const SshPrivateKey* signer, bool forged = false) {
    git_oid tree = repo.tree({{level_path(Format::k1, Level::kReproduced, kRun), level_entry(kRerun)}});
    return repo.commit({tree, {base}, message, 1700000100, signer, forged});
  }
};

TEST_CASE("level audit: a rerun commit counts only when a trusted controller signed it", "[store][history][memory]") {
  // One line per signer: what the audit finds of the signature, and the
  // few words a reader is shown for the level the commit wrote.
  struct Case {
    const char* name;
    int signer;  // 0 none, 1 the controller, 2 an outsider
    bool forged;
    SignatureStatus::State state;
    const char* why;
    const char* detail;  // in the judgement's full story
  };
  const Case cases[] = {
      {"unsigned", 0, false, SignatureStatus::kUnsigned, "unsigned rerun", "is not signed by a trusted controller (unsigned)"},
      {"signed by an untrusted key", 2, false, SignatureStatus::kUntrusted, "signer not trusted",
       "is not signed by a trusted controller (good signature by untrusted key SHA256:"},
      {"a signature over other bytes", 1, true, SignatureStatus::kInvalid, "invalid signature",
       "is not signed by a trusted controller (INVALID signature: "},
      // Trusted, the signature is no reason: the rule it breaks is.
      {"signed by the controller", 1, false, SignatureStatus::kTrusted, "adds no rerun of this run",
       ": adds no rerun of this run"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    RerunHistory h;
    const SshPrivateKey* signer = c.signer == 1 ? &h.controller : c.signer == 2 ? &h.outsider : nullptr;
    CommitId commit = h.rerun("rerun\n\nKistore-Op: rerun\n", signer, c.forged);
    LevelAudit audit(h.repo, h.trust);

    std::vector<const LevelAudit::RerunCommitAudit*> reruns = audit.rerun_commits(commit);
    REQUIRE(reruns.size() == 1);
    CHECK(reruns[0]->commit == commit.hex());
    CHECK(reruns[0]->signature.state == c.state);
    CHECK_FALSE(reruns[0]->valid);
    REQUIRE(reruns[0]->facts.level_changes.count(kRun) == 1);

    std::optional<LevelEntryValue> recorded = audit.entry_at(commit, kRun);
    REQUIRE(recorded);
    CHECK(recorded->level == Level::kReproduced);
    LevelJudgement j = audit.judge(commit, kRun, Level::kReported, recorded);
    CHECK_FALSE(j.agrees);
    CHECK(j.decision.entry.level == Level::kReported);  // nothing valid: the default stands
    CHECK(j.why == c.why);
    CHECK_THAT(j.detail, Catch::Contains("rerun commit " + commit.hex() + " is no valid rerun commit for this run"));
    CHECK_THAT(j.detail, Catch::Contains(c.detail));
    CHECK_THAT(j.detail, Catch::StartsWith("expected reported"));
  }
}

TEST_CASE("level audit: only a well-formed Kistore-Op trailer makes a rerun commit", "[store][history][memory]") {
  // Messages whose trailer is malformed: each commit is no rerun commit at
  // all, though the controller signed it, so the entry it wrote has no
  // signed rerun behind it.
  const char* malformed[] = {
      "Kistore-Op: rerun\n",              // the trailer is the first line: no line before it
      "rerun\n\nKistore-Op:rerun\n",      // no space after the colon
      "rerun\n\nKistore-op: rerun\n",     // another key
      "rerun\n\nKistore-Op: reruns\n",    // another value
      "rerun\n\nKistore-Op: rerun\nKistore-Op: add\n",  // the last trailer is the one that counts
  };
  for (const char* message : malformed) {
    INFO(message);
    RerunHistory h;
    CommitId commit = h.rerun(message, &h.controller);
    LevelAudit audit(h.repo, h.trust);
    CHECK(audit.rerun_commits(commit).empty());
    LevelJudgement j = audit.judge(commit, kRun, Level::kReported, audit.entry_at(commit, kRun));
    CHECK_FALSE(j.agrees);
    CHECK(j.why == "no signed rerun");
    CHECK(j.detail == "expected reported {\"evidence\":null} (no valid rerun commit: default level reported), found "
                      "reproduced " + level_entry(kRerun));
  }
  // The same commit with the trailer as kistore writes it is one.
  RerunHistory h;
  CommitId commit = h.rerun("rerun\n\nKistore-Op: rerun\n", &h.controller);
  LevelAudit audit(h.repo, h.trust);
  CHECK(audit.rerun_commits(commit).size() == 1);
}

TEST_CASE("level audit: a history whose commit names a missing parent is an I/O error naming it",
          "[store][history][memory]") {
  RerunHistory h;
  CommitId lost = h.repo.commit({h.repo.tree({}), {h.base}, "lost\n", 1700000050});
  CommitId head = h.repo.commit({h.repo.tree({}), {lost}, "on the lost one\n\nKistore-Op: add\n", 1700000060});
  h.repo.remove(lost);
  LevelAudit audit(h.repo, h.trust);
  try {
    audit.walk(head);
    FAIL("the walk went through a missing commit");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kIO);
    CHECK_THAT(e.what(), Catch::StartsWith("walking history from " + head.hex() + ": "));
    CHECK_THAT(e.what(), Catch::Contains(lost.hex()));
  }
  // The log shows what it can read: nothing below a commit it cannot walk.
  CHECK(read_history(h.repo, head, LogQuery{}).empty());
  // A head the door cannot find at all is an error of the walk's own.
  CHECK_THROWS_WITH(read_history(h.repo, lost, LogQuery{}), Catch::StartsWith("walking history: "));
}

TEST_CASE("level audit: a second walk stops at the commits walked before", "[store][history][memory]") {
  RerunHistory h;
  CommitId first = h.rerun("rerun\n\nKistore-Op: rerun\n", nullptr);
  CommitId a = h.repo.commit({h.repo.tree({}), {first}, "a\n", 1700000200});
  CommitId b = h.repo.commit({h.repo.tree({}), {a}, "b\n", 1700000300});
  LevelAudit audit(h.repo, h.trust);
  audit.walk(first);
  REQUIRE(h.repo.walks.size() == 1);
  CHECK(h.repo.visits[0] == 2);  // first and base
  audit.walk(b);
  REQUIRE(h.repo.walks.size() == 2);
  CHECK(h.repo.walks[1].hidden == std::vector<CommitId>{first});
  CHECK(h.repo.visits[1] == 2);  // b and a: nothing at or below `first` again
  audit.walk(a);           // known already: no walk at all
  CHECK(h.repo.walks.size() == 2);
  // What the first walk found still counts from the new tip.
  std::vector<const LevelAudit::RerunCommitAudit*> reruns = audit.rerun_commits(b);
  REQUIRE(reruns.size() == 1);
  CHECK(reruns[0]->commit == first.hex());
}

TEST_CASE("read_history: a merge lists both parents and its changes against the first", "[store][history][memory]") {
  MemoryCommits repo;
  CommitId root = repo.commit({repo.tree({{"objects/a", "A"}}), {}, "root\n\nKistore-Op: add\n", 100});
  CommitId ours = repo.commit({repo.tree({{"objects/a", "A"}, {"objects/b", "B"}}), {root}, "ours\n\nKistore-Op: add\n", 200});
  CommitId theirs = repo.commit({repo.tree({{"objects/a", "A"}, {"objects/c", "C"}}), {root},
                                 "theirs\nsecond line\n\nbody\n\nKistore-Op: add\n", 300});
  CommitId merge = repo.commit({repo.tree({{"objects/a", "A"}, {"objects/b", "B"}, {"objects/c", "C"}}), {ours, theirs},
                                "merge\n\nKistore-Op: merge\n", 400});
  LogQuery all;
  all.with_changes = true;
  std::vector<LogEntry> log = read_history(repo, merge, all);
  REQUIRE(log.size() == 4);
  // Newest first, every commit before its parents.
  CHECK(log[0].id == merge.hex());
  CHECK(log[1].id == theirs.hex());
  CHECK(log[2].id == ours.hex());
  CHECK(log[3].id == root.hex());
  CHECK(log[0].parents == std::vector<std::string>{ours.hex(), theirs.hex()});
  CHECK(log[0].op == "merge");
  REQUIRE(log[0].changes.size() == 1);  // what the merge brought to its first parent
  CHECK(log[0].changes[0].status == 'A');
  CHECK(log[0].changes[0].path == "objects/c");
  CHECK(log[1].summary == "theirs second line");
  CHECK(log[3].changes.size() == 1);  // a root commit: everything is added
  CHECK(log[0].signature.empty());

  // Filters: by operation, by path (against the first parent), and a limit.
  LogQuery merges;
  merges.op = "merge";
  CHECK(read_history(repo, merge, merges).size() == 1);
  LogQuery touching_b;
  touching_b.paths = {"objects/b"};
  std::vector<LogEntry> b = read_history(repo, merge, touching_b);
  REQUIRE(b.size() == 1);
  CHECK(b[0].id == ours.hex());
  LogQuery two;
  two.limit = 2;
  CHECK(read_history(repo, merge, two).size() == 2);
}

TEST_CASE("read_history: a signed commit carries its signature and the bytes it signs", "[store][history][memory]") {
  RerunHistory h;
  CommitId commit = h.rerun("rerun\n\nKistore-Op: rerun\n", &h.controller);
  std::vector<LogEntry> log = read_history(h.repo, commit, LogQuery{});
  REQUIRE(log.size() == 2);
  CHECK_THAT(log[0].signature, Catch::StartsWith("-----BEGIN SSH SIGNATURE-----"));
  CHECK_THAT(log[0].signed_payload, Catch::StartsWith("tree "));
  CHECK(log[0].signed_payload.find("gpgsig") == std::string::npos);
  SignatureStatus s = judge_signature(log[0], h.trust);
  CHECK(s.state == SignatureStatus::kTrusted);
  CHECK(s.principal == "controller@example.org");
  CHECK(judge_signature(log[1], h.trust).state == SignatureStatus::kUnsigned);
}

}  // namespace
}  // namespace kistore
