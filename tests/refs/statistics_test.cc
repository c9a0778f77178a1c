#include "refs/statistics.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace kistore {
namespace {

// Reference values: scipy 1.10.1 (Debian 12's python3-scipy), computed once:
//   stats.mannwhitneyu(A, B, alternative="two-sided", method="exact"|"asymptotic")
//   stats.ttest_ind_from_stats(...) and stats.t.isf for Welch's interval
// The Hodges-Lehmann figures are numpy's median of all B_j - A_i and the
// order statistics k = floor(N/2 - z sqrt(N (n1 + n2 + 1) / 12)), N + 1 - k,
// with z = stats.norm.isf(alpha / 2), sorted by hand in python (brute force).
const std::vector<double> kA = {1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30};
const std::vector<double> kB = {0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.01, 3.14, 1.23};

TEST_CASE("Mann-Whitney U, exact, against scipy", "[statistics]") {
  RankTest t = mann_whitney(kA, kB, 0.05);
  CHECK(t.exact);
  CHECK(t.u == 58.0);
  CHECK(t.p == Approx(0.13591114767585355).epsilon(1e-12));
  CHECK(t.shift == Approx(-0.6).epsilon(1e-12));
  REQUIRE(t.bounded);
  CHECK(t.low == Approx(-1.183));  // k = 18 of 81
  CHECK(t.high == Approx(0.37));
  RankTest t99 = mann_whitney(kA, kB, 0.01);
  CHECK(t99.low == Approx(-1.47));  // k = 11
  CHECK(t99.high == Approx(0.73));
}

TEST_CASE("Mann-Whitney U, normal approximation with ties, against scipy", "[statistics]") {
  std::vector<double> x = {3, 4, 4, 5, 6, 6, 6, 7, 8, 9, 10, 10};
  std::vector<double> y = {5, 6, 7, 7, 8, 9, 9, 10, 11, 12, 12, 13, 14};
  RankTest t = mann_whitney(x, y, 0.01);
  CHECK_FALSE(t.exact);
  CHECK(t.u == 33.5);
  CHECK(t.p == Approx(0.016157362907866846).epsilon(1e-9));
  // Larger than the exact limit, no ties: still the normal approximation.
  std::vector<double> big_a, big_b;
  for (int i = 0; i < 25; ++i) big_a.push_back(i), big_b.push_back(i + 0.5);
  CHECK_FALSE(mann_whitney(big_a, big_b, 0.01).exact);
  // All values tied: no evidence at all, p = 1.
  CHECK(mann_whitney({2, 2, 2}, {2, 2}, 0.01).p == 1.0);
  // Two against two: no 99 % interval can be formed.
  CHECK_FALSE(mann_whitney({1, 2}, {3, 4}, 0.01).bounded);
}

TEST_CASE("Welch's t-test against scipy", "[statistics]") {
  // ttest_ind_from_stats(100, 10, 30, 108, 12, 25, equal_var=False): t = -2.6529 for a - b.
  auto w = welch(100, 10, 30, 108, 12, 25, 0.01);
  REQUIRE(w);
  CHECK(w->t == Approx(2.652946129712291).epsilon(1e-12));
  CHECK(w->p == Approx(0.010859690988458008).epsilon(1e-9));
  CHECK(w->df == Approx(46.834752295107016).epsilon(1e-12));
  CHECK(w->low == Approx(-0.09652099931527935).epsilon(1e-9));
  CHECK(w->high == Approx(16.09652099931528).epsilon(1e-9));
  // Huge counts: the normal limit, p underflows to 0 as in scipy.
  auto huge = welch(1000, 5, 1e12, 1001, 5, 1e12, 0.01);
  REQUIRE(huge);
  CHECK(huge->p == 0.0);
  CHECK(huge->t == Approx(141421.3562373095).epsilon(1e-9));
}

// Published outputs, each from its source's own documentation, for inputs
// written here as they appear there.

TEST_CASE("Mann-Whitney U against R's wilcox.test example", "[statistics][known-answers]") {
  // R, ?wilcox.test (package stats), "Two-sample test":
  //   x <- c(0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46)
  //   y <- c(1.15, 0.88, 0.90, 0.74, 1.21)
  //   wilcox.test(x, y, alternative = "g")   # W = 35, p-value = 0.1272
  // The exact distribution is symmetric: the two-sided p is twice that.
  std::vector<double> x = {0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46};
  std::vector<double> y = {1.15, 0.88, 0.90, 0.74, 1.21};
  RankTest t = mann_whitney(x, y, 0.01);
  CHECK(t.exact);
  CHECK(t.u == 35.0);
  CHECK(t.p == Approx(2 * 0.1272).margin(1e-4));
}

TEST_CASE("Mann-Whitney U against SciPy's mannwhitneyu example", "[statistics][known-answers]") {
  // SciPy, scipy.stats.mannwhitneyu, Examples (ages of males and females):
  //   males = [19, 22, 16, 29, 24]; females = [20, 11, 17, 12]
  //   mannwhitneyu(males, females, method="exact")  # statistic=17.0, pvalue=0.1111111111111111
  RankTest t = mann_whitney({19, 22, 16, 29, 24}, {20, 11, 17, 12}, 0.01);
  CHECK(t.exact);
  CHECK(t.u == 17.0);
  CHECK(t.p == Approx(0.1111111111111111).epsilon(1e-12));
}

TEST_CASE("Welch's t-test against R's t.test on the sleep data", "[statistics][known-answers]") {
  // R, ?t.test (package stats): t.test(extra ~ group, data = sleep), Welch
  // Two Sample t-test: t = -1.8608, df = 17.776, p-value = 0.07939, 95 percent
  // confidence interval -3.3654832 0.2054832 (of group 1 - group 2), means
  // 0.75 and 2.33. Here a is group 1 and b group 2, so t and the interval
  // (of b - a) change sign. The sleep data (R's datasets package, Cushny and
  // Peebles 1905), extra hours of sleep:
  std::vector<double> g1 = {0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0};
  std::vector<double> g2 = {1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4};
  auto mean_sd = [](const std::vector<double>& v) {
    double m = 0, ss = 0;
    for (double x : v) m += x;
    m /= static_cast<double>(v.size());
    for (double x : v) ss += (x - m) * (x - m);
    return std::pair<double, double>{m, std::sqrt(ss / static_cast<double>(v.size() - 1))};
  };
  auto [m1, s1] = mean_sd(g1);
  auto [m2, s2] = mean_sd(g2);
  CHECK(m1 == Approx(0.75));
  CHECK(m2 == Approx(2.33));
  auto w = welch(m1, s1, 10, m2, s2, 10, 0.05);
  REQUIRE(w);
  CHECK(w->t == Approx(1.8608).margin(5e-5));
  CHECK(w->df == Approx(17.776).margin(5e-4));
  CHECK(w->p == Approx(0.07939).margin(5e-6));
  CHECK(w->low == Approx(-0.2054832).margin(5e-8));
  CHECK(w->high == Approx(3.3654832).margin(5e-8));
}

TEST_CASE("Welch's t-test is undefined, never a crash, on degenerate figures", "[statistics]") {
  CHECK_FALSE(welch(1, 0, 10, 2, 0, 10, 0.01));   // both deviations 0
  CHECK_FALSE(welch(1, 1, 1, 2, 1, 10, 0.01));    // a count of 1
  CHECK_FALSE(welch(1, -1, 10, 2, 1, 10, 0.01));  // a negative deviation
  CHECK_FALSE(welch(1, 1e200, 10, 2, 1e200, 10, 0.01));  // variance overflows
  CHECK(welch(1, 0, 10, 2, 1, 10, 0.01));          // one deviation 0 is fine
}

TEST_CASE("quantile_sorted interpolates as numpy.quantile", "[statistics]") {
  std::vector<double> v = {1, 2, 3, 4, 5};
  CHECK(quantile_sorted(v, 0.2) == Approx(1.8));
  CHECK(quantile_sorted(v, 0.5) == 3);
  CHECK(quantile_sorted(v, 0.8) == Approx(4.2));
}

Json spec(const std::string& text) { return parse_json(text, "test"); }
const RankScale kTime{};

std::string quantile_run(double median, double p20, double p80) {
  return R"({"timing":{"latencyNs":{"median":)" + std::to_string(median) +
         R"(},"primaryStatistic":"median"},"measurements":[{"metric":"latency","statistic":"p20","unit":"ns","value":)" +
         std::to_string(p20) + R"(},{"metric":"latency","statistic":"p80","unit":"ns","value":)" + std::to_string(p80) +
         "}]}";
}

std::string moments_run(const std::string& mean, const std::string& sd, const std::string& count,
                        const std::string& sd_unit = "ns") {
  return R"({"timing":{"latencyNs":{"mean":)" + mean +
         R"(},"primaryStatistic":"mean"},"measurements":[{"metric":"latency","statistic":"mean","unit":"ns","value":)" +
         mean + R"(},{"metric":"latency","statistic":"stdev","unit":")" + sd_unit + R"(","value":)" + sd +
         R"(},{"metric":"latency","statistic":"count","unit":"samples","value":)" + count + "}]}";
}

VerdictResult verdict_of(const std::string& a, const std::string& b, VerdictOptions o = {}) {
  return decide(run_statistics(spec(a), kTime), run_statistics(spec(b), kTime), o);
}

TEST_CASE("which fields carry what", "[statistics]") {
  RunStatistics q = run_statistics(spec(quantile_run(2606080, 2605331, 2607309)), kTime);
  CHECK(q.strongest_kind() == "quantiles");
  CHECK(q.quantiles->low_name == "p20");
  RunStatistics m = run_statistics(spec(moments_run("1000", "2", "100", "us")), kTime);
  REQUIRE(m.moments);
  CHECK(m.moments->stdev == 2000);  // us on the time scale
  // nvbench: a relative deviation stands for the absolute one.
  RunStatistics nv = run_statistics(
      spec(R"({"timing":{"latencyNs":{"mean":2000},"primaryStatistic":"mean"},"measurements":[
        {"metric":"latency","statistic":"mean","unit":"ns","value":2000},
        {"metric":"latency","statistic":"relative-stdev","unit":"ratio","value":0.01},
        {"metric":"latency","statistic":"count","unit":"samples","value":500}]})"),
      kTime);
  REQUIRE(nv.moments);
  CHECK(nv.moments->stdev == Approx(20));
  RunStatistics s = run_statistics(
      spec(R"({"timing":{"latencyNs":{"median":3},"samplesNs":[5,1,4,2,3],"primaryStatistic":"median"}})"), kTime);
  CHECK(s.strongest_kind() == "samples");
  REQUIRE(s.moments);
  CHECK(s.moments->mean == 3);
  CHECK(s.moments->stdev == Approx(std::sqrt(2.5)));
  CHECK(s.quantiles->low == Approx(1.8));
  CHECK(run_statistics(spec(R"({"measurements":[]})"), kTime).strongest_kind() == "none");
}

