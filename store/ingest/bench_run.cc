#include "store/ingest/bench_run.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "objects/error.h"
#include "store/ingest/capture.h"

namespace kistore {
namespace {

constexpr std::size_t kStderrLines = 15;

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

// Runs SCRIPT as `python SCRIPT` would, under -I: -I leaves the script's
// folder off sys.path, and PYTHONPATH unread, so both are put there from the
// arguments: `-c BOOTSTRAP N DIR1..DIRN SCRIPT ARGS...`.
constexpr const char* kBootstrap = R"PY(# kistore bench: a benchmark script, isolated
import os, runpy, sys
n = int(sys.argv[1])
script = sys.argv[2 + n]
sys.path[:0] = [os.path.dirname(script)] + sys.argv[2:2 + n]
sys.argv = sys.argv[2 + n:]
runpy.run_path(script, run_name="__main__")
)PY";

}  // namespace

ProcessSpec isolated_script(const BenchOptions& options, const std::vector<std::string>& python_path,
                            const std::string& script, const std::vector<std::string>& args, const std::string& cwd) {
  std::vector<std::string> argv{"-c", kBootstrap, std::to_string(python_path.size())};
  argv.insert(argv.end(), python_path.begin(), python_path.end());
  argv.push_back(script);
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessSpec spec = process_spec(options.process, isolated_python(options.python, std::move(argv)));
  spec.cwd = cwd;
  spec.time_limit = options.time_limit;
  spec.stdout_limit = 0;  // the benchmarks' banners and tables: not needed
  spec.stderr_tail = 16u << 10;
  return spec;
}

OutputFolder::OutputFolder(std::string path, bool make) : path_(std::move(path)) {
  if (make && !::mkdtemp(path_.data())) throw IOError(path_ + ": cannot make the folder: " + std::strerror(errno));
  fd_ = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd_ < 0) throw IOError(path_ + ": cannot open the folder: " + std::strerror(errno));
}

OutputFolder::~OutputFolder() { ::close(fd_); }

void take_outcome(BenchItemResult& r, const ProcessResult& p, const OutputFolder& folder, const std::string& name,
                  std::size_t limit, const std::string& shown) {
  r.seconds = static_cast<double>(p.elapsed.count()) / 1000;
  r.outcome = p.outcome();
  if (p.succeeded()) {
    std::string why;
    if (std::optional<std::string> output = read_bench_output(folder, name, limit, why)) {
      r.output = std::move(*output);
      r.succeeded = true;
    } else {
      r.outcome = why.empty() ? "exit 0, but it wrote no " + shown : "exit 0, but " + shown + " " + why;
    }
  }
  if (!p.succeeded()) r.stderr_tail = last_lines(p.err_tail, kStderrLines);
  ::unlinkat(folder.fd(), name.c_str(), 0);
}

std::optional<std::string> read_bench_output(const OutputFolder& folder, const std::string& name, std::size_t limit,
                                             std::string& why) {
  // O_NONBLOCK: a FIFO put there is opened without waiting for a writer.
  const int fd = ::openat(folder.fd(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT)
      why = errno == ELOOP ? "is a symbolic link, not the file it was to write" : std::string(std::strerror(errno));
    return std::nullopt;
  }
  struct stat st;
  std::string out;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = "is not a regular file (a FIFO, socket, device or folder)";
  } else if (static_cast<std::uint64_t>(st.st_size) > limit) {
    why = "is larger than " + std::to_string(limit >> 20) + " MiB (" + std::to_string(st.st_size) + " bytes)";
  } else {
    // Read to the bound plus one byte: a file still growing is not taken whole.
    out.resize(limit + 1);
    std::size_t got = 0;
    for (;;) {
      const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
      if (got == out.size()) break;
    }
    if (got > limit) why = "is larger than " + std::to_string(limit >> 20) + " MiB";
    out.resize(got);
  }
  ::close(fd);
  if (!why.empty()) return std::nullopt;
  return out;
}

BenchResult run_bench_items(const BenchOptions& options, const std::vector<std::string>& names,
                            const BenchProject& project) {
  WorkFolder scratch(options.process.temp_parent, "bench");
  if (options.keep_scratch) scratch.keep();
  BenchResult result;
  result.scratch = scratch.path();

  std::vector<std::string> python_path = project.prepare(result.scratch);
  python_path.insert(python_path.end(), options.python_path.begin(), options.python_path.end());
  CaptureOptions capture;
  capture.python = options.python;
  capture.python_given = options.python_given;
  capture.python_path = python_path;
  capture.process = options.process;
  auto captured = [&](const char* when) {
    CaptureResult c = capture_environment(capture);
    if (c.no_gpu_tool) throw InvalidInput(project.command + ": " + c.message);
    if (c.without_torch) {
      result.without_torch = true;
      result.notes.push_back(std::string(when) + ": " + c.message);
    }
    return c.document;
  };
  result.environment_before = captured("before");
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::string counter = "[";
    counter.append(std::to_string(i + 1)).append("/").append(std::to_string(names.size())).append("] ").append(names[i]);
    if (options.progress)
      options.progress(counter + ": running (time limit " + std::to_string(options.time_limit.count()) + " s)");
    BenchItemResult r = project.run(result.scratch, names[i], python_path);
    if (options.progress)
      options.progress(counter + (r.succeeded ? ": done" : ": FAILED, " + r.outcome) + " after " +
                       seconds_text(r.seconds));
    result.items.push_back(std::move(r));
  }
  result.environment_after = captured("after");
  result.environment_changes = environment_changes(result.environment_before, result.environment_after);
  return result;
}

}  // namespace kistore
