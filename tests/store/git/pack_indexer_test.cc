// The pack indexer (store/git/pack_indexer.h) on packs that stock git makes:
// whole objects, OFS_DELTA and REF_DELTA chains, fed at once and a few
// bytes at a time. Every object must read back identically through stock
// git and libgit2, and `git verify-pack` must accept the pack written.
#include "store/git/pack_indexer.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "objects/error.h"
#include "store/git/git.h"
#include "store/git/objwrite.h"
#include "tests/store/pack_bytes.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

// A repository whose history gives git plenty to delta: files that change
// a little more with each of 12 commits, nested folders, a 100 KB file.
struct SourceRepo {
  TempDir tmp;
  std::string dir = tmp.path + "/src";
  std::string git = git_env(tmp) + "git -C " + quote(dir) + " ";
  SourceRepo() {
    must(git_env(tmp) + "git init -q " + quote(dir));
    for (int i = 1; i <= 12; ++i) {
      std::string d = quote(dir);
      // Each version differs most from the one before, so git chains its deltas.
      must("cd " + d + " && seq 1 150 | sed '1," + std::to_string(i * 12) + "s/$/ changed/' > a.txt && " +
           "seq 1 3000 | sed '1," + std::to_string(i * 200) + "s/$/ v2/' > b.txt && mkdir -p d/e && echo " +
           std::to_string(i) + " > d/e/f.txt && (head -c 100000 /dev/zero | tr '\\0' x; seq 1 " + std::to_string(i) +
           ") > big.txt");
      must(git + "add -A && " + git + "commit -q -m c" + std::to_string(i));
    }
  }
  // `git pack-objects` of every object, with `options`.
  std::string pack(const std::string& options) {
    std::string path = tmp.path + "/out.pack";
    must(git + "rev-list --objects --all | " + git + "pack-objects -q --stdout " + options + " > " + quote(path));
    return read_file(path);
  }
};

// A bare repository whose objects/pack is the indexer's destination.
struct Quarantine {
  TempDir tmp;
  std::string gitdir = tmp.path + "/q.git";
  std::string pack_dir = gitdir + "/objects/pack";
  Quarantine() { must("git init -q --bare " + quote(gitdir)); }
  std::string git() const { return "GIT_CONFIG_NOSYSTEM=1 git --git-dir=" + quote(gitdir) + " "; }
};

std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& f : std::filesystem::directory_iterator(dir)) out.insert(f.path().filename().string());
  return out;
}

// Feeds `pack` in pieces of `piece` bytes (0: all at once).
git::IndexedPack index_in_pieces(const std::string& pack, const std::string& dest, std::size_t piece,
                                 const git::PackLimits& limits = {}, git::PackProgress* last = nullptr) {
  git::IncomingPack in(dest, limits, [&](const git::PackProgress& p) {
    if (last) *last = p;
  });
  if (piece == 0) piece = pack.size();
  for (std::size_t at = 0; at < pack.size(); at += piece) in.append(std::string_view(pack).substr(at, piece));
  return in.finish();
}

// Every object of the source reads back the same from the quarantine,
// through stock git (one batch of all objects each) and through libgit2,
// and git verify-pack accepts what was written.
void check_same_objects(SourceRepo& src, const Quarantine& q, const git::IndexedPack& got) {
  REQUIRE(!got.name.empty());
  CHECK(files_in(q.pack_dir) == std::set<std::string>{got.name + ".idx", got.name + ".pack"});
  CHECK(sh("git verify-pack " + quote(q.pack_dir + "/" + got.name + ".idx")).rc == 0);
  CHECK(must(q.git() + "cat-file --batch-all-objects --batch") ==
        must(src.git + "cat-file --batch-all-objects --batch"));

  std::set<std::string> expected_ids;
  std::istringstream listing(must(src.git + "cat-file --batch-all-objects --batch-check='%(objectname) %(objecttype)'"));
  for (std::string id, type; listing >> id >> type;) expected_ids.insert(id + " " + type);
  std::set<std::string> reported;
  std::uint64_t bytes = 0;
  git::ensure_init();
  git_repository* raw = nullptr;
  REQUIRE(git_repository_open(&raw, q.gitdir.c_str()) == 0);
  git::Repository repo(raw);
  git_odb* odb_raw = nullptr;
  REQUIRE(git_repository_odb(&odb_raw, raw) == 0);
  git::Odb odb(odb_raw);
  for (const git::IndexedObject& o : got.objects) {
    reported.insert(git::oid_str(o.id) + " " + git_object_type2string(o.type));
    git_odb_object* obj = nullptr;
    REQUIRE(git_odb_read(&obj, odb_raw, &o.id) == 0);
    git::OdbObject owned(obj);
    CHECK(git_odb_object_type(obj) == o.type);
    std::string_view data(static_cast<const char*>(git_odb_object_data(obj)), git_odb_object_size(obj));
    git_oid rehashed = git::object_id(o.type, data);
    CHECK(git_oid_equal(&o.id, &rehashed) == 1);
    bytes += data.size();
  }
  CHECK(reported == expected_ids);
  CHECK(got.objects.size() == expected_ids.size());
  CHECK(got.inflated_bytes == bytes);
}

