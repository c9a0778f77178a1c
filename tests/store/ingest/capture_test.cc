// What a GPU machine is, from its tools' output (store/ingest/capture.h), checked on
// the real output captured on an H200 host (tests/data/gpu-env/, a copy of
// ../shared/fixtures/gpu-env/).
#include "store/ingest/capture.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "objects/error.h"
#include "objects/json.h"

namespace kistore {
namespace {

std::string read_text(const std::string& name) {
  std::ifstream in(KISTORE_SOURCE_DIR "/tests/data/gpu-env/" + name, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The first occurrence of `from` in `text` replaced by `to` (it must occur).
std::string with(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

struct Tools {
  std::string xml = read_text("nvidia-smi-q.xml");
  std::string query = read_text("nvidia-smi-query.csv");
  std::string python = read_text("torch-env.json");
  Json document() const {
    PythonReport p = parse_python_report(python);
    return environment_from(parse_nvidia_smi_xml(xml), parse_nvidia_smi_query(query), &p);
  }
};

const Json& at(const Json& doc, const std::vector<std::string>& path) {
  const Json* v = &doc;
  for (const std::string& p : path) {
    v = v->find(p);
    REQUIRE(v != nullptr);
  }
  return *v;
}

TEST_CASE("capture: every field of the H200 fixtures", "[capture]") {
  const Json doc = Tools().document();
  struct Field {
    std::vector<std::string> path;
    Json expected;
  };
  const std::vector<Field> fields = {
      {{"apiVersion"}, Json("kernelindex.dev/v1alpha1")},
      {{"kind"}, Json("ExecutionEnvironment")},
      {{"spec", "hardware", "vendor"}, Json("nvidia")},
      {{"spec", "hardware", "product"}, Json("NVIDIA H200")},
      {{"spec", "hardware", "architecture"}, Json("sm_90")},
      {{"spec", "hardware", "memoryMiB"}, Json(143771)},
      {{"spec", "hardware", "smCount"}, Json(132)},
      {{"spec", "hardware", "maxClocksMHz", "sm"}, Json(1980)},
      {{"spec", "hardware", "maxClocksMHz", "memory"}, Json(3201)},
      {{"spec", "hardware", "powerLimitW"}, Json(700)},
      {{"spec", "software", "driver"}, Json("580.159.04")},
      {{"spec", "software", "cuda"}, Json("13.0")},
      {{"spec", "software", "torch"}, Json("2.11.0+cu130")},
      {{"spec", "software", "triton"}, Json("3.6.0")},
      {{"spec", "software", "python"}, Json("3.12.3")},
  };
  for (const Field& f : fields) {
    INFO(f.path.back());
    CHECK(at(doc, f.path) == f.expected);
  }
  // Nothing else: the document is a closed list of fields.
  CHECK(at(doc, {"spec", "hardware"}).as_object().size() == 7);
  CHECK(at(doc, {"spec", "software"}).as_object().size() == 5);
  CHECK(at(doc, {"spec"}).as_object().size() == 2);
  // Two captures of one machine are one document.
  CHECK(canonical(Tools().document()) == canonical(doc));
}

TEST_CASE("capture: liger-kernel where installed, nothing of it where not", "[capture]") {
  Tools t;
  CHECK(at(t.document(), {"spec", "software"}).find("liger-kernel") == nullptr);
  t.python = with(t.python, "\"python\"", "\"liger-kernel\": \"0.8.2\", \"python\"");
  CHECK(at(t.document(), {"spec", "software", "liger-kernel"}) == Json("0.8.2"));
}

TEST_CASE("capture: without torch, the hardware and driver part alone", "[capture]") {
  Tools t;
  PythonReport p = parse_python_report(R"({"python": "3.11.2", "liger-kernel": null, "torch": null,
                                           "torchError": "ModuleNotFoundError: No module named 'torch'"})");
  CHECK_FALSE(p.has_torch);
  CHECK_THAT(p.torch_missing, Catch::Contains("No module named 'torch'"));
  Json doc = environment_from(parse_nvidia_smi_xml(t.xml), parse_nvidia_smi_query(t.query), &p);
  CHECK(at(doc, {"spec", "hardware", "product"}) == Json("NVIDIA H200"));
  CHECK(at(doc, {"spec", "hardware"}).find("smCount") == nullptr);
  CHECK(at(doc, {"spec", "software"}).as_object().size() == 2);  // driver, cuda
  CHECK(canonical(doc) == canonical(environment_from(parse_nvidia_smi_xml(t.xml), parse_nvidia_smi_query(t.query),
                                                     nullptr)));
}

TEST_CASE("capture: no serial number, UUID, bus id, host name or time enters the document", "[capture]") {
  Tools t;
  t.xml = with(t.xml, "<serial>0000000000000</serial>", "<serial>1654923017285</serial>");
  t.xml = with(t.xml, "GPU-00000000-0000-0000-0000-000000000000", "GPU-3f2b9c1e-7d4a-4b7e-9a51-0c6e2d8f4b13");
  t.query = with(t.query, "0000000000000", "1654923017285");
  t.query = with(t.query, "GPU-00000000-0000-0000-0000-000000000000", "GPU-3f2b9c1e-7d4a-4b7e-9a51-0c6e2d8f4b13");
  t.python = with(t.python, "\"platform\"", "\"hostname\": \"gpu-host-17.example.org\", \"platform\"");
  std::string text = canonical(t.document());
  for (const char* secret : {"1654923017285", "3f2b9c1e", "00000000:00:06.0", "gpu-host-17", "2026", "Linux",
                             "0x1356e362e258f192", "233510DE"})
    CHECK(text.find(secret) == std::string::npos);
}

TEST_CASE("capture: missing or malformed tool output is an error, never a partial document", "[capture]") {
  struct Case {
    const char* what;
    const char* tool;  // xml, query, python
    std::string from, to;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"not XML", "xml", "<nvidia_smi_log>", "<log>", "nvidia-smi -q -x: <nvidia_smi_log>: expected nvidia-smi's XML"},
      {"no GPU", "xml", "<gpu id=", "<gpux id=", "<gpu>: expected at least one GPU, found none"},
      {"no driver", "xml", "<driver_version>580.159.04</driver_version>", "", "<driver_version>: expected the element"},
      {"N/A power limit", "xml", "<current_power_limit>700.00 W", "<current_power_limit>N/A",
       "<gpu_power_readings><current_power_limit>: expected a value, found \"N/A\""},
      {"clock without unit", "xml", "<sm_clock>1980 MHz</sm_clock>\n\t\t\t<mem_clock>3201", "<sm_clock>1980</sm_clock>\n\t\t\t<mem_clock>3201",
       "<max_clocks><sm_clock>: expected \"<n> MHz\", found \"1980\""},
      {"memory not a number", "xml", "<total>143771 MiB", "<total>lots MiB", "<fb_memory_usage><total>: expected \"<n> MiB\""},
      {"cut-off XML", "xml", "</nvidia_smi_log>", "", "nvidia-smi -q -x: <nvidia_smi_log>"},
      {"no compute_cap column", "query", ", compute_cap,", ", cc,", "nvidia-smi --query-gpu: compute_cap: expected the column"},
      {"bad compute_cap", "query", ", 9.0,", ", nine,", "compute_cap: expected a compute capability"},
      {"no GPU line", "query", "NVIDIA H200, 0x233510DE", "", "line 2: expected"},
      {"query disagrees", "query", "700.00 W", "450.00 W", "disagrees with itself on the power limit (W)"},
      {"python not JSON", "python", "{", "Traceback (most recent call last):", "python snippet: expected one JSON object"},
      {"no sm_count", "python", "\"sm_count\"", "\"sms\"", "python snippet: /sm_count: expected a whole number"},
      {"torch on another GPU", "python", "\"device\": \"NVIDIA H200\"", "\"device\": \"NVIDIA H100 PCIe\"",
       "PyTorch's device 0 is \"NVIDIA H100 PCIe\""},
      {"torch without triton", "python", "\"triton\": \"3.6.0\"", "\"triton\": null", "expected Triton's version"},
      {"bad capability", "python", "9,\n  0", "9", "/capability: expected [major, minor]"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    Tools t;
    std::string& text = std::string(c.tool) == "xml" ? t.xml : std::string(c.tool) == "query" ? t.query : t.python;
    text = with(text, c.from, c.to);
    try {
      Json doc = t.document();
      FAIL("no error; document: " << canonical(doc));
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInvalidInput);
      CHECK_THAT(e.what(), Catch::Contains(c.message));
    }
  }
  CHECK_THROWS_WITH(parse_nvidia_smi_xml(""), Catch::Contains("expected nvidia-smi's XML report"));
  CHECK_THROWS_WITH(parse_nvidia_smi_query(""), Catch::Contains("expected a CSV header line"));
  CHECK_THROWS_WITH(parse_python_report(""), Catch::Contains("expected one JSON object"));
}

TEST_CASE("capture: an older driver's power_readings section", "[capture]") {
  Tools t;
  t.xml = with(t.xml, "<gpu_power_readings>", "<power_readings>");
  t.xml = with(t.xml, "</gpu_power_readings>", "</power_readings>");
  CHECK(parse_nvidia_smi_xml(t.xml).power_limit_w == 700);
}

TEST_CASE("capture: what changed between two captures", "[capture]") {
  Json before = Tools().document();
  CHECK(environment_changes(before, before).empty());
  Tools t;
  t.python = with(t.python, "2.11.0+cu130", "2.10.0+cu128");
  std::vector<std::string> changes = environment_changes(before, t.document());
  REQUIRE(changes.size() == 1);
  CHECK(changes[0] == "software.torch \"2.11.0+cu130\" -> \"2.10.0+cu128\"");
}

TEST_CASE("capture: a document read back is validated", "[capture]") {
  Json doc = Tools().document();
  CHECK(parse_environment_document(canonical(doc), "env.json") == doc);
  CHECK_THROWS_WITH(parse_environment_document(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation",
                                                   "spec":{"name":"x"}})", "impl.json"),
                    Catch::Contains("impl.json: /kind: expected \"ExecutionEnvironment\""));
  CHECK_THROWS_AS(parse_environment_document("{", "bad.json"), Error);
}

}  // namespace
}  // namespace kistore
