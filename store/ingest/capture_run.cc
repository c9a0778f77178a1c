// capture_environment: running nvidia-smi and Python (store/ingest/capture.h).
#include <chrono>

#include "objects/error.h"
#include "store/ingest/capture.h"
#include "store/edge/process.h"

namespace kistore {

// Marked so that a stand-in interpreter (tests/e2e/gpu_double/) can tell it
// from a benchmark script.
const char* const kPythonSnippet = R"PY(# kistore capture: versions and device properties
import sys
sys.path[:0] = sys.argv[1:]
import json, platform
out = {"python": platform.python_version()}
try:
    from importlib.metadata import version
    out["liger-kernel"] = version("liger-kernel")
except Exception:
    out["liger-kernel"] = None
try:
    import torch
except Exception as e:
    out["torch"] = None
    out["torchError"] = "%s: %s" % (type(e).__name__, e)
    print(json.dumps(out))
    sys.exit(0)
out["torch"] = torch.__version__
try:
    import triton
    out["triton"] = triton.__version__
except Exception:
    out["triton"] = None
if not torch.cuda.is_available():
    sys.stderr.write("PyTorch %s sees no CUDA device\n" % torch.__version__)
    sys.exit(3)
p = torch.cuda.get_device_properties(0)
out["device"] = torch.cuda.get_device_name(0)
out["capability"] = [p.major, p.minor]
out["sm_count"] = p.multi_processor_count
print(json.dumps(out))
)PY";

namespace {

constexpr std::chrono::seconds kToolLimit{30};
constexpr std::chrono::seconds kPythonLimit{120};  // importing torch on a cold cache is slow

std::string failure(const std::string& what, const ProcessResult& r) {
  std::string tail = last_lines(r.err_tail, 1);
  return what + ": " + r.outcome() + (tail.empty() ? "" : " (" + tail + ")");
}

// Each tool runs in `cwd`, a fresh folder of kistore's (never the user's
// current folder, where a json.py or a nvidia-smi could wait).
ProcessResult run_tool(const CaptureOptions& options, const std::string& cwd, std::vector<std::string> argv,
                       std::chrono::seconds limit) {
  ProcessSpec spec = process_spec(options.process, std::move(argv));
  spec.cwd = cwd;
  spec.time_limit = limit;
  spec.stdout_limit = 8u << 20;
  spec.end_what_it_leaves = true;
  return run_process(spec);
}

}  // namespace

CaptureResult capture_environment(const CaptureOptions& options) {
  CaptureResult result;
  WorkFolder work(options.process.temp_parent, "capture");
  auto run = [&](std::vector<std::string> argv, std::chrono::seconds limit) {
    return run_tool(options, work.path(), std::move(argv), limit);
  };
  ProcessResult xml = run({options.nvidia_smi, "-q", "-x"}, kToolLimit);
  if (!xml.started && xml.not_found) {
    result.no_gpu_tool = true;
    result.message = "no NVIDIA GPU tool here: " + xml.start_error + " (kistore capture needs nvidia-smi)";
    return result;
  }
  if (!xml.succeeded()) throw InvalidInput(failure(options.nvidia_smi + " -q -x", xml));
  ProcessResult query =
      run({options.nvidia_smi, "--query-gpu=" + std::string(kNvidiaSmiQueryFields), "--format=csv"}, kToolLimit);
  if (!query.succeeded()) throw InvalidInput(failure(options.nvidia_smi + " --query-gpu", query));
  NvidiaSmiReport report = parse_nvidia_smi_xml(xml.out);
  NvidiaSmiQuery facts = parse_nvidia_smi_query(query.out);

  std::vector<std::string> snippet{"-c", kPythonSnippet};
  snippet.insert(snippet.end(), options.python_path.begin(), options.python_path.end());
  ProcessResult py = run(isolated_python(options.python, std::move(snippet)), kPythonLimit);
  if (!py.started && py.not_found && !options.python_given) {
    result.without_torch = true;
    result.message = "no Python here (" + py.start_error + "): the document has the hardware and driver only";
    result.document = environment_from(report, facts, nullptr);
    return result;
  }
  if (!py.succeeded()) throw InvalidInput(failure(options.python + " (capture snippet)", py));
  PythonReport python = parse_python_report(py.out);
  if (!python.has_torch) {
    result.without_torch = true;
    result.message = "PyTorch is not installed for " + options.python + " (" + python.torch_missing +
                     "): the document has the hardware and driver only, without smCount, python, torch or triton";
  }
  result.document = environment_from(report, facts, &python);
  return result;
}

}  // namespace kistore
