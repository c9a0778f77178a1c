// parallel_for and the number of threads it uses (objects/parallel.h), and
// SerialWorker (objects/serial_worker.h).
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "objects/parallel.h"
#include "objects/serial_worker.h"

using kistore::parallel_for;
using kistore::worker_threads;

namespace {

// worker_threads() in a child process whose address space is limited to
// `limit` bytes (the parent's limits stay as they are); -1 if the child
// could not report.
int worker_threads_under(rlim_t limit) {
  pid_t pid = fork();
  if (pid == 0) {
    rlimit r{};
    getrlimit(RLIMIT_AS, &r);
    r.rlim_cur = limit;
    if (setrlimit(RLIMIT_AS, &r) != 0) _exit(255);
    _exit(static_cast<int>(worker_threads()));
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status) == 255 ? -1 : WEXITSTATUS(status);
}

}  // namespace

TEST_CASE("parallel_for calls fn once for every index", "[parallel]") {
  for (std::size_t n : {0u, 1u, 2u, 7u, 1000u}) {
    std::vector<std::atomic<int>> calls(n);
    parallel_for(n, [&](std::size_t i) { calls[i].fetch_add(1); }, 4);
    for (std::size_t i = 0; i < n; ++i) CHECK(calls[i].load() == 1);
  }
}

TEST_CASE("parallel_for rethrows the failure of the smallest index, after every index ran", "[parallel]") {
  std::atomic<int> ran{0};
  try {
    parallel_for(500, [&](std::size_t i) {
      ran.fetch_add(1);
      if (i == 499 || i == 123 || i == 300) throw std::runtime_error("item " + std::to_string(i));
    }, 4);
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "item 123");
  }
  CHECK(ran.load() == 500);
}

TEST_CASE("worker_threads: one a core, at most 8, fewer under an address-space limit", "[parallel]") {
  const unsigned cores = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  rlimit r{};
  REQUIRE(getrlimit(RLIMIT_AS, &r) == 0);
  if (r.rlim_cur == RLIM_INFINITY) CHECK(worker_threads() == cores);
  // 200 MiB (the bounded bulk add's limit, tests/e2e/test_bulk_add.sh):
  // no room for a second thread's stack and arena beside the data, whatever
  // the number of cores.
  CHECK(worker_threads_under(rlim_t{200} << 20) == 1);
  CHECK(worker_threads_under(rlim_t{32} << 20) == 1);
  // 1 GiB: (1024 - 64) / 2 / 80 = 6 threads beside the first at most.
  CHECK(worker_threads_under(rlim_t{1} << 30) == static_cast<int>(std::min(cores, 7u)));
}

TEST_CASE("parallel_for goes on with the calling thread when no thread can be started", "[parallel]") {
  // In a child whose address space is limited to what it maps now plus
  // 1 MiB, 64 threads: beyond the few stacks glibc keeps cached from threads
  // that ended, an 8 MiB stack cannot be mapped, std::thread throws, and
  // the work must still be done, once an index, without aborting.
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<int> calls(1000, 0);  // allocated before the limit
    long pages = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
      std::fclose(f);
    }
    if (pages <= 0) _exit(2);
    rlimit r{};
    getrlimit(RLIMIT_AS, &r);
    r.rlim_cur = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{1} << 20);
    if (setrlimit(RLIMIT_AS, &r) != 0) _exit(3);
    parallel_for(calls.size(), [&](std::size_t i) { ++calls[i]; }, 64);
    for (int c : calls)
      if (c != 1) _exit(4);
    _exit(0);
  }
  REQUIRE(pid > 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));  // not killed by std::terminate's abort
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("SerialWorker: tasks run one at a time in the order posted, off the caller's thread", "[parallel]") {
  std::vector<int> order;
  std::thread::id ran_on;
  {
    kistore::SerialWorker worker(2);
    for (int i = 0; i < 1000; ++i)
      worker.post([&order, &ran_on, i] {
        order.push_back(i);  // one task at a time: no lock needed
        ran_on = std::this_thread::get_id();
      });
    worker.wait();
    REQUIRE(order.size() == 1000);
    for (int i = 0; i < 1000; ++i) CHECK(order[static_cast<std::size_t>(i)] == i);
    CHECK(ran_on != std::this_thread::get_id());
    worker.post([&order] { order.push_back(1000); });
  }  // the destructor waits for what was posted
  CHECK(order.size() == 1001);
}

TEST_CASE("SerialWorker: a task's exception reaches the caller once, and the tasks after it never run", "[parallel]") {
  kistore::SerialWorker worker(1);
  std::atomic<int> ran{0};
  worker.post([&] { ++ran; });
  worker.post([] { throw std::runtime_error("task 2"); });
  bool thrown = false;
  try {
    for (int i = 0; i < 100; ++i) worker.post([&] { ++ran; });
    worker.wait();
  } catch (const std::runtime_error& e) {
    thrown = true;
    CHECK(std::string(e.what()) == "task 2");
  }
  CHECK(thrown);
  worker.post([&] { ++ran; });  // dropped: a task before it failed
  CHECK_NOTHROW(worker.wait());
  CHECK(ran == 1);
}
