// Running Liger-Kernel's own benchmark scripts on this machine, for
// `kistore bench liger`: the measuring half (the command turns the rows into
// runs or controlled reruns, store/ingest/import_liger.h and store/write/rerun.h).
//
// The scripts run from a scratch copy of the checkout's benchmark/scripts/
// folder, beside an empty data/ folder of their own, so that the user's
// checkout is never written and the rows read back are exactly the ones this
// run measured (Liger's utils.py merges into ../data/all_benchmark_data.csv
// beside the script; a copy of the published table there would come back as
// if measured here). The checkout's src/ is first on sys.path, with a
// liger_kernel-<version>.dist-info naming the checkout's version (from its
// pyproject.toml), because utils.py reads its version with importlib.metadata
// and the scripts must measure the checkout, not an installed release. Each
// script runs alone, as `PY SCRIPT --overwrite` would but with Python
// isolated (`PY -I -B -c BOOTSTRAP ...`, store/edge/process.h: the script's
// folder and the path above put on sys.path by the bootstrap, no PYTHON*
// variable read), in the scratch copy of the scripts, with a time limit;
// its rows are taken only when it exits 0. The environment is captured
// (store/ingest/capture.h) before the first script and after the last.
//
// Thread-safety: one call at a time per scratch folder; otherwise reentrant.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "objects/json.h"
#include "store/edge/process.h"

namespace kistore {

struct LigerBenchOptions {
  std::string liger_dir;             // a Liger-Kernel checkout (has benchmark/scripts/)
  std::vector<std::string> scripts;  // file names in benchmark/scripts/ (a path: its file name)
  std::string python = "python3";
  bool python_given = false;  // as CaptureOptions::python_given
  std::chrono::seconds time_limit{1200};  // per script
  // Folders put first on the scripts' sys.path after the checkout's own
  // (--pythonpath: Python runs isolated and reads no PYTHONPATH).
  std::vector<std::string> python_path;
  // Environment, search path and temporary folder of every program
  // (store/edge/process.h); the scratch folder is made under temp_parent.
  ProcessContext process;
  bool keep_scratch = false;              // leave it (its path is in LigerBenchResult)
  // Told a line per script as it starts and as it ends ("[1/2] benchmark_geglu.py: 40 rows in 61.2 s").
  std::function<void(const std::string&)> progress;
};

struct LigerScriptResult {
  std::string script;      // its file name
  bool succeeded = false;  // exited 0 and wrote its table
  std::string outcome;     // "exit 0", "exit 1", "timed out after 1200 s", "wrote no rows", ...
  std::string stderr_tail; // the last lines of its stderr, when it failed
  double seconds = 0;
  std::string csv;         // the table it wrote (succeeded only)
  std::string csv_name;    // a name for it in messages: "<script>:all_benchmark_data.csv"
};

struct LigerBenchResult {
  Json environment_before, environment_after;  // ExecutionEnvironment documents
  bool without_torch = false;                  // as CaptureResult (the message is in `notes`)
  std::vector<std::string> notes;              // warnings for the user
  std::vector<LigerScriptResult> scripts;      // in the order given
  std::string scratch;                         // the scratch folder (removed unless keep_scratch)
  std::vector<std::string> environment_changes;  // non-empty: the environment changed (refuse the rows)
};

// Checks the checkout and the scripts, then runs them. Throws
// Error(kInvalidInput), before running anything, when DIR has no
// benchmark/scripts/ folder, a SCRIPT is not in it, or no environment can be
// captured (no nvidia-smi, a tool failing: store/ingest/capture.h); Error(kIO) when
// the scratch folder cannot be made. A script that fails, crashes or runs too
// long is a LigerScriptResult, not an exception.
LigerBenchResult run_liger_benchmarks(const LigerBenchOptions& options);

// The version in a pyproject.toml's [project] table (`version = "0.8.2"`), or
// "" when it has none. Pure.
std::string pyproject_version(std::string_view toml);

}  // namespace kistore
