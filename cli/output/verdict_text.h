// How commands show a verdict (refs/statistics.h) in a line or a JSON
// document: `series` under a change point, `check` beside each run it
// reports, `compare` in its document. One shape for all of them.
//
// Pure functions of their arguments; never fail (allocation aside).
#pragma once

#include <string>

#include "objects/json.h"
#include "refs/statistics.h"

namespace kistore::cli {

// "slower (quantiles)", "faster (mann-whitney, p = 0.00016)": the verdict
// and the method that gave it, with p where the method has one (3
// significant digits; --json gives it exact).
std::string verdict_brief(const VerdictResult& v);

// {"verdict","method","ratio","interval":[lo,hi],"p","reason","threshold","alpha"}:
// null where a figure is absent or not finite (an unbounded interval end).
Json verdict_json(const VerdictResult& v, const VerdictOptions& o);

// A JSON number, or null where the figure is not finite.
Json number_or_null(double v);

// A ratio as the reports print it: "1.229" (3 decimals).
std::string ratio_text(double ratio);

// The options of a verdict from --threshold and --alpha, checked:
// Error(kInvalidInput) "--threshold: expected a number greater than 0 and
// less than 1, found …" (alpha: less than 0.5).
VerdictOptions verdict_options(double threshold, double alpha);

}  // namespace kistore::cli
