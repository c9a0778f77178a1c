#include "store/edge/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "objects/error.h"
#include "store/edge/interrupt.h"

namespace kistore {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The programs being run now, by every thread. When the last one ends, and
// one of them was to end what it leaves (ProcessSpec::end_what_it_leaves),
// what they left running outside their process groups, adopted by kistore
// (adopt_orphans), is ended; no program starts meanwhile, so that nothing
// just started is taken for something left behind.
std::mutex running_mutex;
int running = 0;
bool end_owed = false;
struct Running {
  explicit Running(bool end_what_it_leaves) {
    std::lock_guard lock(running_mutex);
    ++running;
    end_owed = end_owed || end_what_it_leaves;
  }
  ~Running() {
    std::lock_guard lock(running_mutex);
    if (--running == 0 && end_owed) {
      end_adopted_children(std::chrono::milliseconds(2000));
      end_owed = false;
    }
  }
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;
};

std::vector<std::string> child_environment(const ProcessSpec& spec) {
  std::vector<std::string> out;
  for (const auto& [name, value] : spec.env) out.push_back(name + "=" + value);
  return out;
}

bool executable_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the child, between fork and exec: only async-signal-safe calls. A
// failure is reported as errno through `report` (close-on-exec, so a
// successful exec closes it with nothing written).
[[noreturn]] void exec_child(const ProcessSpec& spec, const char* program, char* const* argv, char* const* envp,
                             int out_fd, int err_fd, int report) {
  setpgid(0, 0);
  reset_signals_in_child();
  int err = 0;
  const int in_fd = open(spec.stdin_file.empty() ? "/dev/null" : spec.stdin_file.c_str(), O_RDONLY | O_CLOEXEC);
  if (in_fd >= 0) dup2(in_fd, 0);
  else if (!spec.stdin_file.empty()) err = errno;  // the input it was to read: not started
  dup2(out_fd, 1);
  dup2(err_fd, 2);
  if (err != 0) {
  } else if (chdir(spec.cwd.c_str()) != 0) {
    err = errno;
  } else {
    execve(program, argv, envp);
    err = errno;
  }
  ssize_t ignored = write(report, &err, sizeof err);
  (void)ignored;
  _exit(127);
}

void append_bounded(std::string& kept, const char* data, std::size_t n, std::size_t limit, bool* truncated) {
  std::size_t room = kept.size() < limit ? limit - kept.size() : 0;
  if (n > room && truncated) *truncated = true;
  kept.append(data, std::min(n, room));
}

void append_tail(std::string& kept, const char* data, std::size_t n, std::size_t tail) {
  kept.append(data, n);
  if (kept.size() > 2 * tail) kept.erase(0, kept.size() - tail);
}

}  // namespace

std::string ProcessResult::outcome() const {
  if (!started) return "not started: " + start_error;
  if (timed_out) return "timed out after " + std::to_string((elapsed.count() + 500) / 1000) + " s";
  if (signal) return "killed by signal " + std::to_string(*signal);
  if (exit_code) return "exit " + std::to_string(*exit_code);
  return "ended";
}

std::string last_lines(const std::string& text, std::size_t lines) {
  std::size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
  std::size_t pos = end;
  for (std::size_t n = 0; pos > 0; --pos)
    if (text[pos - 1] == '\n' && ++n == lines) break;
  return text.substr(pos, end - pos);
}

