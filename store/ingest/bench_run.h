// What `kistore bench` shares between the projects whose own benchmarks it
// runs on this machine (bench_liger.h: Liger-Kernel's scripts,
// bench_tritonbench.h: tritonbench's operators): the measuring half. The
// command turns what they wrote into runs or controlled reruns.
//
// Each item (a script, an operator) runs alone, in a scratch folder kistore
// made (the project's checkout is never written, and what is read back is
// what this run wrote), with Python isolated (`PY -I -B -c BOOTSTRAP ...`,
// store/edge/process.h: the script's folder and the folders given put on
// sys.path by the bootstrap, no PYTHON* variable read), within a time limit;
// its output is taken only when it exits 0, and read as a hostile file: a
// regular file at most a bound long, never through a link, never a FIFO. The
// environment is captured (store/ingest/capture.h) before the first item and
// after the last: a GPU, driver or software that changed in between makes
// the items' numbers comparable with neither.
//
// Thread-safety: one call at a time per scratch folder; otherwise reentrant.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "objects/json.h"
#include "store/edge/beneath.h"
#include "store/edge/process.h"

namespace kistore {

struct BenchOptions {
  std::string checkout;            // the project's checkout (never written)
  std::vector<std::string> items;  // what to run: Liger's scripts, tritonbench's operators
  std::string python = "python3";
  bool python_given = false;  // as CaptureOptions::python_given
  std::chrono::seconds time_limit{1200};  // per item
  // Folders put first on the items' sys.path after the project's own
  // (--pythonpath: Python runs isolated and reads no PYTHONPATH).
  std::vector<std::string> python_path;
  // Environment, search path and temporary folder of every program
  // (store/edge/process.h); the scratch folder is made under temp_parent.
  ProcessContext process;
  bool keep_scratch = false;  // leave it (its path is in BenchResult)
  // Told a line per item as it starts and as it ends ("[1/2] softmax: done after 61.2 s").
  std::function<void(const std::string&)> progress;
};

struct BenchItemResult {
  std::string name;         // the script or operator
  bool succeeded = false;   // exited 0 and wrote its output
  std::string outcome;      // "exit 0", "exit 1", "timed out after 1200 s", "wrote no table", ...
  std::string stderr_tail;  // the last lines of its stderr, when it failed
  double seconds = 0;
  std::string output;       // what it wrote (succeeded only): a table, a JSON text
  std::string output_name;  // a name for it in messages: "<item>:<file>"
};

struct BenchResult {
  Json environment_before, environment_after;  // ExecutionEnvironment documents
  bool without_torch = false;                  // as CaptureResult (the message is in `notes`)
  std::vector<std::string> notes;              // warnings for the user
  std::vector<BenchItemResult> items;          // in the order given
  std::string scratch;                         // the scratch folder (removed unless keep_scratch)
  std::vector<std::string> environment_changes;  // non-empty: the environment changed (refuse the output)
};

// How one project's items run. `prepare(scratch)` readies the scratch folder
// and returns the folders to put first on sys.path (the user's --pythonpath
// after them is added by run_bench_items); `run(scratch, name, path)` runs
// one item and reads back what it wrote.
struct BenchProject {
  std::string command;  // "bench liger": the start of messages
  std::function<std::vector<std::string>(const std::string& scratch)> prepare;
  std::function<BenchItemResult(const std::string& scratch, const std::string& name,
                                const std::vector<std::string>& python_path)>
      run;
};

// The frame around the items: a scratch folder, the environment captured
// before the first item and after the last, each item in turn with its
// progress lines. Throws Error(kInvalidInput) when no environment can be
// captured (no nvidia-smi, a tool failing: store/ingest/capture.h); Error(kIO)
// when the scratch folder cannot be made. An item that fails, crashes or
// runs too long is a BenchItemResult, not an exception.
BenchResult run_bench_items(const BenchOptions& options, const std::vector<std::string>& names,
                            const BenchProject& project);

// The program and arguments that run `script` with `args` as `python SCRIPT
// ARGS...` would, but isolated: the script's folder, then `python_path`,
// first on sys.path (`PY -I -B -c BOOTSTRAP N DIR1..DIRN SCRIPT ARGS...`),
// under the options' environment and time limit, in folder `cwd`, its stdout
// dropped and the tail of its stderr kept.
ProcessSpec isolated_script(const BenchOptions& options, const std::vector<std::string>& python_path,
                            const std::string& script, const std::vector<std::string>& args, const std::string& cwd);

// The folder an item writes its output into, opened by kistore before the
// item runs (store/edge/beneath.h: never through a link): its output is read
// from there, and removed from there, whatever the item did to the path
// meanwhile (a folder renamed away and a link put in its place leads kistore
// nowhere else).
class OutputFolder {
 public:
  // The folder `path` (a template ending in XXXXXX when `make`: a new folder
  // is made from it, as mkdtemp makes one). Error naming it when it cannot
  // be made or opened as a folder (an item before may have put a link in
  // its place).
  OutputFolder(std::string path, bool make);
  const std::string& path() const { return path_; }
  const BeneathDir::Folder& folder() const { return folder_; }

 private:
  static BeneathDir opened(std::string& path, bool make);
  std::string path_;
  BeneathDir dir_;
  BeneathDir::Folder folder_;
};

// Fills in `r` from the finished process `p`: time, outcome, and (when it
// failed) the end of its stderr; when it exited 0, its output is what it
// wrote as `name` in `folder` (read_bench_output, at most `limit` bytes),
// which is then removed (the next item's output is its own). `shown` names
// that file in the outcome of an item that wrote none or a bad one ("table
// (benchmark/data/all_benchmark_data.csv)").
void take_outcome(BenchItemResult& r, const ProcessResult& p, const OutputFolder& folder, const std::string& name,
                  std::size_t limit, const std::string& shown);

// What an item wrote as `name` in `folder`, read as a hostile file: a
// regular file (opened without following a link, a FIFO never waited on) of
// at most `limit` bytes. nullopt with `why` ("is a symbolic link", "is larger
// than ...") otherwise; `why` is empty when there is no such file.
std::optional<std::string> read_bench_output(const OutputFolder& folder, const std::string& name, std::size_t limit,
                                             std::string& why);

}  // namespace kistore
