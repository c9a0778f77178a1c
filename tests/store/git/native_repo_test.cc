// kistore's own repository reader (store/git/native_repo.h) against stock git and
// libgit2: every object of a repository, loose and after `git gc
// --aggressive` (deltas, deflated entries), reads as libgit2 reads it; a
// damaged or substituted loose object is not answered; references loose and
// in packed-refs; and the repositories it leaves to libgit2.
#include "store/git/native_repo.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "store/git/git.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

const std::string& kIdentity = kGitIdentity;

// A bare repository made by stock git: commits of a growing file (so that gc
// makes deltas) beside a fixed one.
struct GitRepo {
  TempDir tmp;
  std::string dir = tmp.path + "/r.git";
  std::string work = tmp.path + "/w";
  std::string git() const { return kIdentity + "git --git-dir=" + quote(dir) + " "; }
  GitRepo() {
    must(kIdentity + "git init -q " + quote(work));
    std::string text;
    for (int i = 0; i < 12; ++i) {
      for (int j = 0; j < 200; ++j) text += "line " + std::to_string(i * 1000 + j) + " of a growing file\n";
      write_file(work + "/grow.txt", text);
      write_file(work + "/fixed.txt", "fixed\n");
      must(kIdentity + "git -C " + quote(work) + " add -A && " + kIdentity + "git -C " + quote(work) +
           " commit -q -m c" + std::to_string(i));
    }
    must(kIdentity + "git clone -q --bare " + quote(work) + " " + quote(dir));
  }
  std::vector<std::string> all_objects() const {
    std::istringstream lines(must(git() + "cat-file --batch-all-objects --batch-check='%(objectname)'"));
    std::vector<std::string> out;
    for (std::string l; std::getline(lines, l);)
      if (!l.empty()) out.push_back(l);
    return out;
  }
};

git_oid oid(const std::string& hex) {
  git_oid id;
  REQUIRE(git::parse_hex_id(trim(hex), id));
  return id;
}

// Every object reads natively, as libgit2 reads it.
void reads_like_libgit2(const GitRepo& r) {
  git::ensure_init();
  git_repository* raw = nullptr;
  REQUIRE(git_repository_open(&raw, r.dir.c_str()) == 0);
  git::Repository repo(raw);
  git::Odb odb = git::open_odb(raw);
  git::NativeObjects native(r.dir + "/");
  std::vector<std::string> ids = r.all_objects();
  REQUIRE(ids.size() > 30);
  for (const std::string& hex : ids) {
    git_oid id = oid(hex);
    git_odb_object* obj = nullptr;
    REQUIRE(git_odb_read(&obj, odb.get(), &id) == 0);
    git::OdbObject owned(obj);
    git_object_t type = GIT_OBJECT_INVALID;
    std::string bytes;
    INFO(hex);
    REQUIRE(native.read(id, type, bytes));
    CHECK(type == git_odb_object_type(obj));
    CHECK(bytes == std::string(static_cast<const char*>(git_odb_object_data(obj)), git_odb_object_size(obj)));
  }
}

TEST_CASE("native reader: loose objects and packs after gc --aggressive read as libgit2 reads them") {
  GitRepo r;
  reads_like_libgit2(r);  // a local clone: loose objects
  must(r.git() + "repack -q -a -d");
  reads_like_libgit2(r);  // one pack, deflated, deltas
  // Every object loose.
  must("mkdir " + quote(r.tmp.path + "/p") + " && mv " + quote(r.dir) + "/objects/pack/* " + quote(r.tmp.path + "/p"));
  must("for p in " + quote(r.tmp.path) + "/p/*.pack; do " + r.git() + "unpack-objects -q < \"$p\"; done");
  REQUIRE(trim(must(r.git() + "count-objects -v | sed -n 's/^count: //p'")) != "0");
  reads_like_libgit2(r);
  must(r.git() + "gc -q --aggressive --prune=now");
  REQUIRE(trim(must(r.git() + "count-objects -v | sed -n 's/^count: //p'")) == "0");
  REQUIRE(!trim(must("git verify-pack -v " + quote(r.dir) + "/objects/pack/*.idx | grep 'chain length' || true")).empty());
  reads_like_libgit2(r);
}

