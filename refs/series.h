// Change points of a series (`kistore series`): where the level of a run's
// primary value steps, across revisions of one implementation observed over
// time. docs/statistics.md, "Series", is the contract.
//
// Binary segmentation (Scott and Knott 1974; the hierarchical search of
// E-divisive, as Hunter/Otava run it with a t-test in place of permutations):
// on the logarithms of the values, so that a step is a ratio, split the
// series where the CUSUM statistic is largest; keep the split if Student's
// t of the two sides' mean logarithms (the noise pooled within the window,
// at least a quarter of the threshold's step) reaches the two-sided alpha
// quantile, Bonferroni-corrected over the places the split could take; go
// on in both halves. Steps whose (1 - alpha) interval lies wholly within the
// threshold are then merged away, the most surely small first.
// Deterministic: no random numbers.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace kistore {

// Where a split of y[begin, end) makes the two sides' means differ most,
// weighted by sqrt(n1 n2 / m) (the CUSUM statistic): the index of the first
// point after it, or 0 when the window holds fewer than 2 points.
std::size_t best_split(const std::vector<double>& y, std::size_t begin, std::size_t end);

// Student's t of splitting y[begin, end) at `at`, over the value it needs to
// be significant at alpha (two-sided, Bonferroni over the end - begin - 1
// places a split could take), the noise pooled within both sides and at
// least noise_floor: 1 or more is significant; 0 for a window under 3 points.
double split_significance(const std::vector<double>& y, std::size_t begin, std::size_t at, std::size_t end,
                          double noise_floor, double alpha);

// How far the (1 - alpha) interval of the step at `at` between y[begin, at)
// and y[at, end) reaches from 0: |mean after - mean before| plus Student's t
// (two-sided, end - begin - 2 degrees of freedom) times the noise pooled
// within both sides (at least noise_floor) times sqrt(1/n1 + 1/n2). Infinite
// for a window too short to say.
double step_reach(const std::vector<double>& y, std::size_t begin, std::size_t at, std::size_t end, double noise_floor,
                  double alpha);

struct SeriesStep {
  std::size_t index = 0;         // the first point after the step
  double before = 0, after = 0;  // medians of the segments on either side
};
// The steps of `values` (positive, finite) significant at `alpha` and not
// surely under `threshold` (relative), found as the header says.
std::vector<SeriesStep> series_steps(const std::vector<double>& values, double threshold, double alpha = 0.01);

// Seconds since 1970-01-01T00:00:00Z of an RFC 3339 date-time
// ("2025-11-11T06:22:57.000Z", "2025-11-11T08:22:57+02:00"): the order of a
// series, where offsets and fractions make the strings sort wrongly. nullopt
// for anything else.
std::optional<double> rfc3339_seconds(std::string_view text);

}  // namespace kistore
