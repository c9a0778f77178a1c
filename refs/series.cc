#include "refs/series.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/math/distributions/students_t.hpp>

namespace kistore {
namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Both sides of a split of y[begin, end) at `at`: their sizes, their means,
// and the standard deviation pooled within them (end - begin - 2 degrees of
// freedom; 0 when there are none).
struct Sides {
  double n1 = 0, n2 = 0, a = 0, b = 0, df = 0, within = 0;
};
Sides sides_of(const std::vector<double>& y, std::size_t begin, std::size_t at, std::size_t end) {
  Sides s;
  s.n1 = static_cast<double>(at - begin);
  s.n2 = static_cast<double>(end - at);
  for (std::size_t i = begin; i < at; ++i) s.a += y[i];
  for (std::size_t i = at; i < end; ++i) s.b += y[i];
  s.a /= s.n1;
  s.b /= s.n2;
  double squares = 0;
  for (std::size_t i = begin; i < end; ++i) squares += (y[i] - (i < at ? s.a : s.b)) * (y[i] - (i < at ? s.a : s.b));
  s.df = static_cast<double>(end - begin) - 2;
  s.within = s.df > 0 ? std::sqrt(squares / s.df) : 0;
  return s;
}

}  // namespace

std::size_t best_split(const std::vector<double>& y, std::size_t begin, std::size_t end) {
  const std::size_t m = end - begin;
  if (m < 2) return 0;
  double total = 0;
  for (std::size_t i = begin; i < end; ++i) total += y[i];
  double best = -1, before = 0;
  std::size_t at = 0;
  for (std::size_t s = 1; s < m; ++s) {
    before += y[begin + s - 1];
    const double n1 = static_cast<double>(s), n2 = static_cast<double>(m - s);
    // |mean after - mean before| scaled by sqrt(n1 n2 / m): the CUSUM
    // statistic, Student's t of the split up to the (shared) noise.
    const double d = std::abs((total - before) / n2 - before / n1) * std::sqrt(n1 * n2 / static_cast<double>(m));
    if (d > best) best = d, at = begin + s;
  }
  return at;
}

double split_significance(const std::vector<double>& y, std::size_t begin, std::size_t at, std::size_t end,
                          double noise_floor, double alpha) {
  const std::size_t m = end - begin;
  if (at <= begin || at >= end || m < 3) return 0;
  const Sides s = sides_of(y, begin, at, end);
  const double noise = std::max(s.within, noise_floor);
  if (!(noise > 0)) return s.a == s.b ? 0 : std::numeric_limits<double>::infinity();
  const double t = std::abs(s.b - s.a) / (noise * std::sqrt(1 / s.n1 + 1 / s.n2));
  // Two-sided at alpha, Bonferroni over the m - 1 places the split could take.
  const double needed = boost::math::quantile(
      boost::math::complement(boost::math::students_t(s.df), alpha / (2 * static_cast<double>(m - 1))));
  return t / needed;
}

double step_reach(const std::vector<double>& y, std::size_t begin, std::size_t at, std::size_t end, double noise_floor,
                  double alpha) {
  if (at <= begin || at >= end) return 0;
  const Sides s = sides_of(y, begin, at, end);
  if (s.df < 1) return std::numeric_limits<double>::infinity();
  const double noise = std::max(s.within, noise_floor);
  const double t = boost::math::quantile(boost::math::complement(boost::math::students_t(s.df), alpha / 2));
  return std::abs(s.b - s.a) + t * noise * std::sqrt(1 / s.n1 + 1 / s.n2);
}