TEST_CASE("native reader: a damaged or substituted loose object is not answered") {
  git::ensure_init();
  GitRepo r;
  std::string fixed = trim(must(r.git() + "rev-parse HEAD:fixed.txt"));
  std::string grow = trim(must(r.git() + "rev-parse HEAD:grow.txt"));
  // Everything packed, the pack moved away, then loose copies of both blobs.
  must(r.git() + "repack -q -a -d");
  must("mv " + quote(r.dir) + "/objects/pack " + quote(r.tmp.path + "/pack-away") + " && mkdir " +
       quote(r.dir + "/objects/pack"));
  write_file(r.tmp.path + "/fixed", "fixed\n");
  write_file(r.tmp.path + "/grow", read_file(r.work + "/grow.txt"));
  REQUIRE(trim(must(r.git() + "hash-object -w " + quote(r.tmp.path + "/fixed"))) == fixed);
  REQUIRE(trim(must(r.git() + "hash-object -w " + quote(r.tmp.path + "/grow"))) == grow);
  auto loose = [&](const std::string& id) { return r.dir + "/objects/" + id.substr(0, 2) + "/" + id.substr(2); };
  git::NativeObjects before(r.dir + "/");
  git_object_t type;
  std::string bytes;
  REQUIRE(before.read(oid(fixed), type, bytes));
  CHECK(bytes == "fixed\n");
  REQUIRE(before.read(oid(grow), type, bytes));
  CHECK(bytes == read_file(r.work + "/grow.txt"));

  SECTION("a flipped byte") {
    std::string file = read_file(loose(grow));
    file[file.size() / 2] ^= 0x55;
    must("chmod u+w " + quote(loose(grow)));
    write_file(loose(grow), file);
  }
  SECTION("another object's file at its name") {
    must("chmod u+w " + quote(loose(grow)) + " && cp " + quote(loose(fixed)) + " " + quote(loose(grow)));
  }
  SECTION("cut short") {
    std::string file = read_file(loose(grow));
    must("chmod u+w " + quote(loose(grow)));
    write_file(loose(grow), file.substr(0, file.size() - 7));
  }
  git::NativeObjects after(r.dir + "/");
  bytes = "untouched";
  CHECK_FALSE(after.read(oid(grow), type, bytes));
  CHECK_FALSE(after.read(oid(std::string(40, '0')), type, bytes));  // absent
}

TEST_CASE("native reader: references, loose and in packed-refs") {
  git::ensure_init();  // oid_str
  TempDir tmp;
  std::string g = tmp.path + "/";
  must("mkdir -p " + quote(g + "refs/heads"));
  const std::string a(40, 'a'), b(40, 'b');
  git_oid id;
  CHECK(git::read_ref(g, "refs/heads/main", id) == git::RefState::kAbsent);
  write_file(g + "packed-refs", "# pack-refs with: peeled fully-peeled sorted \n" + b +
                                    " refs/heads/dev\n" + a + " refs/heads/main\n^" + b + "\n");
  REQUIRE(git::read_ref(g, "refs/heads/main", id) == git::RefState::kFound);
  CHECK(git::oid_str(id) == a);
  write_file(g + "refs/heads/main", b + "\n");  // a loose ref wins
  REQUIRE(git::read_ref(g, "refs/heads/main", id) == git::RefState::kFound);
  CHECK(git::oid_str(id) == b);
  write_file(g + "refs/heads/main", "ref: refs/heads/dev\n");  // symbolic: libgit2's to follow
  CHECK(git::read_ref(g, "refs/heads/main", id) == git::RefState::kUnknown);
  write_file(g + "refs/heads/main", a.substr(0, 39) + "\n");
  CHECK(git::read_ref(g, "refs/heads/main", id) == git::RefState::kUnknown);
  CHECK(git::read_ref(g, "refs/heads/../../config", id) == git::RefState::kUnknown);
  must("rm " + quote(g + "refs/heads/main"));
  write_file(g + "packed-refs", "garbage line\n");
  CHECK(git::read_ref(g, "refs/heads/main", id) == git::RefState::kUnknown);
}

TEST_CASE("native reader: what it leaves to libgit2") {
  GitRepo r;
  auto found = git::locate_repository(r.dir);
  REQUIRE(found);
  CHECK(found->gitdir == std::filesystem::canonical(r.dir).string() + "/");
  CHECK(found->branch == "refs/heads/master");
  auto work = git::locate_repository(r.work);  // a work tree: its .git folder
  REQUIRE(work);
  CHECK(work->gitdir == std::filesystem::canonical(r.work).string() + "/.git/");
  CHECK_FALSE(git::locate_repository(r.tmp.path));  // no repository

  SECTION("an alternate object folder") { write_file(r.dir + "/objects/info/alternates", "/elsewhere\n"); }
  SECTION("a repository extension") {
    must(r.git() + "config core.repositoryformatversion 1 && " + r.git() + "config extensions.objectformat sha1");
  }
  SECTION("a later repository format") { must(r.git() + "config core.repositoryformatversion 2"); }
  SECTION("an include") { must(r.git() + "config include.path other"); }
  SECTION("a detached HEAD") { must(r.git() + "update-ref --no-deref HEAD HEAD"); }
  SECTION("a worktree's common folder") { write_file(r.dir + "/commondir", "..\n"); }
  CHECK_FALSE(git::locate_repository(r.dir));
}

TEST_CASE("native reader: a commit's tree id") {
  const std::string tree = "tree " + std::string(40, 'c') + "\n";
  git_oid id;
  REQUIRE(git::commit_tree_id(tree + "author a <a> 1 +0000\ncommitter a <a> 1 +0000\n\nmsg\n", id));
  CHECK(git::oid_str(id) == std::string(40, 'c'));
  CHECK_FALSE(git::commit_tree_id(tree + "author a <a> 1 +0000\n\ncommitter in the message\n", id));
  CHECK_FALSE(git::commit_tree_id("parent " + std::string(40, 'c') + "\n", id));
  CHECK_FALSE(git::commit_tree_id("tree " + std::string(39, 'c') + "x\nauthor a\ncommitter a\n", id));
}

}  // namespace
}  // namespace kistore
