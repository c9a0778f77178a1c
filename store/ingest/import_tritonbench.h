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
#include "store/ingest/harness_import.h"

namespace kistore {

// Throws Error(kInvalidInput) when the file is not such an object or no
// environment was given; a malformed key or value is recorded in `errors`
// with its JSON pointer, and that run is skipped.
HarnessImport import_tritonbench(const Json& root, std::string_view source, const HarnessOptions& options);

}  // namespace kistore
