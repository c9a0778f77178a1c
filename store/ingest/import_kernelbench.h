// The KernelBench importer: ScalingIntelligence/KernelBench's results →
// KernelIndex bundles.
//
// Two kinds of file, told apart by their shape:
//   - eval results (scripts/eval_from_generations.py): {"<problem id>":
//     [sample, ...]} (or, before upstream 94ab208c, {"<problem id>": sample}),
//     each sample {sample_id, compiled, correctness, metadata, runtime (ms),
//     runtime_stats}. The level and the run's name are not in the file (they
//     are the folder the harness wrote it to): HarnessOptions.level is
//     required, run_name names the generated kernels.
//   - baseline timings (scripts/generate_baseline_time*.py): {"level<L>":
//     {"<problem file>.py": runtime_stats}}, the PyTorch reference's times.
// A sample the harness found incorrect or that failed to build or run is a
// run with that status and its error (KernelBench's correctness check is
// evidence, and such a run never ranks above a correct one).
//
// It takes values and gives values: no files, no clock, no store.
// Thread-safety: reentrant.
#pragma once

#include <string_view>

#include "objects/json.h"
#include "store/ingest/harness_import.h"

namespace kistore {

// The bundles of every sample (or baseline entry) of `root`, parsed from the
// file `source`. Throws Error(kInvalidInput) for a file of neither shape, or
// eval results without options.level; a problem in one sample is recorded in
// `errors` with its JSON pointer and the sample skipped.
HarnessImport import_kernelbench(const Json& root, std::string_view source, const HarnessOptions& options);
// The same, handing each record and error to `sink` as it is made.
void import_kernelbench(const Json& root, std::string_view source, const HarnessOptions& options,
                        const HarnessSink& sink);

}  // namespace kistore
