// Running tritonbench's operators on this machine, for `kistore bench
// tritonbench`: the measuring half, in the frame every `kistore bench`
// shares (bench_run.h). The command imports what each operator wrote as
// `kistore import tritonbench` does (store/ingest/import_tritonbench.h), with
// the environment captured here, and adds the runs or controlled reruns.
//
// Each operator runs alone as `PY run.py --op OP --metrics latency,accuracy
// --output-json FILE [--mode MODE]` would in the checkout, but isolated
// (bench_run.h): the checkout's folder first on sys.path (run.py imports the
// tritonbench package beside it), in a scratch folder kistore made, so that
// nothing is written into the checkout by a relative path and FILE is read
// back from there (a JSON text of at most 16 MiB, never through a link).
// `accuracy` is asked for so that a backend whose output differs from the
// baseline's is stored as incorrect, not ranked.
//
// Thread-safety: one call at a time per scratch folder; otherwise reentrant.
#pragma once

#include <string>

#include "store/ingest/bench_run.h"

namespace kistore {

// Checks the checkout (options.checkout: run.py and the tritonbench/
// package beside it), the operators (options.items: names as run.py's --op
// takes them) and `mode` ("" for tritonbench's default, else fwd, bwd,
// fwd_bwd or fwd_no_grad), then runs them. Each item's output is its
// --output-json text. Throws Error(kInvalidInput), before running anything,
// for a checkout without run.py or tritonbench/, an operator name that is
// not one (letters, digits, '_', '-', '.': at most 100), or another mode; and
// as run_bench_items.
BenchResult run_tritonbench_benchmarks(const BenchOptions& options, const std::string& mode);

}  // namespace kistore
