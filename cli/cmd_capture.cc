#include <cstdio>

#include "cli/common.h"
#include "cli/process_env.h"
#include "store/ingest/capture.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("capture", "Print an ExecutionEnvironment document for this machine's GPU");
  app->footer(
      "Asks nvidia-smi (`-q -x` and `--query-gpu`) and Python (PyTorch, Triton, liger-kernel) what\n"
      "this machine is, and prints the ExecutionEnvironment document that runs measured here\n"
      "should name: hardware {vendor, product, architecture (sm_90), memoryMiB, smCount,\n"
      "maxClocksMHz {sm, memory}, powerLimitW} and software {driver, cuda, python, torch, triton,\n"
      "liger-kernel where installed}. The document describes the first GPU nvidia-smi lists, which\n"
      "must be PyTorch's device 0 (set CUDA_VISIBLE_DEVICES if it is not). It holds no serial\n"
      "number, UUID, host name or time: two captures of one machine are the same document, and\n"
      "it is safe to publish. Give it to `kistore import liger CSV --environment FILE` for rows\n"
      "measured here; `kistore bench liger` captures it itself.\n\n"
      "Exit 2 with a one-line message when there is no nvidia-smi (no NVIDIA GPU), or when a\n"
      "tool fails or prints what kistore cannot read (nothing is printed on stdout then). Where\n"
      "PyTorch is missing, the document has the hardware and driver part alone, and a warning\n"
      "on stderr says so.\n\n" +
      std::string(kProcessHelp));
  auto python = std::make_shared<std::string>();
  auto process = std::make_shared<ProcessOptions>();
  app->add_option("--python", *python, "The Python interpreter to ask (default: python3 on PATH)")->type_name("PY");
  add_process_options(app, *process);
  return Command{app, [&g, python, process]() -> int {
    CaptureOptions options;
    if (!python->empty()) {
      options.python = *python;
      options.python_given = true;
    }
    options.process = process_context(*process);
    options.python_path = python_path_of(*process);
    CaptureResult r = capture_environment(options);
    if (r.no_gpu_tool) throw InvalidInput(r.message);
    if (r.without_torch && !g.quiet) std::fprintf(stderr, "warning: %s\n", r.message.c_str());
    if (g.json) {
      print_json(r.document);
    } else {
      std::string text = pretty(r.document);
      std::printf("%s\n", text.c_str());
    }
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
