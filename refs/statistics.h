// Verdicts between two runs (`kistore compare`): faster, slower, same or
// ambiguous, from the strongest statistics both runs carry. docs/statistics.md
// is the contract: which fields of a run carry what, each method, the
// decision rule, and what hostile values give.
//
//   raw samples on both sides      -> Mann-Whitney U on the logs of the values,
//                                     Hodges-Lehmann shift and its interval
//   mean, stdev and count on both  -> Welch's t-test
//   median and a spread on both    -> ratio of medians, overlap of the spreads
//   less                           -> the ratio of primary values, "ambiguous"
//
// A run's statistics are read on the scale its group is ranked on (refs/rank.h),
// so that ns and ms, or MiB and MB, compare. Nothing here throws on bad
// values: a field that cannot be used is set aside with a note naming its
// JSON pointer, and the verdict falls back to weaker evidence or to
// "ambiguous", never to a guess.
//
// Distributions come from Boost.Math. Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "objects/json.h"
#include "refs/rank.h"

namespace kistore {

enum class ComparisonVerdict { kFaster, kSlower, kSame, kAmbiguous };
// "faster", "slower", "same", "ambiguous".
std::string_view verdict_name(ComparisonVerdict v);

// The statistics of one run's primary measurement, on a group's scale. Each
// optional is present only when every field it needs holds a usable value.
struct RunStatistics {
  std::optional<double> point;  // the primary value
  // Raw samples (spec.timing.samplesNs), at least 2.
  std::vector<double> samples;
  struct Moments {
    double mean = 0, stdev = 0, count = 0;
  };
  std::optional<Moments> moments;
  struct Quantiles {
    double median = 0, low = 0, high = 0;
    std::string low_name, high_name;  // "p20"/"p80", "p25"/"p75"
  };
  std::optional<Quantiles> quantiles;
  // Fields set aside, each "<JSON pointer>: expected …, found …".
  std::vector<std::string> notes;

  // "samples", "mean, stdev, count", "median, p20, p80", "value only", "none":
  // the strongest evidence present, for display.
  std::string strongest() const;
  // "samples", "moments", "quantiles", "point" or "none".
  std::string_view strongest_kind() const;
};

// Reads a run's statistics (docs/statistics.md, "Which fields") on `scale`.
// Samples imply moments and quantiles (p20/p80, linear interpolation).
RunStatistics run_statistics(const Json& run_spec, const RankScale& scale);

// The statistics of raw values (at least 2, each positive and finite): the
// samples, and the moments and quantiles they imply, as run_statistics gives
// them for spec.timing.samplesNs. For a series' points, or a segment of it.
RunStatistics sample_statistics(std::vector<double> values);

struct VerdictOptions {
  double threshold = 0.05;  // a relative difference under this is "same"
  double alpha = 0.01;      // p below this is significant; intervals are 1 - alpha
};

struct VerdictResult {
  ComparisonVerdict verdict = ComparisonVerdict::kAmbiguous;
  // "mann-whitney", "welch", "quantiles", or "none" (no common evidence).
  std::string method;
  std::optional<double> ratio;  // B / A
  std::optional<std::pair<double, double>> interval;
  std::optional<double> p;
  std::string reason;  // one sentence on what decided it
};

// The verdict on b against a ("faster": b takes less). Never throws.
VerdictResult decide(const RunStatistics& a, const RunStatistics& b, const VerdictOptions& options);

// The verdict on one new `value` against `history`, the values before it in
// a series (at least 2, each positive and finite): method "prediction". On
// the logarithms, the history's mean m and standard deviation s (n - 1) give
// the 1 - alpha prediction interval of one more value, m +- q s sqrt(1 + 1/n),
// q Student's t quantile with n - 1 degrees of freedom; p is the two-sided
// p of t = (log value - m) / (s sqrt(1 + 1/n)). The ratio is value / exp(m)
// (over the history's geometric mean); its interval the ratios to the
// interval's ends. A history of identical figures (s = 0) gives an interval
// of width 0. The decision rule is decide()'s. Never throws.
VerdictResult decide_next(const std::vector<double>& history, double value, const VerdictOptions& options);

// The tests below each method. Exposed for unit tests against reference values.

struct RankTest {
  double u = 0;      // Mann-Whitney U of `a` (pairs with a > b, ties 1/2)
  double p = 1;      // two-sided
  bool exact = false;
  double shift = 0;  // Hodges-Lehmann: median of b_j - a_i
  double low = 0, high = 0;  // its 1 - alpha interval (normal approximation of the ranks)
  bool bounded = false;      // false when the samples are too few for such an interval
};
// Two-sided p exact (no ties, both sizes <= 20) else normal with tie and
// continuity correction, as scipy.stats.mannwhitneyu's "exact" and
// "asymptotic" methods. Needs both sizes >= 1.
RankTest mann_whitney(const std::vector<double>& a, const std::vector<double>& b, double alpha);

struct WelchTest {
  double t = 0, df = 0, p = 1;
  double low = 0, high = 0;  // 1 - alpha interval of mean_b - mean_a
};
// Welch's unequal-variance t-test; nullopt when it is undefined (a count
// under 2, both standard deviations 0, or figures that overflow).
std::optional<WelchTest> welch(double mean_a, double sd_a, double n_a, double mean_b, double sd_b, double n_b,
                               double alpha);

// The q-quantile of sorted values, linear interpolation (numpy's default).
double quantile_sorted(const std::vector<double>& sorted, double q);

}  // namespace kistore
