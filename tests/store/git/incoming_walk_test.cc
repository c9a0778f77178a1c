// The walk of what a pull brings (store/git/incoming_walk.h), on remotes made
// with stock git: a good commit is copied whole and only what is new; each
// way an object can be wrong is refused naming the commit and the path, and
// nothing it refuses is written.
#include "store/git/incoming_walk.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "store/git/git.h"
#include "store/git/objwrite.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;
namespace fs = std::filesystem;

git::Repository open_repo(const std::string& dir) {
  git::ensure_init();
  git_repository* raw = nullptr;
  REQUIRE(git_repository_open_bare(&raw, dir.c_str()) == 0);
  return git::Repository(raw);
}

git_oid oid(const std::string& hex) {
  git_oid id;
  REQUIRE(git_oid_fromstr(&id, trim(hex).c_str()) == 0);
  return id;
}

// A "store" (a bare repository with one commit, objects/a and a FORMAT file)
// and a "remote" cloned from it, where each test makes a new commit with
// plumbing: `commit_with(entries)` adds "mode type id\tpath" lines (mktree
// format, nested paths by --index-info).
struct Pair {
  TempDir tmp;
  std::string store = tmp.path + "/store.git", remote = tmp.path + "/remote.git";
  std::string rgit = git_env(tmp) + "git --git-dir=" + quote(remote) + " ";
  git_oid base;
  Pair() {
    std::string work = tmp.path + "/work";
    must(git_env(tmp) + "git init -q " + quote(work));
    must("mkdir -p " + quote(work + "/objects") + " && echo one > " + quote(work + "/objects/a") + " && echo 2 > " +
         quote(work + "/FORMAT"));
    must(git_env(tmp) + "git -C " + quote(work) + " add -A && " + git_env(tmp) + "git -C " + quote(work) +
         " commit -q -m base");
    must(git_env(tmp) + "git clone -q --bare " + quote(work) + " " + quote(store));
    must(git_env(tmp) + "git clone -q --bare " + quote(store) + " " + quote(remote));
    base = oid(must(rgit + "rev-parse HEAD"));
  }
  std::string blob(const std::string& text) { return trim(must("printf '" + text + "' | " + rgit + "hash-object -w --stdin")); }
  // A commit on the base whose tree gets the `--index-info` lines.
  git_oid commit_with(const std::string& index_info) {
    std::string idx = tmp.path + "/idx";
    std::string env = "GIT_INDEX_FILE=" + quote(idx) + " ";
    must("rm -f " + quote(idx) + " && " + env + rgit + "read-tree HEAD && printf '" + index_info + "' | " + env + rgit +
         "update-index --index-info");
    std::string tree = trim(must(env + rgit + "write-tree"));
    return oid(must(rgit + "commit-tree " + tree + " -p HEAD -m attack"));
  }
};

struct Walked {
  git::WalkResult result;
  std::string pack;  // the pack's name, "" when nothing was written
};

Walked walk(Pair& p, const git_oid& head) {
  git::Repository store = open_repo(p.store), remote = open_repo(p.remote);
  std::string dir = p.tmp.path + "/quarantine-pack";
  fs::create_directories(dir);
  git::PackWriter pack(dir);
  git::CopyingSource source(remote.get(), store.get(), pack);
  Walked w{git::walk_incoming(source, head), ""};
  if (w.result.problems.empty()) w.pack = pack.finish();
  return w;
}

std::string describe(const git::WalkResult& r) {
  std::string out;
  for (const auto& p : r.problems) out += std::string(problem_kind_name(p.kind)) + " " + p.path + ": " + p.detail + "\n";
  return out;
}

