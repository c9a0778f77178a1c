#include "store/ingest/import_liger.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "objects/error.h"
#include "store/ingest/csv.h"
#include "store/ingest/liger_tables.h"

namespace kistore {
namespace {

using liger::Gpu;
using liger::kDefinitions;
using liger::kGpus;
using liger::kPasses;
using liger::kSlugNames;
using liger::kSlugSkipped;
using liger::lookup;
using liger::PassInfo;

constexpr std::string_view kApi = "kernelindex.dev/v1alpha1";
constexpr std::string_view kSource = "liger-kernel-bench";
constexpr std::size_t kMaxNameLength = 100;

// ---------------------------------------------------------------------------
// Small helpers

// Lowercase ASCII letters and digits, every other run of characters one "-",
// none at either end.
std::string slugify(std::string_view s) {
  std::string out;
  bool dash = false;
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      if (dash && !out.empty()) out += '-';
      dash = false;
      out += static_cast<char>(c);
    } else if (c >= 'A' && c <= 'Z') {
      if (dash && !out.empty()) out += '-';
      dash = false;
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      dash = true;
    }
  }
  return out;
}

// Cuts a slug at kMaxNameLength characters, never leaving a trailing "-".
std::string cut_name(std::string s) {
  if (s.size() > kMaxNameLength) s.resize(kMaxNameLength);
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s;
}

