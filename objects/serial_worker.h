// SerialWorker: work handed to one thread beside the caller's, done there one
// task at a time in the order it was handed over, so that the caller can go
// on with what comes next (reading and parsing the next records while the
// last ones are validated and written). The results are those of running the
// tasks in the caller's thread in the same order: only when they run differs.
//
// Bounded: post() waits while `max_pending` tasks are waiting, so what is in
// flight is a few tasks, however fast the caller makes them. If a task
// throws, the tasks after it are dropped (as they would never have run in the
// caller's thread) and the exception is rethrown to the caller by the next
// post() or wait().
//
// Thread-safety: one caller thread uses a SerialWorker; the tasks run on its
// own thread, one at a time.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace kistore {

class SerialWorker {
 public:
  // Starts the thread (std::system_error when none can be started).
  explicit SerialWorker(std::size_t max_pending = 2) : max_pending_(max_pending), thread_([this] { run(); }) {}
  // Waits for the tasks handed over (an exception of theirs is dropped:
  // call wait() to see it), then ends the thread.
  ~SerialWorker() {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  SerialWorker(const SerialWorker&) = delete;
  SerialWorker& operator=(const SerialWorker&) = delete;

  // Hands `task` over, after every task posted before it. Rethrows (once) the
  // exception of a task that failed, and then drops `task`.
  void post(std::function<void()> task) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return failure_ || tasks_.size() < max_pending_; });
    rethrow(lock);
    tasks_.push_back(std::move(task));
    lock.unlock();
    changed_.notify_all();
  }

  // Waits until every task handed over has run (or one failed), and rethrows
  // (once) the exception of the one that failed.
  void wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return failure_ || (tasks_.empty() && !busy_); });
    rethrow(lock);
  }

 private:
  void rethrow(std::unique_lock<std::mutex>& lock) {
    if (!failure_) return;
    std::exception_ptr failure = std::exchange(failure_, nullptr);
    failed_ = true;
    lock.unlock();
    std::rethrow_exception(failure);
  }
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return closing_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      if (failure_ || failed_) {  // after a failure: dropped
        changed_.notify_all();
        continue;
      }
      busy_ = true;
      lock.unlock();
      changed_.notify_all();
      std::exception_ptr failure;
      try {
        task();
      } catch (...) {
        failure = std::current_exception();
      }
      task = nullptr;  // what it holds is freed here, not under the lock
      lock.lock();
      busy_ = false;
      if (failure) {
        failure_ = failure;
        tasks_.clear();
      }
      changed_.notify_all();
    }
  }

  const std::size_t max_pending_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> tasks_;
  bool busy_ = false, closing_ = false;
  bool failed_ = false;        // a failure was rethrown: later tasks are dropped too
  std::exception_ptr failure_;  // not yet rethrown
  std::thread thread_;          // last: starts once the rest is made
};

}  // namespace kistore