TEST_CASE("a good commit: its new objects are copied, nothing the store has", "[incoming]") {
  Pair p;
  std::string b = p.blob("two\\n");
  git_oid head = p.commit_with("100644 blob " + b + "\\tobjects/b\\n");
  Walked w = walk(p, head);
  INFO(describe(w.result));
  REQUIRE(w.result.problems.empty());
  CHECK(w.result.commits.size() == 1);
  CHECK(w.result.objects == 4);  // the commit, the root tree, objects/, objects/b
  std::string listed = must("git verify-pack -v " + quote(p.tmp.path + "/quarantine-pack/" + w.pack + ".idx"));
  CHECK(listed.find(b) != std::string::npos);
  CHECK(listed.find(trim(must(p.rgit + "rev-parse HEAD:objects/a"))) == std::string::npos);
}

TEST_CASE("what the walk refuses, naming the commit and the path", "[incoming]") {
  Pair p;
  ProblemKind kind{};
  git::WalkFault fault{};
  std::string path, needle;
  git_oid head;
  std::string other;
  SECTION("a loose object whose bytes have another id") {
    std::string b = p.blob("two\\n");
    // Swap the file for one holding other bytes, written by git under its own name.
    other = p.blob("forged\\n");
    std::string from = p.remote + "/objects/" + other.substr(0, 2) + "/" + other.substr(2);
    std::string to = p.remote + "/objects/" + b.substr(0, 2) + "/" + b.substr(2);
    must("chmod u+w " + quote(to) + " && cp " + quote(from) + " " + quote(to));
    head = p.commit_with("100644 blob " + b + "\\tobjects/b\\n");
    kind = ProblemKind::kObjectCorrupt, path = "objects/b", needle = "holds bytes whose id is " + other;
    fault = git::WalkFault::kUnreadable;
  }
  SECTION("an executable") {
    head = p.commit_with("100755 blob " + p.blob("x\\n") + "\\tobjects/x\\n");
    kind = ProblemKind::kLayout, path = "objects/x", needle = "mode 100755", fault = git::WalkFault::kBadMode;
  }
  SECTION("a symbolic link") {
    head = p.commit_with("120000 blob " + p.blob("objects/a") + "\\tobjects/l\\n");
    kind = ProblemKind::kLayout, path = "objects/l", needle = "mode 120000", fault = git::WalkFault::kBadMode;
  }
  SECTION("a submodule") {
    head = p.commit_with("160000 commit " + std::string(40, 'a') + "\\tobjects/s\\n");
    kind = ProblemKind::kLayout, path = "objects/s", needle = "mode 160000", fault = git::WalkFault::kSubmodule;
  }
  SECTION("a tree 20 folders deep") {
    std::string deep;
    for (int i = 0; i < 20; ++i) deep += "d/";
    head = p.commit_with("100644 blob " + p.blob("deep\\n") + "\\t" + deep + "f\\n");
    kind = ProblemKind::kLayout, path = deep.substr(0, 16 * 2 + 1), needle = "17 folders deep; the limit is 16";
    fault = git::WalkFault::kTooDeep;
  }
  SECTION("an object the remote does not have") {
    head = p.commit_with("100644 blob " + p.blob("gone\\n") + "\\tobjects/g\\n");
    std::string id = trim(must(p.rgit + "rev-parse " + git::oid_str(head) + ":objects/g"));
    fs::remove(p.remote + "/objects/" + id.substr(0, 2) + "/" + id.substr(2));
    kind = ProblemKind::kObjectCorrupt, path = "objects/g", needle = "has no blob " + id;
    fault = git::WalkFault::kUnreadable;
  }
  Walked w = walk(p, head);
  INFO(describe(w.result));
  REQUIRE(w.result.problems.size() == 1);
  REQUIRE(w.result.faults.size() == 1);  // one code for each problem, matched by code, never by text
  CHECK(w.result.faults[0] == fault);
  CHECK(w.result.problems[0].kind == kind);
  CHECK(w.result.problems[0].path.rfind(path, 0) == 0);
  CHECK_THAT(w.result.problems[0].detail, Catch::Matchers::Contains(needle));
  CHECK_THAT(w.result.problems[0].detail, Catch::Matchers::Contains("commit " + git::oid_str(head).substr(0, 12)));
  CHECK(fs::is_empty(p.tmp.path + "/quarantine-pack"));  // the writer's temporary file is gone
}

}  // namespace
}  // namespace kistore
