#include "store/edge/interrupt.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace kistore {
namespace {

struct Interruptible {
  std::mutex mutex;
  std::set<std::string> temporaries;
  std::set<pid_t> children;
  // The children this process had before it started any program (one that
  // exec'd kistore leaves its own children to it): never ended.
  std::set<pid_t> inherited;
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

// Whether adopt_orphans made this process a subreaper: until then, nothing
// is adopted, and no child is taken for a leftover.
std::atomic<bool> adopting{false};

// Every process's parent, read from /proc/PID/stat, whose fourth field
// (after the command name's closing parenthesis, which the name itself may
// hold) is the parent's id.
std::vector<std::pair<pid_t, pid_t>> process_parents() {
  std::vector<std::pair<pid_t, pid_t>> out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  while (const dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
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
    if (paren && std::sscanf(paren + 1, " %c %ld", &state, &parent) == 2)
      out.emplace_back(static_cast<pid_t>(pid), static_cast<pid_t>(parent));
  }
  ::closedir(proc);
  return out;
}

// This process's children but those in `spared`, and all their descendants:
// what the programs it started left running (spared: the children it waits
// for, and those it had before it started any).
std::vector<pid_t> leftovers(const std::set<pid_t>& spared) {
  std::multimap<pid_t, pid_t> children;
  for (const auto& [pid, parent] : process_parents()) children.emplace(parent, pid);
  std::vector<pid_t> out;
  auto [first, last] = children.equal_range(::getpid());
  for (auto it = first; it != last; ++it)
    if (!spared.count(it->second)) out.push_back(it->second);
  for (std::size_t i = 0; i < out.size() && out.size() < 100000; ++i) {
    auto [from, to] = children.equal_range(out[i]);
    for (auto it = from; it != to; ++it) out.push_back(it->second);
  }
  return out;
}

// end_adopted_children with the spared set at hand. Each pass stops every
// leftover found (SIGSTOP: none forks again), then kills it and the group it
// leads, if any; a process forked between the look and the stop is adopted
// when its parent dies and found by the next pass.
void end_untracked(const std::set<pid_t>& spared, std::chrono::milliseconds patience) {
  if (!adopting) return;
  const auto until = std::chrono::steady_clock::now() + patience;
  std::set<pid_t> killed;  // to tell a pass that found new ones from one that found only the dying
  for (;;) {
    const std::vector<pid_t> found = leftovers(spared);
    if (found.empty()) break;
    bool fresh = false;
    for (pid_t pid : found) ::kill(pid, SIGSTOP);
    for (pid_t pid : found) {
      // A group id is never reused while the group lives: -pid is the group
      // this process leads (setsid made it), or none.
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      fresh = killed.insert(pid).second || fresh;
    }
    for (pid_t pid : found) ::waitpid(pid, nullptr, WNOHANG);  // this process's children among them
    if (std::chrono::steady_clock::now() > until) break;
    if (!fresh) ::usleep(1000);  // only zombies left, or processes dying: let them
  }
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
    std::set<pid_t> spared = s.inherited;
    spared.insert(s.children.begin(), s.children.end());
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(800);
    for (;;) {
      end_untracked(spared, std::chrono::milliseconds(0));
      bool all_ended = true;
      for (pid_t pid : s.children) all_ended = all_ended && ended(pid);
      if (all_ended || std::chrono::steady_clock::now() > until) break;
      ::usleep(10000);
    }
    // Then the programs' whole trees: a program that outlived its SIGTERM
    // still holds its own children outside its group (a session of their
    // own), which no scan from kistore's spared children reaches.
    for (pid_t group : s.children) ::kill(-group, SIGKILL);
    end_untracked(s.inherited, std::chrono::milliseconds(200));
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
  static const bool done = [] {
    Interruptible& s = state();
    std::lock_guard lock(s.mutex);
    for (const auto& [pid, parent] : process_parents())
      if (parent == ::getpid() && !s.children.count(pid)) s.inherited.insert(pid);
    const bool on = ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
    adopting = on;
    return on;
  }();
  (void)done;
}

void end_adopted_children(std::chrono::milliseconds patience) {
  std::set<pid_t> spared;
  {
    Interruptible& s = state();
    std::lock_guard lock(s.mutex);
    spared = s.inherited;
    spared.insert(s.children.begin(), s.children.end());
  }
  end_untracked(spared, patience);
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
