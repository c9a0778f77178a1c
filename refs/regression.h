// A new point of a series judged against the points before it: what
// `kistore check` reports as a regression or an improvement.
// docs/statistics.md, "Checking new runs", is the contract.
//
// The baseline of a point is a window of the points before it in its series:
// the latest of them (at most kWindowPoints) that follow the last change
// point among the kHistoryPoints before it (refs/series.h, series_steps), so
// that a step long past neither hides nor fakes a change now. With
// kMinPrediction or more points in the window, the point's value is judged
// against the spread of the window's values (how far the series moves from
// one run to the next): the prediction interval of refs/statistics.h
// (decide_next). With fewer, the run is compared with the latest point by
// the two runs' own statistics, as `kistore compare` does (decide).
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <vector>

#include "refs/statistics.h"

namespace kistore {

// How many points before a run its baseline is chosen from, the most the
// window holds, and the fewest that make a prediction.
inline constexpr std::size_t kHistoryPoints = 50;
inline constexpr std::size_t kWindowPoints = 10;
inline constexpr std::size_t kMinPrediction = 3;

// [begin, end) of `earlier` (a series' values before the point, in order,
// each positive): the window as the header says. Empty when `earlier` is.
struct BaselineWindow {
  std::size_t begin = 0, end = 0;
  std::size_t size() const { return end - begin; }
};
BaselineWindow baseline_window(const std::vector<double>& earlier, double threshold, double alpha = 0.01);

struct PointJudgement {
  BaselineWindow window;  // the points the verdict used (one: the latest)
  // The geometric mean of the window's values (a prediction), or the latest
  // point's value (a comparison of two runs).
  double baseline = 0;
  VerdictResult verdict;  // the point against the baseline ("slower": a regression)
  // The point over the baseline: the verdict's ratio when it has one, else
  // value / baseline.
  double ratio = 0;
};
// The point of value `value`, whose run's statistics are `run`, against the
// `earlier` values of its series; `last_earlier` is the statistics of the run
// of earlier.back(). `earlier` must not be empty.
PointJudgement judge_point(const std::vector<double>& earlier, const RunStatistics& last_earlier,
                           const RunStatistics& run, double value, const VerdictOptions& options);

}  // namespace kistore
