// parallel_for: the one way kistore spreads independent work over cores.
//
// Runs fn(i) for every i in [0, n), on up to `threads` threads (0:
// worker_threads()), the calling thread included; items are taken in order
// in small blocks. If some fn(i) throw, the others still run, and the
// exception of the smallest such i is rethrown, so errors do not depend on
// scheduling. fn must be safe to call concurrently for different i.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <sys/resource.h>

#include <system_error>
#include <thread>
#include <vector>

namespace kistore {

// How many threads kistore's parallel work uses: one a core, at most 8, and,
// under an address-space limit (`ulimit -v`), no more than half of what the
// limit leaves beside the program's own code (some 64 MiB of kistore and its
// libraries) makes room for. Each thread beyond the first maps its stack
// (8 MiB) and, under glibc, a malloc arena that reserves 64 MiB of
// addresses: eight of them would take 576 MiB of a process's address space
// before it holds a byte of data, so a limit that the work itself fits in
// would otherwise be spent on idle reservations, and how much memory kistore
// needs would depend on the machine's number of cores.
inline unsigned worker_threads() {
  unsigned n = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    constexpr rlim_t kCode = rlim_t{64} << 20, kPerThread = rlim_t{80} << 20;
    const rlim_t room = limit.rlim_cur > kCode ? (limit.rlim_cur - kCode) / 2 / kPerThread : 0;
    n = static_cast<unsigned>(std::min<rlim_t>(n, 1 + room));
  }
  return n;
}

template <typename F>
void parallel_for(std::size_t n, F&& fn, unsigned threads = 0) {
  if (threads == 0) threads = worker_threads();
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
  try {
    for (unsigned k = 1; k < threads; ++k) pool.emplace_back(work);
  } catch (const std::system_error&) {
    // No more threads to be had (a process or memory limit): the work goes
    // on with the threads that started, the calling one at least.
  }
  work();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace kistore
