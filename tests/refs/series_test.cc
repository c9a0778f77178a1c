#include "refs/series.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

namespace kistore {
namespace {

// Optimal partitioning by exhaustive search over every set of cuts (2^(n-1)
// of them): what PELT must find, computed without PELT's recursion or pruning.
std::vector<std::size_t> brute_force(const std::vector<double>& y, double penalty) {
  const std::size_t n = y.size();
  double best = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> best_cuts;
  for (unsigned mask = 0; mask < (1u << (n - 1)); ++mask) {
    std::vector<std::size_t> cuts;
    for (std::size_t i = 1; i < n; ++i)
      if (mask & (1u << (i - 1))) cuts.push_back(i);
    double total = 0;
    std::size_t from = 0;
    for (std::size_t c : cuts) total += segment_cost(y, from, c) + penalty, from = c;
    total += segment_cost(y, from, n);
    if (total < best - 1e-12) best = total, best_cuts = cuts;
  }
  return best_cuts;
}

TEST_CASE("PELT finds the optimal partition", "[series]") {
  // A fixed pseudo-random series with two steps (a linear congruential
  // generator, so the test needs no library's random numbers).
  unsigned state = 12345;
  auto noise = [&] {
    state = state * 1103515245u + 12345u;
    return (static_cast<double>((state >> 16) & 0x7fff) / 32767.0 - 0.5) * 0.2;
  };
  std::vector<double> y;
  for (int i = 0; i < 14; ++i) y.push_back((i < 5 ? 0.0 : i < 10 ? 1.0 : 0.4) + noise());
  for (double penalty : {0.01, 0.1, 0.5, 2.0, 10.0}) {
    INFO("penalty " << penalty);
    CHECK(pelt_mean_changes(y, penalty) == brute_force(y, penalty));
  }
  CHECK(pelt_mean_changes(y, 0.5) == std::vector<std::size_t>{5, 10});
  CHECK(pelt_mean_changes({1.0}, 1.0).empty());
}

TEST_CASE("difference noise", "[series]") {
  // |differences| 1, 1, 1, 3: median 1.
  CHECK(difference_noise({0, 1, 2, 3, 6}) == Approx(1 / (0.6745 * std::sqrt(2.0))));
  CHECK(difference_noise({5}) == 0);
}

TEST_CASE("series steps: ratios, the threshold, no noise", "[series]") {
  std::vector<double> v = {100, 101, 99, 100, 100, 130, 131, 129, 130, 130};
  auto steps = series_steps(v, 0.05);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].index == 5);
  CHECK(steps[0].before == 100);
  CHECK(steps[0].after == 130);
  // A 2 % step is under a 5 % threshold: no change point.
  CHECK(series_steps({100, 100, 100, 102, 102, 102}, 0.05).empty());
  // Identical figures on each side (no noise at all): the step is still found.
  auto flat = series_steps({10, 10, 10, 5, 5, 5}, 0.05);
  REQUIRE(flat.size() == 1);
  CHECK(flat[0].index == 3);
  CHECK(series_steps({10}, 0.05).empty());
  CHECK(series_steps({}, 0.05).empty());
}

TEST_CASE("RFC 3339 date-times as seconds", "[series]") {
  // `date -u -d 2025-11-11T06:22:57Z +%s` gives 1762842177.
  CHECK(rfc3339_seconds("2025-11-11T06:22:57.000Z") == 1762842177.0);
  CHECK(rfc3339_seconds("2025-11-11T08:22:57+02:00") == 1762842177.0);
  CHECK(rfc3339_seconds("2025-11-11T06:22:57.5Z") == 1762842177.5);
  CHECK(rfc3339_seconds("1970-01-01T00:00:00Z") == 0.0);
  CHECK(rfc3339_seconds("2024-02-29T00:00:00Z") == 1709164800.0);  // date -u -d 2024-02-29 +%s
  for (const char* bad : {"", "2025-11-11", "2025-11-11T06:22:57", "2025-13-01T00:00:00Z", "2025-11-11T06:22:57.Z",
                          "2025-11-11T06:22:57+0200", "2025-11-11T06:22:57Zx"}) {
    INFO(bad);
    CHECK_FALSE(rfc3339_seconds(bad));
  }
}

}  // namespace
}  // namespace kistore
