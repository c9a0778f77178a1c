// The nvbench importer: nvbench's `--json` output → KernelIndex bundles.
//
// NVIDIA/nvbench writes one JSON document per run of a benchmark binary
// (nvbench/json_printer.cu): meta (argv, versions), devices[] (one per GPU),
// benchmarks[] each with axes and states[], one state per combination of axis
// values and device, holding summaries[] tagged "nv/cold/time/gpu/mean" etc.
// whose values are numbers written as strings, in SI base units (seconds).
// One state becomes one bundle; docs/importers.md gives the mapping field by
// field. The format changed members under one "json": "1.0.0" version, so the
// importer keys on members, not on the version.
//
// It takes values and gives values: no files, no clock, no store.
// Thread-safety: reentrant.
#pragma once

#include <string_view>

#include "objects/json.h"
#include "store/ingest/harness_import.h"

namespace kistore {

// The bundles of every state of `root` (a parsed nvbench JSON file named
// `source`). A problem with the file as a whole (no benchmarks array, a
// device list that is not one) throws Error(kInvalidInput) naming the JSON
// pointer; a problem in one state is recorded in `errors` (with its pointer)
// and the state skipped, so that the caller decides between all or nothing
// and --keep-going. A skipped state (is_skipped) is a run with status
// "skipped" and its skip_reason as error, not a problem.
HarnessImport import_nvbench(const Json& root, std::string_view source, const HarnessOptions& options);
// The same, handing each record and error to `sink` as it is made.
void import_nvbench(const Json& root, std::string_view source, const HarnessOptions& options,
                    const HarnessSink& sink);

}  // namespace kistore
