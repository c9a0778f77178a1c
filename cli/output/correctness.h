// What a run's harness said of its output (docs/importers.md, "Status and
// correctness"): spec.status, and spec.correctness {checked, by, passed}.
// The one reading behind `rank`'s correctness lines, the site's correctness
// column and `export`'s columns, so that they cannot tell it two ways.
//
// Pure functions of the documents: safe from any thread; never fail.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "objects/json.h"
#include "store/query/group_view.h"

namespace kistore::cli {

struct RunCorrectness {
  std::string status;    // spec.status; "" when it is not a string
  bool said = false;     // spec.correctness.by is a string: the run says whether and how
  bool checked = false;  // spec.correctness.checked is true
  bool passed = false;   // spec.correctness.passed is true
  std::string by;        // spec.correctness.by, whole
  // "passed" or "failed" (checked), "not checked", or "" when the run does not say.
  std::string_view verdict() const;
};
RunCorrectness run_correctness(const Json& run_spec);

// The runs of a group by way of checking (correctness.by, in byte order):
// whether that way checks (as its first run says), how many runs, how many
// passed; and how many runs do not say.
struct CorrectnessWay {
  std::string by;
  bool checked = false;
  std::size_t runs = 0, passed = 0;
};
struct GroupCorrectness {
  std::vector<CorrectnessWay> ways;
  std::size_t silent = 0;
};
GroupCorrectness group_correctness(const GroupView& view);
// "checked, 3 runs (2 passed)" or "not checked, 1 run": a way without its "by".
std::string correctness_way_text(const CorrectnessWay& way);

}  // namespace kistore::cli
