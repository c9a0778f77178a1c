#include "store/ingest/capture.h"

#include <charconv>
#include <cmath>
#include <map>

#include "objects/document.h"
#include "objects/error.h"
#include "store/ingest/csv.h"

namespace kistore {
namespace {

constexpr std::string_view kXmlTool = "nvidia-smi -q -x";
constexpr std::string_view kQueryTool = "nvidia-smi --query-gpu";
constexpr std::string_view kPythonTool = "python snippet";

[[noreturn]] void fail(std::string_view tool, std::string_view field, std::string_view expected,
                       std::string_view found) {
  throw InvalidInput(std::string(tool) + ": " + std::string(field) + ": expected " + std::string(expected) +
                     ", found " + std::string(found));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

// ---------------------------------------------------------------------------
// nvidia-smi's XML: a fixed, shallow layout. An element is found by its name
// within its parent's content; nvidia-smi never nests an element in one of
// its own name.

std::optional<std::string_view> element(std::string_view xml, std::string_view name) {
  const std::string open = "<" + std::string(name);
  std::size_t pos = 0;
  while ((pos = xml.find(open, pos)) != std::string_view::npos) {
    std::size_t after = pos + open.size();
    if (after < xml.size() && (xml[after] == '>' || xml[after] == ' ')) {
      std::size_t gt = xml.find('>', after);
      if (gt == std::string_view::npos) return std::nullopt;
      if (xml[gt - 1] == '/') return std::string_view();  // <name/>
      std::size_t close = xml.find("</" + std::string(name) + ">", gt + 1);
      if (close == std::string_view::npos) return std::nullopt;
      return xml.substr(gt + 1, close - gt - 1);
    }
    pos = after;
  }
  return std::nullopt;
}

std::string unescape_xml(std::string_view s) {
  static constexpr std::pair<std::string_view, char> kEntities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    bool replaced = false;
    if (s[i] == '&')
      for (const auto& [entity, c] : kEntities)
        if (s.substr(i, entity.size()) == entity) {
          out += c;
          i += entity.size();
          replaced = true;
          break;
        }
    if (!replaced) out += s[i++];
  }
  return out;
}

// The text of parent/path[0]/path[1]/…, trimmed; fails naming the path.
using XmlPath = std::vector<std::string_view>;

std::string xml_text(std::string_view parent, const XmlPath& path) {
  std::string shown;
  for (std::string_view p : path) shown.append("<").append(p).append(">");
  std::string_view at = parent;
  for (std::string_view p : path) {
    auto inner = element(at, p);
    if (!inner) fail(kXmlTool, shown, "the element", "none");
    at = *inner;
  }
  std::string_view text = trim(at);
  if (text.find('<') != std::string_view::npos) fail(kXmlTool, shown, "text", "nested elements");
  std::string value = unescape_xml(text);
  if (value.empty() || value == "N/A" || value.find("Not Supported") != std::string::npos ||
      value.find("Unknown Error") != std::string::npos)
    fail(kXmlTool, shown, "a value", quoted_excerpt(value));
  return value;
}

bool has_path(std::string_view parent, const XmlPath& path) {
  std::string_view at = parent;
  for (std::string_view p : path) {
    auto inner = element(at, p);
    if (!inner) return false;
    at = *inner;
  }
  return true;
}

// "143771 MiB", "1980 MHz", "700.00 W" (the unit after one space; the number
// positive and finite, whole where `whole`).
double quantity(std::string_view tool, std::string_view field, std::string_view text, std::string_view unit,
                bool whole) {
  std::string expected = "\"<" + std::string(whole ? "n" : "x") + "> " + std::string(unit) + "\"";
  text = trim(text);
  if (text.size() <= unit.size() + 1 || text.substr(text.size() - unit.size()) != unit ||
      text[text.size() - unit.size() - 1] != ' ')
    fail(tool, field, expected, quoted_excerpt(text));
  std::string_view number = text.substr(0, text.size() - unit.size() - 1);
  double value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(value) || value <= 0 ||
      value > 1e12 || (whole && value != std::floor(value)))
    fail(tool, field, expected, quoted_excerpt(text));
  return value;
}

std::string version_text(std::string_view tool, std::string_view field, std::string_view text) {
  text = trim(text);
  bool ok = !text.empty() && text.size() <= 64 && text[0] >= '0' && text[0] <= '9';
  for (char c : text)
    ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
                c == '+' || c == '-' || c == '_');
  if (!ok) fail(tool, field, "a version such as \"13.0\"", quoted_excerpt(text));
  return std::string(text);
}

