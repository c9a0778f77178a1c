// The walk that checks what a pull brings (store/git/incoming_walk.h), driven
// through an in-memory object source (memory_source.h): its own rules (modes,
// names, order, depth, commits), what it reads and what it skips, and how it
// reports a source's refusals, with no repository and no server.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "store/git/incoming_walk.h"
#include "tests/store/git/memory_source.h"

namespace kistore {
namespace {

using test_support::MemorySource;

std::string hex12(const git_oid& id) { return git::oid_str(id).substr(0, 12); }

// A store's base commit (objects/a), marked as the store's, and helpers to
// make a commit on it whose tree is the base's plus `objects/` entries.
struct History {
  MemorySource src;
  git_oid a = src.blob("a\n"), objects_base = src.tree({{"100644 a", a}});
  git_oid format = src.blob("2\n");
  git_oid base_tree = src.tree({{"100644 FORMAT", format}, {"40000 objects", objects_base}});
  git_oid base = src.commit(base_tree, {});
  History() {
    for (const git_oid& id : {a, objects_base, format, base_tree, base}) src.mark_stored(id);
  }
  // A commit on `parent` whose objects/ folder holds `entries` (sorted by the caller).
  git_oid commit_with(const std::vector<std::pair<std::string, git_oid>>& entries, const git_oid* parent = nullptr) {
    git_oid objects = src.tree(entries);
    git_oid root = src.tree({{"100644 FORMAT", format}, {"40000 objects", objects}});
    return src.commit(root, {parent ? *parent : base});
  }
};

TEST_CASE("memory walk: a clean history, oldest first, each new object once, stopping at the store", "[incoming][memory]") {
  History h;
  git_oid b = h.src.blob("b\n");
  git_oid first = h.commit_with({{"100644 a", h.a}, {"100644 b", b}});
  git_oid c = h.src.blob("c\n");
  git_oid second = h.commit_with({{"100644 a", h.a}, {"100644 b", b}, {"100644 c", c}}, &first);
  git::WalkResult w = git::walk_incoming(h.src, second);
  REQUIRE(w.problems.empty());
  CHECK(w.faults.empty());
  REQUIRE(w.commits.size() == 2);
  CHECK(git_oid_equal(&w.commits[0], &first));
  CHECK(git_oid_equal(&w.commits[1], &second));
  // Two commits, two root trees, two objects/ trees, blobs b and c: the
  // store's a, FORMAT and base are never counted.
  CHECK(w.objects == 8);
}

TEST_CASE("memory walk: a subtree the first parent has is not read again", "[incoming][memory]") {
  History h;
  std::vector<std::pair<std::string, git_oid>> many;
  for (int i = 0; i < 200; ++i) many.push_back({"100644 f" + std::to_string(1000 + i), h.src.blob(std::to_string(i))});
  git_oid big = h.src.tree(many);
  git_oid root1 = h.src.tree({{"100644 FORMAT", h.format}, {"40000 big", big}, {"40000 objects", h.objects_base}});
  git_oid first = h.src.commit(root1, {h.base});
  git_oid d = h.src.blob("d\n");
  git_oid objects2 = h.src.tree({{"100644 a", h.a}, {"100644 d", d}});
  git_oid root2 = h.src.tree({{"100644 FORMAT", h.format}, {"40000 big", big}, {"40000 objects", objects2}});
  git_oid second = h.src.commit(root2, {first});
  git::WalkResult all = git::walk_incoming(h.src, second);
  REQUIRE(all.problems.empty());
  h.src.mark_stored(first);
  h.src.reads = 0;
  git::WalkResult w = git::walk_incoming(h.src, second);
  REQUIRE(w.problems.empty());
  REQUIRE(w.commits.size() == 1);
  CHECK(w.objects == 4);  // the commit, its root, objects/ and d: not big/ and its 200 blobs
  CHECK(h.src.reads < 10);
}

TEST_CASE("memory walk: each refusal, with its kind, its code, its path and the commit", "[incoming][memory]") {
  History h;
  git_oid x = h.src.blob("x\n");
  git_oid head{};
  ProblemKind kind{};
  git::WalkFault fault{};
  std::string path;
  SECTION("an executable") {
    head = h.commit_with({{"100644 a", h.a}, {"100755 x", x}});
    kind = ProblemKind::kLayout, fault = git::WalkFault::kBadMode, path = "objects/x";
  }
  SECTION("a symbolic link") {
    head = h.commit_with({{"100644 a", h.a}, {"120000 x", x}});
    kind = ProblemKind::kLayout, fault = git::WalkFault::kBadMode, path = "objects/x";
  }
  SECTION("a submodule") {
    head = h.commit_with({{"100644 a", h.a}, {"160000 x", x}});
    kind = ProblemKind::kLayout, fault = git::WalkFault::kSubmodule, path = "objects/x";
  }
  SECTION("an entry named ..") {
    head = h.commit_with({{"100644 ..", x}, {"100644 a", h.a}});
    kind = ProblemKind::kLayout, fault = git::WalkFault::kBadName, path = "objects/..";
  }
  SECTION("an entry whose name holds a slash") {
    head = h.commit_with({{"100644 a", h.a}, {"100644 b/c", x}});
    kind = ProblemKind::kLayout, fault = git::WalkFault::kBadName, path = "objects/b/c";
  }
  SECTION("entries out of order") {
    head = h.commit_with({{"100644 x", x}, {"100644 a", h.a}});
    kind = ProblemKind::kObjectCorrupt, fault = git::WalkFault::kTreeOrder, path = "objects";
  }
  SECTION("an entry listed twice") {
    head = h.commit_with({{"100644 a", h.a}, {"100644 x", x}, {"100644 x", x}});
    kind = ProblemKind::kObjectCorrupt, fault = git::WalkFault::kTreeOrder, path = "objects";
  }
  SECTION("a blob whose bytes have another id") {
    git_oid forged = h.src.blob("forged\n");
    h.src.put_as(forged, GIT_OBJECT_BLOB, "other bytes\n");
    head = h.commit_with({{"100644 a", h.a}, {"100644 f", forged}});
    kind = ProblemKind::kObjectCorrupt, fault = git::WalkFault::kUnreadable, path = "objects/f";
  }
  SECTION("a blob the source does not have") {
    git_oid gone = h.src.blob("gone\n");
    h.src.remove(gone);
    head = h.commit_with({{"100644 a", h.a}, {"100644 g", gone}});
    kind = ProblemKind::kObjectCorrupt, fault = git::WalkFault::kUnreadable, path = "objects/g";
  }
  SECTION("a folder entry naming a blob") {
    head = h.commit_with({{"100644 a", h.a}, {"40000 d", x}});
    kind = ProblemKind::kObjectCorrupt, fault = git::WalkFault::kUnreadable, path = "objects/d";
  }
  SECTION("a tree whose bytes are no tree") {
    git_oid junk = h.src.add(GIT_OBJECT_TREE, "100644 a-name-with-no-id");
    git_oid root = h.src.tree({{"100644 FORMAT", h.format}, {"40000 objects", junk}});
    head = h.src.commit(root, {h.base});
    kind = ProblemKind::kObjectCorrupt, fault = git::WalkFault::kTreeFormat, path = "objects";
  }
  SECTION("a commit that does not start with its tree") {
    head = h.src.add(GIT_OBJECT_COMMIT, "author A <a@example.org> 1 +0000\n\nno tree\n");
    kind = ProblemKind::kHistoryMissing, fault = git::WalkFault::kBadCommit, path = git::oid_str(head);
  }
  git::WalkResult w = git::walk_incoming(h.src, head);
  const std::string found = w.problems.empty() ? std::string("no problem") : w.problems[0].path + ": " + w.problems[0].detail;
  INFO(found);
  REQUIRE(w.problems.size() == 1);
  REQUIRE(w.faults.size() == 1);
  CHECK(w.faults[0] == fault);
  CHECK(w.problems[0].kind == kind);
  CHECK(w.problems[0].path == path);
  CHECK_THAT(w.problems[0].detail, Catch::Matchers::StartsWith("commit " + hex12(head) + ": "));
}

TEST_CASE("memory walk: a tree 100,000 folders deep is refused after 17 reads, without recursion", "[incoming][memory]") {
  History h;
  git_oid inner = h.src.tree({{"100644 f", h.src.blob("deep\n")}});
  for (int i = 0; i < 100000; ++i) inner = h.src.tree({{"40000 d", inner}});
  git_oid root = h.src.tree({{"100644 FORMAT", h.format}, {"40000 objects", h.objects_base}, {"40000 zz", inner}});
  git_oid head = h.src.commit(root, {h.base});
  h.src.reads = 0;
  git::WalkResult w = git::walk_incoming(h.src, head);
  CHECK(w.too_deep);
  REQUIRE(w.problems.size() == 1);
  CHECK(w.faults[0] == git::WalkFault::kTooDeep);
  CHECK(w.problems[0].kind == ProblemKind::kLayout);
  CHECK_THAT(w.problems[0].detail, Catch::Matchers::Contains("17 folders deep; the limit is 16"));
  CHECK(h.src.reads <= 20);
}

TEST_CASE("memory walk: problems stop at max_problems", "[incoming][memory]") {
  History h;
  std::vector<std::pair<std::string, git_oid>> bad;
  for (int i = 0; i < 100; ++i) bad.push_back({"100755 x" + std::to_string(100 + i), h.src.blob(std::to_string(i))});
  git_oid head = h.commit_with(bad);
  CHECK(git::walk_incoming(h.src, head).problems.size() == 50);
  git::WalkResult few = git::walk_incoming(h.src, head, 3);
  CHECK(few.problems.size() == 3);
  CHECK(few.faults.size() == 3);
}

TEST_CASE("memory walk: check_tree_shape reads trees only, and labels problems as told", "[incoming][memory]") {
  History h;
  git_oid x = h.src.blob("x\n");
  git_oid objects = h.src.tree({{"100644 a", h.a}, {"100755 x", x}});
  git_oid root = h.src.tree({{"100644 FORMAT", h.format}, {"40000 objects", objects}});
  h.src.reads = 0;
  git::WalkResult w = git::check_tree_shape(h.src, root, "the tree of HEAD");
  CHECK(h.src.reads == 2);  // the root and objects/: no blob
  REQUIRE(w.problems.size() == 1);
  CHECK(w.faults[0] == git::WalkFault::kBadMode);
  CHECK_THAT(w.problems[0].detail, Catch::Matchers::StartsWith("the tree of HEAD: "));
}

}  // namespace
}  // namespace kistore
