// Running Liger-Kernel's own benchmark scripts on this machine, for
// `kistore bench liger`: the measuring half (the command turns the rows into
// runs or controlled reruns, store/ingest/import_liger.h and store/write/rerun.h),
// in the frame every `kistore bench` shares (bench_run.h).
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
// script runs alone, as `PY SCRIPT --overwrite` would but isolated
// (bench_run.h), in the scratch copy of the scripts; its rows are taken only
// when it exits 0, from a table of at most kMaxBenchTableBytes.
//
// Thread-safety: one call at a time per scratch folder; otherwise reentrant.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "store/ingest/bench_run.h"

namespace kistore {

// The largest table a script may write (Liger's scripts write kilobytes).
inline constexpr std::size_t kMaxBenchTableBytes = std::size_t(256) << 20;

// Checks the checkout (options.checkout) and the scripts (options.items:
// file names in benchmark/scripts/; a path: its file name), then runs them.
// Each item's output is its table, all_benchmark_data.csv. Throws
// Error(kInvalidInput), before running anything, when the checkout has no
// benchmark/scripts/ folder or a SCRIPT is not in it, and as run_bench_items.
BenchResult run_liger_benchmarks(const BenchOptions& options);

// The version in a pyproject.toml's [project] table (`version = "0.8.2"`), or
// "" when it has none. Pure.
std::string pyproject_version(std::string_view toml);

}  // namespace kistore
