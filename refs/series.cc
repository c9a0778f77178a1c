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

}  // namespace

double segment_cost(const std::vector<double>& y, std::size_t begin, std::size_t end) {
  double n = static_cast<double>(end - begin), sum = 0;
  for (std::size_t i = begin; i < end; ++i) sum += y[i];
  double mean = sum / n, cost = 0;
  for (std::size_t i = begin; i < end; ++i) cost += (y[i] - mean) * (y[i] - mean);
  return cost;
}

std::vector<std::size_t> pelt_mean_changes(const std::vector<double>& y, double penalty) {
  const std::size_t n = y.size();
  if (n < 2) return {};
  // Prefix sums make a segment's cost O(1): sum y^2 - (sum y)^2 / len.
  std::vector<double> s1(n + 1, 0), s2(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) s1[i + 1] = s1[i] + y[i], s2[i + 1] = s2[i] + y[i] * y[i];
  auto cost = [&](std::size_t a, std::size_t b) {
    double len = static_cast<double>(b - a), s = s1[b] - s1[a];
    return std::max(0.0, (s2[b] - s2[a]) - s * s / len);
  };
  std::vector<double> best(n + 1, 0);
  std::vector<std::size_t> last(n + 1, 0);
  best[0] = -penalty;
  std::vector<std::size_t> candidates = {0};
  for (std::size_t t = 1; t <= n; ++t) {
    double f = std::numeric_limits<double>::infinity();
    std::size_t arg = 0;
    for (std::size_t s : candidates) {
      double v = best[s] + cost(s, t) + penalty;
      if (v < f) f = v, arg = s;
    }
    best[t] = f;
    last[t] = arg;
    // Pruning: a start that cannot beat t now never will (the cost is additive).
    std::vector<std::size_t> kept;
    for (std::size_t s : candidates)
      if (best[s] + cost(s, t) <= f) kept.push_back(s);
    kept.push_back(t);
    candidates = std::move(kept);
  }
  std::vector<std::size_t> out;
  for (std::size_t t = last[n]; t > 0; t = last[t]) out.push_back(t);
  std::reverse(out.begin(), out.end());
  return out;
}

double difference_noise(const std::vector<double>& y) {
  if (y.size() < 2) return 0;
  std::vector<double> d;
  for (std::size_t i = 1; i < y.size(); ++i) d.push_back(std::abs(y[i] - y[i - 1]));
  return median_of(d) / (0.6745 * std::sqrt(2.0));
}

std::vector<SeriesStep> series_steps(const std::vector<double>& values, double threshold, double alpha) {
  const std::size_t n = values.size();
  if (n < 2) return {};
  std::vector<double> logs;
  for (double v : values) logs.push_back(std::log(v));
  // A series without noise (identical figures, or each revision's one
  // value) still needs a scale: a quarter of the threshold's step.
  double sigma = std::max(difference_noise(logs), std::log1p(threshold) / 4);
  std::vector<std::size_t> cuts = pelt_mean_changes(logs, 2 * std::log(static_cast<double>(n)) * sigma * sigma);
  auto steps_of = [&](const std::vector<std::size_t>& c) {
    std::vector<SeriesStep> out;
    for (std::size_t i = 0; i < c.size(); ++i) {
      std::size_t from = i ? c[i - 1] : 0, to = i + 1 < c.size() ? c[i + 1] : n;
      std::vector<double> before(values.begin() + static_cast<std::ptrdiff_t>(from),
                                 values.begin() + static_cast<std::ptrdiff_t>(c[i]));
      std::vector<double> after(values.begin() + static_cast<std::ptrdiff_t>(c[i]),
                                values.begin() + static_cast<std::ptrdiff_t>(to));
      out.push_back({c[i], median_of(before), median_of(after)});
    }
    return out;
  };
  // How far a step stands out of the noise: Student's t of the two
  // segments' mean logarithms, the noise pooled over every segment of `c`
  // (never under the floor above), with n - segments degrees of freedom.
  auto t_of = [&](const std::vector<std::size_t>& c, std::size_t i) {
    double within = 0;
    for (std::size_t k = 0; k <= c.size(); ++k)
      within += segment_cost(logs, k ? c[k - 1] : 0, k < c.size() ? c[k] : n);
    const double df = static_cast<double>(n) - 2 * static_cast<double>(c.size()) - 1;
    const double pooled = std::max(df > 0 ? std::sqrt(within / df) : 0.0, std::log1p(threshold) / 4);
    std::size_t from = i ? c[i - 1] : 0, to = i + 1 < c.size() ? c[i + 1] : n;
    double a = 0, b = 0, n1 = static_cast<double>(c[i] - from), n2 = static_cast<double>(to - c[i]);
    for (std::size_t k = from; k < c[i]; ++k) a += logs[k];
    for (std::size_t k = c[i]; k < to; ++k) b += logs[k];
    const double t = std::abs(b / n2 - a / n1) / (pooled * std::sqrt(1 / n1 + 1 / n2));
    // Significant at alpha, Bonferroni over the n - 1 places a step can take.
    const double needed = df < 1 ? std::numeric_limits<double>::infinity()
                                 : boost::math::quantile(boost::math::complement(
                                       boost::math::students_t(df), alpha / (2 * static_cast<double>(n - 1))));
    return t / needed;  // at least 1: significant
  };
  // Merge away the smallest step under the threshold until none is left,
  // then the least significant step until every one is significant.
  for (;;) {
    std::vector<SeriesStep> steps = steps_of(cuts);
    std::size_t weakest = steps.size();
    double size = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < steps.size(); ++i) {
      double s = std::abs(std::log(steps[i].after / steps[i].before));
      if (s < std::log1p(threshold) && s < size) size = s, weakest = i;
    }
    if (weakest == steps.size()) {
      for (std::size_t i = 0; i < steps.size(); ++i) {
        double z = t_of(cuts, i);
        if (z < 1 && z < size) size = z, weakest = i;
      }
    }
    if (weakest == steps.size()) return steps;
    cuts.erase(cuts.begin() + static_cast<std::ptrdiff_t>(weakest));
  }
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
