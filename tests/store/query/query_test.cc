// The index queries that moved out of the command line (store/query/query.h):
// which group a REF names, the runs at a level, the paths of a run's story.
#include "store/query/query.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "objects/error.h"
#include "objects/json.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "store/write/add.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

const char kFixture[] = KISTORE_SOURCE_DIR "/tests/data/refs/seed-run-tiled-geglu-backward.json";
const char kSeedRun[] = "sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0";
const char kSeedProtocol[] = "sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8";

struct SeedStore {
  TempDir tmp;
  Store store = (setenv("KISTORE_AUTHOR", "Test <t@example.com>", 1), Store::init(tmp.path + "/store"));
  Bundle seed = Bundle::from_json(parse_json(read_file(kFixture), "seed.json"),
                                  Location{"seed.json", ""});
  SeedStore() {
    const std::string where = "seed.json";
    std::vector<AddedDocument> docs;
    for (const Document& d : seed.documents()) docs.push_back(AddedDocument{&d, where, ""});
    add_documents(store, docs, AddOptions{});
  }
  Digest key() const { return comparison_key(seed.run().spec()); }
};

TEST_CASE("resolve_group_ref: a group key or a run, by digest or prefix", "[store][query]") {
  SeedStore s;
  Snapshot snap = s.store.snapshot();
  const Digest key = s.key(), run = *Digest::parse(kSeedRun);
  for (const std::string& ref : {key.str(), key.hex(), key.hex().substr(0, 8), "sha256:" + key.hex().substr(0, 10)}) {
    INFO(ref);
    GroupRef g = resolve_group_ref(snap, ref);
    CHECK(g.key == key);
    CHECK_FALSE(g.run.has_value());
  }
  for (const std::string& ref : {run.str(), run.hex().substr(0, 8)}) {
    INFO(ref);
    GroupRef g = resolve_group_ref(snap, ref);
    CHECK(g.key == key);
    CHECK(g.run == run);
  }
}

TEST_CASE("digests_below: a prefix reads only the folders it names, and matches exactly", "[store][query]") {
  SeedStore s;
  Snapshot snap = s.store.snapshot();
  const std::string hex = s.key().hex();
  REQUIRE(digests_below(snap, kGroupsDir) == std::vector<Digest>{s.key()});
  for (std::size_t n : {0u, 1u, 2u, 3u, 4u, 5u, 12u, 64u}) {
    INFO(n);
    CHECK(digests_below(snap, kGroupsDir, hex.substr(0, n)) == std::vector<Digest>{s.key()});
  }
  // A prefix that differs in its first, third or fifth digit (each a folder
  // level of the fan-out) or its last matches nothing.
  for (std::size_t at : {0u, 2u, 4u, 63u}) {
    std::string other = hex;
    other[at] = other[at] == '0' ? '1' : '0';
    INFO(other);
    CHECK(digests_below(snap, kGroupsDir, other).empty());
    CHECK(digests_below(snap, kGroupsDir, other.substr(0, at + 1)).empty());
  }
}

TEST_CASE("resolve_group_ref: malformed, unknown and non-run REFs", "[store][query][errors]") {
  SeedStore s;
  Snapshot snap = s.store.snapshot();
  struct Case {
    const char* name;
    std::string ref;
    ErrorCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"too short", "334face", ErrorCode::kInvalidInput, "at least 8 hex digits"},
      {"uppercase, too short", "334FACE", ErrorCode::kInvalidInput, "at least 8 hex digits"},
      {"not hex", "xyzxyzxyz", ErrorCode::kInvalidInput, "expected a run or group digest"},
      {"matches nothing", "deadbeefdeadbeef", ErrorCode::kNotFound, "no object in the store matches"},
      {"a protocol", kSeedProtocol, ErrorCode::kInvalidInput, "expected a run or a group, found a BenchmarkProtocol"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    try {
      resolve_group_ref(snap, c.ref);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == c.code);
      CHECK_THAT(e.what(), Catch::Matchers::Contains(c.message));
    }
  }
}

TEST_CASE("resolve_group_ref and resolve take a prefix typed in capitals, as git does", "[store][query]") {
  SeedStore s;
  Snapshot snap = s.store.snapshot();
  const Digest seed = *Digest::parse(kSeedRun);
  CHECK(snap.resolve("334FACE3") == seed);
  CHECK(snap.resolve("sha256:334FaCe30A") == seed);
  GroupRef g = resolve_group_ref(snap, "334FACE30ACAEE76");
  REQUIRE(g.run);
  CHECK(*g.run == seed);
}

TEST_CASE("runs_at_level lists the runs of one level folder", "[store][query]") {
  SeedStore s;
  Snapshot snap = s.store.snapshot();
  CHECK(runs_at_level(snap, Level::kSourceNative) == std::vector<Digest>{*Digest::parse(kSeedRun)});
  CHECK(runs_at_level(snap, Level::kReported).empty());
  CHECK(runs_at_level(snap, Level::kReproduced).empty());
}

TEST_CASE("run_story_paths: the object, any level entry, attestations and reruns, in both formats", "[store][query]") {
  const Digest run = *Digest::parse(kSeedRun);
  const std::string h = run.hex(), fanned = h.substr(0, 2) + "/" + h.substr(2, 2) + "/" + h.substr(4);
  CHECK(run_story_paths(run) == std::vector<std::string>{object_path(run), "refs/levels/*/" + h,
                                                          "refs/levels/*/" + fanned, "refs/attestations/" + h + "/",
                                                          "refs/attestations/" + fanned + "/",
                                                          "refs/reruns/" + fanned + "/"});
}

}  // namespace
}  // namespace kistore
