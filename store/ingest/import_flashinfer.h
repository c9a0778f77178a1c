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

#include <cstddef>
#include <string_view>

#include "objects/json.h"
#include "store/ingest/harness_import.h"

namespace kistore {

// The bundles of every trace in `text` (the whole file `source`). A line that
// is not JSON, or not a trace, is recorded in `errors` as "source:line: ..."
// with the JSON pointer inside the line, and skipped.
HarnessImport import_flashinfer(std::string_view text, std::string_view source, const HarnessOptions& options);
// The same for a piece of the file that holds whole lines and begins at line
// `first_line` (1-based), handing each record and error to `sink` as it is
// made: the command reads a large file a block of lines at a time.
// True for a FlashInfer-Bench definition (`definitions/**/<name>.json`: name,
// axes, reference, op_type — `type` in the first schema) or solution
// (`solutions/**/<name>.json`: name, definition, spec, sources). A dataset
// keeps them beside its traces; they describe code and measure nothing, so an
// import passes over them as it passes over workload-only traces.
bool is_flashinfer_description(const Json& root);

void import_flashinfer_lines(std::string_view text, std::string_view source, std::size_t first_line,
                             const HarnessOptions& options, const HarnessSink& sink);

}  // namespace kistore
