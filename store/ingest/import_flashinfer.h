// The FlashInfer-Bench importer: traces (flashinfer_bench/data/trace.py) →
// KernelIndex bundles.
//
// A trace file is JSON Lines, one trace a line: {definition, workload {axes,
// inputs, uuid}, solution, evaluation {status, environment {hardware, libs},
// timestamp, log, correctness, performance {latency_ms, reference_latency_ms,
// speedup_factor}}}. Also read: the first schema (2025-08), whose evaluation
// has environment.device and log_file. A trace with a solution becomes one
// run; a workload-only trace (solution null) measures nothing and is passed
// over. A solution the harness found incorrect (INCORRECT_*), or that failed
// to compile or run, is a run with that status and its log as error.
//
// It takes values and gives values: no files, no clock, no store.
// Thread-safety: reentrant.
#pragma once

#include <string_view>

#include "objects/json.h"
#include "store/ingest/harness_import.h"

namespace kistore {

// The bundles of every trace in `text` (the whole file `source`). A line that
// is not JSON, or not a trace, is recorded in `errors` as "source:line: ..."
// with the JSON pointer inside the line, and skipped.
HarnessImport import_flashinfer(std::string_view text, std::string_view source, const HarnessOptions& options);

}  // namespace kistore
