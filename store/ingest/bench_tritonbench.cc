#include "store/ingest/bench_tritonbench.h"

#include <cctype>
#include <filesystem>

#include "objects/error.h"
#include "objects/json.h"
#include "store/edge/process.h"

namespace kistore {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxOperatorName = 100;

// Whether `op` may be passed to run.py as an operator's name: it names a
// module of tritonbench/operators (or a loader's operator), never a path or
// an option.
bool operator_name(const std::string& op) {
  if (op.empty() || op.size() > kMaxOperatorName || op[0] == '-' || op[0] == '.') return false;
  for (unsigned char c : op)
    if (!std::isalnum(c) && c != '_' && c != '-' && c != '.') return false;
  return true;
}

BenchItemResult run_operator(const BenchOptions& options, const std::string& mode, const fs::path& run_py,
                             const fs::path& scratch, const std::string& op, const std::vector<std::string>& path) {
  // A folder of its own for each operator's output: what one did to its
  // folder (a link put in its place) is no other's concern.
  const OutputFolder folder((scratch / "out-XXXXXX").string(), true);
  const std::string file = op + ".json";
  std::vector<std::string> args{"--op", op, "--metrics", "latency,accuracy", "--output-json",
                                folder.path() + "/" + file};
  if (!mode.empty()) args.insert(args.end(), {"--mode", mode});
  const ProcessResult p = run_process(isolated_script(options, path, run_py.string(), args, (scratch / "work").string()));
  BenchItemResult r;
  r.name = op;
  r.output_name = op + ":" + file;
  take_outcome(r, p, folder, file, kMaxInputBytes, "results (--output-json)");
  return r;
}

}  // namespace

BenchResult run_tritonbench_benchmarks(const BenchOptions& options, const std::string& mode) {
  const fs::path checkout = fs::absolute(options.checkout);
  std::error_code ec;
  if (!fs::is_regular_file(checkout / "run.py", ec) || !fs::is_directory(checkout / "tritonbench", ec))
    throw InvalidInput("--tritonbench " + quoted_excerpt(options.checkout) +
                       ": expected a tritonbench checkout (with run.py and tritonbench/), found none");
  if (options.items.empty()) throw InvalidInput("bench tritonbench: name at least one OP (e.g. softmax)");
  for (const std::string& op : options.items)
    if (!operator_name(op))
      throw InvalidInput("OP " + quoted_excerpt(op) +
                         ": expected the name of a tritonbench operator (letters, digits, '_', '-' and '.', at most " +
                         std::to_string(kMaxOperatorName) + ", not starting with '-' or '.'), e.g. softmax");
  if (!mode.empty() && mode != "fwd" && mode != "bwd" && mode != "fwd_bwd" && mode != "fwd_no_grad")
    throw InvalidInput("--mode " + quoted_excerpt(mode) + ": expected fwd, bwd, fwd_bwd or fwd_no_grad");
  BenchProject project;
  project.command = "bench tritonbench";
  project.prepare = [&](const std::string& scratch) {
    fs::create_directories(fs::path(scratch) / "work");
    return std::vector<std::string>{};  // run.py's own folder, the checkout, is first already
  };
  project.run = [&](const std::string& scratch, const std::string& op, const std::vector<std::string>& path) {
    return run_operator(options, mode, checkout / "run.py", scratch, op, path);
  };
  return run_bench_items(options, options.items, project);
}

}  // namespace kistore
