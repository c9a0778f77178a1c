// Where a long command's time goes: one line per phase on stderr, when the
// environment variable the timer is made with is set (bench/ sets it).
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace kistore {

class PhaseTimer {
 public:
  // `variable` turns it on (KISTORE_SITE_TIMING); `label` starts each line.
  PhaseTimer(const char* variable, const char* label)
      : on_(std::getenv(variable) != nullptr), label_(label), last_(std::chrono::steady_clock::now()) {}
  void lap(const char* phase) {
    auto now = std::chrono::steady_clock::now();
    if (on_) std::fprintf(stderr, "%s: %s %.3f s\n", label_, phase, std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }

 private:
  bool on_;
  const char* label_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace kistore
