// Change points of a series (`kistore series`): where the level of a run's
// primary value steps, across revisions of one implementation observed over
// time. docs/statistics.md, "Series", is the contract.
//
// PELT (Killick, Fearnhead and Eckley 2012, "Optimal detection of
// changepoints with a linear computational cost") with the normal
// change-in-mean cost on the logarithms of the values, so that a step is a
// ratio; the penalty is 2 ln(n) sigma^2 (the Schwarz criterion), sigma the
// noise estimated from the median absolute difference of successive points.
// Steps under the threshold are not change points: they are merged away;
// so are steps that do not stand out of that noise at alpha, Bonferroni
// over the n - 1 places a step could take (a two-sided normal test of the
// segments' mean logarithms), so that pure noise rarely shows a step.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace kistore {

// The indices where a new segment begins (each in 1..n-1, increasing) that
// minimise sum of segment costs + penalty * (number of segments), the cost of
// a segment being its sum of squared deviations from its mean.
std::vector<std::size_t> pelt_mean_changes(const std::vector<double>& y, double penalty);

// The segment cost PELT minimises, for y[begin, end).
double segment_cost(const std::vector<double>& y, std::size_t begin, std::size_t end);

// The noise of a series: median |y[i] - y[i-1]| / (0.6745 sqrt 2), robust to
// the steps themselves; 0 for fewer than 2 points.
double difference_noise(const std::vector<double>& y);

struct SeriesStep {
  std::size_t index = 0;         // the first point after the step
  double before = 0, after = 0;  // medians of the segments on either side
};
// The steps of `values` (positive, finite) at least `threshold` apart
// (relative) and significant at `alpha`, found as the header says.
std::vector<SeriesStep> series_steps(const std::vector<double>& values, double threshold, double alpha = 0.01);

// Seconds since 1970-01-01T00:00:00Z of an RFC 3339 date-time
// ("2025-11-11T06:22:57.000Z", "2025-11-11T08:22:57+02:00"): the order of a
// series, where offsets and fractions make the strings sort wrongly. nullopt
// for anything else.
std::optional<double> rfc3339_seconds(std::string_view text);

}  // namespace kistore
