// kistore's object writers (store/git/objwrite.h) on a broken disk, through
// the file gate's seam (tests/store/faulty_files.h): a loose object and a
// pack, with every create, write, fsync, close, rename and mkdir they make
// failed in turn. Each failure is Error(kIO) naming the path, and leaves the
// repository byte for byte as it was (no temporary file, no half-written
// object or pack, no pack without its index, no fan-out folder made for
// nothing); a short write changes nothing in the result.
#include "store/git/objwrite.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "objects/error.h"
#include "store/git/git.h"
#include "tests/store/faulty_files.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;
namespace fs = std::filesystem;

std::string bytes_of(std::size_t n, char seed) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + i * 7 % 251);
  return s;
}

// A bare repository made by stock git, holding one object already.
struct Repository : Scenario {
  TempDir tmp;
  std::string dir = tmp.path + "/r.git";
  git_repository* repo = nullptr;
  Repository() {
    git::ensure_init();
    must("git init -q --bare " + quote(dir));
    write_file(tmp.path + "/blob", "already here\n");
    must("git --git-dir=" + quote(dir) + " hash-object -w " + quote(tmp.path + "/blob"));
    REQUIRE(git_repository_open(&repo, dir.c_str()) == 0);
  }
  ~Repository() override { git_repository_free(repo); }
  std::string root() const override { return dir; }
};

TEST_CASE("LooseWriter under faults: a small deflated object", "[objwrite][faults]") {
  struct S : Repository {
    void run() override {
      git::LooseWriter w(repo);
      w.write(GIT_OBJECT_BLOB, "{\"a\":1}\n", 6);
    }
  };
  CHECK(sweep_faults([] { return std::make_unique<S>(); }) > 5);
}

TEST_CASE("LooseWriter under faults: a big stored object, written in pieces", "[objwrite][faults]") {
  struct S : Repository {
    void run() override {
      git::LooseWriter w(repo);
      w.write(GIT_OBJECT_BLOB, bytes_of(2500000, 'z'), 0);  // over 1 MiB: more than one write
    }
  };
  CHECK(sweep_faults([] { return std::make_unique<S>(); }) > 8);
}

TEST_CASE("LooseWriter: a failed sync names the folder; the objects stay whole", "[objwrite][faults]") {
  struct S : Repository {
    void run() override {}
  } r;
  git::LooseWriter w(r.repo);
  git_oid id = w.write(GIT_OBJECT_BLOB, "kept\n", 6);
  FaultyFileSystem faulty(Call::kSync, 1, Fault::kIOError);
  ScopedFileSystem use(faulty);
  try {
    w.sync();
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kIO);
    CHECK_THAT(e.what(), Catch::StartsWith(r.dir + "/objects/"));
    CHECK_THAT(e.what(), Catch::EndsWith(": cannot sync: Input/output error"));
  }
  CHECK(trim(must("git --git-dir=" + quote(r.dir) + " cat-file -p " + git::oid_str(id))) == "kept");
}

TEST_CASE("PackWriter under faults: a pack and its index", "[objwrite][pack][faults]") {
  struct S : Repository {
    void run() override {
      git::PackWriter w(dir + "/objects/pack");
      w.write(GIT_OBJECT_BLOB, "{\"a\":1}\n", 0);
      w.write(GIT_OBJECT_BLOB, bytes_of(1500000, 'p'), 0);  // the buffer is written out part way
      w.write(GIT_OBJECT_BLOB, std::string(5000, 'x'), 6);
      if (w.finish().empty()) throw std::logic_error("no pack was written");
    }
  };
  // The last fsync is objects/pack's, after both renames: when it alone
  // fails, the complete pack and index stay (objwrite.h, finish).
  CHECK(sweep_faults([] { return std::make_unique<S>(); }, {.last_sync_may_keep_result = true}) > 10);
}

TEST_CASE("PackWriter under faults: objects/pack made for the pack goes with it", "[objwrite][pack][faults]") {
  struct S : Repository {
    S() { fs::remove_all(dir + "/objects/pack"); }
    void run() override {
      git::PackWriter w(dir + "/objects/pack");
      w.write(GIT_OBJECT_BLOB, "one\n", 0);
      w.finish();
    }
  };
  CHECK(sweep_faults([] { return std::make_unique<S>(); }, {.last_sync_may_keep_result = true}) > 5);
}

}  // namespace
}  // namespace kistore