std::string product_text(std::string_view tool, std::string_view field, std::string_view text) {
  text = trim(text);
  bool ok = !text.empty() && text.size() <= 100;
  for (unsigned char c : text) ok = ok && c >= 0x20 && c < 0x7f;
  if (!ok || text == "N/A") fail(tool, field, "a GPU name of printable ASCII", quoted_excerpt(text));
  return std::string(text);
}

// "9.0" -> "sm_90", "12.0" -> "sm_120".
std::string architecture_of(std::string_view tool, std::string_view field, int major, int minor) {
  if (major < 1 || major > 99 || minor < 0 || minor > 9)
    fail(tool, field, "a compute capability such as 9.0", std::to_string(major) + "." + std::to_string(minor));
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

std::string architecture_text(std::string_view tool, std::string_view field, std::string_view text) {
  text = trim(text);
  std::size_t dot = text.find('.');
  int major = -1, minor = -1;
  if (dot != std::string_view::npos && dot + 2 == text.size()) {
    auto [e1, ec1] = std::from_chars(text.data(), text.data() + dot, major);
    auto [e2, ec2] = std::from_chars(text.data() + dot + 1, text.data() + text.size(), minor);
    if (ec1 != std::errc() || e1 != text.data() + dot || ec2 != std::errc() || e2 != text.data() + text.size())
      major = -1;
  }
  if (major < 0) fail(tool, field, "a compute capability such as \"9.0\"", quoted_excerpt(text));
  return architecture_of(tool, field, major, minor);
}

// ---------------------------------------------------------------------------
// Python's report

const Json& member(const Json& report, std::string_view name, Json::Type type, std::string_view expected) {
  const Json* v = report.find(name);
  if (!v || v->type() != type) fail(kPythonTool, "/" + std::string(name), expected, v ? canonical(*v) : "none");
  return *v;
}

std::string slug(std::string_view s) {
  std::string out;
  bool dash = false;
  for (unsigned char c : s) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c - 'A' + 'a'), alnum = true;
    if (!alnum) {
      dash = true;
      continue;
    }
    if (dash && !out.empty()) out += '-';
    dash = false;
    out += static_cast<char>(c);
  }
  return out;
}

template <typename T>
void agree(std::string_view what, const T& xml, const T& query) {
  if (xml == query) return;
  std::string a, b;
  if constexpr (std::is_same_v<T, std::string>) a = xml, b = query;
  else a = format_number(static_cast<double>(xml)), b = format_number(static_cast<double>(query));
  throw InvalidInput("nvidia-smi disagrees with itself on the " + std::string(what) + ": " + std::string(kXmlTool) +
                     " says " + quoted_excerpt(a) + ", " + std::string(kQueryTool) + " says " + quoted_excerpt(b));
}

}  // namespace

NvidiaSmiReport parse_nvidia_smi_xml(std::string_view xml) {
  auto log = element(xml, "nvidia_smi_log");
  if (!log) fail(kXmlTool, "<nvidia_smi_log>", "nvidia-smi's XML report", quoted_excerpt(trim(xml), 60));
  auto gpu = element(*log, "gpu");
  if (!gpu) fail(kXmlTool, "<gpu>", "at least one GPU", "none");
  std::string_view head = log->substr(0, log->find("<gpu"));
  NvidiaSmiReport r;
  r.driver = version_text(kXmlTool, "<driver_version>", xml_text(head, {"driver_version"}));
  r.cuda = version_text(kXmlTool, "<cuda_version>", xml_text(head, {"cuda_version"}));
  r.product = product_text(kXmlTool, "<product_name>", xml_text(*gpu, {"product_name"}));
  r.memory_mib = static_cast<long long>(
      quantity(kXmlTool, "<fb_memory_usage><total>", xml_text(*gpu, {"fb_memory_usage", "total"}), "MiB", true));
  r.max_sm_mhz = static_cast<long long>(
      quantity(kXmlTool, "<max_clocks><sm_clock>", xml_text(*gpu, {"max_clocks", "sm_clock"}), "MHz", true));
  r.max_memory_mhz = static_cast<long long>(
      quantity(kXmlTool, "<max_clocks><mem_clock>", xml_text(*gpu, {"max_clocks", "mem_clock"}), "MHz", true));
  // Drivers before 535 name the section power_readings, and the oldest call
  // the limit power_limit.
  XmlPath power = {"gpu_power_readings", "current_power_limit"};
  if (!has_path(*gpu, power) && has_path(*gpu, {"power_readings", "current_power_limit"}))
    power = {"power_readings", "current_power_limit"};
  else if (!has_path(*gpu, power) && has_path(*gpu, {"power_readings", "power_limit"}))
    power = {"power_readings", "power_limit"};
  std::string field;
  for (std::string_view p : power) field.append("<").append(p).append(">");
  r.power_limit_w = quantity(kXmlTool, field, xml_text(*gpu, power), "W", false);
  return r;
}

