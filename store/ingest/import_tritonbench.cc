#include "store/ingest/import_tritonbench.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <utility>

#include "objects/error.h"

namespace kistore {
namespace {

constexpr std::string_view kSource = "tritonbench";
constexpr std::string_view kPrefix = "tritonbench_";
constexpr double kMaxMs = kMaxSeconds * 1e3;

Json object(std::initializer_list<Json::Member> members) { return Json(Json::Object(members)); }

// One key of the file, taken apart.
struct Key {
  std::string op;       // "softmax"
  std::string mode;     // "fwd"
  std::string x_val;    // "2176.0", "(1024, 1024, 1024)"
  std::string backend;  // "triton_softmax"
  std::string metric;   // "latency"
};

// The modes tritonbench names a benchmark with (<op>_<mode>), longest first.
constexpr std::string_view kModes[] = {"fwd_no_grad", "fwd_bwd", "fwd", "bwd"};

// nullopt for a key that is no per-input result (an "-avg" mean, a
// "-pass" flag); throws for a key that looks like one but is malformed.
std::optional<Key> parse_key(const std::string& k, const JsonAt& at) {
  auto bad = [&](std::string_view why) -> std::optional<Key> {
    at.fail("a key \"tritonbench_<op>_<mode>[x_<x_val>-<backend>]_<metric>\" (" + std::string(why) + ")",
            "the key " + quoted_excerpt(k));
  };
  if (k.size() >= 4 && k.compare(k.size() - 4, 4, "-avg") == 0) return std::nullopt;
  if (k.rfind(kPrefix, 0) != 0) return bad("no \"tritonbench_\" prefix");
  std::size_t open = k.find('['), close = k.rfind(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return bad("no [...]");
  std::string name = k.substr(kPrefix.size(), open - kPrefix.size());
  std::string inner = k.substr(open + 1, close - open - 1);
  if (close + 1 >= k.size() || k[close + 1] != '_') return bad("no _<metric> after ]");
  Key key;
  key.metric = k.substr(close + 2);
  for (std::string_view m : kModes) {
    if (name.size() > m.size() + 1 && name.compare(name.size() - m.size(), m.size(), m) == 0 &&
        name[name.size() - m.size() - 1] == '_') {
      key.mode = std::string(m);
      key.op = name.substr(0, name.size() - m.size() - 1);
      break;
    }
  }
  if (key.mode.empty()) return bad("the benchmark does not end in _fwd, _bwd, _fwd_bwd or _fwd_no_grad");
  if (inner.rfind("x_", 0) != 0) return bad("no x_ in [...]");
  std::size_t dash = inner.rfind('-');
  if (dash == std::string::npos || dash <= 2 || dash + 1 >= inner.size()) return bad("no -<backend> in [...]");
  key.x_val = inner.substr(2, dash - 2);
  key.backend = inner.substr(dash + 1);
  if (key.x_val == "average") return std::nullopt;  // the CSV's last row: means over the inputs, not an input
  for (const std::string* s : {&key.op, &key.backend, &key.metric, &key.x_val}) {
    bool ok = !s->empty() && s->size() <= 255;
    for (unsigned char c : *s) ok = ok && c >= 0x20 && c != 0x7f && c != '/';
    if (!ok) return bad("op, x value, backend and metric of 1-255 bytes without '/' or control characters");
  }
  return key;
}

// x_val as a number when it is one ("2176.0" -> 2176), else the string.
Json x_value(const std::string& s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && end == s.data() + s.size() && std::isfinite(v)) return Json(v);
  return Json(s);
}

// A metric's value as the file holds it: a number, a numeric string, or a
// list of numbers (whose median the CSV would show). nullopt for null.
std::optional<double> metric_value(const JsonAt& at, double high) {
  const Json& v = at.value();
  if (v.is_null()) return std::nullopt;
  if (v.is_string()) return at.number_string(0, high);
  if (v.is_number()) return at.number_in(0, high);
  if (v.is_array()) {
    const auto& a = at.array();
    if (a.empty() || a.size() > 100000) at.fail("a list of 1 to 100000 numbers");
    std::vector<double> xs;
    for (std::size_t i = 0; i < a.size(); ++i) xs.push_back(at.at(i).number_in(0, high));
    std::sort(xs.begin(), xs.end());
    std::size_t n = xs.size();
    return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
  }
  at.fail("a number, a number as a string, or a list of numbers");
}

struct Measured {
  Key key;
  std::string where;
  std::vector<std::pair<std::string, JsonAt>> metrics;  // in file order
};

Json run_bundle(const Measured& r, const HarnessOptions& options) {
  const Key& k = r.key;
  Json measurements = Json::array();
  Json native = Json::object();
  std::optional<double> latency_ms, accuracy;
  for (const auto& [metric, at] : r.metrics) {
    native.set(metric, at.value());
    if (metric == "latency") {
      latency_ms = metric_value(at, kMaxMs);
    } else if (metric == "gbps") {
      if (auto v = metric_value(at, 1e9)) measurements.push_back(harness_measurement("memory-throughput", "median", "GB/s", *v));
    } else if (metric == "tflops") {
      if (auto v = metric_value(at, 1e9)) measurements.push_back(harness_measurement("compute-throughput", "median", "TFLOP/s", *v));
    } else if (metric == "speedup") {
      if (auto v = metric_value(at, 1e12)) measurements.push_back(harness_measurement("speedup", "median", "ratio", *v));
    } else if (metric == "accuracy") {
      accuracy = metric_value(at, 1);
    }
  }
  Json spec = object({{"status", Json(accuracy && *accuracy < 1 ? "incorrect" : "passed")}});
  if (latency_ms) {
    measurements.as_array().insert(measurements.as_array().begin(),
                                   harness_measurement("latency", "median", "ns", *latency_ms * 1e6));
    spec.set("timing", object({{"latencyNs", object({{"median", Json(*latency_ms * 1e6)}})}, {"primaryStatistic", "median"}}));
  }
  spec.set("measurements", std::move(measurements));
  if (accuracy) {
    spec.set("correctness", object({{"checked", true},
                                    {"by", "tritonbench: output compared with the baseline backend's (accuracy metric)"},
                                    {"passed", *accuracy >= 1}}));
    if (*accuracy < 1)
      spec.set("error", "tritonbench's accuracy check failed: the output differs from the baseline backend's");
  } else {
    spec.set("correctness", object({{"checked", false}, {"by", "not run: tritonbench checks accuracy only with --metrics accuracy"}}));
  }
  std::string bench = k.op + "_" + k.mode;
  std::string external_id = bench + "/x_" + k.x_val + "/" + k.backend + "/" + options.file_digest.substr(0, 16);
  spec.set("sourceNative", object({{"source", Json(kSource)},
                                   {"benchmark", Json(bench)},
                                   {"externalId", Json(external_id)},
                                   {"metrics", std::move(native)}}));

  Json protocol = harness_document(
      "BenchmarkProtocol",
      object({{"harness", object({{"name", "tritonbench"}, {"repository", "https://github.com/meta-pytorch/tritonbench"}})},
              {"measurement", object({{"timer", "cuda_events"},
                                      {"primaryStatistic", "median"},
                                      {"method", "triton.testing.do_bench, 25 ms warmup and 100 ms repetition budgets, "
                                                 "IQR outliers removed; the file keeps the p50 only"}})},
              {"comparability", object({{"family", "tritonbench"}})}}),
      object({{"name", "tritonbench-do-bench-p50"}, {"title", "tritonbench · do_bench p50"}}));
  Json workload = harness_document(
      "Workload",
      object({{"definition", Json("tritonbench " + k.op)},
              {"parameters", object({{"x_val", x_value(k.x_val)}, {"mode", Json(k.mode)}})}}),
      object({{"name", Json(harness_slug("tritonbench-" + bench + "-" + k.x_val))},
              {"title", Json(k.op + " · " + k.mode + " · x=" + k.x_val)}}));
  Json implementation = harness_document(
      "Implementation", object({{"name", Json(k.backend)}}),
      object({{"name", Json(harness_slug("tritonbench-" + k.backend))}, {"title", Json(k.backend + " (tritonbench backend)")}}));
  Json metadata = object({{"name", Json(harness_slug("tritonbench-" + bench + "-" + k.x_val + "-" + k.backend))},
                          {"title", Json(k.op + " · " + k.mode + " · x=" + k.x_val + " · " + k.backend)}});
  return harness_bundle(std::move(spec), std::move(metadata), std::move(protocol), *options.environment,
                        std::move(workload), std::move(implementation));
}

}  // namespace

HarnessImport import_tritonbench(const Json& root_value, std::string_view source, const HarnessOptions& options) {
  JsonAt root(source, root_value);
  root.object();
  if (!options.environment) throw InvalidInput(environment_needed(source, "tritonbench"));
  HarnessImport out;
  std::map<std::pair<std::string, std::string>, std::size_t> index;  // (bench+x, backend) -> runs[i]
  std::vector<Measured> runs;
  for (const auto& [name, value] : root.object()) {
    JsonAt at = root.member(name);
    std::optional<Key> key;
    try {
      key = parse_key(name, at);
    } catch (const Error& e) {
      out.errors.push_back({at.where(), e.what()});
      continue;
    }
    if (!key) continue;
    auto id = std::make_pair(key->op + "_" + key->mode + "[" + key->x_val + "]", key->backend);
    auto [it, fresh] = index.emplace(id, runs.size());
    if (fresh) runs.push_back({*key, at.where(), {}});
    runs[it->second].metrics.emplace_back(key->metric, at);
  }
  for (const Measured& r : runs) {
    try {
      out.records.push_back({r.where, run_bundle(r, options)});
    } catch (const Error& e) {
      out.errors.push_back({r.where, e.what()});
    }
  }
  return out;
}

}  // namespace kistore
