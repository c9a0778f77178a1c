// The tritonbench importer: meta-pytorch/tritonbench's `--output-json` file →
// KernelIndex bundles.
//
// tritonbench writes one flat object (tritonbench/utils/triton_op.py,
// userbenchmark_dict): "tritonbench_<op>_<mode>[x_<x_val>-<backend>]_<metric>"
// → value (latency as a string of milliseconds, the p50 of do_bench's times;
// other metrics numbers or lists), plus "…[<backend>]-<metric>-avg" means over
// the inputs, which are derived and not imported. One (x_val, backend) pair
// becomes one run. The file names no GPU: HarnessOptions.environment is
// required. A backend whose accuracy is 0 (its output differed from the
// baseline backend's) is a run with status "incorrect".
//
// It takes values and gives values: no files, no clock, no store.
// Thread-safety: reentrant.
#pragma once

#include <string_view>

#include "objects/json.h"
#include "store/ingest/csv.h"
#include "store/ingest/harness_import.h"

namespace kistore {

// Throws Error(kInvalidInput) when the file is not such an object or no
// environment was given; a malformed key or value is recorded in `errors`
// with its JSON pointer, and that run is skipped.
HarnessImport import_tritonbench(const Json& root, std::string_view source, const HarnessOptions& options);
// The same, handing each record and error to `sink` as it is made.
void import_tritonbench(const Json& root, std::string_view source, const HarnessOptions& options,
                        const HarnessSink& sink);

// tritonbench's `--output` CSV: ';'-separated, header "<x label>;<backend>-
// <metric>;…" (columns without '-' are metrics of the input alone and not
// imported), one row per input, a last row "average" (derived, not imported).
// A backend that failed at an input has tritonbench's message in its first
// column and its other cells empty: a run with status "runtime_error" and the
// message as error. Every value is read as the JSON holds it, and the
// documents are the JSON importer's for the same measurement (only the
// externalId differs, naming this file's digest), so the two files of one run
// share comparison groups. The CSV names neither operator nor mode:
// options.op is required, options.mode defaults to "fwd" (tritonbench's
// default). Throws Error(kInvalidInput) "<source>:<line>: …" for a file that
// cannot be read at all (no op, no environment, no header or a malformed one,
// no row of measurements); a bad row ("<source>:<line>: expected N fields…",
// "<source>:<line>: column C (<header>): expected …, found …") goes to
// sink.error and reading goes on.
void import_tritonbench_csv(CsvReader& reader, std::string_view source, const HarnessOptions& options,
                            const HarnessSink& sink);
HarnessImport import_tritonbench_csv(std::string_view text, std::string_view source, const HarnessOptions& options);

}  // namespace kistore
