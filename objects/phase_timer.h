// Where a long command's time goes: one line per phase on stderr, when the
// timer is made on (cli/ turns it on from KISTORE_VERIFY_TIMING or
// KISTORE_SITE_TIMING, which bench/ sets; nothing below cli/ reads the
// environment).
#pragma once

#include <chrono>
#include <cstdio>

namespace kistore {

class PhaseTimer {
 public:
  // Prints only when `on`; `label` starts each line.
  PhaseTimer(bool on, const char* label) : on_(on), label_(label), last_(std::chrono::steady_clock::now()) {}
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
