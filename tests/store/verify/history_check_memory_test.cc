// verify's check of the history (store/verify/verify_history.cc) over a
// repository made in memory (tests/store/git/memory_commits.h): objects and
// dictionaries are append-only, the format only moves forward by an upgrade
// commit, and a tree the history cannot read is reported, each as a problem
// of its kind at its path with what was expected and found.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "refs/layout.h"
#include "store/verify/verify_state.h"
#include "tests/store/git/memory_commits.h"

namespace kistore {
namespace {

using test_support::MemoryCommits;
using verifying::history_problems;

TEST_CASE("verify history: a commit may not remove or change an object or a dictionary", "[store][verify][memory]") {
  MemoryCommits repo;
  CommitId root = repo.commit({repo.tree({{"objects/a", "A"}, {"objects/b", "B"}, {"dictionaries/1", "D1"}}), {}});
  CommitId fine = repo.commit({repo.tree({{"objects/a", "A"}, {"objects/b", "B"}, {"objects/c", "C"}, {"dictionaries/1", "D1"}}),
                               {root}, "adds c\n", 1700000100});
  CHECK(history_problems(repo, fine).empty());

  CommitId bad = repo.commit({repo.tree({{"objects/a", "A2"}, {"objects/c", "C"}, {"dictionaries/1", "D2"}}), {fine},
                              "rewrites\n", 1700000200});
  std::vector<Problem> found = history_problems(repo, bad);
  REQUIRE(found.size() == 3);
  CHECK(found[0].kind == ProblemKind::kHistoryRewritten);
  CHECK(found[0].path == "objects/a");
  CHECK(found[0].detail == "commit " + bad.hex() + " changed an object its parent " + fine.hex() + " had");
  CHECK(found[1].path == "objects/b");
  CHECK(found[1].detail == "commit " + bad.hex() + " removed an object its parent " + fine.hex() + " had");
  CHECK(found[2].kind == ProblemKind::kHistoryRewritten);
  CHECK(found[2].path == "dictionaries/1");
  CHECK(found[2].detail == "commit " + bad.hex() + " changed a dictionary its parent " + fine.hex() +
                               " had: a Dictionary_ID names one dictionary for ever");
}

TEST_CASE("verify history: a merge may keep either parent's frame of a document, no other", "[store][verify][memory]") {
  MemoryCommits repo;
  CommitId root = repo.commit({repo.tree({}), {}});
  CommitId ours = repo.commit({repo.tree({{"objects/d", "frame 1"}}), {root}, "ours\n", 1700000100});
  CommitId theirs = repo.commit({repo.tree({{"objects/d", "frame 2"}}), {root}, "theirs\n", 1700000200});
  // Against `ours` the merge changed objects/d, but `theirs` has that blob.
  CommitId keeps_theirs = repo.commit({repo.tree({{"objects/d", "frame 2"}}), {ours, theirs}, "merge\n", 1700000300});
  CHECK(history_problems(repo, keeps_theirs).empty());
  // A frame neither parent had is a change against both.
  CommitId neither = repo.commit({repo.tree({{"objects/d", "frame 3"}}), {ours, theirs}, "merge\n", 1700000400});
  std::vector<Problem> found = history_problems(repo, neither);
  REQUIRE(found.size() == 2);
  CHECK(found[0].path == "objects/d");
  CHECK(found[1].path == "objects/d");
  CHECK_THAT(found[0].detail + found[1].detail, Catch::Contains("its parent " + ours.hex() + " had") &&
                                                    Catch::Contains("its parent " + theirs.hex() + " had"));
}

TEST_CASE("verify history: the format moves forward only by an upgrade commit", "[store][verify][memory]") {
  MemoryCommits repo;
  const std::string format(kFormatPath);
  CommitId v1 = repo.commit({repo.tree({}), {}});
  git_oid v2_tree = repo.tree({{format, "2\n"}});
  // One line per commit on v1 that adds FORMAT: its message, its parents,
  // whether that is the upgrade the history allows.
  CommitId other = repo.commit({repo.tree({{"objects/x", "x"}}), {}, "other\n", 1700000050});
  struct Case {
    const char* message;
    std::vector<CommitId> parents;
    bool allowed;
  };
  const Case cases[] = {
      {"upgrade\n\nKistore-Op: upgrade\n", {v1}, true},
      {"add\n\nKistore-Op: add\n", {v1}, false},
      {"upgrade\n\nKistore-Op: upgrade\n", {v1, other}, false},  // an upgrade has one parent
  };
  for (const Case& c : cases) {
    INFO(c.message);
    CommitId up = repo.commit({v2_tree, c.parents, c.message, 1700000100});
    std::vector<Problem> found = history_problems(repo, up);
    if (c.allowed) {
      CHECK(found.empty());
      continue;
    }
    REQUIRE_FALSE(found.empty());
    CHECK(found[0].kind == ProblemKind::kLayout);
    CHECK(found[0].path == format);
    CHECK(found[0].detail == "commit " + up.hex() +
                                 " turns format 1 into format 2 without being an upgrade commit (Kistore-Op: upgrade, one parent)");
  }
  CommitId up = repo.commit({v2_tree, {v1}, "upgrade\n\nKistore-Op: upgrade\n", 1700000100});
  CommitId back = repo.commit({repo.tree({}), {up}, "back\n", 1700000200});
  std::vector<Problem> found = history_problems(repo, back);
  REQUIRE(found.size() == 1);
  CHECK(found[0].kind == ProblemKind::kLayout);
  CHECK(found[0].path == format);
  CHECK(found[0].detail == "commit " + back.hex() + " removes FORMAT, which its parent " + up.hex() +
                               " had: a store's format never goes back to format 1");
}

TEST_CASE("verify history: a tree the history cannot read is reported at its commit", "[store][verify][memory]") {
  MemoryCommits repo;
  git_oid objects = repo.tree({{"a", "A"}});
  CommitId root = repo.commit({repo.tree({{"objects/a", "A"}}), {}});
  CommitId head = repo.commit({repo.tree({{"objects/a", "A"}, {"objects/b", "B"}}), {root}, "adds b\n", 1700000100});
  repo.objects.remove(objects);  // the parent's objects/ folder
  std::vector<Problem> found = history_problems(repo, head);
  REQUIRE(found.size() == 1);
  CHECK(found[0].kind == ProblemKind::kHistoryMissing);
  CHECK(found[0].path == head.hex());
  CHECK_THAT(found[0].detail, Catch::StartsWith("reading the tree objects: object not found") &&
                                  Catch::Contains(git::oid_str(objects)));
}

}  // namespace
}  // namespace kistore
