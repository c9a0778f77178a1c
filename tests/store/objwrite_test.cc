// kistore's own git object writing (store/objwrite.h), checked with stock git:
// the pack stream that push sends. (Reading and diffing trees:
// raw_tree_test.cc.)
#include "store/objwrite.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "objects/error.h"
#include "store/git.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

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

}  // namespace
}  // namespace kistore
