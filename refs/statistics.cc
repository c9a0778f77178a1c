#include "refs/statistics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "refs/index.h"

namespace kistore {
namespace {

// Beyond 2^53 a count is no longer a whole number a double can hold.
constexpr double kMaxCount = 9007199254740992.0;
// Above this many pairs the Hodges-Lehmann estimate would hold too many
// differences in memory; such sample sets are tested by their moments.
constexpr double kMaxPairs = 4e6;
// Exact rank distribution up to this size per side (no ties).
constexpr std::size_t kMaxExact = 20;

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string found_text(const Json& j) {
  if (j.is_number()) return number_text(j.as_number());
  if (j.is_string()) return "a string";
  if (j.is_null()) return "null";
  if (j.is_bool()) return j.as_bool() ? "true" : "false";
  if (j.is_array()) return "an array";
  return "an object";
}

struct Field {
  double value = 0;  // on the scale (or as given, for counts and ratios)
  std::string pointer;
};

// The first measurement of `metric` with `statistic`, in any unit.
std::optional<std::pair<Measurement, std::string>> find_measurement(const Json& spec, const std::string& metric,
                                                                    std::string_view statistic) {
  const Json* list = spec.find("measurements");
  if (!list || !list->is_array()) return std::nullopt;
  for (std::size_t i = 0; i < list->as_array().size(); ++i) {
    auto m = Measurement::from_json(list->as_array()[i]);
    if (m && m->metric == metric && m->statistic == statistic)
      return std::make_pair(*m, "/spec/measurements/" + std::to_string(i) + "/value");
  }
  return std::nullopt;
}

const Json* latency_member(const Json& spec, std::string_view statistic) {
  const Json* timing = spec.find("timing");
  const Json* latency = timing && timing->is_object() ? timing->find("latencyNs") : nullptr;
  return latency && latency->is_object() ? latency->find(statistic) : nullptr;
}

class Reader {
 public:
  Reader(const Json& spec, const RankScale& scale, RunStatistics& out) : spec_(spec), scale_(scale), out_(out) {
    auto primary = primary_measurement(spec);
    metric_ = primary ? primary->metric : "latency";
  }

  // A value of `statistic` on the scale: timing.latencyNs first, then the
  // measurements. `zero_ok` for a standard deviation.
  std::optional<Field> scaled(std::string_view statistic, bool zero_ok = false) {
    if (metric_ == "latency")
      if (const Json* v = latency_member(spec_, statistic))
        return check(*v, "ns", "/spec/timing/latencyNs/" + std::string(statistic), zero_ok);
    if (auto m = find_measurement(spec_, metric_, statistic)) return check(Json(m->first.value), m->first.unit, m->second, zero_ok);
    return std::nullopt;
  }

  // A plain number (a count, a relative deviation) from the measurements.
  std::optional<Field> plain(std::string_view statistic, std::string_view unit) {
    auto m = find_measurement(spec_, metric_, statistic);
    if (!m) return std::nullopt;
    if (m->first.unit != unit) {
      note(m->second, "expected unit \"" + std::string(unit) + "\" for the " + std::string(statistic) + ", found \"" +
                          m->first.unit + "\"");
      return std::nullopt;
    }
    return Field{m->first.value, m->second};
  }

  void note(const std::string& pointer, const std::string& what) { out_.notes.push_back(pointer + ": " + what); }

  std::optional<Field> check(const Json& v, const std::string& unit, const std::string& pointer, bool zero_ok) {
    const char* want = zero_ok ? "a finite number >= 0" : "a positive finite number";
    if (!v.is_number()) {
      note(pointer, std::string("expected ") + want + ", found " + found_text(v));
      return std::nullopt;
    }
    double x = v.as_number();
    auto s = to_scale(x, unit, scale_);
    if (!s) {
      note(pointer, "expected a unit of the group's scale (" + scale_.describe() + "), found \"" + unit + "\"");
      return std::nullopt;
    }
    if (!std::isfinite(*s) || *s < 0 || (*s == 0 && !zero_ok)) {
      note(pointer, std::string("expected ") + want + ", found " + number_text(x) + " " + unit);
      return std::nullopt;
    }
    return Field{*s, pointer};
  }

