// kistore's own git object writing (store/objwrite.h), checked with stock git:
// the pack stream that push sends, and the walk of what a tree adds.
#include "store/objwrite.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "objects/error.h"
#include "store/git.h"
#include "store/packread.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

struct Repo {
  TempDir tmp;
  git::Repository repo;
  Repo() {
    git::ensure_init();
    git_repository* raw = nullptr;
    REQUIRE(git_repository_init(&raw, (tmp.path + "/r.git").c_str(), 1) == 0);
    repo.reset(raw);
  }
  std::string git() const { return "git --git-dir=" + quote(tmp.path + "/r.git") + " "; }
};

std::string oid_hex(const git_oid& id) { return git::oid_str(id); }

TEST_CASE("PackStream: a pack stock git indexes, with every object intact", "[objwrite][pack]") {
  TempDir tmp;
  std::string big(200000, '\0');  // more than one stored block (65,535 bytes)
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 % 251);
  struct Obj {
    git_object_t type;
    std::string data;
    int level;
  };
  std::vector<Obj> objects = {
      {GIT_OBJECT_BLOB, "{\"a\":1}\n", 0},
      {GIT_OBJECT_BLOB, big, 0},
      {GIT_OBJECT_BLOB, "", 0},
      {GIT_OBJECT_BLOB, std::string(5000, 'x'), 6},
  };
  // A tree holding the first blob, and a commit of it (deflated, as commits are).
  git_oid first = git::object_id(GIT_OBJECT_BLOB, objects[0].data);
  std::string tree = "100644 a.json";
  tree += '\0';
  tree.append(reinterpret_cast<const char*>(first.id), 20);
  objects.push_back({GIT_OBJECT_TREE, tree, 0});
  git_oid tree_id = git::object_id(GIT_OBJECT_TREE, tree);
  objects.push_back({GIT_OBJECT_COMMIT,
                     "tree " + oid_hex(tree_id) +
                         "\nauthor A <a@example.org> 1700000000 +0000\ncommitter A <a@example.org> 1700000000 +0000\n\nm\n",
                     1});

  std::string bytes;
  std::size_t pieces = 0;
  git::PackStream pack(static_cast<std::uint32_t>(objects.size()), [&](std::string_view piece) {
    bytes += piece;
    ++pieces;
  }, 4096);
  for (const Obj& o : objects) pack.write(o.type, o.data, o.level);
  CHECK(bytes.size() > big.size() / 2);  // handed over as it was made, not at the end
  pack.finish();
  CHECK(pack.written() == objects.size());
  CHECK(pack.bytes() == bytes.size());
  CHECK(pieces > 3);
  CHECK(bytes.substr(0, 4) == "PACK");

  must("git init -q --bare " + quote(tmp.path + "/g.git"));
  write_file(tmp.path + "/in.pack", bytes);
  std::string git = "git --git-dir=" + quote(tmp.path + "/g.git") + " ";
  must(git + "index-pack --stdin --strict < " + quote(tmp.path + "/in.pack"));
  for (const Obj& o : objects) {
    std::string id = oid_hex(git::object_id(o.type, o.data));
    CHECK(trim(must(git + "cat-file -t " + id)) == git_object_type2string(o.type));
    CHECK(must(git + "cat-file " + git_object_type2string(o.type) + " " + id) == o.data);
  }
  CHECK(sh(git + "fsck --strict --no-dangling").rc == 0);

  SECTION("the object count is announced first and held to") {
    std::string sink;
    git::PackStream short_pack(2, [&](std::string_view p) { sink += p; });
    short_pack.write(GIT_OBJECT_BLOB, "one", 0);
    CHECK_THROWS_WITH(short_pack.finish(), Catch::Contains("1 objects written, 2 announced"));
    git::PackStream long_pack(1, [&](std::string_view p) { sink += p; });
    long_pack.write(GIT_OBJECT_BLOB, "one", 0);
    CHECK_THROWS_WITH(long_pack.write(GIT_OBJECT_BLOB, "two", 0), Catch::Contains("more objects than the 1 announced"));
  }
}

