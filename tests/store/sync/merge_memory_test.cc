// The merge of a pull (store/sync/merge.h) over a repository made in memory
// (tests/store/git/memory_commits.h), behind the git door: the union, the
// earliest claim, the blocked source id, the levels no rerun is about, and a
// history the merge cannot read, each checked for the change it makes and
// the note it leaves, with no repository, no git and no server.
#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <string>

#include "objects/error.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "store/core/layout_trees.h"
#include "store/history/level_audit.h"
#include "store/sync/merge.h"
#include "tests/store/git/memory_commits.h"

namespace kistore {
namespace {

using namespace test_support;
using Files = std::map<std::string, std::string>;

constexpr std::int64_t kT0 = 1700000000;

const Digest kOld = Digest::of("a run both sides have");
const Digest kMine = Digest::of("a run only the local side has");
const Digest kTheirs = Digest::of("a run only the remote has");
const Digest kKey = Digest::of("a comparison key");

// A store's tree in format 2: FORMAT, and `files` beside it.
Files store_files(Files files) {
  files.emplace(std::string(kFormatPath), "kistore 2\n");
  return files;
}

// A run's document and its default level entry.
void add_run(Files& files, const Digest& run, const std::string& frame) {
  files[object_path(run)] = frame;
  files[level_path(Format::k2, Level::kReported, run)] = level_entry(std::nullopt);
}

// Two sides grown from one base commit: the local head and the remote's.
struct TwoSides {
  MemoryCommits repo;
  Files base_files = [] {
    Files f = store_files({});
    add_run(f, kOld, "old frame");
    return f;
  }();
  CommitId base = repo.commit({repo.tree(base_files), {}, "add\n\nKistore-Op: add\n", kT0});

  CommitId grow(const CommitId& parent, const Files& files, std::int64_t time) {
    return repo.commit({repo.tree(files), {parent}, "add\n\nKistore-Op: add\n", time});
  }

