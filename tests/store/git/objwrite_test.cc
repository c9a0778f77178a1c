// kistore's own git object writing (store/git/objwrite.h), checked with stock git:
// the pack stream that push sends. (Reading and diffing trees:
// raw_tree_test.cc.)
#include "store/git/objwrite.h"

#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "objects/error.h"
#include "store/git/git.h"
#include "store/git/packread.h"
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

namespace kistore {
namespace {

using namespace test_support;

// A bare repository opened with libgit2, removed with its TempDir.
struct Repo {
  TempDir tmp;
  std::string dir = tmp.path + "/r.git";
  git_repository* repo = nullptr;
  Repo() {
    git::ensure_init();
    must("git init -q --bare " + quote(dir));
    REQUIRE(git_repository_open(&repo, dir.c_str()) == 0);
  }
  ~Repo() { git_repository_free(repo); }
  std::string git(const std::string& args) const { return must("git --git-dir=" + quote(dir) + " " + args); }
  // A blob of `text`, written by git.
  git_oid blob(const std::string& text) const {
    write_file(tmp.path + "/blob", text);
    git_oid id;
    REQUIRE(git_oid_fromstr(&id, trim(git("hash-object -w " + quote(tmp.path + "/blob"))).c_str()) == 0);
    return id;
  }
};

// The tree git builds of `paths` (path -> blob id): git's own answer.
std::string git_tree_of(const Repo& r, const std::map<std::string, git_oid>& paths) {
  std::string index = r.tmp.path + "/index";
  std::remove(index.c_str());
  std::string env = "GIT_INDEX_FILE=" + quote(index) + " ";
  for (const auto& [path, id] : paths)
    must(env + "git --git-dir=" + quote(r.dir) + " update-index --add --cacheinfo 100644," + git::oid_str(id) + "," +
         quote(path));
  return trim(must(env + "git --git-dir=" + quote(r.dir) + " write-tree"));
}

TEST_CASE("TreeStream: the tree git's own index builds, reading only what changes", "[objwrite][tree]") {
  Repo r;
  git_oid a = r.blob("a"), b = r.blob("b"), c = r.blob("c");
  std::map<std::string, git_oid> base = {{"x/1", a}, {"x/2", a}, {"x-y", a}, {"y/deep/er/z", a}, {"z", a}, {"w/q", a}};
  git_oid base_id;
  REQUIRE(git_oid_fromstr(&base_id, git_tree_of(r, base).c_str()) == 0);
  // Upserts, a removal that empties a folder, a blob where a folder was and
  // a folder where a blob was (both kinds of one name in git's order).
  std::map<std::string, git::PathChange> changes = {
      {"x/2", {b}}, {"x/3", {c}}, {"y/deep/er/z", {}}, {"w", {b}}, {"z/new", {c}}, {"a/b/c", {c}}};
  std::map<std::string, git_oid> want = {{"x/1", a}, {"x/2", b}, {"x/3", c}, {"x-y", a},
                                         {"w", b},   {"z/new", c}, {"a/b/c", c}};
  git::PackWriter out(r.dir + "/objects/pack");
  git_oid got = git::build_tree(r.repo, &base_id, changes, out);
  out.finish();
  CHECK(git::oid_str(got) == git_tree_of(r, want));
  CHECK(sh("git --git-dir=" + quote(r.dir) + " fsck --strict --no-dangling").rc == 0);

  SECTION("paths must come in increasing order") {
    git::PackWriter more(r.dir + "/objects/pack");
    git::TreeStream stream(r.repo, &base_id, more);
    stream.change("x/2", {b});
    CHECK_THROWS_WITH(stream.change("x/1", {b}), Catch::Contains("changes must come in increasing order"));
    CHECK_THROWS_WITH(stream.change("x//9", {b}), Catch::Contains("not a path"));
  }
  SECTION("a name changed as a file and then as a folder is refused") {
    git::PackWriter more(r.dir + "/objects/pack");
    git::TreeStream stream(r.repo, &base_id, more);
    stream.change("q", {b});
    CHECK_THROWS_WITH(stream.change("q/r", {b}), Catch::Contains("changed whole and again beneath it"));
  }
}

// A folder's tree id, read with stock git.
std::string git_subtree(const Repo& r, const git_oid& root, const std::string& path) {
  return trim(r.git("rev-parse " + git::oid_str(root) + ":" + path));
}

TEST_CASE("TreeStream: a folder given whole moves as it is, and a removed folder is rebuilt afresh",
          "[objwrite][tree]") {
  Repo r;
  git_oid a = r.blob("a"), b = r.blob("b"), c = r.blob("c");
  // What format 3's trie does when a folder splits: refs/g/3ab moves whole
  // to refs/g/3a/b, a file 3a/1 beside it, and when a folder falls back to
  // a file: refs/g/7 (a folder) becomes the file 7.
  std::map<std::string, git_oid> base = {{"g/3ab/0", a}, {"g/3ab/1", b}, {"g/3-x", a},
                                         {"g/7/0", a},   {"g/7/1", b},   {"g/9", c}};
  git_oid base_id;
  REQUIRE(git_oid_fromstr(&base_id, git_tree_of(r, base).c_str()) == 0);
  git_oid moved;
  REQUIRE(git_oid_fromstr(&moved, git_subtree(r, base_id, "g/3ab").c_str()) == 0);

  std::map<std::string, git::PathChange> changes = {
      {"g/3a/1", {c}}, {"g/3a/b/", {moved, true}}, {"g/3ab", {}}, {"g/7", {}}, {"g/7/1", {c}}};
  git::PackWriter out(r.dir + "/objects/pack");
  git_oid got = git::build_tree(r.repo, &base_id, changes, out);
  out.finish();
  std::map<std::string, git_oid> want = {{"g/3a/1", c}, {"g/3a/b/0", a}, {"g/3a/b/1", b},
                                         {"g/3-x", a},  {"g/7/1", c},    {"g/9", c}};
  CHECK(git::oid_str(got) == git_tree_of(r, want));
  CHECK(git_subtree(r, got, "g/3a/b") == git::oid_str(moved));  // the same tree, not a copy
  CHECK(sh("git --git-dir=" + quote(r.dir) + " fsck --strict --no-dangling").rc == 0);

  SECTION("a folder given whole sorts as git sorts it, after name-x") {
    git::PackWriter more(r.dir + "/objects/pack");
    git_oid t = git::build_tree(r.repo, nullptr, {{"p-x", {a}}, {"p/", {moved, true}}}, more);
    more.finish();
    CHECK(sh("git --git-dir=" + quote(r.dir) + " ls-tree " + git::oid_str(t)).out ==
          "100644 blob " + git::oid_str(a) + "\tp-x\n040000 tree " + git::oid_str(moved) + "\tp\n");
  }
  SECTION("a folder given whole must be named with its slash, and nothing may go beneath it") {
    git::PackWriter more(r.dir + "/objects/pack");
    git::TreeStream stream(r.repo, &base_id, more);
    CHECK_THROWS_WITH(stream.change("g/5", {moved, true}), Catch::Contains("must end in \"/\""));
    CHECK_THROWS_WITH(stream.change("g/5/", {b}), Catch::Contains("must not end in \"/\""));
    stream.change("g/5/", {moved, true});
    CHECK_THROWS_WITH(stream.change("g/5/0", {b}), Catch::Contains("changed whole and again beneath it"));
  }
}

TEST_CASE("PackWriter::write_blobs makes the pack write_blob makes, byte for byte", "[objwrite][pack]") {
  Repo a, b;
  std::vector<std::string> blobs;
  for (int i = 0; i < 50; ++i) blobs.push_back(std::string(100 + 97 * i, static_cast<char>('a' + i % 26)) + std::to_string(i));
  blobs.push_back("\x28\xb5\x2f\xfd" + std::string(200, 'z'));  // a zstd frame's magic: stored, not deflated
  blobs.push_back(blobs[3]);                                      // written once
  std::string names[2];
  std::vector<git_oid> one_by_one;
  {
    git::PackWriter pack(a.dir + "/objects/pack");
    for (const std::string& blob : blobs) one_by_one.push_back(pack.write_blob(blob));
    names[0] = pack.finish();
  }
  {
    git::PackWriter pack(b.dir + "/objects/pack");
    const std::vector<git_oid> ids = pack.write_blobs(std::vector<std::string_view>(blobs.begin(), blobs.end()));
    REQUIRE(ids.size() == one_by_one.size());
    for (std::size_t i = 0; i < ids.size(); ++i) CHECK(git::same_id(ids[i], one_by_one[i]));
    names[1] = pack.finish();
  }
  REQUIRE(!names[0].empty());
  CHECK(names[0] == names[1]);  // named by the checksum of its bytes
  CHECK(read_file(a.dir + "/objects/pack/" + names[0] + ".pack") == read_file(b.dir + "/objects/pack/" + names[1] + ".pack"));
  CHECK(b.git("fsck --strict").find("error") == std::string::npos);
  CHECK(b.git("cat-file -p " + git::oid_str(one_by_one[7])) == blobs[7]);
}

TEST_CASE("merge_small_packs: many small packs become one, every object still readable", "[objwrite][pack]") {
  Repo r;
  std::vector<git_oid> ids;
  for (int i = 0; i < 40; ++i) {
    git::PackWriter pack(r.dir + "/objects/pack");
    ids.push_back(pack.write(GIT_OBJECT_BLOB, "object " + std::to_string(i), 0));
    pack.write(GIT_OBJECT_BLOB, "shared", 0);  // in every pack: once in the merged one
    pack.finish();
  }
  auto packs = [&] { return trim(must("ls " + quote(r.dir + "/objects/pack") + " | grep -c '\\.pack$'")); };
  CHECK(packs() == "40");
  CHECK(git::merge_small_packs(r.repo, r.dir + "/objects/pack", 32) == 40);
  CHECK(packs() == "1");
  for (const git_oid& id : ids) CHECK(!r.git("cat-file -p " + git::oid_str(id)).empty());
  CHECK(trim(r.git("count-objects -v | grep in-pack")) == "in-pack: 41");
  CHECK(git::merge_small_packs(r.repo, r.dir + "/objects/pack", 32) == 0);  // one pack: nothing to do
}

}  // namespace
TEST_CASE("PackReader finds every object of a pack with full fan-out buckets, and no other", "[objwrite][pack]") {
  // 20,000 objects: about 80 per fan-out bucket, so lookups take the
  // interpolated start and the gallop, not only the binary search.
  Repo r;
  std::vector<std::pair<git_oid, std::string>> written;
  {
    git::PackWriter pack(r.dir + "/objects/pack");
    for (int i = 0; i < 20000; ++i) {
      std::string data = "object number " + std::to_string(i);
      written.emplace_back(pack.write(GIT_OBJECT_BLOB, data, 0), data);
    }
    pack.finish();
  }
  git::PackReader reader(r.dir + "/");
  std::size_t found = 0;
  std::string out;
  for (const auto& [id, data] : written) {
    git_object_t type = GIT_OBJECT_INVALID;
    if (reader.read(id, type, out) && type == GIT_OBJECT_BLOB && out == data) ++found;
  }
  CHECK(found == written.size());
  std::size_t strays = 0;
  for (int i = 0; i < 2000; ++i) {
    git_oid absent = git::object_id(GIT_OBJECT_BLOB, "not written " + std::to_string(i));
    git_object_t type = GIT_OBJECT_INVALID;
    if (reader.read(absent, type, out)) ++strays;
  }
  CHECK(strays == 0);
}

// The pages of the pack this process has resident (RssFile, /proc/self/status), in KiB.
static long rss_file_kib() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "RssFile: %ld kB", &kib) == 1) break;
  std::fclose(f);
  return kib;
}