// The longest delta chain `git verify-pack -v` reports for a pack.
int longest_chain(const std::string& pack_path) {
  TempDir tmp;
  std::string copy = tmp.path + "/p.pack";
  std::filesystem::copy_file(pack_path, copy);
  must("git index-pack " + quote(copy));
  std::istringstream out(must("git verify-pack -v " + quote(tmp.path + "/p.idx")));
  int longest = 0;
  for (std::string line; std::getline(out, line);) {
    if (line.rfind("chain length = ", 0) == 0) longest = std::max(longest, std::stoi(line.substr(15)));
  }
  return longest;
}

TEST_CASE("IncomingPack: packs stock git makes are indexed, every object intact", "[pack_indexer]") {
  SourceRepo src;
  struct Kind {
    const char* name;
    std::string options;
    bool deltas;
  };
  for (const Kind& kind : {Kind{"whole objects only", "--window=0", false},
                           Kind{"OFS_DELTA chains", "--delta-base-offset --window=50 --depth=10", true},
                           // without --delta-base-offset, pack-objects writes REF_DELTA entries
                           Kind{"REF_DELTA chains", "--window=50 --depth=10", true},
                           Kind{"deltas recomputed", "--no-reuse-delta --no-reuse-object --delta-base-offset --depth=4", true}}) {
    std::string pack = src.pack(kind.options);
    {
      TempDir t;
      write_file(t.path + "/p.pack", pack);
      CHECK((longest_chain(t.path + "/p.pack") > 1) == kind.deltas);
    }
    for (std::size_t piece : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{4096}}) {
      INFO(kind.name << ", in pieces of " << piece);
      Quarantine q;
      git::PackProgress last;
      git::IndexedPack got = index_in_pieces(pack, q.pack_dir, piece, {}, &last);
      check_same_objects(src, q, got);
      CHECK(got.pack_bytes == pack.size());
      CHECK(last.received_bytes == pack.size());
      CHECK(last.received_objects == got.entries);
      CHECK(last.total_objects == got.entries);
      CHECK(last.resolved_deltas == last.total_deltas);
      CHECK((last.total_deltas > 0) == kind.deltas);
    }
  }
}

TEST_CASE("IncomingPack: deltas rebuild right with no cache of bases", "[pack_indexer]") {
  SourceRepo src;
  for (const char* options : {"--delta-base-offset --window=50 --depth=10", "--window=50 --depth=10"}) {
    Quarantine q;
    git::PackLimits limits;
    limits.delta_cache_bytes = 0;  // every base is rebuilt down its chain when it is needed
    git::IndexedPack got = index_in_pieces(src.pack(options), q.pack_dir, 0, limits);
    check_same_objects(src, q, got);
  }
}

