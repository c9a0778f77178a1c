#include "store/ingest/bench_liger.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "objects/error.h"
#include "store/ingest/capture.h"
#include "store/edge/files.h"
#include "store/edge/process.h"

namespace kistore {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kStderrLines = 15;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file(const fs::path& path, const std::string& text) { replace_file(path.string(), text, "bench"); }

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

// The scripts' names, checked against the checkout before anything runs.
std::vector<std::string> script_names(const LigerBenchOptions& options, const fs::path& scripts_dir) {
  if (options.scripts.empty()) throw InvalidInput("bench liger: name at least one SCRIPT (e.g. benchmark_geglu.py)");
  std::vector<std::string> names;
  for (const std::string& s : options.scripts) {
    std::string name = fs::path(s).filename().string();
    if (name.empty() || !fs::is_regular_file(scripts_dir / name))
      throw InvalidInput("SCRIPT " + quoted_excerpt(s) + ": expected a script in " + scripts_dir.string() +
                         " (e.g. benchmark_geglu.py), found none");
    names.push_back(name);
  }
  return names;
}

// Runs SCRIPT as `python SCRIPT ARGS...` would, under -I: -I leaves the
// script's folder off sys.path, and PYTHONPATH unread, so both are put there
// from the arguments: `-c BOOTSTRAP N DIR1..DIRN SCRIPT ARGS...`.
constexpr const char* kBootstrap = R"PY(# kistore bench: a benchmark script, isolated
import os, runpy, sys
n = int(sys.argv[1])
script = sys.argv[2 + n]
sys.path[:0] = [os.path.dirname(script)] + sys.argv[2:2 + n]
sys.argv = sys.argv[2 + n:]
runpy.run_path(script, run_name="__main__")
)PY";

// The scratch folder: benchmark/scripts (a copy), benchmark/data (empty),
// site/ (the dist-info). Returns the folders put first on sys.path: the
// checkout's src/, the scripts, site/, then the user's --pythonpath.
std::vector<std::string> prepare_scratch(const fs::path& scratch, const fs::path& checkout, const fs::path& scripts_dir,
                                         const std::vector<std::string>& user_path) {
  std::error_code ec;
  fs::create_directories(scratch / "benchmark", ec);
  fs::copy(scripts_dir, scratch / "benchmark" / "scripts", fs::copy_options::recursive, ec);
  if (ec) throw IOError(scratch.string() + ": cannot copy " + scripts_dir.string() + ": " + ec.message());
  fs::remove_all(scratch / "benchmark" / "scripts" / "__pycache__", ec);
  fs::create_directories(scratch / "benchmark" / "data");
  fs::create_directories(scratch / "site");
  std::vector<std::string> path{(checkout / "src").string(), (scratch / "benchmark" / "scripts").string()};
  std::string version = pyproject_version(read_file(checkout / "pyproject.toml"));
  if (!version.empty()) {
    fs::path info = scratch / "site" / ("liger_kernel-" + version + ".dist-info");
    fs::create_directories(info);
    write_file(info / "METADATA", "Metadata-Version: 2.1\nName: liger-kernel\nVersion: " + version + "\n");
    path.push_back((scratch / "site").string());
  }
  path.insert(path.end(), user_path.begin(), user_path.end());
  return path;
}

LigerScriptResult run_script(const LigerBenchOptions& options, const fs::path& scratch, const std::string& name,
                             const std::vector<std::string>& python_path) {
  const fs::path dir = scratch / "benchmark" / "scripts";
  const fs::path table = scratch / "benchmark" / "data" / "all_benchmark_data.csv";
  std::vector<std::string> args{"-c", kBootstrap, std::to_string(python_path.size())};
  args.insert(args.end(), python_path.begin(), python_path.end());
  args.push_back((dir / name).string());
  args.push_back("--overwrite");
  ProcessSpec spec = process_spec(options.process, isolated_python(options.python, std::move(args)));
  spec.cwd = dir.string();
  spec.time_limit = options.time_limit;
  spec.stdout_limit = 0;  // the scripts' banners: not needed
  spec.stderr_tail = 16u << 10;
  ProcessResult p = run_process(spec);
  LigerScriptResult r;
  r.script = name;
  r.seconds = static_cast<double>(p.elapsed.count()) / 1000;
  r.outcome = p.outcome();
  r.csv_name = name + ":all_benchmark_data.csv";
  std::error_code ec;
  if (p.succeeded() && fs::is_regular_file(table, ec)) {
    r.csv = read_file(table);
    r.succeeded = true;
  } else if (p.succeeded()) {
    r.outcome = "exit 0, but it wrote no table (benchmark/data/all_benchmark_data.csv)";
  }
  if (!r.succeeded) r.stderr_tail = last_lines(p.err_tail, kStderrLines);
  fs::remove(table, ec);  // the next script's rows are its own
  return r;
}

}  // namespace

std::string pyproject_version(std::string_view toml) {
  std::istringstream lines{std::string(toml)};
  std::string line;
  bool in_project = false;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line[0] == '[') {
      in_project = line == "[project]";
      continue;
    }
    if (!in_project || line.rfind("version", 0) != 0) continue;
    std::size_t eq = line.find('=');
    std::size_t open = line.find('"', eq == std::string::npos ? 0 : eq);
    std::size_t close = open == std::string::npos ? open : line.find('"', open + 1);
    if (eq == std::string::npos || close == std::string::npos) return "";
    std::string key = line.substr(0, eq);
    while (!key.empty() && key.back() == ' ') key.pop_back();
    if (key != "version") continue;
    std::string v = line.substr(open + 1, close - open - 1);
    bool ok = !v.empty() && v.size() <= 64;
    for (char c : v) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-');
    return ok ? v : "";
  }
  return "";
}

LigerBenchResult run_liger_benchmarks(const LigerBenchOptions& options) {
  const fs::path checkout = options.liger_dir;
  const fs::path scripts_dir = checkout / "benchmark" / "scripts";
  std::error_code ec;
  if (!fs::is_directory(scripts_dir, ec))
    throw InvalidInput("--liger " + quoted_excerpt(options.liger_dir) +
                       ": expected a Liger-Kernel checkout (with benchmark/scripts/), found none");
  const std::vector<std::string> names = script_names(options, scripts_dir);

  WorkFolder scratch(options.process.temp_parent, "bench");
  if (options.keep_scratch) scratch.keep();
  LigerBenchResult result;
  result.scratch = scratch.path();

  const std::vector<std::string> python_path =
      prepare_scratch(result.scratch, fs::absolute(checkout), scripts_dir, options.python_path);
  CaptureOptions capture;
  capture.python = options.python;
  capture.python_given = options.python_given;
  capture.python_path = python_path;
  capture.process = options.process;
  auto captured = [&](const char* when) {
    CaptureResult c = capture_environment(capture);
    if (c.no_gpu_tool) throw InvalidInput("bench liger: " + c.message);
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
    if (options.progress) options.progress(counter + ": running (time limit " +
                                           std::to_string(options.time_limit.count()) + " s)");
    LigerScriptResult r = run_script(options, result.scratch, names[i], python_path);
    if (options.progress)
      options.progress(counter + (r.succeeded ? ": done" : ": FAILED, " + r.outcome) + " after " +
                       seconds_text(r.seconds));
    result.scripts.push_back(std::move(r));
  }
  result.environment_after = captured("after");
  result.environment_changes = environment_changes(result.environment_before, result.environment_after);
  return result;
}

}  // namespace kistore