NvidiaSmiQuery parse_nvidia_smi_query(std::string_view csv) {
  CsvReader reader(csv, kQueryTool);
  CsvRecord header, row;
  std::string error;
  if (reader.next(header, error) != CsvStatus::kRecord)
    fail(kQueryTool, "header", "a CSV header line", error.empty() ? "no output" : error);
  CsvStatus status = reader.next(row, error);
  if (status != CsvStatus::kRecord) fail(kQueryTool, "line 2", "a line for the first GPU", error.empty() ? "none" : error);
  if (row.fields.size() != header.fields.size())
    fail(kQueryTool, "line 2", std::to_string(header.fields.size()) + " fields as in the header",
         std::to_string(row.fields.size()));
  std::map<std::string, std::string_view, std::less<>> by_name;
  for (std::size_t i = 0; i < header.fields.size(); ++i) {
    std::string_view name = trim(header.fields[i]);
    name = name.substr(0, name.find(" ["));  // "memory.total [MiB]"
    by_name[std::string(name)] = row.fields[i];
  }
  auto column = [&](std::string_view name) {
    auto it = by_name.find(name);
    if (it == by_name.end()) fail(kQueryTool, name, "the column", "none");
    std::string_view v = trim(it->second);
    if (v.empty() || v == "[N/A]" || v == "N/A" || v.find("Not Supported") != std::string_view::npos)
      fail(kQueryTool, name, "a value", quoted_excerpt(v));
    return v;
  };
  NvidiaSmiQuery q;
  q.product = product_text(kQueryTool, "name", column("name"));
  q.driver = version_text(kQueryTool, "driver_version", column("driver_version"));
  q.memory_mib = static_cast<long long>(quantity(kQueryTool, "memory.total", column("memory.total"), "MiB", true));
  q.max_sm_mhz = static_cast<long long>(quantity(kQueryTool, "clocks.max.sm", column("clocks.max.sm"), "MHz", true));
  q.max_memory_mhz =
      static_cast<long long>(quantity(kQueryTool, "clocks.max.memory", column("clocks.max.memory"), "MHz", true));
  q.power_limit_w = quantity(kQueryTool, "power.limit", column("power.limit"), "W", false);
  q.architecture = architecture_text(kQueryTool, "compute_cap", column("compute_cap"));
  return q;
}

PythonReport parse_python_report(std::string_view text) {
  Json report;
  try {
    report = parse_json(trim(text), kPythonTool);
  } catch (const Error& e) {
    throw InvalidInput(std::string(kPythonTool) + ": expected one JSON object, found " +
                       quoted_excerpt(trim(text), 60) + " (" + e.what() + ")");
  }
  if (!report.is_object()) fail(kPythonTool, "/", "a JSON object", quoted_excerpt(canonical(report), 60));
  PythonReport r;
  r.python = version_text(kPythonTool, "/python", member(report, "python", Json::Type::kString, "a string").as_string());
  if (const Json* liger = report.find("liger-kernel"); liger && !liger->is_null()) {
    if (!liger->is_string()) fail(kPythonTool, "/liger-kernel", "a string", canonical(*liger));
    r.liger_kernel = version_text(kPythonTool, "/liger-kernel", liger->as_string());
  }
  const Json* torch = report.find("torch");
  if (!torch || torch->is_null()) {
    r.torch_missing = "torch cannot be imported";
    if (const Json* why = report.find("torchError"); why && why->is_string())
      r.torch_missing += " (" + std::string(trim(why->as_string()).substr(0, 200)) + ")";
    return r;
  }
  r.has_torch = true;
  r.torch = version_text(kPythonTool, "/torch", member(report, "torch", Json::Type::kString, "a string").as_string());
  if (const Json* triton = report.find("triton"); triton && !triton->is_null()) {
    if (!triton->is_string()) fail(kPythonTool, "/triton", "a string", canonical(*triton));
    r.triton = version_text(kPythonTool, "/triton", triton->as_string());
  }
  r.device = product_text(kPythonTool, "/device", member(report, "device", Json::Type::kString, "a string").as_string());
  const Json& cap = member(report, "capability", Json::Type::kArray, "[major, minor]");
  auto whole = [](const Json& v) { return v.is_number() && v.as_number() == std::floor(v.as_number()); };
  if (cap.as_array().size() != 2 || !whole(cap.as_array()[0]) || !whole(cap.as_array()[1]))
    fail(kPythonTool, "/capability", "[major, minor]", canonical(cap));
  r.architecture = architecture_of(kPythonTool, "/capability", static_cast<int>(cap.as_array()[0].as_number()),
                                   static_cast<int>(cap.as_array()[1].as_number()));
  const Json& sms = member(report, "sm_count", Json::Type::kNumber, "a whole number");
  if (!whole(sms) || sms.as_number() < 1 || sms.as_number() > 100000)
    fail(kPythonTool, "/sm_count", "a whole number of SMs", canonical(sms));
  r.sm_count = static_cast<long long>(sms.as_number());
  return r;
}