TEST_CASE("sample_statistics: what raw values imply", "[statistics]") {
  RunStatistics s = sample_statistics({5, 1, 4, 2, 3});
  CHECK(s.strongest_kind() == "samples");
  CHECK(s.point.value() == 3);
  CHECK(s.moments->count == 5);
  CHECK(s.quantiles->high == Approx(4.2));
  // Fewer than 2 values: nothing (a series of one point is judged by its run).
  CHECK(sample_statistics({7}).strongest_kind() == "none");
}

TEST_CASE("verdicts by method", "[statistics]") {
  // Liger's tiled_geglu backward on a 4090: liger_tiled against huggingface.
  VerdictResult q = verdict_of(quantile_run(2606080, 2605331, 2607309), quantile_run(1550336, 1549312, 1551360));
  CHECK(q.method == "quantiles");
  CHECK(q.verdict == ComparisonVerdict::kFaster);
  CHECK(q.ratio.value() == Approx(1550336.0 / 2606080));
  CHECK(q.interval->first == Approx(1549312.0 / 2607309));
  CHECK(q.interval->second == Approx(1551360.0 / 2605331));
  CHECK_FALSE(q.p);
  // Within 1 %, tight spreads: same.
  CHECK(verdict_of(quantile_run(1000, 999, 1001), quantile_run(1010, 1009, 1011)).verdict == ComparisonVerdict::kSame);
  // 20 % apart but spreads overlap: cannot decide.
  CHECK(verdict_of(quantile_run(1000, 500, 2000), quantile_run(1200, 600, 2400)).verdict == ComparisonVerdict::kAmbiguous);

  VerdictResult w = verdict_of(moments_run("100", "10", "3000"), moments_run("120", "12", "3000"));
  CHECK(w.method == "welch");
  CHECK(w.verdict == ComparisonVerdict::kSlower);
  CHECK(w.p.value() < 0.01);
  CHECK(w.ratio.value() == Approx(1.2));
  // Not significant with a wide interval.
  CHECK(verdict_of(moments_run("100", "50", "3"), moments_run("120", "50", "3")).verdict == ComparisonVerdict::kAmbiguous);
  // 1 % apart with a tight interval: same.
  CHECK(verdict_of(moments_run("100", "1", "1000"), moments_run("101", "1", "1000")).verdict == ComparisonVerdict::kSame);
  // Significant but under the threshold, interval within it: same.
  CHECK(verdict_of(moments_run("100", "1", "100000"), moments_run("102", "1", "100000")).verdict == ComparisonVerdict::kSame);
  // A 3 % threshold makes 5 % a difference.
  VerdictOptions tight;
  tight.threshold = 0.03;
  CHECK(verdict_of(moments_run("100", "1", "1000"), moments_run("105", "1", "1000"), tight).verdict == ComparisonVerdict::kSlower);

  std::string fast = R"({"timing":{"latencyNs":{"median":10},"samplesNs":[10,11,9,10.5,9.5,10.2,9.8,10.1],"primaryStatistic":"median"}})";
  std::string slow = R"({"timing":{"latencyNs":{"median":20},"samplesNs":[20,21,19,20.5,19.5,20.2,19.8,20.1],"primaryStatistic":"median"}})";
  VerdictResult mw = verdict_of(fast, slow);
  CHECK(mw.method == "mann-whitney");
  CHECK(mw.verdict == ComparisonVerdict::kSlower);
  CHECK(mw.ratio.value() == Approx(2.0).epsilon(0.02));
  CHECK(mw.interval->first <= *mw.ratio);
  CHECK(mw.interval->second >= *mw.ratio);
  // Samples against quantiles: the quantiles samples imply.
  CHECK(verdict_of(fast, quantile_run(20, 19.8, 20.2)).method == "quantiles");
  // Samples against moments: Welch on the samples' moments.
  CHECK(verdict_of(fast, moments_run("20", "0.5", "8")).method == "welch");
}