  const Json& spec_;
  const RankScale& scale_;
  RunStatistics& out_;
  std::string metric_;
};

void read_samples(Reader& r, RunStatistics& out) {
  if (r.metric_ != "latency") return;
  const Json* timing = r.spec_.find("timing");
  const Json* samples = timing && timing->is_object() ? timing->find("samplesNs") : nullptr;
  if (!samples) return;
  const std::string pointer = "/spec/timing/samplesNs";
  if (!samples->is_array() || samples->as_array().size() < 2) {
    r.note(pointer, "expected an array of 2 or more numbers of ns, found " +
                        (samples->is_array() ? std::to_string(samples->as_array().size()) + " of them"
                                             : found_text(*samples)));
    return;
  }
  std::vector<double> values;
  for (std::size_t i = 0; i < samples->as_array().size(); ++i) {
    auto f = r.check(samples->as_array()[i], "ns", pointer + "/" + std::to_string(i), false);
    if (!f) return;  // one bad sample spoils the set: its order statistics mean nothing
    values.push_back(f->value);
  }
  out.samples = std::move(values);
}

void read_moments(Reader& r, RunStatistics& out) {
  auto mean = r.scaled("mean");
  if (!mean) return;
  std::optional<double> sd;
  if (auto s = r.scaled("stdev", true)) sd = s->value;
  else if (auto rel = r.plain("relative-stdev", "ratio")) {
    if (std::isfinite(rel->value) && rel->value >= 0) sd = rel->value * mean->value;
    else r.note(rel->pointer, "expected a relative deviation >= 0, found " + number_text(rel->value));
  }
  auto count = r.plain("count", "samples");
  if (!sd || !count) return;
  double n = count->value;
  if (!(n >= 2 && n <= kMaxCount && n == std::floor(n))) {
    r.note(count->pointer, "expected a whole count of samples from 2 to 2^53, found " + number_text(n));
    return;
  }
  out.moments = RunStatistics::Moments{mean->value, *sd, n};
}

void read_quantiles(Reader& r, RunStatistics& out) {
  auto median = r.scaled("median");
  if (!median) return;
  for (auto [lo, hi] : {std::pair{"p20", "p80"}, std::pair{"p25", "p75"}}) {
    auto low = r.scaled(lo), high = r.scaled(hi);
    if (!low || !high) continue;
    if (!(low->value <= median->value && median->value <= high->value)) {
      r.note(low->pointer, std::string("expected ") + lo + " <= median <= " + hi + ", found " + number_text(low->value) +
                               ", " + number_text(median->value) + ", " + number_text(high->value) + " (on the scale)");
      continue;
    }
    out.quantiles = RunStatistics::Quantiles{median->value, low->value, high->value, lo, hi};
    return;
  }
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g %%", fraction * 100);
  return buf;
}

std::string p_text(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", p);
  return buf;
}

// The decision rule of docs/statistics.md, the same for every method.
void apply_rule(VerdictResult& v, bool significant, const VerdictOptions& o, const std::string& significance) {
  double r = *v.ratio, t = o.threshold;
  auto [lo, hi] = *v.interval;
  std::string diff = percent(std::abs(r - 1));
  if (significant && std::abs(r - 1) >= t) {
    v.verdict = r < 1 ? ComparisonVerdict::kFaster : ComparisonVerdict::kSlower;
    v.reason = significance + ", and the difference (" + diff + ") is at least the threshold (" + percent(t) + ")";
  } else if (lo >= 1 - t && hi <= 1 + t) {
    v.verdict = ComparisonVerdict::kSame;
    v.reason = "the interval lies within the threshold (" + percent(t) + ") of 1";
  } else if (!significant) {
    v.verdict = ComparisonVerdict::kAmbiguous;
    v.reason = "not significant (" + significance + "), yet the interval reaches beyond the threshold (" + percent(t) +
               "): more samples could decide";
  } else {
    v.verdict = ComparisonVerdict::kAmbiguous;
    v.reason = significance + ", but the difference (" + diff + ") is under the threshold (" + percent(t) +
               ") while the interval reaches beyond it";
  }
}

bool finite_ratio(double r) { return std::isfinite(r) && r > 0; }

}  // namespace

std::string_view verdict_name(ComparisonVerdict v) {
  switch (v) {
    case ComparisonVerdict::kFaster: return "faster";
    case ComparisonVerdict::kSlower: return "slower";
    case ComparisonVerdict::kSame: return "same";
    case ComparisonVerdict::kAmbiguous: return "ambiguous";
  }
  return "ambiguous";
}

std::string_view RunStatistics::strongest_kind() const {
  if (!samples.empty()) return "samples";
  if (moments) return "moments";
  if (quantiles) return "quantiles";
  if (point) return "point";
  return "none";
}

std::string RunStatistics::strongest() const {
  if (!samples.empty()) return std::to_string(samples.size()) + " samples";
  if (moments) return "mean, stdev, count " + number_text(moments->count);
  if (quantiles) return "median, " + quantiles->low_name + ", " + quantiles->high_name;
  if (point) return "value only";
  return "none";
}

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  double pos = q * static_cast<double>(sorted.size() - 1);
  std::size_t i = static_cast<std::size_t>(std::floor(pos));
  if (i + 1 >= sorted.size()) return sorted.back();
  double frac = pos - static_cast<double>(i);
  return sorted[i] + (sorted[i + 1] - sorted[i]) * frac;
}

