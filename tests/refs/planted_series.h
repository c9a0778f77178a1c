// Series with known answers for the tests of refs/series.h and
// refs/regression.h: log-normal noise around 100 with a planted step, from a
// generator whose sequence the C++ standard fixes.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace kistore {

// Standard normal deviates by Box-Muller over std::mt19937_64, whose
// sequence the C++ standard fixes (unlike std::normal_distribution's), so
// the series are the same with every standard library.
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : engine_(seed) {}
  double uniform() { return (static_cast<double>(engine_() >> 11) + 0.5) / 9007199254740992.0; }
  double normal() {
    double u = uniform(), v = uniform();
    return std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(uniform() * static_cast<double>(n)); }

 private:
  std::mt19937_64 engine_;
};

// n values around 100 with relative noise `sigma` (log-normal), and from
// `at` on (n: never) a step to (1 + step) times the level.
inline std::vector<double> planted_series(Noise& noise, std::size_t n, double sigma, std::size_t at, double step) {
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(100 * std::exp(sigma * noise.normal() + (i >= at ? std::log1p(step) : 0)));
  return v;
}

}  // namespace kistore