  // build_merge of `incoming` into `local`, as pull calls it.
  std::optional<ChangeSet> merge(const CommitId& local, const CommitId& incoming, MergeOutcome& outcome) {
    LayoutTrees trees(repo);
    LevelAudit levels(repo, {});
    return build_merge(trees, levels, local, incoming, "origin", outcome);
  }
};

std::string blob_hex(const std::string& bytes) { return git::oid_str(git::object_id(GIT_OBJECT_BLOB, bytes)); }

TEST_CASE("merge: documents, levels and groups are a union; what one side dropped, the other keeps",
          "[store][sync][merge][memory]") {
  TwoSides s;
  Files local = s.base_files, incoming = s.base_files;
  add_run(local, kMine, "mine");
  add_run(incoming, kTheirs, "theirs");
  incoming[group_path(Format::k2, kKey, kTheirs)] = "";
  incoming.erase(object_path(kOld));  // the remote dropped a document: the union keeps it
  const CommitId l = s.grow(s.base, local, kT0 + 10), in = s.grow(s.base, incoming, kT0 + 20);

  MergeOutcome outcome;
  std::optional<ChangeSet> change = s.merge(l, in, outcome);
  REQUIRE(change);
  const std::map<std::string, std::string> want = {
      {object_path(kTheirs), blob_hex("theirs")},
      {level_path(Format::k2, Level::kReported, kTheirs), blob_hex(level_entry(std::nullopt))},
      {group_path(Format::k2, kKey, kTheirs), blob_hex("")},
  };
  CHECK(change->links == want);
  CHECK(change->upserts.empty());
  CHECK(change->removals.empty());
  CHECK(outcome.new_documents == 1);
  CHECK(outcome.notes.empty());
  CHECK(change->op == "merge");
  CHECK(change->summary == "merge: 1 document from origin");
  CHECK(change->body == "Merged " + in.hex() + " from remote origin.");
  CHECK(change->extra_parents == std::vector<CommitId>{in});
}

TEST_CASE("merge: nothing to merge when the local head already holds the remote's", "[store][sync][merge][memory]") {
  TwoSides s;
  Files more = s.base_files;
  add_run(more, kMine, "mine");
  const CommitId ahead = s.grow(s.base, more, kT0 + 10);
  MergeOutcome outcome;
  outcome.notes = {"from an earlier call"};
  CHECK_FALSE(s.merge(ahead, s.base, outcome));   // the remote is behind
  CHECK_FALSE(s.merge(s.base, s.base, outcome));  // the same commit
  CHECK(outcome.notes.empty());                   // each call replaces the outcome
}

TEST_CASE("merge: metadata and source ids both sides claimed keep the earliest claim, a tie the local one",
          "[store][sync][merge][memory]") {
  const std::string meta = metadata_path(Format::k2, kOld), source = "refs/sources/liger/run-1";
  struct Case {
    const char* name;
    std::int64_t local_time, incoming_time;
    bool theirs;
  };
  const Case cases[] = {
      {"the remote's claim is older", kT0 + 20, kT0 + 10, true},
      {"the local claim is older", kT0 + 10, kT0 + 20, false},
      {"both at the same second", kT0 + 10, kT0 + 10, false},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    TwoSides s;
    Files local = s.base_files, incoming = s.base_files;
    local[meta] = "{\"note\":\"local\"}";
    incoming[meta] = "{\"note\":\"remote\"}";
    local[source] = "sha256:" + kMine.hex();
    incoming[source] = "sha256:" + kTheirs.hex();
    // A later local commit that keeps both claims: the time that counts is
    // the one of the commit that introduced each.
    const CommitId l1 = s.grow(s.base, local, c.local_time);
    Files later = local;
    add_run(later, kMine, "mine");
    const CommitId l2 = s.grow(l1, later, kT0 + 100);
    const CommitId in = s.grow(s.base, incoming, c.incoming_time);

    MergeOutcome outcome;
    std::optional<ChangeSet> change = s.merge(l2, in, outcome);
    REQUIRE(change);
    REQUIRE(outcome.notes.size() == 2);
    if (c.theirs) {
      CHECK(change->links.at(meta) == blob_hex("{\"note\":\"remote\"}"));
      CHECK(change->links.at(source) == blob_hex("sha256:" + kTheirs.hex()));
      CHECK(outcome.notes[0] == meta + ": the two sides differ; the remote's metadata is older and replaces the local one");
      CHECK(outcome.notes[1] ==
            source + ": the two sides differ; the remote's source id claim is older and replaces the local one");
    } else {
      CHECK_FALSE(change->links.count(meta));
      CHECK_FALSE(change->links.count(source));
      CHECK(outcome.notes[0] == meta + ": the two sides differ; kept the local metadata, which is as old or older");
      CHECK(outcome.notes[1] == source + ": the two sides differ; kept the local source id claim, which is as old or older");
    }
    // Every note is in the merge commit's message, after its first line.
    CHECK(change->body == "Merged " + in.hex() + " from remote origin.\n" + outcome.notes[0] + "\n" + outcome.notes[1]);
  }
}

TEST_CASE("merge: a source id that local ids block keeps the local ones", "[store][sync][merge][memory]") {
  // Either way round: a longer local id below the remote's, or a shorter
  // local id that the remote's would have to be a folder of.
  const std::pair<const char*, const char*> cases[] = {
      {"refs/sources/liger/a/b", "refs/sources/liger/a"},
      {"refs/sources/liger/a", "refs/sources/liger/a/b"},
  };
  for (const auto& [mine, theirs] : cases) {
    INFO(mine << " against " << theirs);
    TwoSides s;
    Files local = s.base_files, incoming = s.base_files;
    local[mine] = "sha256:" + kMine.hex();
    incoming[theirs] = "sha256:" + kTheirs.hex();
    const CommitId l = s.grow(s.base, local, kT0 + 10), in = s.grow(s.base, incoming, kT0 + 20);
    MergeOutcome outcome;
    std::optional<ChangeSet> change = s.merge(l, in, outcome);
    REQUIRE(change);
    CHECK(change->links.empty());
    CHECK(outcome.notes ==
          std::vector<std::string>{std::string(theirs) + ": the store already holds other source ids in its way; kept the local ones"});
  }
}

TEST_CASE("merge: a level no rerun is about is taken only for a run the local side lacks",
          "[store][sync][merge][memory]") {
  TwoSides s;
  Files local = s.base_files, incoming = s.base_files;
  // The remote says source-native for a run the local side has as reported,
  // with no rerun commit behind either: the local entry stays.
  incoming.erase(level_path(Format::k2, Level::kReported, kOld));
  incoming[level_path(Format::k2, Level::kSourceNative, kOld)] = level_entry(std::nullopt);
  add_run(incoming, kTheirs, "theirs");
  const CommitId l = s.grow(s.base, local, kT0 + 10), in = s.grow(s.base, incoming, kT0 + 20);
  MergeOutcome outcome;
  std::optional<ChangeSet> change = s.merge(l, in, outcome);
  REQUIRE(change);
  CHECK_FALSE(change->links.count(level_path(Format::k2, Level::kSourceNative, kOld)));
  CHECK(change->links.count(level_path(Format::k2, Level::kReported, kTheirs)));
  CHECK(change->removals.empty());
}

TEST_CASE("merge: both sides' frames of one document keep the local one; other differing entries are noted",
          "[store][sync][merge][memory]") {
  TwoSides s;
  Files local = s.base_files, incoming = s.base_files;
  const std::string attestation = attestation_path(Format::k2, kOld, Digest::of("an attestation"));
  local[object_path(kOld)] = "the local frame";
  incoming[object_path(kOld)] = "the remote's frame";
  local[attestation] = "local";
  incoming[attestation] = "remote";
  const CommitId l = s.grow(s.base, local, kT0 + 10), in = s.grow(s.base, incoming, kT0 + 20);
  MergeOutcome outcome;
  std::optional<ChangeSet> change = s.merge(l, in, outcome);
  REQUIRE(change);
  CHECK(change->links.empty());
  CHECK(outcome.new_documents == 0);
  CHECK(outcome.notes == std::vector<std::string>{attestation + ": the two sides differ; kept the local entry"});
}

TEST_CASE("merge: a remote history with a commit missing is an I/O error naming it, and no change",
          "[store][sync][merge][memory][attack]") {
  // The remote's head names a parent that is not there (a shallow or
  // doctored history): the merge needs the commit that introduced a claim
  // both sides made, and cannot invent its time.
  TwoSides s;
  Files local = s.base_files, incoming = s.base_files;
  const std::string meta = metadata_path(Format::k2, kOld);
  local[meta] = "{\"note\":\"local\"}";
  incoming[meta] = "{\"note\":\"remote\"}";
  const CommitId l = s.grow(s.base, local, kT0 + 10);
  const CommitId gone = s.grow(s.base, incoming, kT0 + 20);
  const CommitId in = s.grow(gone, incoming, kT0 + 30);
  s.repo.remove(gone);
  MergeOutcome outcome;
  try {
    s.merge(l, in, outcome);
    FAIL("the merge went through");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kIO);
    CHECK_THAT(e.what(), Catch::Contains(gone.hex()));
  }
}

}  // namespace
}  // namespace kistore