RunStatistics sample_statistics(std::vector<double> values) {
  RunStatistics out;
  if (values.size() < 2) return out;
  double n = static_cast<double>(values.size()), sum = 0;
  for (double v : values) sum += v;
  double mean = sum / n, ss = 0;
  for (double v : values) ss += (v - mean) * (v - mean);
  out.moments = RunStatistics::Moments{mean, std::sqrt(ss / (n - 1)), n};
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  out.quantiles = RunStatistics::Quantiles{quantile_sorted(sorted, 0.5), quantile_sorted(sorted, 0.2),
                                           quantile_sorted(sorted, 0.8), "p20", "p80"};
  out.point = out.quantiles->median;
  out.samples = std::move(values);
  return out;
}

RunStatistics run_statistics(const Json& run_spec, const RankScale& scale) {
  RunStatistics out;
  Reader r(run_spec, scale, out);
  if (auto primary = primary_measurement(run_spec)) {
    auto s = to_scale(primary->value, primary->unit, scale);
    if (s && std::isfinite(*s) && *s > 0) out.point = *s;
  }
  read_samples(r, out);
  if (!out.samples.empty()) {
    RunStatistics from_samples = sample_statistics(std::move(out.samples));
    from_samples.point = out.point;
    from_samples.notes = std::move(out.notes);
    return from_samples;
  }
  read_moments(r, out);
  read_quantiles(r, out);
  return out;
}

