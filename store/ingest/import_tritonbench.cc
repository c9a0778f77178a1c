#include "store/ingest/import_tritonbench.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <utility>

#include "objects/error.h"
#include "objects/shown_text.h"

namespace kistore {
namespace {

constexpr std::string_view kSource = "tritonbench";
constexpr std::string_view kPrefix = "tritonbench_";
constexpr double kMaxMs = kMaxSeconds * 1e3;

Json object(std::initializer_list<JsonMember> members) { return json_object(members); }

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

// True for a value that holds no number: tritonbench's message for a backend
// that failed at this input ("CUDA out of memory…"), which its table puts in
// the backend's first column, leaving the others empty. A value that begins
// as a number does (a digit, a sign or a point, after spaces) but is none
// ("1e999", "0.04abc", "0x10", " 0.04") is a damaged number, not a message:
// it is refused as a number, never stored as the backend's failure.
bool is_message(const Json& v) {
  if (!v.is_string()) return false;
  const std::string& s = v.as_string();
  double d = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (s.empty()) return true;
  if (ec == std::errc() && end == s.data() + s.size()) return false;
  const std::size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return true;
  const char c = s[first];
  return !((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.');
}

// The bundle of one (x value, backend), or nullopt when the backend measured
// nothing there (every metric null or empty). The JSON and the CSV importer
// both come here, with the same values (the CSV's cells read as the JSON
// holds them), so that the two files of one run make the same documents
// (only the run's externalId, which names the file, differs).
std::optional<Bundle> run_bundle(const Measured& r, const HarnessOptions& options, BundleMaker& maker) {
  const Key& k = r.key;
  bool any = false, failed = !r.metrics.empty() && is_message(r.metrics.front().second.value());
  for (std::size_t i = 0; i < r.metrics.size(); ++i) {
    const Json& v = r.metrics[i].second.value();
    any = any || !v.is_null();
    if (i > 0 && !v.is_null()) failed = false;
  }
  if (!any) return std::nullopt;
  Json measurements = Json::array();
  ObjectBuilder native;
  std::optional<double> latency_ms, accuracy;
  for (const auto& [metric, at] : r.metrics) {
    if (failed) {
      native.set(metric, at.value().is_string() ? Json(cut_text(at.value().as_string(), kMaxErrorChars)) : at.value());
      continue;
    }
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
  Json spec = object({{"status", Json(failed ? "runtime_error" : accuracy && *accuracy < 1 ? "incorrect" : "passed")}});
  if (latency_ms) {
    measurements.as_array().insert(measurements.as_array().begin(),
                                   harness_measurement("latency", "median", "ns", *latency_ms * 1e6));
    spec.set("timing", object({{"latencyNs", object({{"median", Json(*latency_ms * 1e6)}})}, {"primaryStatistic", "median"}}));
  }
  spec.set("measurements", std::move(measurements));
  if (failed) {
    spec.set("correctness", object({{"checked", false}, {"by", "not run: the backend failed at this input"}}));
    spec.set("error", Json("tritonbench: " + cut_text(r.metrics.front().second.value().as_string(), kMaxErrorChars)));
  } else if (accuracy) {
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
                                   {"metrics", native.take()}}));

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
  return maker.make(r.where, std::move(spec), std::move(metadata), std::move(protocol), *options.environment,
                        std::move(workload), std::move(implementation));
}

}  // namespace

void import_tritonbench(const Json& root_value, std::string_view source, const HarnessOptions& options,
                        const HarnessSink& sink) {
  JsonAt root(source, root_value);
  root.object();
  if (!options.environment) throw InvalidInput(environment_needed(source, "tritonbench"));
  std::map<std::pair<std::string, std::string>, std::size_t> index;  // (bench+x, backend) -> runs[i]
  std::vector<Measured> runs;
  for (const Json::Member& member : root.object()) {
    const std::string& name = member.first;
    JsonAt at = root.member(member);
    std::optional<Key> key;
    try {
      key = parse_key(name, at);
      if (key && !options.op.empty() && key->op != options.op)
        at.fail("the operator that --op names, " + quoted_excerpt(options.op), "the key " + quoted_excerpt(name));
      if (key && !options.mode.empty() && key->mode != options.mode)
        at.fail("the mode that --mode names, " + quoted_excerpt(options.mode), "the key " + quoted_excerpt(name));
    } catch (const Error& e) {
      sink.error({at.where(), e.what()});
      continue;
    }
    if (!key) continue;
    auto id = std::make_pair(key->op + "_" + key->mode + "[" + key->x_val + "]", key->backend);
    auto [it, fresh] = index.emplace(id, runs.size());
    if (fresh) runs.push_back({*key, at.where(), {}});
    runs[it->second].metrics.emplace_back(key->metric, at);
  }
  BundleMaker maker;
  for (const Measured& r : runs) {
    std::optional<Bundle> bundle;
    try {
      bundle = run_bundle(r, options, maker);
    } catch (const Error& e) {
      sink.error({r.where, e.what()});
      continue;
    }
    if (bundle) sink.record({r.where, std::move(*bundle)});
  }
}

HarnessImport import_tritonbench(const Json& root, std::string_view source, const HarnessOptions& options) {
  HarnessImport out;
  import_tritonbench(root, source, options, collect_into(out));
  return out;
}

namespace {

// A CSV cell as tritonbench's JSON holds the same value (both are written
// from one table, triton_op.py's _table): empty → null; latency → the text
// (the JSON keeps latencies as strings); a number → the number; a tuple
// "(12.8, 11.5, 13.9)" of numbers → an array of them; anything else → the
// text (a failed backend's message, a config).
Json csv_cell_value(const std::string& cell, std::string_view metric) {
  if (cell.empty()) return Json();
  if (metric == "latency") return Json(cell);
  auto number = [](std::string_view t) -> std::optional<double> {
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
    double v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
    return v;
  };
  if (auto v = number(cell); v && std::isfinite(*v)) return Json(*v);
  if (cell.size() >= 2 && cell.front() == '(' && cell.back() == ')') {
    std::string_view inner(cell.data() + 1, cell.size() - 2);
    Json list = Json::array();
    while (true) {
      std::size_t comma = inner.find(',');
      auto v = number(inner.substr(0, comma));
      if (!v || !std::isfinite(*v)) return Json(cell);
      list.push_back(Json(*v));
      if (comma == std::string_view::npos) break;
      inner.remove_prefix(comma + 1);
    }
    return list;
  }
  return Json(cell);
}

bool valid_name(std::string_view s) {
  bool ok = !s.empty() && s.size() <= 255;
  for (unsigned char c : s) ok = ok && c >= 0x20 && c != 0x7f && c != '/';
  return ok;
}

// One backend's columns in the header.
struct BackendColumns {
  std::string backend;
  std::vector<std::pair<std::size_t, std::string>> metrics;  // (column, metric), in header order
};

}  // namespace

void import_tritonbench_csv(CsvReader& reader, std::string_view source, const HarnessOptions& options,
                            const HarnessSink& sink) {
  if (!options.environment) throw InvalidInput(environment_needed(source, "tritonbench"));
  if (options.op.empty())
    throw InvalidInput(std::string(source) +
                       ": tritonbench's CSV (--output) does not name its operator; pass --op NAME, the --op "
                       "tritonbench's run.py was given (and --mode if it was not fwd)");
  if (!valid_name(options.op))
    throw InvalidInput(std::string(source) + ": --op: expected an operator name of 1 to 255 bytes without '/' "
                       "or control characters, found " + quoted_excerpt(options.op));
  std::string mode = options.mode.empty() ? "fwd" : options.mode;
  if (std::find(std::begin(kModes), std::end(kModes), mode) == std::end(kModes))
    throw InvalidInput(std::string(source) + ": --mode: expected fwd, bwd, fwd_bwd or fwd_no_grad, found " +
                       quoted_excerpt(mode));
  CsvRecord rec;
  std::string error;
  CsvStatus st = reader.next(rec, error);
  if (st == CsvStatus::kEnd)
    throw InvalidInput(std::string(source) + ":1: expected a header \"x_val;<backend>-<metric>;…\", found an empty file");
  if (st != CsvStatus::kRecord) throw InvalidInput(error);
  const std::vector<std::string> header = rec.fields;
  auto header_fail = [&](std::size_t column, std::string_view expected) {
    throw InvalidInput(std::string(source) + ":" + std::to_string(rec.line) + ": column " + std::to_string(column + 1) +
                       ": expected " + std::string(expected) + ", found " +
                       (column < header.size() ? quoted_excerpt(header[column]) : std::string("no such column")));
  };
  if (header.size() < 2 || header[0].empty())
    header_fail(header.size() < 2 ? 1 : 0,
                "a header \"x_val;<backend>-<metric>;…\" separated by ';' (tritonbench's --output), with at least "
                "one backend's column");
  std::vector<BackendColumns> backends;
  for (std::size_t c = 1; c < header.size(); ++c) {
    const std::string& h = header[c];
    std::size_t dash = h.rfind('-');
    if (dash == std::string::npos) continue;  // a metric of the input alone (hw_roofline): no backend's
    std::string backend = h.substr(0, dash), metric = h.substr(dash + 1);
    if (!valid_name(backend) || !valid_name(metric))
      header_fail(c, "a column \"<backend>-<metric>\", each 1 to 255 bytes without '/' or control characters");
    if (backends.empty() || backends.back().backend != backend) {
      for (const BackendColumns& b : backends)
        if (b.backend == backend) header_fail(c, "each backend's columns side by side, once");
      backends.push_back({backend, {}});
    }
    for (const auto& m : backends.back().metrics)
      if (m.second == metric) header_fail(c, "each backend's metric once");
    backends.back().metrics.emplace_back(c, metric);
  }
  if (backends.empty()) header_fail(1, "a column \"<backend>-<metric>\" such as \"triton_softmax-latency\"");

  std::size_t rows = 0, average_line = 0;
  std::vector<Json> cells;
  BundleMaker maker;
  while ((st = reader.next(rec, error)) != CsvStatus::kEnd) {
    std::string where = std::string(source) + ":" + std::to_string(rec.line);
    if (st == CsvStatus::kFatal) {
      sink.error({where, error});
      ++rows;
      break;
    }
    if (st == CsvStatus::kError) {
      sink.error({where, error});
      ++rows;
      continue;
    }
    if (rec.fields.size() == 1 && rec.fields[0].empty()) continue;  // a blank line
    const std::string& x = rec.fields[0];
    if (x == "average") {  // means over the inputs (derived), as the JSON's x_average
      average_line = rec.line;
      continue;
    }
    if (x == "hashes") continue;  // later versions: each backend's kernel source hash, not a measurement
    ++rows;
    if (rec.fields.size() != header.size()) {
      sink.error({where, where + ": expected " + std::to_string(header.size()) +
                             " fields separated by ';', as the header on line 1 has, found " +
                             std::to_string(rec.fields.size())});
      continue;
    }
    if (!valid_name(x)) {
      sink.error({where, where + ": column 1 (" + quoted_excerpt(header[0]) +
                             "): expected an input's x value of 1 to 255 bytes without '/' or control characters, found " +
                             quoted_excerpt(x)});
      continue;
    }
    cells.clear();
    cells.reserve(header.size());
    for (std::size_t c = 0; c < header.size(); ++c) cells.emplace_back();
    for (const BackendColumns& b : backends) {
      Measured m{{options.op, mode, x, b.backend, ""}, where, {}};
      for (const auto& [column, metric] : b.metrics) {
        cells[column] = csv_cell_value(rec.fields[column], metric);
        m.metrics.emplace_back(metric, JsonAt(where, cells[column],
                                              "column " + std::to_string(column + 1) + " (" + header[column] + ")"));
      }
      std::optional<Bundle> bundle;
      try {
        bundle = run_bundle(m, options, maker);
      } catch (const Error& e) {
        sink.error({where, e.what()});
        continue;
      }
      if (bundle) sink.record({where, std::move(*bundle)});
    }
  }
  if (rows == 0)
    throw InvalidInput(std::string(source) + ":" + std::to_string(average_line ? average_line : rec.line) +
                       ": expected at least one row of an input's measurements after the header, found " +
                       (average_line ? "only the \"average\" row" : "none"));
}

HarnessImport import_tritonbench_csv(std::string_view text, std::string_view source, const HarnessOptions& options) {
  HarnessImport out;
  CsvReader reader(text, source, ';');
  import_tritonbench_csv(reader, source, options, collect_into(out));
  return out;
}

}  // namespace kistore
