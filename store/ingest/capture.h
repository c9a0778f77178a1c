// Capturing what a GPU machine is: the ExecutionEnvironment document of
// `kistore capture`, and the environment of the runs `kistore bench` makes.
//
// The facts come from three tools: `nvidia-smi -q -x` (driver, CUDA, product,
// memory, maximum clocks, power limit), `nvidia-smi --query-gpu=… --format=csv`
// (compute capability, and the same facts again, cross-checked), and a short
// Python snippet (python, torch, triton and liger-kernel versions, and the
// device properties PyTorch sees: name, capability, SM count). The parsers are
// pure (bytes in, values out); capture_environment runs the tools
// (store/edge/process.h).
//
// The document carries a closed list of fields, copied one by one: never a
// serial number, UUID, PCI bus id, host name or time, so that two captures of
// one machine (or of two identical ones) are the same document, and a
// document reveals nothing that identifies a host. A field the tools do not
// give (missing, "N/A", malformed, or two tools disagreeing) is an error, never
// a document with the field left out that would look complete; the one
// exception is PyTorch missing altogether, which gives the hardware and driver
// part alone (CaptureResult::without_torch says so and why).
//
// Every error is Error(kInvalidInput) whose message names the tool and the
// field ("nvidia-smi -q -x: <max_clocks><sm_clock>: expected \"<n> MHz\",
// found \"N/A\""). A missing nvidia-smi is not an error here:
// capture_environment reports it as CaptureResult::no_gpu_tool.
//
// Thread-safety: plain values; all functions are reentrant.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "objects/json.h"
#include "store/edge/process.h"

namespace kistore {

// What `nvidia-smi -q -x` says of the first GPU it lists, and of the driver.
struct NvidiaSmiReport {
  std::string driver;        // <driver_version>
  std::string cuda;          // <cuda_version>: the CUDA version the driver supports
  std::string product;       // <product_name>
  long long memory_mib = 0;  // <fb_memory_usage><total>
  long long max_sm_mhz = 0, max_memory_mhz = 0;  // <max_clocks><sm_clock>, <mem_clock>
  double power_limit_w = 0;  // <gpu_power_readings><current_power_limit> (older drivers: <power_readings>)
};
NvidiaSmiReport parse_nvidia_smi_xml(std::string_view xml);

// What `nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,
// clocks.max.memory,power.limit,compute_cap --format=csv` says of the first
// GPU. Columns are found by their header names, so other columns (and their
// order) do not matter.
struct NvidiaSmiQuery {
  std::string product, driver;
  long long memory_mib = 0, max_sm_mhz = 0, max_memory_mhz = 0;
  double power_limit_w = 0;
  std::string architecture;  // compute_cap "9.0" -> "sm_90"
};
NvidiaSmiQuery parse_nvidia_smi_query(std::string_view csv);

// The arguments of the query above (for capture_environment and stand-ins).
inline constexpr std::string_view kNvidiaSmiQueryFields =
    "name,driver_version,memory.total,clocks.max.sm,clocks.max.memory,power.limit,compute_cap";

// What the Python snippet (kPythonSnippet) printed: one JSON object.
struct PythonReport {
  std::string python;
  std::optional<std::string> liger_kernel;  // importlib.metadata's version, if installed
  bool has_torch = false;
  std::string torch_missing;  // why not (the ImportError), when !has_torch
  std::string torch, triton;  // triton empty when it is not installed
  std::string device;         // torch.cuda.get_device_name(0)
  std::string architecture;   // capability [9, 0] -> "sm_90"
  long long sm_count = 0;
};
PythonReport parse_python_report(std::string_view json);

// The snippet run as `PY -I -B -c kPythonSnippet [DIR...]` (the DIRs put
// first on sys.path); it prints one line of JSON and
// exits 0, also when torch is missing ({"python": …, "torch": null, …}). A
// torch that sees no CUDA device exits 3 with a message on stderr.
extern const char* const kPythonSnippet;

// The document for these facts: apiVersion, kind ExecutionEnvironment, spec
// {hardware {vendor, product, architecture, memoryMiB, maxClocksMHz {sm,
// memory}, powerLimitW, smCount}, software {driver, cuda, python, torch,
// triton, liger-kernel}} and metadata {name, title}. `python` null: the
// hardware and driver part alone (no smCount, python, torch, triton). Throws
// Error(kInvalidInput) when the tools disagree (product, driver, memory,
// clocks or power limit of the XML against the query; PyTorch's device or
// capability against nvidia-smi's), naming both values, or when Python
// reports torch without triton.
Json environment_from(const NvidiaSmiReport& xml, const NvidiaSmiQuery& query, const PythonReport* python);

struct CaptureOptions {
  std::string nvidia_smi = "nvidia-smi";  // looked up in process.search_path
  std::string python = "python3";         // looked up in process.search_path
  bool python_given = false;  // --python: a missing interpreter is then an error, not "no torch"
  // Folders put first on the snippet's sys.path (Python runs isolated, so
  // PYTHONPATH is not read): the user's --pythonpath, and for `bench liger`
  // the checkout, so that liger-kernel is seen as the benchmark scripts see it.
  std::vector<std::string> python_path;
  // Environment, search path and temporary folder of the three programs
  // (store/edge/process.h); each runs in a fresh folder made under temp_parent.
  ProcessContext process;
};

struct CaptureResult {
  bool no_gpu_tool = false;  // nvidia-smi is not there: no document (`message` says so)
  std::string message;       // one line for the user (no_gpu_tool, without_torch)
  bool without_torch = false;  // the document is the hardware and driver part alone
  Json document;               // the ExecutionEnvironment document, when !no_gpu_tool
};

// Runs the tools and builds the document. Throws Error(kInvalidInput) when a
// tool fails (its exit code and last stderr line named), times out (30 s
// each), or prints what the parsers refuse; when --python names a program that
// cannot be started. Never returns a partial document.
CaptureResult capture_environment(const CaptureOptions& options);

// An ExecutionEnvironment document read back from a file (`kistore capture`
// output, for `import liger --environment` and `bench liger`): the JSON text
// parsed and validated as a document of that kind, metadata kept. Throws
// Error(kInvalidInput) naming `source` when it is not one.
Json parse_environment_document(std::string_view text, std::string_view source);

// The fields in which two captured documents differ ("software.torch
// 2.11.0+cu130 -> 2.10.0"), one per entry; empty when their specs are equal.
std::vector<std::string> environment_changes(const Json& before, const Json& after);

}  // namespace kistore