TEST_CASE("IncomingPack: a repository repacked by git, read from a file and a stream", "[pack_indexer]") {
  SourceRepo src;
  must(src.git + "repack -q -adf --depth=10 --window=50");
  std::string pack_path;
  for (const auto& f : std::filesystem::directory_iterator(src.dir + "/.git/objects/pack"))
    if (f.path().extension() == ".pack") pack_path = f.path().string();
  REQUIRE(!pack_path.empty());
  CHECK(longest_chain(pack_path) > 1);

  SECTION("from a file descriptor") {
    Quarantine q;
    int fd = ::open(pack_path.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    git::IndexedPack got = git::index_untrusted_pack(fd, q.pack_dir);
    ::close(fd);
    check_same_objects(src, q, got);
  }
  SECTION("from a std::istream") {
    Quarantine q;
    std::ifstream in(pack_path, std::ios::binary);
    git::IndexedPack got = git::index_untrusted_pack(in, q.pack_dir);
    check_same_objects(src, q, got);
  }
  SECTION("a delta chain deeper than the limit is refused, and nothing is left") {
    Quarantine q;
    std::set<std::string> before = files_in(q.pack_dir);
    git::PackLimits limits;
    limits.max_delta_depth = 1;
    std::ifstream in(pack_path, std::ios::binary);
    try {
      git::index_untrusted_pack(in, q.pack_dir, limits);
      FAIL("a chain deeper than 1 was accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kRefused);
      CHECK_THAT(e.what(), Catch::Matches("pack entry at offset [0-9]+ is a delta 2 deep \\(deltas down to a whole "
                                          "object\\); the limit is 1"));
    }
    CHECK(files_in(q.pack_dir) == before);
  }
}

TEST_CASE("IncomingPack: hand-made packs that git accepts are accepted", "[pack_indexer]") {
  std::string base = "hello, world\n";
  std::string target = "hello, brave new world\n";
  std::string delta = delta_header(base.size(), target.size()) + delta_copy(0, 7) + delta_insert("brave new ") +
                      delta_copy(7, 6);

  SECTION("a REF_DELTA whose base comes later in the pack, and one on top of it") {
    std::string second = target + "!";
    std::string delta2 = delta_header(target.size(), second.size()) + delta_copy(0, target.size()) + delta_insert("!");
    std::string entries = ref_entry(raw_id("blob", target), delta2) +
                          ref_entry(raw_id("blob", base), delta) + whole_entry(3, base);
    Quarantine q;
    git::IndexedPack got = index_in_pieces(pack_of(3, entries), q.pack_dir, 3);
    REQUIRE(got.objects.size() == 3);
    std::set<std::string> ids;
    for (const auto& o : got.objects) ids.insert(std::string(reinterpret_cast<const char*>(o.id.id), 20));
    CHECK(ids == std::set<std::string>{raw_id("blob", base), raw_id("blob", target), raw_id("blob", second)});
    CHECK(got.inflated_bytes == base.size() + target.size() + second.size());
    CHECK(sh("git verify-pack " + quote(q.pack_dir + "/" + got.name + ".idx")).rc == 0);
    CHECK(must(q.git() + "cat-file -p " + git::oid_str(git::object_id(GIT_OBJECT_BLOB, second))) == second);
  }
  SECTION("the same object twice is written once; an empty pack writes nothing") {
    std::string entries = whole_entry(3, base) + whole_entry(3, base);
    Quarantine q;
    git::IndexedPack got = index_in_pieces(pack_of(2, entries), q.pack_dir, 0);
    CHECK(got.entries == 2);
    CHECK(got.objects.size() == 1);
    Quarantine empty;
    git::IndexedPack none = index_in_pieces(pack_of(0, ""), empty.pack_dir, 0);
    CHECK(none.name.empty());
    CHECK(none.objects.empty());
    CHECK(files_in(empty.pack_dir).empty());
  }
  SECTION("version 3 and a 0-byte blob") {
    Quarantine q;
    git::IndexedPack got = index_in_pieces(pack_of(1, whole_entry(3, "")), q.pack_dir, 1);
    REQUIRE(got.objects.size() == 1);
    CHECK(git::oid_str(got.objects[0].id) == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
    Quarantine v3;
    CHECK(index_in_pieces(pack_of(1, whole_entry(3, base), 3), v3.pack_dir, 0).objects.size() == 1);
  }
  SECTION("an abandoned pack leaves nothing behind") {
    Quarantine q;
    {
      git::IncomingPack in(q.pack_dir);
      std::string pack = pack_of(1, whole_entry(3, base));
      in.append(std::string_view(pack).substr(0, 20));
      CHECK(!files_in(q.pack_dir).empty());  // the received bytes, kept in a temporary file
    }
    CHECK(files_in(q.pack_dir).empty());
  }
  SECTION("a destination folder that does not exist is an I/O error") {
    TempDir t;
    try {
      git::IncomingPack in(t.path + "/missing");
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kIO);
      CHECK_THAT(e.what(), Catch::Contains(t.path + "/missing: cannot create a file for the incoming pack"));
    }
    CHECK(!std::filesystem::exists(t.path + "/missing"));
  }
}

}  // namespace
}  // namespace kistore