Json environment_from(const NvidiaSmiReport& xml, const NvidiaSmiQuery& query, const PythonReport* python) {
  agree("GPU name", xml.product, query.product);
  agree("driver version", xml.driver, query.driver);
  agree("memory (MiB)", xml.memory_mib, query.memory_mib);
  agree("maximum SM clock (MHz)", xml.max_sm_mhz, query.max_sm_mhz);
  agree("maximum memory clock (MHz)", xml.max_memory_mhz, query.max_memory_mhz);
  agree("power limit (W)", xml.power_limit_w, query.power_limit_w);
  if (python && python->has_torch) {
    if (python->device != xml.product)
      throw InvalidInput("PyTorch's device 0 is " + quoted_excerpt(python->device) + ", nvidia-smi's first GPU is " +
                         quoted_excerpt(xml.product) + "; set CUDA_VISIBLE_DEVICES so that both name one GPU");
    if (python->architecture != query.architecture)
      throw InvalidInput("PyTorch says compute capability " + python->architecture + ", nvidia-smi says " +
                         query.architecture);
    if (python->triton.empty())
      throw InvalidInput(std::string(kPythonTool) + ": /triton: expected Triton's version beside torch " +
                         python->torch + ", found none (is Triton installed?)");
  }
  const bool torch = python && python->has_torch;
  Json hardware(Json::Object{{"vendor", Json("nvidia")},
                             {"product", Json(xml.product)},
                             {"architecture", Json(query.architecture)},
                             {"memoryMiB", Json(xml.memory_mib)},
                             {"maxClocksMHz", Json(Json::Object{{"sm", Json(xml.max_sm_mhz)},
                                                                {"memory", Json(xml.max_memory_mhz)}})},
                             {"powerLimitW", Json(xml.power_limit_w)}});
  if (torch) hardware.set("smCount", Json(python->sm_count));
  Json software(Json::Object{{"driver", Json(xml.driver)}, {"cuda", Json(xml.cuda)}});
  if (torch) {
    software.set("python", Json(python->python));
    software.set("torch", Json(python->torch));
    software.set("triton", Json(python->triton));
    if (python->liger_kernel) software.set("liger-kernel", Json(*python->liger_kernel));
  }
  std::string title = xml.product + " · driver " + xml.driver + " · CUDA " + xml.cuda;
  std::string name = "gpu-" + slug(xml.product) + "-driver-" + slug(xml.driver);
  if (torch) {
    title += " · torch " + python->torch;
    name += "-torch-" + slug(python->torch);
  }
  Json metadata(Json::Object{{"name", Json(name.substr(0, 100))}, {"title", Json(title)}});
  return Json(Json::Object{{"apiVersion", Json("kernelindex.dev/v1alpha1")},
                           {"kind", Json("ExecutionEnvironment")},
                           {"spec", Json(Json::Object{{"hardware", std::move(hardware)},
                                                      {"software", std::move(software)}})},
                           {"metadata", std::move(metadata)}});
}

Json parse_environment_document(std::string_view text, std::string_view source) {
  Json json = parse_json(text, source);
  Document doc = Document::from_json(json, Location{std::string(source), ""});
  if (doc.kind() != Kind::kEnvironment)
    throw InvalidInput(std::string(source) + ": /kind: expected \"ExecutionEnvironment\" (kistore capture's output), found \"" +
                       std::string(kind_name(doc.kind())) + "\"");
  return json;
}

std::vector<std::string> environment_changes(const Json& before, const Json& after) {
  std::vector<std::string> out;
  const Json* a = before.find("spec");
  const Json* b = after.find("spec");
  if (!a || !b || !a->is_object() || !b->is_object()) return {"spec: not comparable"};
  for (std::string_view part : {"hardware", "software"}) {
    const Json* pa = a->find(part);
    const Json* pb = b->find(part);
    std::map<std::string, std::pair<std::string, std::string>> fields;
    if (pa && pa->is_object())
      for (const auto& [k, v] : pa->as_object()) fields[k].first = canonical(v);
    if (pb && pb->is_object())
      for (const auto& [k, v] : pb->as_object()) fields[k].second = canonical(v);
    for (const auto& [k, values] : fields)
      if (values.first != values.second)
        out.push_back(std::string(part) + "." + k + " " + (values.first.empty() ? "(none)" : values.first) +
                      " -> " + (values.second.empty() ? "(none)" : values.second));
  }
  return out;
}

}  // namespace kistore
