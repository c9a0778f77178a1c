// The quarantine (store/git/quarantine_odb.h) on a broken disk, through the file
// gate's seam (tests/store/faulty_files.h): making a quarantine, writing a
// pack into it and migrating that into the store, with every create, write,
// fsync, close, rename and mkdir failed in turn. Each failure is Error(kIO)
// naming the path, and the store's git directory is byte for byte as it was:
// no quarantine folder, no pack, no pack without its index.
#include "store/git/quarantine_odb.h"

#include <catch2/catch.hpp>
#include <string>

#include "objects/error.h"
#include "store/git/git.h"
#include "store/git/objwrite.h"
#include "tests/store/faulty_files.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

struct Received : Scenario {
  TempDir tmp;
  std::string dir = tmp.path + "/store.git";
  git_repository* repo = nullptr;
  Received() {
    git::ensure_init();
    must("git init -q --bare " + quote(dir));
    REQUIRE(git_repository_open(&repo, dir.c_str()) == 0);
  }
  ~Received() override { git_repository_free(repo); }
  std::string root() const override { return dir; }
  void run() override {
    git::Quarantine q(repo);
    {
      git::PackWriter w(q.pack_dir());
      w.write(GIT_OBJECT_BLOB, "{\"received\":1}\n", 0);
      w.write(GIT_OBJECT_BLOB, std::string(300000, 'r'), 0);
      w.finish();
    }
    q.migrate();
  }
};

TEST_CASE("quarantine under faults: made, filled and migrated", "[quarantine][faults]") {
  // The last fsync is the store's objects/pack, after the pack and index are
  // moved in: when it alone fails they stay (quarantine.h, migrate).
  CHECK(sweep_faults([] { return std::make_unique<Received>(); }, {.last_sync_may_keep_result = true}) > 10);
}

}  // namespace
}  // namespace kistore
