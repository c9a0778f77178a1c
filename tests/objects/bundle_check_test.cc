// Bundle files checked without a store (objects/bundle_check.h), on the seed
// fixture as KernelIndex published it and on copies edited here.
#include "objects/bundle_check.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "objects/digest.h"
#include "objects/error.h"
#include "objects/json.h"

namespace kistore {
namespace {

const std::string kFixture = KISTORE_SOURCE_DIR "/tests/data/refs/seed-run-tiled-geglu-backward.json";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

Json fixture() { return parse_json(read_text(kFixture), "fixture"); }

std::string digest_without_metadata(Json doc) {
  doc.erase("metadata");
  return Digest::of(canonical(doc)).str();
}

TEST_CASE("bundle check: the published fixture is consistent; what it does not carry is a warning",
          "[bundle_check]") {
  BundleFileCheck check;
  check_bundle_text(read_text(kFixture), "seed.json", check);
  CHECK(check.ok());
  CHECK(check.documents == 3);
  REQUIRE(check.warnings.size() == 2);
  CHECK(check.warnings[0].kind == "external-reference");
  CHECK(check.warnings[0].path == "seed.json: /run/spec/workloadDigest");
  CHECK(check.warnings[1].path == "seed.json: /run/spec/implementationDigest");
  std::string workload = fixture().find("run")->find("spec")->find("workloadDigest")->as_string();
  CHECK(check.warnings[0].detail == "the bundle does not carry the run's workload " + workload);
}

TEST_CASE("bundle check: a carried document that hashes elsewhere is a problem naming both digests",
          "[bundle_check][errors]") {
  Json bundle = fixture();
  Json& protocol = *bundle.find("protocol");
  protocol.find("spec")->find("harness")->set("name", "edited");
  const std::string recorded = bundle.find("run")->find("spec")->find("protocolDigest")->as_string();
  BundleFileCheck check;
  check_bundle_text(canonical(bundle), "edited.json", check);
  CHECK_FALSE(check.ok());
  REQUIRE(check.problems.size() == 1);
  CHECK(check.problems[0].kind == "digest-mismatch");
  CHECK(check.problems[0].path == "edited.json: /run/spec/protocolDigest");
  CHECK(check.problems[0].detail ==
        "bundle's protocol hashes to " + digest_without_metadata(protocol) + ", run says " + recorded);
  CHECK(check.documents == 3);
}

TEST_CASE("bundle check: arrays of bundles and documents; pointers name the element", "[bundle_check]") {
  Json bundle = fixture();
  Json edited = bundle;
  edited.find("environment")->find("spec")->find("hardware")->set("product", "another GPU");
  Json list = Json::array();
  list.push_back(bundle);
  list.push_back(*bundle.find("protocol"));  // a single document: validated and counted
  list.push_back(edited);
  BundleFileCheck check;
  check_bundle_text(canonical(list), "list.json", check);
  CHECK(check.documents == 3 + 1 + 3);
  REQUIRE(check.problems.size() == 1);
  CHECK(check.problems[0].path == "list.json: /2/run/spec/environmentDigest");
  CHECK(check.warnings.size() == 4);
}

TEST_CASE("bundle check: JSON Lines, as add reads them, each line named file:line", "[bundle_check]") {
  Json bundle = fixture();
  Json edited = bundle;
  edited.find("environment")->find("spec")->find("hardware")->set("product", "another GPU");
  const std::string text = canonical(bundle) + "\n\n" + canonical(edited) + "\n";
  for (InputFormat format : {InputFormat::kJsonLines, InputFormat::kAuto}) {
    BundleFileCheck check;
    check_bundle_text(text, "runs.jsonl", check, format);
    CHECK(check.documents == 3 + 3);
    REQUIRE(check.problems.size() == 1);
    CHECK(check.problems[0].path == "runs.jsonl:3: /run/spec/environmentDigest");  // the blank line counts
  }
  // One JSON text (the default) is what it was: two texts are not JSON.
  BundleFileCheck one;
  CHECK_THROWS_AS(check_bundle_text(text, "runs.json", one), Error);
  // A bad line is an input error naming its line.
  BundleFileCheck bad;
  try {
    check_bundle_text(canonical(bundle) + "\n{\"run\": \n", "runs.jsonl", bad, InputFormat::kJsonLines);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidInput);
    CHECK_THAT(e.what(), Catch::Matchers::StartsWith("runs.jsonl:2:"));
  }
}

TEST_CASE("bundle check: input that is not JSON or not a document is an input error", "[bundle_check][errors]") {
  struct Case {
    const char* name;
    std::string text;
    std::string message;  // what the error says, in part
  };
  Json no_kind = fixture();
  no_kind.find("protocol")->erase("kind");
  Json bad_run = fixture();
  bad_run.find("run")->find("spec")->erase("status");
  const std::vector<Case> cases = {
      {"not JSON", "{\"run\": ", "bad.json:1:"},
      {"a document of no known kind", "{\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"kind\":\"Nope\",\"spec\":{}}",
       "bad.json"},
      {"a carried document without kind", canonical(no_kind), "bad.json: /protocol"},
      {"a run that is not valid", canonical(bad_run), "bad.json: /run"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    BundleFileCheck check;
    try {
      check_bundle_text(c.text, "bad.json", check);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInvalidInput);
      CHECK_THAT(e.what(), Catch::Matchers::StartsWith(c.message));
    }
  }
}

}  // namespace
}  // namespace kistore