RankTest mann_whitney(const std::vector<double>& a, const std::vector<double>& b, double alpha) {
  RankTest out;
  const std::size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;
  if (n1 == 0 || n2 == 0) return out;
  // Ranks of the pooled values, ties sharing their mean rank.
  std::vector<std::pair<double, bool>> pooled;  // value, from a
  for (double v : a) pooled.push_back({v, true});
  for (double v : b) pooled.push_back({v, false});
  std::sort(pooled.begin(), pooled.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    double t = static_cast<double>(j - i), mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    if (t > 1) ties = true;
    tie_term += t * t * t - t;
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_a += mean_rank;
    i = j;
  }
  const double d1 = static_cast<double>(n1), d2 = static_cast<double>(n2), dn = static_cast<double>(n);
  out.u = rank_sum_a - d1 * (d1 + 1) / 2;
  const double u_max = std::max(out.u, d1 * d2 - out.u);
  if (!ties && n1 <= kMaxExact && n2 <= kMaxExact) {
    // Counts of arrangements with U = u, by the recurrence
    // c(i, j, u) = c(i - 1, j, u - j) + c(i, j - 1, u).
    const std::size_t cells = n1 * n2 + 1;
    std::vector<std::vector<std::vector<double>>> c(n1 + 1, std::vector<std::vector<double>>(n2 + 1));
    for (std::size_t i = 0; i <= n1; ++i)
      for (std::size_t j = 0; j <= n2; ++j) {
        c[i][j].assign(cells, 0);
        if (i == 0 || j == 0) {
          c[i][j][0] = 1;
          continue;
        }
        for (std::size_t u = 0; u <= i * j; ++u) {
          double x = c[i][j - 1][u];
          if (u >= j) x += c[i - 1][j][u - j];
          c[i][j][u] = x;
        }
      }
    double total = 0, tail = 0;
    for (std::size_t u = 0; u < cells; ++u) {
      total += c[n1][n2][u];
      if (static_cast<double>(u) >= u_max) tail += c[n1][n2][u];
    }
    out.p = std::min(1.0, 2 * tail / total);
    out.exact = true;
  } else {
    double sigma = std::sqrt(d1 * d2 / 12 * ((dn + 1) - tie_term / (dn * (dn - 1))));
    if (sigma > 0 && std::isfinite(sigma)) {
      double z = (u_max - d1 * d2 / 2 - 0.5) / sigma;
      out.p = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(boost::math::normal(), z)));
    } else {
      out.p = 1;
    }
  }
  // Hodges-Lehmann: the median of all b_j - a_i, and the order statistics
  // that bound it with confidence 1 - alpha (Lehmann's normal approximation).
  std::vector<double> diffs;
  diffs.reserve(n1 * n2);
  for (double x : a)
    for (double y : b) diffs.push_back(y - x);
  std::sort(diffs.begin(), diffs.end());
  const std::size_t pairs = diffs.size();
  out.shift = pairs % 2 ? diffs[pairs / 2] : (diffs[pairs / 2 - 1] + diffs[pairs / 2]) / 2;
  double z = boost::math::quantile(boost::math::complement(boost::math::normal(), alpha / 2));
  double k = std::floor(d1 * d2 / 2 - z * std::sqrt(d1 * d2 * (dn + 1) / 12));
  if (k >= 1) {
    std::size_t ki = static_cast<std::size_t>(k);
    out.low = diffs[ki - 1];
    out.high = diffs[pairs - ki];
    out.bounded = true;
  } else {
    out.low = -std::numeric_limits<double>::infinity();
    out.high = std::numeric_limits<double>::infinity();
  }
  return out;
}

std::optional<WelchTest> welch(double mean_a, double sd_a, double n_a, double mean_b, double sd_b, double n_b,
                               double alpha) {
  if (!(n_a >= 2 && n_b >= 2) || !(sd_a >= 0 && sd_b >= 0)) return std::nullopt;
  double va = sd_a * sd_a / n_a, vb = sd_b * sd_b / n_b, se2 = va + vb;
  if (!(se2 > 0) || !std::isfinite(se2) || !std::isfinite(mean_a) || !std::isfinite(mean_b)) return std::nullopt;
  WelchTest out;
  double se = std::sqrt(se2);
  out.t = (mean_b - mean_a) / se;
  out.df = se2 * se2 / (va * va / (n_a - 1) + vb * vb / (n_b - 1));
  if (!std::isfinite(out.t) || !(out.df > 0)) return std::nullopt;
  // Past ~1e7 degrees of freedom Student's t is the normal to double precision.
  double q;
  if (!std::isfinite(out.df) || out.df > 1e7) {
    boost::math::normal dist;
    out.p = 2 * boost::math::cdf(boost::math::complement(dist, std::abs(out.t)));
    q = boost::math::quantile(boost::math::complement(dist, alpha / 2));
  } else {
    boost::math::students_t dist(out.df);
    out.p = 2 * boost::math::cdf(boost::math::complement(dist, std::abs(out.t)));
    q = boost::math::quantile(boost::math::complement(dist, alpha / 2));
  }
  out.p = std::min(1.0, out.p);
  out.low = (mean_b - mean_a) - q * se;
  out.high = (mean_b - mean_a) + q * se;
  return out;
}

