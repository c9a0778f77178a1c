// Known answers for `kistore check`'s judgement of a new point against the
// points before it (refs/regression.h): planted regressions, pure noise,
// and the baseline window around a change point.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "refs/regression.h"
#include "tests/refs/planted_series.h"

namespace kistore {
namespace {

constexpr double kThreshold = 0.05;  // the default of check

// The check's judgement of a new point (refs/regression.h): a run whose
// history is 20 points of noise sigma, judged by the prediction interval of
// the latest 10. One point is weaker evidence than the points after a step:
// at alpha 0.01 and 10 earlier points the interval reaches 3.4 sigma, so a
// regression of 6 sigma (or twice the threshold, whichever is larger) is
// what it must find 9 times in 10.
RunStatistics point_of(double v) {
  RunStatistics s;
  s.point = v;
  return s;
}

TEST_CASE("check: planted regressions are found, pure noise is not", "[regression][known-answers]") {
  Noise noise(99);
  const VerdictOptions options;  // the defaults: threshold 5 %, alpha 0.01
  constexpr int kSeries = 1000;
  for (double sigma : {0.005, 0.01, 0.02, 0.03, 0.05}) {
    int alarms = 0, either = 0, found = 0;
    for (int k = 0; k < kSeries; ++k) {
      std::vector<double> history = planted_series(noise, 20, sigma, 20, 0);
      double quiet = 100 * std::exp(sigma * noise.normal());
      PointJudgement j = judge_point(history, point_of(history.back()), point_of(quiet), quiet, options);
      // The gate's false alarm: a regression where there is none.
      alarms += j.verdict.verdict == ComparisonVerdict::kSlower;
      either += j.verdict.verdict == ComparisonVerdict::kFaster || j.verdict.verdict == ComparisonVerdict::kSlower;
      double slow = quiet * (1 + std::max(6 * sigma, 2 * kThreshold));
      found += judge_point(history, point_of(history.back()), point_of(slow), slow, options).verdict.verdict ==
               ComparisonVerdict::kSlower;
    }
    INFO("noise " << sigma << ": false regressions " << alarms << ", either way " << either << ", found " << found
                   << ", of " << kSeries);
    CHECK(alarms <= kSeries / 100);
    CHECK(either <= kSeries * 2 / 100);  // a two-sided test at alpha 0.01, and the window's own false steps
    CHECK(found >= kSeries * 9 / 10);
  }
}

TEST_CASE("check: the baseline window starts after the last change point", "[regression]") {
  // 100 for 8 points, then 130 for 4: the window is the 4 at 130.
  std::vector<double> v = {100, 101, 99, 100, 100, 101, 99, 100, 130, 131, 129, 130};
  BaselineWindow w = baseline_window(v, kThreshold);
  CHECK(w.begin == 8);
  CHECK(w.end == 12);
  // A long flat history: the latest kWindowPoints.
  std::vector<double> flat(30, 100.0);
  w = baseline_window(flat, kThreshold);
  CHECK(w.size() == kWindowPoints);
  CHECK(w.end == 30);
  // 131 against the window at 130: the same level, no regression; 100 is an
  // improvement, judged by the prediction from the 4 points at 130.
  PointJudgement same = judge_point(v, point_of(130), point_of(131), 131, VerdictOptions{});
  CHECK(same.baseline == Approx(130).epsilon(1e-4));  // the geometric mean of 130, 131, 129, 130
  CHECK(same.verdict.verdict != ComparisonVerdict::kSlower);
  PointJudgement back = judge_point(v, point_of(130), point_of(100), 100, VerdictOptions{});
  CHECK(back.verdict.verdict == ComparisonVerdict::kFaster);
  CHECK(back.ratio == Approx(100.0 / 130).epsilon(1e-3));
  CHECK(back.verdict.method == "prediction");
  // One earlier point: the two runs' own statistics (here values only: ambiguous).
  PointJudgement one = judge_point({100}, point_of(100), point_of(150), 150, VerdictOptions{});
  CHECK(one.window.size() == 1);
  CHECK(one.verdict.method == "none");
  CHECK(one.verdict.verdict == ComparisonVerdict::kAmbiguous);
}

}  // namespace
}  // namespace kistore
