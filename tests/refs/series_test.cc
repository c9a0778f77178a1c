#include "refs/series.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

namespace kistore {
namespace {

// The CUSUM split by exhaustive evaluation of Student's t at every place
// with one common noise: what best_split must find.
std::size_t brute_force_split(const std::vector<double>& y, std::size_t begin, std::size_t end) {
  double best = -1;
  std::size_t at = 0;
  for (std::size_t s = begin + 1; s < end; ++s) {
    double a = 0, b = 0;
    for (std::size_t i = begin; i < s; ++i) a += y[i];
    for (std::size_t i = s; i < end; ++i) b += y[i];
    double n1 = static_cast<double>(s - begin), n2 = static_cast<double>(end - s);
    double t = std::abs(b / n2 - a / n1) / std::sqrt(1 / n1 + 1 / n2);
    if (t > best + 1e-12) best = t, at = s;
  }
  return at;
}

TEST_CASE("binary segmentation: the split, its significance, two steps", "[series]") {
  // A fixed pseudo-random series with two steps (a linear congruential
  // generator, so the test needs no library's random numbers).
  unsigned state = 12345;
  auto noise = [&] {
    state = state * 1103515245u + 12345u;
    return (static_cast<double>((state >> 16) & 0x7fff) / 32767.0 - 0.5) * 0.2;
  };
  std::vector<double> y;
  for (int i = 0; i < 14; ++i) y.push_back((i < 5 ? 0.0 : i < 10 ? 1.0 : 0.4) + noise());
  for (auto [b, e] : {std::pair<std::size_t, std::size_t>{0, 14}, {0, 5}, {5, 14}, {3, 12}, {10, 14}}) {
    INFO("window " << b << " to " << e);
    CHECK(best_split(y, b, e) == brute_force_split(y, b, e));
  }
  CHECK(best_split(y, 0, 14) == 5);
  CHECK(best_split(y, 5, 14) == 10);
  CHECK(best_split(y, 3, 4) == 0);
  // Both steps are significant; the halves between them hold none.
  CHECK(split_significance(y, 0, 5, 14, 0, 0.01) >= 1);
  CHECK(split_significance(y, 5, 10, 14, 0, 0.01) >= 1);
  CHECK(split_significance(y, 0, best_split(y, 0, 5), 5, 0, 0.01) < 1);
  // t by hand for {0, 0, 1, 1} split at 2 with a noise floor of 0.1 (the
  // sides have none): |1 - 0| / (0.1 sqrt(1/2 + 1/2)) = 10; Student's t with 2
  // degrees of freedom at 0.01 / (2 * 3) two-sided is 17.2772 (its quantile in
  // closed form, (2p - 1) / sqrt(2p (1 - p)) at p = 1 - 0.01/6).
  CHECK(split_significance({0, 0, 1, 1}, 0, 2, 4, 0.1, 0.01) == Approx(10 / 17.27718).epsilon(1e-5));
  CHECK(split_significance({0, 0, 1}, 0, 2, 3, 0.1, 0.01) < 1);
  CHECK(split_significance({0, 1}, 0, 1, 2, 0.1, 0.01) == 0);
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

TEST_CASE("series steps: a step stays unless its interval lies within the threshold", "[series]") {
  // |1 - 0| + t(0.995; 2 df) 9.924843 x noise 0.1 (the floor: no noise
  // within) x sqrt(1/2 + 1/2).
  CHECK(step_reach({0, 0, 1, 1}, 0, 2, 4, 0.1, 0.01) == Approx(1 + 0.9924843).epsilon(1e-6));
  CHECK(std::isinf(step_reach({0, 1}, 0, 1, 2, 0.1, 0.01)));
  // A step measured at 4.5 % (medians 100 and 104.5) in 1 % noise, 10 points
  // a side: significant, and its 99 % interval reaches past 5 %: it stays
  // (a ratio-of-medians rule would have dropped it).
  std::vector<double> near;
  for (int i = 0; i < 10; ++i) near.push_back(i % 2 ? 101 : 99);
  for (int i = 0; i < 10; ++i) near.push_back(i % 2 ? 105.5 : 103.5);
  auto kept = series_steps(near, 0.05);
  REQUIRE(kept.size() == 1);
  CHECK(kept[0].index == 10);
  CHECK(kept[0].after / kept[0].before == Approx(1.045));
  // A 3 % step, 20 quiet points a side: significant, but its interval lies
  // wholly within 5 %: merged away.
  std::vector<double> small;
  for (int i = 0; i < 20; ++i) small.push_back(i % 2 ? 100.5 : 99.5);
  for (int i = 0; i < 20; ++i) small.push_back(i % 2 ? 103.5 : 102.5);
  std::vector<double> logs;
  for (double x : small) logs.push_back(std::log(x));
  CHECK(best_split(logs, 0, 40) == 20);
  CHECK(split_significance(logs, 0, 20, 40, std::log1p(0.05) / 4, 0.01) >= 1);
  CHECK(series_steps(small, 0.05).empty());
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