std::optional<std::string> find_program(const std::string& name, const std::vector<std::string>& search_path) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) return fs::absolute(name).lexically_normal().string();
  for (const std::string& dir : search_path) {
    if (dir.empty() || dir.front() != '/') continue;  // "", "." and relative folders: never the current one
    std::string candidate = dir + (dir.back() == '/' ? "" : "/") + name;
    if (executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

ProcessSpec process_spec(const ProcessContext& context, std::vector<std::string> argv) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.env = context.env;
  spec.search_path = context.search_path;
  return spec;
}

std::vector<std::string> isolated_python(const std::string& python, std::vector<std::string> args) {
  std::vector<std::string> out{python, "-I", "-B"};
  for (std::string& a : args) out.push_back(std::move(a));
  return out;
}

WorkFolder::WorkFolder(const std::string& parent, const std::string& prefix) {
  if (parent.empty() || parent.front() != '/')
    throw InvalidInput("a working folder's parent must be an absolute path, found \"" + parent + "\"");
  std::string tmpl = (fs::path(parent) / ("kistore-" + prefix + "-XXXXXX")).string();
  // Removed if the command is interrupted (interrupt.h), made and tracked as
  // one step; mkdtemp fills in `tmpl`, which is what is tracked.
  if (!make_tracked(tmpl, [&] { return mkdtemp(tmpl.data()) != nullptr; }))
    throw IOError(parent + ": cannot make a working folder: " + std::strerror(errno));
  path_ = tmpl;
}

WorkFolder::~WorkFolder() {
  std::error_code ignored;
  if (!keep_) fs::remove_all(path_, ignored);
  untrack_temporary(path_);
}

ProcessResult run_process(const ProcessSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) throw InvalidInput("run_process: no program to run");
  if (spec.cwd.empty() || spec.cwd.front() != '/')
    throw InvalidInput("run_process: expected an absolute working folder, found \"" + spec.cwd + "\"");
  ProcessResult result;
  std::optional<std::string> program = find_program(spec.argv[0], spec.search_path);
  if (!program) {
    result.not_found = true;
    result.start_error = spec.argv[0] + ": not found on PATH";
    std::string skipped;
    for (const std::string& dir : spec.search_path)
      if (dir.empty() || dir.front() != '/') skipped += (skipped.empty() ? "\"" : ", \"") + dir + "\"";
    if (!skipped.empty())
      result.start_error += " (kistore looks in absolute folders only; it skipped " + skipped + ")";
    return result;
  }
  std::vector<std::string> args = spec.argv;
  std::vector<std::string> env = child_environment(spec);
  std::vector<char*> argv = pointers(args), envp = pointers(env);

  if (spec.end_what_it_leaves) adopt_orphans();
  const Running running_now(spec.end_what_it_leaves);
  int out_pipe[2], err_pipe[2], report_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) throw IOError(std::string("pipe: ") + std::strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0 || pipe2(report_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    throw IOError(std::string("pipe: ") + std::strerror(errno));
  }
  const Clock::time_point start = Clock::now();
  pid_t pid = fork();
  if (pid == 0)
    exec_child(spec, program->c_str(), argv.data(), envp.data(), out_pipe[1], err_pipe[1], report_pipe[1]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(report_pipe[1]);
  if (pid < 0) {
    for (int fd : {out_pipe[0], err_pipe[0], report_pipe[0]}) close(fd);
    result.start_error = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  setpgid(pid, pid);  // also in the child: whichever runs first
  track_child(pid);    // stopped if the command is interrupted (interrupt.h)

  int child_errno = 0;
  ssize_t got = read(report_pipe[0], &child_errno, sizeof child_errno);
  close(report_pipe[0]);
  if (got == sizeof child_errno) {
    waitpid(pid, nullptr, 0);
    untrack_child(pid);
    close(out_pipe[0]);
    close(err_pipe[0]);
    result.not_found = child_errno == ENOENT;
    result.start_error = *program + ": " + std::strerror(child_errno);
    return result;
  }
  result.started = true;

  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  bool open_fd[2] = {true, true};
  int status = 0;
  bool exited = false, term_sent = false;
  Clock::time_point exited_at{}, term_at{};
  char buf[65536];
  while (open_fd[0] || open_fd[1] || !exited) {
    const Clock::time_point now = Clock::now();
    if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      exited_at = now;
    }
    // A grandchild that keeps the pipes open must not keep kistore waiting.
    if (exited && now - exited_at > std::chrono::seconds(1)) break;
    if (!exited && spec.time_limit.count() > 0 && now - start > spec.time_limit) {
      if (!term_sent) {
        kill(-pid, SIGTERM);
        term_sent = true;
        term_at = now;
        result.timed_out = true;
      } else if (now - term_at > std::chrono::seconds(2)) {
        kill(-pid, SIGKILL);
      }
    }
    if (!open_fd[0] && !open_fd[1]) {
      if (!exited) usleep(20000);
      continue;
    }
    for (int i = 0; i < 2; ++i) fds[i].fd = open_fd[i] ? (i ? err_pipe[0] : out_pipe[0]) : -1;
    if (poll(fds, 2, 50) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (!open_fd[i] || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        open_fd[i] = false;
        continue;
      }
      if (i == 0) append_bounded(result.out, buf, static_cast<std::size_t>(n), spec.stdout_limit, &result.stdout_truncated);
      else append_tail(result.err_tail, buf, static_cast<std::size_t>(n), spec.stderr_tail);
    }
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  kill(-pid, SIGKILL);  // whatever of its group is left
  if (!exited) waitpid(pid, &status, 0);
  untrack_child(pid);
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  if (result.err_tail.size() > spec.stderr_tail) result.err_tail.erase(0, result.err_tail.size() - spec.stderr_tail);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace kistore
