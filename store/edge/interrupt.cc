#include "store/edge/interrupt.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

namespace kistore {
namespace {

struct Interruptible {
  std::mutex mutex;
  std::set<std::string> temporaries;
  std::set<pid_t> children;
  std::string written;
};

Interruptible& state() {
  static Interruptible* s = new Interruptible;  // never destroyed: the waiting thread outlives main's statics
  return *s;
}

sigset_t interrupt_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

void write_stderr(const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t w = ::write(2, text.data() + done, text.size() - done);
    if (w <= 0) return;
    done += static_cast<std::size_t>(w);
  }
}

[[noreturn]] void interrupted() {
  Interruptible& s = state();
  // Held to the end: no writer registers or renames a temporary file while
  // they are removed, and none runs on after.
  s.mutex.lock();
  for (pid_t group : s.children) ::kill(-group, SIGTERM);
  // Other threads run on while this one removes (a clone's fetch writing
  // into the folder being removed): a folder that gained an entry meanwhile
  // is not empty when its turn comes and stays. Removed again until it is
  // gone, for at most ~200 ms; a writer whose folder is gone fails at once.
  for (const std::string& path : s.temporaries) {
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
      if (!std::filesystem::exists(std::filesystem::symlink_status(path, ignored))) break;
      ::usleep(2000);
    }
  }
  std::string line = ::isatty(2) ? "\n" : "";
  line += s.written.empty() ? "error: interrupted; nothing was written\n"
                            : "error: interrupted; " + s.written + " was written, and nothing after it\n";
  write_stderr(line);
  ::_exit(130);
}

}  // namespace

void handle_interrupts() {
  sigset_t set = interrupt_signals();
  // A signal the parent ignores (nohup's SIGHUP, a shell's SIGINT for a
  // background command) stays ignored: a blocked signal is queued even when
  // ignored, so it must be left out of the set, not only left alone.
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    if (sigaction(signal, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) sigdelset(&set, signal);
  }
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int signal = 0;
    while (sigwait(&set, &signal) != 0) {
    }
    interrupted();
  }).detach();
}

void track_temporary(const std::string& path) {
  Interruptible& s = state();
  std::lock_guard lock(s.mutex);
  s.temporaries.insert(path);
}

bool make_tracked(const std::string& path, const std::function<bool()>& make) {
  Interruptible& s = state();
  bool made;
  int err;
  {
    std::lock_guard lock(s.mutex);
    made = make();
    err = errno;
    if (made) s.temporaries.insert(path);
  }
  errno = err;  // make()'s, for the caller's message (unlocking may change it)
  return made;
}

void untrack_temporary(const std::string& path) {
  Interruptible& s = state();
  std::lock_guard lock(s.mutex);
  s.temporaries.erase(path);
}

TemporaryPaths::~TemporaryPaths() {
  for (const std::string& path : paths_) untrack_temporary(path);
}

void TemporaryPaths::add(const std::string& path) {
  track_temporary(path);
  paths_.push_back(path);
}

void track_child(pid_t process_group) {
  Interruptible& s = state();
  std::lock_guard lock(s.mutex);
  s.children.insert(process_group);
}

void untrack_child(pid_t process_group) {
  Interruptible& s = state();
  std::lock_guard lock(s.mutex);
  s.children.erase(process_group);
}

void note_written(const std::string& what) {
  Interruptible& s = state();
  std::lock_guard lock(s.mutex);
  s.written = what;
}

void reset_signals_in_child() {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);
}

std::size_t tracked_temporaries() {
  Interruptible& s = state();
  std::lock_guard lock(s.mutex);
  return s.temporaries.size();
}

}  // namespace kistore
