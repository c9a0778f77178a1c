// The trust list (store/history/trust.h) on a broken disk, through the file
// gate's seam (tests/store/faulty_files.h): saving it with every create,
// write, fsync, close, rename and mkdir failed in turn leaves the store byte
// for byte as it was (the old list, or none), and says which file failed.
#include "store/history/trust.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "objects/error.h"
#include "store/core/store.h"
#include "tests/store/faulty_files.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

const std::string kList = "alice@example.org ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE1vY2tLZXlNb2NrS2V5TW9ja0tleU1vY2tLZXk=\n";

struct StoreScenario : Scenario {
  TempDir tmp;
  std::string dir = tmp.path + "/store";
  std::optional<Store> store;
  StoreScenario() { store.emplace(Store::init(dir)); }
  std::string root() const override { return dir; }
};

TEST_CASE("trust list under faults: the first list of a store", "[trust][faults]") {
  struct S : StoreScenario {
    void run() override { save_trust_text(*store, kList); }
  };
  CHECK(sweep_faults([] { return std::make_unique<S>(); }, {.last_sync_may_keep_result = true}) > 5);
}

TEST_CASE("trust list under faults: a list replaced", "[trust][faults]") {
  struct S : StoreScenario {
    S() { save_trust_text(*store, "old@example.org " + kList.substr(kList.find(' ') + 1)); }
    void run() override { save_trust_text(*store, kList + kList); }
  };
  CHECK(sweep_faults([] { return std::make_unique<S>(); }, {.last_sync_may_keep_result = true}) > 5);
}

}  // namespace
}  // namespace kistore