// Builds a tree of `files` (path -> content) in `r`; returns its id.
git_oid make_tree(Repo& r, const std::map<std::string, std::string>& files) {
  git::LooseWriter out(r.repo.get());
  std::map<std::string, git::PathChange> changes;
  for (const auto& [path, content] : files) changes[path].blob = out.write(GIT_OBJECT_BLOB, content, 0);
  return git::build_tree(r.repo.get(), nullptr, changes, out);
}

TEST_CASE("added_or_changed: exactly the trees and blobs a tree adds to another", "[objwrite][walk]") {
  Repo r;
  git_oid before = make_tree(r, {{"a/x", "1"}, {"a/y", "2"}, {"b/z", "3"}, {"b/deep/q", "4"}, {"top", "5"}});
  git_oid after = make_tree(r, {{"a/x", "1 changed"}, {"a/y", "2"}, {"b/z", "3"}, {"b/deep/q", "4"},
                                {"c/w", "new"}, {"top", "5"}, {"top2", "2"}});
  git_odb* raw = nullptr;
  REQUIRE(git_repository_odb(&raw, r.repo.get()) == 0);
  git::Odb odb(raw);

  auto walk = [&](const git_oid* from, const git_oid& to) {
    std::multiset<std::string> got;
    git::added_or_changed(raw, nullptr, from, to, [&](const git_oid& id, git_object_t type) {
      got.insert(std::string(git_object_type2string(type)) + " " + oid_hex(id));
    });
    return got;
  };
  // What stock git says each path holds.
  auto at = [&](const git_oid& root, const std::string& path) {
    return trim(must(r.git() + "rev-parse " + oid_hex(root) + ":" + path));
  };

  std::multiset<std::string> expected = {
      "tree " + at(after, "a"), "blob " + at(after, "a/x"),  // a changed
      "tree " + at(after, "c"), "blob " + at(after, "c/w"),  // c is new
      "blob " + at(after, "top2"),                            // same content as a/y, new path
  };
  CHECK(walk(&before, after) == expected);
  CHECK(walk(&after, after).empty());

  // From nothing: every tree and blob below the root, the root excluded.
  std::multiset<std::string> all;
  std::string listing = must(r.git() + "ls-tree -r -t " + oid_hex(after));
  std::istringstream lines(listing);
  std::string mode, type, id, path;
  while (lines >> mode >> type >> id >> path) all.insert(type + " " + id);
  CHECK(walk(nullptr, after) == all);

  SECTION("through kistore's pack reader the walk is the same") {
    // Move everything into one pack of stored objects, as kistore keeps them.
    std::vector<std::pair<git_oid, git_object_t>> objects;
    std::istringstream again(listing);
    while (again >> mode >> type >> id >> path) {
      git_oid oid;
      git_oid_fromstr(&oid, id.c_str());
      objects.push_back({oid, git_object_string2type(type.c_str())});
    }
    std::istringstream before_listing(must(r.git() + "ls-tree -r -t " + oid_hex(before)));
    while (before_listing >> mode >> type >> id >> path) {
      git_oid oid;
      git_oid_fromstr(&oid, id.c_str());
      objects.push_back({oid, git_object_string2type(type.c_str())});
    }
    objects.push_back({before, GIT_OBJECT_TREE});
    objects.push_back({after, GIT_OBJECT_TREE});
    {
      git::PackWriter pack(r.tmp.path + "/r.git/objects/pack");
      for (const auto& [oid, t] : objects) {
        git_odb_object* o = nullptr;
        REQUIRE(git_odb_read(&o, raw, &oid) == 0);
        git::OdbObject owned(o);
        pack.write(oid, t, {static_cast<const char*>(git_odb_object_data(o)), git_odb_object_size(o)}, 0);
      }
      pack.finish();
    }
    git::PackReader packs(r.tmp.path + "/r.git/");
    git_object_t t;
    std::string bytes;
    REQUIRE(packs.read(after, t, bytes));
    std::multiset<std::string> got;
    git::added_or_changed(raw, &packs, &before, after, [&](const git_oid& oid, git_object_t kind) {
      got.insert(std::string(git_object_type2string(kind)) + " " + oid_hex(oid));
    });
    CHECK(got == expected);
  }
}

}  // namespace
}  // namespace kistore
