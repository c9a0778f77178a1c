#include "refs/regression.h"

#include <algorithm>
#include <cmath>

#include "refs/series.h"

namespace kistore {

BaselineWindow baseline_window(const std::vector<double>& earlier, double threshold, double alpha) {
  const std::size_t n = earlier.size();
  const std::size_t from = n > kHistoryPoints ? n - kHistoryPoints : 0;
  std::vector<double> history(earlier.begin() + static_cast<std::ptrdiff_t>(from), earlier.end());
  std::size_t begin = from;
  std::vector<SeriesStep> steps = series_steps(history, threshold, alpha);
  if (!steps.empty()) begin = from + steps.back().index;
  if (n - begin > kWindowPoints) begin = n - kWindowPoints;
  return {begin, n};
}

PointJudgement judge_point(const std::vector<double>& earlier, const RunStatistics& last_earlier,
                           const RunStatistics& run, double value, const VerdictOptions& options) {
  PointJudgement j;
  j.window = baseline_window(earlier, options.threshold, options.alpha);
  if (j.window.size() >= kMinPrediction) {
    std::vector<double> window(earlier.begin() + static_cast<std::ptrdiff_t>(j.window.begin),
                               earlier.begin() + static_cast<std::ptrdiff_t>(j.window.end));
    double logs = 0;
    for (double v : window) logs += std::log(v);
    j.baseline = std::exp(logs / static_cast<double>(window.size()));
    j.verdict = decide_next(window, value, options);
  } else {
    j.window.begin = j.window.end - 1;
    j.baseline = earlier.back();
    j.verdict = decide(last_earlier, run, options);
  }
  j.ratio = j.verdict.ratio && std::isfinite(*j.verdict.ratio) ? *j.verdict.ratio
            : j.baseline > 0                                     ? value / j.baseline
                                                                 : 0;
  return j;
}

}  // namespace kistore
