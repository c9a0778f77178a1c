// Two runs side by side (`kistore compare`, and the site's "Compare with #1"):
// whether they are comparable at all, and if their numbers say anything.
//
// Runs are comparable only within one comparison group (SPEC §1): the same
// workload, timed pass (protocol) and GPU (environment). compare_runs says
// which of the three differ when they are not, and still gives the ratio of
// their primary values when those convert to one scale (refs/rank.h's rules:
// time units convert, memory units convert, another unit only to itself), so
// that a reader sees the number and the reason it proves little.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "objects/json.h"
#include "refs/index.h"
#include "refs/statistics.h"

namespace kistore {

// A run's p20-p80 spread around its primary value, in the primary's unit.
struct Spread {
  double low = 0;   // p20
  double high = 0;  // p80
};
// The p20 and p80 measurements of spec.measurements in `unit` (as
// cli's spread_text reads them); nullopt unless both are there.
std::optional<Spread> primary_spread(const Json& run_spec, const std::string& unit);

struct RunComparison {
  bool same_group = false;
  // For runs of different groups, what differs, each one of "workload",
  // "protocol", "environment" (in that order).
  std::vector<std::string> differs;
  std::optional<Measurement> primary_a, primary_b;
  // primary_b / primary_a on a common scale; nullopt when either has no
  // positive primary value or their units do not convert (`no_ratio` says why).
  std::optional<double> ratio;
  std::string no_ratio;
  std::optional<Spread> spread_a, spread_b;
  // Whether [p20, p80] of a and of b (on the common scale) overlap; nullopt
  // when either has no spread or there is no common scale.
  std::optional<bool> spreads_overlap;
  // Each run's statistics on the common scale, and the verdict on b against
  // a (refs/statistics.h). Runs of different groups are never compared:
  // their verdict is "ambiguous", method "none", with the reason.
  RunStatistics statistics_a, statistics_b;
  VerdictResult verdict;
};

// Compares run a with run b (their specs). Never throws.
RunComparison compare_runs(const Json& a_spec, const Json& b_spec, const VerdictOptions& options = {});

}  // namespace kistore
