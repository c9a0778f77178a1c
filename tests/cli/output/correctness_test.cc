// cli::run_correctness: what a run's harness said of its output, as rank,
// the site and export read it (cli/output/correctness.h), table-driven.
#include <catch2/catch.hpp>

#include <string>

#include "cli/output/correctness.h"
#include "objects/json.h"

using kistore::parse_json;
using kistore::cli::correctness_way_text;
using kistore::cli::CorrectnessWay;
using kistore::cli::run_correctness;

namespace {

struct Case {
  const char* name;
  const char* spec;
  const char* status;
  const char* verdict;
  const char* by;
};

}  // namespace

TEST_CASE("run_correctness reads spec.status and spec.correctness", "[cli][correctness]") {
  const Case cases[] = {
      {"checked and passed", R"({"status":"passed","correctness":{"checked":true,"by":"K","passed":true}})", "passed",
       "passed", "K"},
      {"checked, failed", R"({"status":"incorrect","correctness":{"checked":true,"by":"K","passed":false}})",
       "incorrect", "failed", "K"},
      {"passed missing: failed", R"({"status":"passed","correctness":{"checked":true,"by":"K"}})", "passed", "failed",
       "K"},
      {"not checked", R"({"status":"passed","correctness":{"checked":false,"by":"nvbench"}})", "passed",
       "not checked", "nvbench"},
      {"checked not a bool", R"({"correctness":{"checked":"yes","by":"K","passed":true}})", "", "not checked", "K"},
      {"no by: not said", R"({"status":"passed","correctness":{"checked":true,"passed":true}})", "passed", "", ""},
      {"by not a string", R"({"correctness":{"checked":true,"by":1,"passed":true}})", "", "", ""},
      {"correctness not an object", R"({"status":"passed","correctness":"yes"})", "passed", "", ""},
      {"nothing", R"({})", "", "", ""},
      {"status not a string", R"({"status":1})", "", "", ""},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const auto got = run_correctness(parse_json(c.spec, "spec"));
    CHECK(got.status == c.status);
    CHECK(std::string(got.verdict()) == c.verdict);
    CHECK(got.by == c.by);
  }
}

TEST_CASE("correctness_way_text words a way as rank prints it", "[cli][correctness]") {
  CHECK(correctness_way_text(CorrectnessWay{"K", true, 3, 2}) == "checked, 3 runs (2 passed)");
  CHECK(correctness_way_text(CorrectnessWay{"K", true, 1, 0}) == "checked, 1 run (0 passed)");
  CHECK(correctness_way_text(CorrectnessWay{"n", false, 1, 0}) == "not checked, 1 run");
  CHECK(correctness_way_text(CorrectnessWay{"n", false, 2, 0}) == "not checked, 2 runs");
}