// Hostile values: each gives "ambiguous" with the JSON pointer named, or
// falls back to weaker evidence; none throws.
TEST_CASE("hostile statistics", "[statistics]") {
  struct Case {
    const char* what;
    std::string run;
    const char* note;  // expected in the notes ("" = none)
    const char* method;
  };
  const std::string good = moments_run("100", "1", "1000");
  const std::vector<Case> cases = {
      {"count of 1", moments_run("100", "1", "1"), "/spec/measurements/2/value: expected a whole count", "none"},
      {"fractional count", moments_run("100", "1", "2.5"), "found 2.5", "none"},
      {"count over 2^53", moments_run("100", "1", "1e300"), "found 1e+300", "none"},
      {"negative stdev", moments_run("100", "-1", "10"), "/spec/measurements/1/value: expected a finite number >= 0",
       "none"},
      {"zero mean", moments_run("0", "1", "10"), "/spec/timing/latencyNs/mean: expected a positive finite number",
       "none"},
      {"negative mean", moments_run("-5", "1", "10"), "found -5 ns", "none"},
      {"stdev overflows the scale", moments_run("100", "1e308", "10", "s"), "found 1e+308 s", "none"},
      {"stdev in a unit of another scale", moments_run("100", "1", "10", "B"), "expected a unit of the group's scale",
       "none"},
      {"a sample NaN-like (string)",
       R"({"timing":{"latencyNs":{"median":3},"samplesNs":[1,"NaN",3],"primaryStatistic":"median"}})",
       "/spec/timing/samplesNs/1: expected a positive finite number, found a string", "none"},
      {"a negative sample", R"({"timing":{"latencyNs":{"median":3},"samplesNs":[1,-2,3],"primaryStatistic":"median"}})",
       "/spec/timing/samplesNs/1", "none"},
      {"a zero sample", R"({"timing":{"latencyNs":{"median":3},"samplesNs":[1,0,3],"primaryStatistic":"median"}})",
       "found 0 ns", "none"},
      {"one sample", R"({"timing":{"latencyNs":{"median":3},"samplesNs":[3],"primaryStatistic":"median"}})",
       "expected an array of 2 or more numbers of ns, found 1 of them", "none"},
      {"samples not an array", R"({"timing":{"latencyNs":{"median":3},"samplesNs":{},"primaryStatistic":"median"}})",
       "found an object", "none"},
      {"quantiles out of order", quantile_run(100, 120, 90), "expected p20 <= median <= p80", "none"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    RunStatistics s = run_statistics(spec(c.run), kTime);
    std::string notes;
    for (const std::string& n : s.notes) notes += n + "\n";
    INFO(notes);
    if (*c.note) CHECK(notes.find(c.note) != std::string::npos);
    VerdictResult v = decide(run_statistics(spec(good), kTime), s, {});
    CHECK(v.method == c.method);
    CHECK(v.verdict == ComparisonVerdict::kAmbiguous);
  }
  // Both deviations 0: Welch cannot be formed; nothing weaker either.
  VerdictResult zero = verdict_of(moments_run("100", "0", "10"), moments_run("200", "0", "10"));
  CHECK(zero.verdict == ComparisonVerdict::kAmbiguous);
  CHECK(zero.method == "none");
  CHECK(zero.ratio.value() == 2);
  CHECK(zero.reason.find("Welch's test is undefined") != std::string::npos);
  // Huge counts decide (p = 0), they do not crash.
  VerdictResult huge = verdict_of(moments_run("100", "1", "1e15"), moments_run("110", "1", "1e15"));
  CHECK(huge.verdict == ComparisonVerdict::kSlower);
}

}  // namespace
}  // namespace kistore
