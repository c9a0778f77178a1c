#include "store/ingest/bench_run.h"

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
  spec.end_what_it_leaves = true;  // nothing a benchmark starts runs on after it
  return spec;
}

BeneathDir OutputFolder::opened(std::string& path, bool make) {
  if (make && !::mkdtemp(path.data())) throw IOError(path + ": cannot make the folder: " + std::strerror(errno));
  return BeneathDir::open(path, false);
}

OutputFolder::OutputFolder(std::string path, bool make)
    : path_(std::move(path)), dir_(opened(path_, make)), folder_(dir_.folder("", false)) {}

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
  folder.folder().remove_file(name);
}

std::optional<std::string> read_bench_output(const OutputFolder& folder, const std::string& name, std::size_t limit,
                                             std::string& why) {
  // What stands there, said by kind; then read by the folder's own reader
  // (never through a link, a FIFO never waited on, at most `limit` bytes),
  // which also refuses what was swapped in since.
  struct stat st;
  if (!folder.folder().status(name, st)) return std::nullopt;
  if (S_ISLNK(st.st_mode)) {
    why = "is a symbolic link, not the file it was to write";
  } else if (!S_ISREG(st.st_mode)) {
    why = "is not a regular file (a FIFO, socket, device or folder)";
  } else if (static_cast<std::uint64_t>(st.st_size) > limit) {
    why = "is larger than " + std::to_string(limit >> 20) + " MiB (" + std::to_string(st.st_size) + " bytes)";
  } else {
    try {
      std::optional<std::string> out = folder.folder().read(name, limit);
      if (out) return out;
      why = "was replaced by something else than a file while kistore read it";
    } catch (const Error& e) {
      why = std::string("could not be read (") + e.what() + ")";  // it grew past the bound, say, as it was read
    }
  }
  return std::nullopt;
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
