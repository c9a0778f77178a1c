#include "store/edge/interrupt.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
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

// The processes whose parent is this one, but those in `tracked`: read from
// /proc/PID/stat, whose fourth field (after the command name's closing
// parenthesis, which the name itself may hold) is the parent's id.
std::vector<pid_t> untracked_children(const std::set<pid_t>& tracked) {
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  while (const dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == self || tracked.count(static_cast<pid_t>(pid))) continue;
    const std::string path = std::string("/proc/") + e->d_name + "/stat";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[1024];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) continue;
    buf[n] = '\0';
    const char* paren = std::strrchr(buf, ')');
    char state = 0;
    long parent = 0;
    if (paren && std::sscanf(paren + 1, " %c %ld", &state, &parent) == 2 && parent == self)
      out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return out;
}

// end_adopted_children with the tracked set at hand (the caller holds the lock).
std::size_t end_untracked(const std::set<pid_t>& tracked, std::chrono::milliseconds patience) {
  const auto until = std::chrono::steady_clock::now() + patience;
  std::set<pid_t> killed;
  for (;;) {
    const std::vector<pid_t> children = untracked_children(tracked);
    if (children.empty()) break;
    for (pid_t pid : children) {
      // A group id is never reused while the group lives: -pid is the group
      // this process leads (setsid made it), or none.
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      killed.insert(pid);
    }
    for (pid_t pid : children) ::waitpid(pid, nullptr, WNOHANG);
    if (std::chrono::steady_clock::now() > until) break;
    ::usleep(5000);
  }
  return killed.size();
}

// Whether a tracked child has ended (reaped by its own thread, or a zombie
// left for it: either way its children have been adopted).
bool ended(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return true;  // ECHILD
  return info.si_pid == pid;
}

[[noreturn]] void interrupted() {
  Interruptible& s = state();
  // Held to the end: no writer registers or renames a temporary file while
  // they are removed, and none runs on after.
  s.mutex.lock();
  for (pid_t group : s.children) ::kill(-group, SIGTERM);
  // What they leave outside their groups is adopted as they end (adopt_orphans)
  // and killed; a program still running after 0.8 s is killed too.
  if (!s.children.empty()) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(800);
    for (;;) {
      end_untracked(s.children, std::chrono::milliseconds(0));
      bool all_ended = true;
      for (pid_t pid : s.children) all_ended = all_ended && ended(pid);
      if (all_ended || std::chrono::steady_clock::now() > until) break;
      ::usleep(10000);
    }
    for (pid_t group : s.children) ::kill(-group, SIGKILL);
    end_untracked(s.children, std::chrono::milliseconds(100));
  }
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

void adopt_orphans() {
  static const bool done = [] { return ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0; }();
  (void)done;
}

std::size_t end_adopted_children(std::chrono::milliseconds patience) {
  std::set<pid_t> tracked;
  {
    Interruptible& s = state();
    std::lock_guard lock(s.mutex);
    tracked = s.children;
  }
  return end_untracked(tracked, patience);
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
