#include "store/ingest/bench_liger.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "objects/error.h"
#include "store/ingest/capture.h"
#include "store/edge/files.h"
#include "store/edge/process.h"

namespace kistore {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file(const fs::path& path, const std::string& text) { replace_file(path.string(), text, "bench"); }

// The scripts' names, checked against the checkout before anything runs.
std::vector<std::string> script_names(const BenchOptions& options, const fs::path& scripts_dir) {
  if (options.items.empty()) throw InvalidInput("bench liger: name at least one SCRIPT (e.g. benchmark_geglu.py)");
  std::vector<std::string> names;
  for (const std::string& s : options.items) {
    std::string name = fs::path(s).filename().string();
    if (name.empty() || !fs::is_regular_file(scripts_dir / name))
      throw InvalidInput("SCRIPT " + quoted_excerpt(s) + ": expected a script in " + scripts_dir.string() +
                         " (e.g. benchmark_geglu.py), found none");
    names.push_back(name);
  }
  return names;
}

// The scratch folder: benchmark/scripts (a copy), benchmark/data (empty),
// site/ (the dist-info). Returns the folders put first on sys.path: the
// checkout's src/, the scripts, site/.
std::vector<std::string> prepare_scratch(const fs::path& scratch, const fs::path& checkout, const fs::path& scripts_dir) {
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
  return path;
}

BenchItemResult run_script(const BenchOptions& options, const fs::path& scratch, const std::string& name,
                           const std::vector<std::string>& python_path) {
  const fs::path dir = scratch / "benchmark" / "scripts";
  BenchItemResult r;
  r.name = name;
  r.output_name = name + ":all_benchmark_data.csv";
  // The scripts write ../data/ beside them: a script before this one may
  // have put a link in its place, which fails this one, not the bench.
  std::optional<OutputFolder> opened;
  try {
    opened.emplace((scratch / "benchmark" / "data").string(), false);
  } catch (const Error& e) {
    r.outcome = std::string("not run: ") + e.what();
    return r;
  }
  const OutputFolder& data = *opened;
  const ProcessResult p = run_process(isolated_script(options, python_path, (dir / name).string(), {"--overwrite"},
                                                      dir.string()));
  take_outcome(r, p, data, "all_benchmark_data.csv", kMaxBenchTableBytes,
               "table (benchmark/data/all_benchmark_data.csv)");
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

BenchResult run_liger_benchmarks(const BenchOptions& options) {
  const fs::path checkout = options.checkout;
  const fs::path scripts_dir = checkout / "benchmark" / "scripts";
  std::error_code ec;
  if (!fs::is_directory(scripts_dir, ec))
    throw InvalidInput("--liger " + quoted_excerpt(options.checkout) +
                       ": expected a Liger-Kernel checkout (with benchmark/scripts/), found none");
  const std::vector<std::string> names = script_names(options, scripts_dir);
  BenchProject project;
  project.command = "bench liger";
  project.prepare = [&](const std::string& scratch) {
    return prepare_scratch(scratch, fs::absolute(checkout), scripts_dir);
  };
  project.run = [&](const std::string& scratch, const std::string& name, const std::vector<std::string>& path) {
    return run_script(options, scratch, name, path);
  };
  return run_bench_items(options, names, project);
}

}  // namespace kistore