TEST_CASE("PackReader hands a big pack's pages back as it reads, and reads every object again intact", "[objwrite][pack]") {
  // 96 blobs of 1 MiB (stored blocks): a 96 MiB pack, read through twice.
  // Without the hand-back (every 64 MiB read) all of it would stay resident.
  Repo r;
  std::vector<git_oid> ids;
  auto blob = [](int i) {
    std::string data(std::size_t(1) << 20, '\0');
    for (std::size_t k = 0; k < data.size(); ++k) data[k] = static_cast<char>((k * 131 + std::size_t(i) * 7919) % 251);
    return data;
  };
  {
    git::PackWriter pack(r.dir + "/objects/pack");
    for (int i = 0; i < 96; ++i) ids.push_back(pack.write(GIT_OBJECT_BLOB, blob(i), 0));
    pack.finish();
  }
  git::PackReader reader(r.dir + "/");
  const long before = rss_file_kib();
  std::string out;
  int intact = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < 96; ++i) {
      git_object_t type = GIT_OBJECT_INVALID;
      if (reader.read(ids[i], type, out) && type == GIT_OBJECT_BLOB && out == blob(i)) ++intact;
    }
  CHECK(intact == 192);
  const long after = rss_file_kib();
  if (before >= 0 && after >= 0) CHECK(after - before < 80 * 1024);
}