VerdictResult decide(const RunStatistics& a, const RunStatistics& b, const VerdictOptions& o) {
  VerdictResult v;
  std::string set_aside;
  const std::string conf = percent(1 - o.alpha);
  if (!a.samples.empty() && !b.samples.empty()) {
    if (static_cast<double>(a.samples.size()) * static_cast<double>(b.samples.size()) <= kMaxPairs) {
      std::vector<double> la, lb;
      for (double x : a.samples) la.push_back(std::log(x));
      for (double x : b.samples) lb.push_back(std::log(x));
      RankTest t = mann_whitney(la, lb, o.alpha);
      v.method = "mann-whitney";
      v.p = t.p;
      v.ratio = std::exp(t.shift);
      v.interval = std::make_pair(std::exp(t.low), std::exp(t.high));
      apply_rule(v, t.p < o.alpha, o,
                 "p = " + p_text(t.p) + (t.p < o.alpha ? " < " : " >= ") + p_text(o.alpha) +
                     (t.exact ? " (exact)" : " (normal approximation)"));
      if (!t.bounded) v.reason += "; too few samples for a " + conf + " interval";
      return v;
    }
    set_aside = "too many samples for pairwise differences: tested by their moments; ";
  }
  if (a.moments && b.moments) {
    auto w = welch(a.moments->mean, a.moments->stdev, a.moments->count, b.moments->mean, b.moments->stdev,
                   b.moments->count, o.alpha);
    if (w) {
      v.method = "welch";
      v.p = w->p;
      v.ratio = b.moments->mean / a.moments->mean;
      v.interval = std::make_pair((a.moments->mean + w->low) / a.moments->mean,
                                  (a.moments->mean + w->high) / a.moments->mean);
      apply_rule(v, w->p < o.alpha, o, "p = " + p_text(w->p) + (w->p < o.alpha ? " < " : " >= ") + p_text(o.alpha));
      v.reason = set_aside + v.reason;
      return v;
    }
    set_aside += "Welch's test is undefined for these figures (both standard deviations 0, or they overflow); ";
  }
  if (a.quantiles && b.quantiles) {
    const auto &qa = *a.quantiles, &qb = *b.quantiles;
    v.method = "quantiles";
    v.ratio = qb.median / qa.median;
    v.interval = std::make_pair(qb.low / qa.high, qb.high / qa.low);
    bool apart = v.interval->first > 1 || v.interval->second < 1;
    if (finite_ratio(*v.ratio) && finite_ratio(v.interval->first) && finite_ratio(v.interval->second)) {
      apply_rule(v, apart, o, apart ? "the spreads do not overlap" : "the spreads overlap");
      v.reason = set_aside + v.reason;
      return v;
    }
    set_aside += "the medians' ratio overflows; ";
  }
  v.method = "none";
  v.verdict = ComparisonVerdict::kAmbiguous;
  if (a.point && b.point && finite_ratio(*b.point / *a.point)) v.ratio = *b.point / *a.point;
  v.reason = set_aside + "no statistics both runs carry can decide (A: " + a.strongest() + "; B: " + b.strongest() + ")";
  return v;
}

VerdictResult decide_next(const std::vector<double>& history, double value, const VerdictOptions& o) {
  VerdictResult v;
  v.method = "prediction";
  const double n = static_cast<double>(history.size());
  double m = 0, ss = 0;
  for (double x : history) m += std::log(x);
  m /= n;
  for (double x : history) ss += (std::log(x) - m) * (std::log(x) - m);
  const double s = n > 1 ? std::sqrt(ss / (n - 1)) : 0;
  const double y = std::log(value);
  if (!(n >= 2) || !std::isfinite(m) || !std::isfinite(s) || !std::isfinite(y)) {
    v.method = "none";
    v.reason = "a prediction needs 2 or more earlier values and a positive value";
    return v;
  }
  const double q = boost::math::quantile(boost::math::complement(boost::math::students_t(n - 1), o.alpha / 2));
  const double se = s * std::sqrt(1 + 1 / n);
  double p = 1;
  if (se > 0) {
    p = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(boost::math::students_t(n - 1), std::abs(y - m) / se)));
  } else {
    p = y == m ? 1.0 : 0.0;
  }
  v.p = p;
  v.ratio = std::exp(y - m);
  v.interval = std::make_pair(std::exp(y - m - q * se), std::exp(y - m + q * se));
  if (!finite_ratio(*v.ratio) || !finite_ratio(v.interval->first) || !finite_ratio(v.interval->second)) {
    v.method = "none";
    v.ratio.reset();
    v.interval.reset();
    v.p.reset();
    v.reason = "the ratio to the history overflows";
    return v;
  }
  apply_rule(v, p < o.alpha, o,
             "p = " + p_text(p) + (p < o.alpha ? " < " : " >= ") + p_text(o.alpha) + " (prediction from " +
                 std::to_string(history.size()) + " earlier values)");
  return v;
}

}  // namespace kistore