std::vector<SeriesStep> series_steps(const std::vector<double>& values, double threshold, double alpha) {
  const std::size_t n = values.size();
  if (n < 2) return {};
  std::vector<double> logs;
  for (double v : values) logs.push_back(std::log(v));
  // A series without noise (identical figures, or each revision's one
  // value) still needs a scale: a quarter of the threshold's step.
  const double floor = std::log1p(threshold) / 4;
  // Binary segmentation: split a window where the CUSUM is largest, keep
  // the split if it is significant, and go on in both halves; a window whose
  // best split is not significant holds no change. An explicit stack, so
  // that a long series cannot exhaust the call stack.
  std::vector<std::size_t> cuts;
  std::vector<std::pair<std::size_t, std::size_t>> windows = {{0, n}};
  while (!windows.empty()) {
    auto [begin, end] = windows.back();
    windows.pop_back();
    const std::size_t at = best_split(logs, begin, end);
    if (at == 0 || split_significance(logs, begin, at, end, floor, alpha) < 1) continue;
    cuts.push_back(at);
    windows.push_back({begin, at});
    windows.push_back({at, end});
  }
  std::sort(cuts.begin(), cuts.end());
  // Merge away the step most surely under the threshold while one is: a
  // step whose (1 - alpha) interval lies wholly within the threshold either
  // way (compare's `same`). A step measured under the threshold whose
  // interval reaches past it stays: it is significant, and may be as large
  // as the threshold (a 6 % step in 2 % noise measures under 5 % about a
  // quarter of the time at 5 points a side).
  const double bound = std::log1p(threshold);
  for (;;) {
    std::size_t weakest = cuts.size();
    double reach = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < cuts.size(); ++i) {
      std::size_t from = i ? cuts[i - 1] : 0, to = i + 1 < cuts.size() ? cuts[i + 1] : n;
      const double r = step_reach(logs, from, cuts[i], to, floor, alpha);
      if (r < bound && r < reach) reach = r, weakest = i;
    }
    if (weakest == cuts.size()) break;
    cuts.erase(cuts.begin() + static_cast<std::ptrdiff_t>(weakest));
  }
  std::vector<SeriesStep> steps;
  for (std::size_t i = 0; i < cuts.size(); ++i) {
    std::size_t from = i ? cuts[i - 1] : 0, to = i + 1 < cuts.size() ? cuts[i + 1] : n;
    std::vector<double> before(values.begin() + static_cast<std::ptrdiff_t>(from),
                               values.begin() + static_cast<std::ptrdiff_t>(cuts[i]));
    std::vector<double> after(values.begin() + static_cast<std::ptrdiff_t>(cuts[i]),
                              values.begin() + static_cast<std::ptrdiff_t>(to));
    steps.push_back({cuts[i], median_of(before), median_of(after)});
  }
  return steps;
}

std::optional<double> rfc3339_seconds(std::string_view t) {
  auto digits = [&](std::size_t at, std::size_t n) -> std::optional<int> {
    if (at + n > t.size()) return std::nullopt;
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (t[i] < '0' || t[i] > '9') return std::nullopt;
      v = v * 10 + (t[i] - '0');
    }
    return v;
  };
  auto y = digits(0, 4), mo = digits(5, 2), d = digits(8, 2), h = digits(11, 2), mi = digits(14, 2), se = digits(17, 2);
  if (!y || !mo || !d || !h || !mi || !se || t[4] != '-' || t[7] != '-' || (t[10] != 'T' && t[10] != 't') ||
      t[13] != ':' || t[16] != ':' || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *se > 60)
    return std::nullopt;
  std::size_t at = 19;
  double frac = 0, scale = 0.1;
  if (at < t.size() && t[at] == '.') {
    ++at;
    std::size_t start = at;
    for (; at < t.size() && t[at] >= '0' && t[at] <= '9'; ++at, scale /= 10) frac += (t[at] - '0') * scale;
    if (at == start) return std::nullopt;
  }
  double offset = 0;
  if (at < t.size() && (t[at] == 'Z' || t[at] == 'z')) {
    ++at;
  } else if (at < t.size() && (t[at] == '+' || t[at] == '-')) {
    auto oh = digits(at + 1, 2), om = digits(at + 4, 2);
    if (!oh || !om || t[at + 3] != ':' || *oh > 23 || *om > 59) return std::nullopt;
    offset = (t[at] == '+' ? 1 : -1) * (*oh * 3600.0 + *om * 60.0);
    at += 6;
  } else {
    return std::nullopt;
  }
  if (at != t.size()) return std::nullopt;
  // Days from civil (Howard Hinnant's algorithm), proleptic Gregorian.
  int yy = *y - (*mo <= 2);
  int era = (yy >= 0 ? yy : yy - 399) / 400;
  int yoe = yy - era * 400;
  int doy = (153 * (*mo + (*mo > 2 ? -3 : 9)) + 2) / 5 + *d - 1;
  int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  double days = static_cast<double>(era) * 146097 + doe - 719468;
  return days * 86400 + *h * 3600.0 + *mi * 60.0 + *se + frac - offset;
}

}  // namespace kistore