TEST_CASE("PackReader reads a big pack's small objects without mapping their pages in, and refuses a damaged one", "[objwrite][pack]") {
  // 115,000 blobs of 600 bytes (a 70 MiB pack of document-sized frames),
  // 12,000 of them read in id order, scattered over the pack as a walk in
  // digest order reads them. Through the mapping each read made the 64 KiB
  // around it resident (the kernel's fault-around); they are read with pread.
  Repo r;
  std::vector<git_oid> ids;
  auto blob = [](int i) {
    std::string data = "blob " + std::to_string(i) + " ";
    while (data.size() < 600) data += static_cast<char>('a' + (data.size() * 7 + std::size_t(i)) % 26);
    return data;
  };
  {
    git::PackWriter pack(r.dir + "/objects/pack");
    for (int i = 0; i < 115000; ++i) ids.push_back(pack.write(GIT_OBJECT_BLOB, blob(i), 0));
    pack.finish();
  }
  std::vector<int> order;
  for (int i = 0; i < 115000; i += 9) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return git_oid_cmp(&ids[a], &ids[b]) < 0; });
  {
    git::PackReader reader(r.dir + "/");
    const long before = rss_file_kib();
    std::string out;
    std::size_t intact = 0;
    for (int i : order) {
      git_object_t type = GIT_OBJECT_INVALID;
      if (reader.read(ids[i], type, out) && type == GIT_OBJECT_BLOB && out == blob(i)) ++intact;
    }
    CHECK(intact == order.size());
    const long after = rss_file_kib();
    if (before >= 0 && after >= 0) CHECK(after - before < 8 * 1024);
  }
  // One byte of a blob's content changed in the pack: its Adler-32 no longer
  // holds, and neither way of reading answers with the damaged bytes.
  std::string pack_path;
  for (const auto& e : std::filesystem::directory_iterator(r.dir + "/objects/pack"))
    if (e.path().extension() == ".pack") pack_path = e.path();
  std::string bytes;
  {
    std::ifstream in(pack_path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::size_t at = bytes.find(blob(77777));
  REQUIRE(at != std::string::npos);
  bytes[at + 300] ^= 1;
  std::filesystem::permissions(pack_path, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  {
    std::ofstream o(pack_path, std::ios::binary | std::ios::trunc);
    o << bytes;
  }
  git::PackReader reader(r.dir + "/");
  std::string out;
  git_object_t type = GIT_OBJECT_INVALID;
  CHECK_FALSE(reader.read(ids[77777], type, out));
  CHECK_FALSE(reader.read_any(ids[77777], type, out));
  CHECK(reader.read(ids[77776], type, out));
  CHECK(out == blob(77776));
}

}  // namespace kistore