// The whole of `s` as a number (from_chars syntax: no '+', no spaces); nullopt
// otherwise. Sets *non_finite when `s` spells nan or an infinity.
std::optional<double> parse_number(std::string_view s, bool* non_finite = nullptr) {
  double value = 0;
  if (non_finite) *non_finite = false;
  if (s.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  if (!std::isfinite(value)) {
    if (non_finite) *non_finite = true;
    return std::nullopt;
  }
  return value;
}

// Names that become externalId path segments: a letter or digit first, so
// that no segment is "." or "..", and no longer than a path segment may be
// (refs/layout.h).
constexpr std::size_t kMaxSegmentBytes = 255;

bool is_identifier(std::string_view s) {
  if (s.empty() || s.size() > kMaxSegmentBytes || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  for (unsigned char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == '+';
    if (!ok) return false;
  }
  return true;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

Json object(std::initializer_list<JsonMember> members) { return json_object(members); }

Json document(std::string_view kind, Json spec, Json metadata) {
  return object({{"apiVersion", Json(kApi)},
                 {"kind", Json(kind)},
                 {"spec", std::move(spec)},
                 {"metadata", std::move(metadata)}});
}

// ---------------------------------------------------------------------------
// Row validation: everything liger_bundle needs, checked once.

struct MappedRow {
  const PassInfo* pass = nullptr;
  bool memory = false;
  double y50 = 0, y20 = 0, y80 = 0;
  Json x;       // the x value: a number, or a string (model_config)
  Json config;  // the extra benchmark config, an object
  const Gpu* gpu = nullptr;
  std::string observed_at;  // RFC 3339 UTC with milliseconds
};

class RowError {
 public:
  explicit RowError(const LigerRow& row)
      : where_(row.source + ":" + std::to_string(row.line) + ": ") {}
  [[noreturn]] void fail(std::string_view column, std::string_view expected,
                         std::string_view found_text) const {
    throw InvalidInput(where_ + std::string(column) + ": expected " + std::string(expected) +
                       ", found " + std::string(found_text));
  }

 private:
  std::string where_;
};

constexpr std::string_view kNameExpected =
    "a name of at most 255 letters, digits, '_', '-', '.' or '+', starting with a letter or digit";

bool leap_year(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// "YYYY-MM-DD HH:MM:SS" (Liger's time.strftime("%Y-%m-%d %H:%M:%S")) ->
// "YYYY-MM-DDTHH:MM:SS.000Z"; nullopt when malformed or not a real time.
// Upstream records no zone; like KernelIndex, the time is taken as UTC.
std::optional<std::string> rfc3339(std::string_view ts) {
  static constexpr std::string_view kShape = "dddd-dd-dd dd:dd:dd";
  if (ts.size() != kShape.size()) return std::nullopt;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (kShape[i] == 'd' ? !(ts[i] >= '0' && ts[i] <= '9') : ts[i] != kShape[i])
      return std::nullopt;
  }
  auto num = [&](std::size_t pos, std::size_t len) {
    int v = 0;
    for (std::size_t i = pos; i < pos + len; ++i) v = v * 10 + (ts[i] - '0');
    return v;
  };
  int year = num(0, 4), month = num(5, 2), day = num(8, 2);
  int hour = num(11, 2), minute = num(14, 2), second = num(17, 2);
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1) return std::nullopt;
  int month_days = kDays[month - 1] + (month == 2 && leap_year(year) ? 1 : 0);
  if (day > month_days || hour > 23 || minute > 59 || second > 59) return std::nullopt;
  std::string out(ts);
  out[10] = 'T';
  return out + ".000Z";
}

std::string gpu_list() {
  std::vector<std::string> names;
  for (const auto& g : kGpus) names.emplace_back(g.name);
  return join(names, ", ");
}

// The swept variable's value: a number, or a named configuration such as
// "llama_2_7b".
Json x_value(const LigerRow& row, const RowError& err) {
  bool non_finite = false;
  if (auto v = parse_number(row.x_value, &non_finite)) return Json(*v);
  if (!non_finite && !slugify(row.x_value).empty() && row.x_value.find('/') == std::string::npos &&
      row.x_value.find_first_of("\r\n\t") == std::string::npos)
    return Json(row.x_value);
  err.fail("x_value", "a number or a configuration name", quoted_excerpt(row.x_value));
}

// The extra benchmark config, an object (empty for a benchmark without one,
// which Liger writes as json.dumps(None)).
Json extra_config(const LigerRow& row, const RowError& err) {
  const std::string& cfg = row.extra_benchmark_config_str;
  if (cfg.empty() || cfg == "null") return Json::object();
  Json config;
  try {
    config = parse_json(cfg, "extra_benchmark_config_str");
  } catch (const Error& e) {
    err.fail("extra_benchmark_config_str", "a JSON object", "invalid JSON (" + std::string(e.what()) + ")");
  }
  if (!config.is_object()) {
    static constexpr std::string_view kTypeNames[] = {"null",     "a boolean", "a number",
                                                      "a string", "an array",  "an object"};
    err.fail("extra_benchmark_config_str", "a JSON object",
             std::string(kTypeNames[static_cast<int>(config.type())]) + " " + quoted_excerpt(cfg));
  }
  return config;
}

// The product a captured environment document names (spec.hardware.product).
std::string_view environment_product(const Json& environment) {
  const Json* spec = environment.find("spec");
  const Json* hardware = spec ? spec->find("hardware") : nullptr;
  const Json* product = hardware ? hardware->find("product") : nullptr;
  if (!product || !product->is_string())
    throw InvalidInput("environment: /spec/hardware/product: expected the GPU's name, found none");
  return product->as_string();
}

MappedRow map_row(const LigerRow& row, const Json* environment = nullptr) {
  RowError err(row);
  MappedRow m;

  if (!is_identifier(row.kernel_name)) err.fail("kernel_name", kNameExpected, quoted_excerpt(row.kernel_name));
  if (!is_identifier(row.kernel_provider))
    err.fail("kernel_provider", kNameExpected, quoted_excerpt(row.kernel_provider));

  for (const auto& p : kPasses)
    if (p.mode == row.kernel_operation_mode) m.pass = &p;
  if (!m.pass)
    err.fail("kernel_operation_mode", "one of forward, backward, full, no-grad-forward",
             quoted_excerpt(row.kernel_operation_mode));

  if (row.metric_name == "speed") {
    m.memory = false;
    if (row.metric_unit != "ms")
      err.fail("metric_unit", "\"ms\" for metric speed", quoted_excerpt(row.metric_unit));
  } else if (row.metric_name == "memory") {
    m.memory = true;
    if (row.metric_unit != "MB")
      err.fail("metric_unit", "\"MB\" for metric memory", quoted_excerpt(row.metric_unit));
  } else {
    err.fail("metric_name", "speed or memory", quoted_excerpt(row.metric_name));
  }

  if (!is_identifier(row.x_name))
    err.fail("x_name", kNameExpected, quoted_excerpt(row.x_name));
  m.x = x_value(row, err);

  // A time of at most a day (as every importer bounds it: converted to ns,
  // it stays exact and far from overflowing), a memory of at most 1 PB.
  const bool speed = row.metric_name == "speed";
  const double most = speed ? kMaxSeconds * 1e3 : 1e9;
  auto y = [&](std::string_view column, const std::string& text) {
    auto v = parse_number(text);
    if (!v || *v < 0 || *v > most)
      err.fail(column, speed ? "a time in ms from 0 to 86400000 (a day)" : "a memory in MB from 0 to 1e9",
               quoted_excerpt(text));
    return *v;
  };
  m.y50 = y("y_value_50", row.y_value_50);
  m.y20 = y("y_value_20", row.y_value_20);
  m.y80 = y("y_value_80", row.y_value_80);

  m.config = extra_config(row, err);

  if (environment) {
    // A captured environment says what the GPU is; the row must be of it.
    if (std::string_view product = environment_product(*environment); row.gpu_name != product)
      err.fail("gpu_name", "the environment's GPU " + quoted_excerpt(product), quoted_excerpt(row.gpu_name));
  } else {
    for (const auto& g : kGpus)
      if (g.name == row.gpu_name) m.gpu = &g;
    if (!m.gpu) err.fail("gpu_name", "a known GPU (" + gpu_list() + ")", quoted_excerpt(row.gpu_name));
  }

  auto ts = rfc3339(row.timestamp);
  if (!ts) err.fail("timestamp", "a time \"YYYY-MM-DD HH:MM:SS\"", quoted_excerpt(row.timestamp));
  m.observed_at = *ts;

  if (!is_identifier(row.liger_version))
    err.fail("liger_version", "a release such as \"0.6.3\"", quoted_excerpt(row.liger_version));
  return m;
}

// ---------------------------------------------------------------------------
// Workload: parameters and slug

Json workload_parameters(const LigerRow& row, const MappedRow& m) {
  Json params = m.config;
  params.set(row.x_name, m.x);  // the swept variable supersedes a config member of its name
  return params;
}

std::string slug_name(std::string_view key) {
  if (auto n = lookup(kSlugNames, key)) return std::string(*n);
  return slugify(key);
}

std::string slug_value(const Json& v) {
  if (v.is_number()) {
    std::string s = format_number(v.as_number());
    if (!s.empty() && s[0] == '-') s = "neg" + s.substr(1);
    return slugify(s);
  }
  return slugify(v.as_string());
}

std::string dtype_slug(std::string_view dtype) {
  static constexpr std::pair<std::string_view, std::string_view> kDtypes[] = {
      {"torch.bfloat16", "bf16"}, {"torch.float16", "fp16"}, {"torch.float32", "fp32"},
      {"torch.float64", "fp64"},  {"torch.half", "fp16"},    {"torch.float", "fp32"},
  };
  if (auto s = lookup(kDtypes, dtype)) return std::string(*s);
  if (dtype.substr(0, 6) == "torch.") dtype.remove_prefix(6);
  return slugify(dtype);
}

// The slug names the row's shape: every non-negative integer member of the
// config (except the knobs of kSlugSkipped) and the x variable, each as
// <short name><value>, sorted by name, then the dtype. The x variable
// supersedes config members of the same short name (x T=1024 over seq_len
// 8192); two config members with one short name and different values keep
// their own names instead. Strings other than dtype, booleans and fractional
// numbers are left out (they are constants of the benchmark, or part of the
// kernel's definition); they remain in the workload's parameters.
std::string workload_slug(const LigerRow& row, const MappedRow& m) {
  struct Part {
    std::string name;
    std::string key;
    double value;
  };
  const std::string x_name = slug_name(row.x_name);
  std::vector<Part> config_parts;
  for (const auto& [key, value] : m.config.as_object()) {
    if (key == row.x_name || !value.is_number()) continue;
    double v = value.as_number();
    if (v < 0 || v != std::floor(v)) continue;
    if (std::find(std::begin(kSlugSkipped), std::end(kSlugSkipped), key) != std::end(kSlugSkipped))
      continue;
    std::string name = slug_name(key);
    if (name == x_name) continue;
    config_parts.push_back({name, key, v});
  }
  std::map<std::string, std::vector<const Part*>> by_name;
  for (const auto& p : config_parts) by_name[p.name].push_back(&p);

  std::vector<std::pair<std::string, std::string>> parts;  // (name, rendered)
  auto add = [&](const std::string& name, const std::string& value) {
    bool digit = !value.empty() && value[0] >= '0' && value[0] <= '9';
    parts.emplace_back(name, name + (digit ? "" : "-") + value);
  };
  for (const auto& [name, group] : by_name) {
    // (the first value by name: clang 14 cannot capture a structured binding)
    const auto& first = group.front()->value;
    bool same = std::all_of(group.begin(), group.end(), [&](const Part* p) { return p->value == first; });
    if (same) {
      add(name, slug_value(Json(group.front()->value)));
    } else {
      for (const Part* p : group) add(slugify(p->key), slug_value(Json(p->value)));
    }
  }
  add(x_name, slug_value(m.x));
  std::sort(parts.begin(), parts.end());

  std::vector<std::string> rendered;
  for (auto& p : parts) rendered.push_back(std::move(p.second));
  if (const Json* dtype = m.config.find("dtype"); dtype && dtype->is_string())
    rendered.push_back(dtype_slug(dtype->as_string()));
  return join(rendered, "-");
}

std::string definition_of(std::string_view kernel) {
  if (auto d = lookup(kDefinitions, kernel)) return std::string(*d);
  return std::string(kernel);
}

// ---------------------------------------------------------------------------
// Documents

constexpr std::string_view kCommonNotes =
    "The upstream CSV records no CUDA, driver, or torch version; the Liger release rides each "
    "run's labels.";

Json protocol_document(const MappedRow& m) {
  const PassInfo& p = *m.pass;
  Json harness = object({{"name", "Liger-Kernel benchmark scripts"},
                         {"repository", "https://github.com/linkedin/Liger-Kernel"}});
  if (!m.memory) {
    std::string notes = "Timed: " + std::string(p.timed) +
                        ", via triton.testing.do_bench with quantiles 0.5/0.2/0.8 (median with "
                        "p20/p80 spread). " +
                        std::string(kCommonNotes) +
                        " Comparable only within one kernel, workload, timed pass, and GPU.";
    Json spec = object({{"harness", std::move(harness)},
                        {"measurement", object({{"timer", "cuda_events"},
                                                {"primaryStatistic", "median"}})},
                        {"comparability", object({{"notes", Json(notes)},
                                                  {"family", "liger_kernel_bench"}})}});
    Json metadata =
        object({{"name", Json("liger-bench-do-bench-" + std::string(p.mode))},
                {"title", Json("Liger benchmark harness · " + std::string(p.title) + " pass")}});
    return document("BenchmarkProtocol", std::move(spec), std::move(metadata));
  }
  std::string notes =
      "Measured: peak GPU memory allocated through PyTorch (torch.cuda.max_memory_allocated "
      "after torch.cuda.reset_peak_memory_stats) while running " +
      std::string(p.timed) +
      ", over 10 repetitions with quantiles 0.5/0.2/0.8 (median with p20/p80 spread), in MiB "
      "(2^20 bytes), which the upstream CSV labels MB. The peak includes everything already "
      "allocated when the measurement starts (inputs, weights, and for the backward pass the "
      "saved forward graph), not the kernel's own workspace alone. " +
      std::string(kCommonNotes) +
      " Comparable only within one kernel, workload, measured pass, and GPU.";
  Json spec = object(
      {{"harness", std::move(harness)},
       {"measurement", object({{"meter", "cuda_max_memory_allocated"},
                               {"unit", "MiB"},
                               {"primaryStatistic", "median"}})},
       {"comparability", object({{"notes", Json(notes)}, {"family", "liger_kernel_bench"}})}});
  Json metadata = object(
      {{"name", Json("liger-bench-peak-memory-" + std::string(p.mode))},
       {"title",
        Json("Liger benchmark harness · " + std::string(p.title) + " pass · peak memory")}});
  return document("BenchmarkProtocol", std::move(spec), std::move(metadata));
}

Json environment_document(const MappedRow& m) {
  const Gpu& g = *m.gpu;
  std::string_view short_name = g.name;
  for (std::string_view prefix : {"NVIDIA ", "AMD "})
    if (short_name.substr(0, prefix.size()) == prefix) short_name.remove_prefix(prefix.size());
  Json spec = object({{"hardware", object({{"vendor", Json(g.vendor)},
                                           {"product", Json(g.name)},
                                           {"architecture", Json(g.architecture)}})},
                      {"software", Json::object()}});
  Json metadata = object({{"name", Json(cut_name("liger-bench-" + slugify(g.name)))},
                          {"title", Json("Liger benchmark host · " + std::string(short_name))}});
  return document("ExecutionEnvironment", std::move(spec), std::move(metadata));
}

Json workload_document(const LigerRow& row, const MappedRow& m, const std::string& slug) {
  std::string definition = definition_of(row.kernel_name);
  Json spec = object({{"definition", Json(definition)},
                      {"parameters", workload_parameters(row, m)}});
  Json metadata = object({{"name", Json(cut_name("liger-" + slugify(row.kernel_name) + "-" + slug))},
                          {"title", Json(definition + " · " + slug)}});
  return document("Workload", std::move(spec), std::move(metadata));
}

// Liger's own providers ("liger", "liger_tiled", "liger_cutile_rms_norm", ...)
// are Liger-Kernel at the row's release. For the baselines the CSV records no
// version, so they carry none.
Json implementation_document(const LigerRow& row) {
  static constexpr std::pair<std::string_view, std::string_view> kProjects[] = {
      {"huggingface", "transformers"},  {"torch", "PyTorch"},
      {"torch_compile", "PyTorch"},     {"deepspeed_tiled", "DeepSpeed"},
      {"megatron", "Megatron-LM"},      {"megatron-fused", "Megatron-LM"},
      {"megatron-unfused", "Megatron-LM"},
  };
  const std::string& provider = row.kernel_provider;
  bool liger = provider.substr(0, 5) == "liger";
  Json spec = object({{"name", Json(provider)}});
  std::string name = "liger-impl-" + slugify(provider);
  std::string title = provider;
  if (liger) {
    spec.set("project", "Liger-Kernel");
    spec.set("revision", Json(row.liger_version));
    name += "-" + slugify(row.liger_version);
    title += " · Liger-Kernel " + row.liger_version;
  } else if (auto project = lookup(kProjects, provider)) {
    spec.set("project", Json(*project));
    title += " · " + std::string(*project);
  }
  Json metadata = object({{"name", Json(cut_name(name))}, {"title", Json(title)}});
  return document("Implementation", std::move(spec), std::move(metadata));
}

Json measurement(std::string_view metric, std::string_view statistic, std::string_view unit,
                 Json value) {
  return object({{"unit", Json(unit)},
                 {"value", std::move(value)},
                 {"metric", Json(metric)},
                 {"statistic", Json(statistic)}});
}

Json nanoseconds(double ms) { return Json(static_cast<long long>(std::llround(ms * 1e6))); }

void check_header(CsvReader& reader, std::string_view source) {
  constexpr std::size_t kWhole = 1000;  // a header is shown whole, unless it is not one
  CsvRecord rec;
  std::string error;
  std::string expected;
  for (std::size_t i = 0; i < kLigerColumns.size(); ++i) {
    if (i) expected += ',';
    expected += kLigerColumns[i];
  }
  CsvStatus status = reader.next(rec, error);
  if (status == CsvStatus::kEnd)
    throw InvalidInput(std::string(source) + ":1: expected header " + quoted_excerpt(expected, kWhole) +
                       ", found an empty file");
  if (status != CsvStatus::kRecord) throw InvalidInput(error);
  bool ok = rec.fields.size() == kLigerColumns.size();
  for (std::size_t i = 0; ok && i < rec.fields.size(); ++i) ok = rec.fields[i] == kLigerColumns[i];
  if (ok) return;
  // Say first which columns are missing or unknown, then the whole header.
  auto has = [](const auto& list, std::string_view name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  std::vector<std::string> missing, unknown;
  for (std::string_view c : kLigerColumns)
    if (!has(rec.fields, c)) missing.emplace_back(c);
  for (const std::string& f : rec.fields)
    if (!has(kLigerColumns, f)) unknown.push_back(quoted_excerpt(f, 60));
  std::string what;
  if (!missing.empty()) what = "the header lacks column" + std::string(missing.size() > 1 ? "s " : " ") + join(missing, ", ");
  if (!unknown.empty())
    what += (what.empty() ? "the header has unknown column" : "; it has unknown column") +
            std::string(unknown.size() > 1 ? "s " : " ") + join(unknown, ", ");
  if (what.empty()) what = "the header has the right columns in another order";
  throw InvalidInput(std::string(source) + ":1: " + what + "; expected header " + quoted_excerpt(expected, kWhole) +
                     ", found " + quoted_excerpt(join(rec.fields, ","), kWhole));
}

LigerRow to_row(CsvRecord& rec, std::string_view source, const Json* environment) {
  if (rec.fields.size() != kLigerColumns.size())
    throw InvalidInput(std::string(source) + ":" + std::to_string(rec.line) + ": expected " +
                       std::to_string(kLigerColumns.size()) + " fields, found " +
                       std::to_string(rec.fields.size()));
  auto& f = rec.fields;
  LigerRow row;
  row.source = std::string(source);
  row.line = rec.line;
  row.kernel_name = std::move(f[0]);
  row.kernel_provider = std::move(f[1]);
  row.kernel_operation_mode = std::move(f[2]);
  row.metric_name = std::move(f[3]);
  row.metric_unit = std::move(f[4]);
  row.x_name = std::move(f[5]);
  row.x_label = std::move(f[6]);
  row.x_value = std::move(f[7]);
  row.y_value_50 = std::move(f[8]);
  row.y_value_20 = std::move(f[9]);
  row.y_value_80 = std::move(f[10]);
  row.extra_benchmark_config_str = std::move(f[11]);
  row.gpu_name = std::move(f[12]);
  row.timestamp = std::move(f[13]);
  row.liger_version = std::move(f[14]);
  // Validates: a row handed out maps without error, its workload slug
  // included (it is a segment of the run's refs/sources path).
  const MappedRow m = map_row(row, environment);
  if (std::string slug = workload_slug(row, m); slug.size() > kMaxSegmentBytes)
    RowError(row).fail("extra_benchmark_config_str",
                       "a config whose workload name fits a " + std::to_string(kMaxSegmentBytes) + "-byte path segment",
                       "one whose workload name has " + std::to_string(slug.size()) + " bytes");
  return row;
}

void parse_stream(CsvReader& reader, std::string_view source, bool keep_going, const Json* environment,
                  const std::function<void(LigerRow&&)>& on_row,
                  const std::function<void(LigerRowError&&)>& on_error) {
  check_header(reader, source);
  CsvRecord rec;
  std::string error;
  while (true) {
    CsvStatus status = reader.next(rec, error);
    if (status == CsvStatus::kEnd) break;
    if (status == CsvStatus::kError || status == CsvStatus::kFatal) {
      if (!keep_going) throw InvalidInput(error);
      on_error({rec.line, error});
      if (status == CsvStatus::kFatal) break;
      continue;
    }
    LigerRow row;
    try {
      row = to_row(rec, source, environment);
    } catch (const Error& e) {
      if (!keep_going) throw;
      on_error({rec.line, e.what()});
      continue;
    }
    on_row(std::move(row));
  }
}

LigerParse parse(std::string_view text, std::string_view source, bool keep_going, const Json* environment) {
  CsvReader reader(text, source);
  LigerParse out;
  parse_stream(
      reader, source, keep_going, environment, [&](LigerRow&& r) { out.rows.push_back(std::move(r)); },
      [&](LigerRowError&& e) { out.errors.push_back(std::move(e)); });
  return out;
}

}  // namespace

void parse_liger_csv_stream(CsvReader& reader, std::string_view source, const Json* environment,
                            const std::function<void(LigerRow&&)>& on_row,
                            const std::function<void(LigerRowError&&)>& on_error) {
  parse_stream(reader, source, /*keep_going=*/true, environment, on_row, on_error);
}

std::vector<LigerRow> parse_liger_csv(std::string_view text, std::string_view source, const Json* environment) {
  return parse(text, source, /*keep_going=*/false, environment).rows;
}

LigerParse parse_liger_csv_lenient(std::string_view text, std::string_view source, const Json* environment) {
  return parse(text, source, /*keep_going=*/true, environment);
}

std::string liger_workload_slug(const LigerRow& row) {
  return workload_slug(row, map_row(row));
}

Bundle liger_documents(const LigerRow& row, const Json* environment, BundleMaker& maker, std::string_view where) {
  const MappedRow m = map_row(row, environment);
  const std::string slug = workload_slug(row, m);
  const std::string gpu_slug = slugify(row.gpu_name);
  const std::string time_slug = slugify(row.timestamp);

  Json protocol = protocol_document(m);
  Json environment_doc = environment ? *environment : environment_document(m);
  Json workload = workload_document(row, m, slug);
  Json implementation = implementation_document(row);

  // "<kernel>/<mode>[/memory]": speed rows keep KernelIndex's published pattern.
  std::vector<std::string> head = {row.kernel_name, row.kernel_operation_mode};
  if (m.memory) head.emplace_back("memory");
  std::string benchmark = join(head, "/");
  std::vector<std::string> id_parts = head;
  for (const std::string* s : {&row.kernel_provider, &gpu_slug, &slug, &time_slug})
    id_parts.push_back(*s);
  std::string external_id = join(id_parts, "/");

  Json spec = object({{"status", "passed"}});
  if (!m.memory) {
    spec.set("timing", object({{"latencyNs", object({{"median", nanoseconds(m.y50)}})},
                               {"primaryStatistic", "median"}}));
    spec.set("observedAt", Json(m.observed_at));
    spec.set("measurements",
             Json(Json::Array{measurement("latency", "p20", "ns", nanoseconds(m.y20)),
                              measurement("latency", "p80", "ns", nanoseconds(m.y80))}));
    spec.set("sourceNative",
             object({{"source", Json(kSource)},
                     {"metrics", object({{"ms_20", Json(m.y20)},
                                         {"ms_50", Json(m.y50)},
                                         {"ms_80", Json(m.y80)}})},
                     {"benchmark", Json(benchmark)},
                     {"externalId", Json(external_id)}}));
  } else {
    spec.set("observedAt", Json(m.observed_at));
    spec.set("measurements", Json(Json::Array{measurement("memory", "median", "MB", Json(m.y50)),
                                              measurement("memory", "p20", "MB", Json(m.y20)),
                                              measurement("memory", "p80", "MB", Json(m.y80))}));
    spec.set("sourceNative",
             object({{"source", Json(kSource)},
                     {"metrics", object({{"mb_20", Json(m.y20)},
                                         {"mb_50", Json(m.y50)},
                                         {"mb_80", Json(m.y80)}})},
                     {"benchmark", Json(benchmark)},
                     {"externalId", Json(external_id)}}));
  }

  std::string definition = definition_of(row.kernel_name);
  std::vector<std::string> name_parts = {"liger", row.kernel_name, row.kernel_operation_mode};
  if (m.memory) name_parts.emplace_back("memory");
  for (const std::string* s : {&row.kernel_provider, &gpu_slug, &slug, &time_slug})
    name_parts.push_back(*s);
  std::string title = definition + " · " + row.kernel_provider + " · " + row.kernel_operation_mode;
  if (m.memory) title += " · peak memory";
  Json metadata = object({{"name", Json(cut_name(slugify(join(name_parts, "-"))))},
                          {"title", Json(title)},
                          {"labels", object({{"liger_version", Json(row.liger_version)}})}});

  return maker.make(where, std::move(spec), std::move(metadata), std::move(protocol), std::move(environment_doc),
                    std::move(workload), std::move(implementation));
}

Json liger_bundle(const LigerRow& row, const Json* environment) {
  BundleMaker maker;
  return liger_documents(row, environment, maker, "liger").to_json();
}

}  // namespace kistore
