// parallel_for: the one way kistore spreads independent work over cores.
//
// Runs fn(i) for every i in [0, n), on up to `threads` threads (0: one per
// core, at most 8), the calling thread included; items are taken in order
// in small blocks. If some fn(i) throw, the others still run, and the
// exception of the smallest such i is rethrown, so errors do not depend on
// scheduling. fn must be safe to call concurrently for different i.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kistore {

template <typename F>
void parallel_for(std::size_t n, F&& fn, unsigned threads = 0) {
  if (threads == 0) threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  if (n < 2 || threads == 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, n));
  const std::size_t block = std::max<std::size_t>(1, std::min<std::size_t>(64, n / (threads * 8)));
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::size_t failed_at = n;
  std::exception_ptr failure;
  auto work = [&] {
    for (;;) {
      std::size_t begin = next.fetch_add(block);
      if (begin >= n) return;
      for (std::size_t i = begin; i < std::min(n, begin + block); ++i) {
        try {
          fn(i);
        } catch (...) {
          std::lock_guard lock(mutex);
          if (i < failed_at) {
            failed_at = i;
            failure = std::current_exception();
          }
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < threads; ++k) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace kistore
