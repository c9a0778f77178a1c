#include "store/ingest/import_flashinfer.h"

#include <string>
#include <utility>
#include <vector>

#include "objects/digest.h"
#include "objects/error.h"

namespace kistore {
namespace {

constexpr std::string_view kSource = "flashinfer-bench";
constexpr double kMaxMs = kMaxSeconds * 1e3;

Json object(std::initializer_list<JsonMember> members) { return json_object(members); }

// FlashInfer-Bench's EvaluationStatus (trace.py) -> the run's status.
constexpr std::pair<std::string_view, std::string_view> kStatuses[] = {
    {"PASSED", "passed"},
    {"INCORRECT_SHAPE", "incorrect"},
    {"INCORRECT_NUMERICAL", "incorrect"},
    {"INCORRECT_DTYPE", "incorrect"},
    {"RUNTIME_ERROR", "runtime_error"},
    {"COMPILE_ERROR", "compile_error"},
    {"TIMEOUT", "timeout"},
};

// One protocol for every trace, whatever its status: so that a wrong
// solution is listed in the same group as the right ones. The timer actually
// used (CUPTI, or CUDA events when CUPTI is missing) is only in the log; the
// run records it as measuredWith.
Json protocol_document() {
  Json spec = object(
      {{"harness", object({{"name", "flashinfer-bench"}, {"repository", "https://github.com/flashinfer-ai/flashinfer-bench"}})},
       {"measurement", object({{"timer", "cupti, else cuda_events"},
                               {"primaryStatistic", "mean"},
                               {"method", "for each generated input (num_trials, default 3), the median of the timed "
                                          "iterations (default 50, after 10 warmup runs, L2 flushed); latency_ms is the "
                                          "mean of those medians"}})},
       {"correctness", "outputs compared with the definition's reference implementation (default rtol = atol = 1e-2)"},
       {"comparability", object({{"family", "flashinfer-bench"}})}});
  return harness_document("BenchmarkProtocol", std::move(spec),
                          object({{"name", "flashinfer-bench-mean-of-medians"},
                                  {"title", "FlashInfer-Bench · mean of per-input medians"}}));
}

// A correctness error as a measurement when it is a number (the harness
// writes NaN and infinities as strings: those stay in sourceNative only).
void error_measurement(const JsonAt& correctness, std::string_view member, std::string_view metric, Json& measurements,
                       Json& native) {
  auto v = correctness.find(member);
  if (!v) return;
  if (v->value().is_string()) {
    const std::string& s = v->string();
    if (s != "NaN" && s != "nan" && s != "inf" && s != "-inf" && s != "Infinity" && s != "-Infinity")
      v->fail("a number, or NaN or inf as a string");
    native.set(member, Json(s));
    return;
  }
  double x = v->number_in(0, 1.7e308);
  native.set(member, Json(x));
  measurements.push_back(harness_measurement(metric, "max", "ratio", x));
}

Bundle trace_bundle(const JsonAt& trace, const std::string& where, const HarnessOptions& options, BundleMaker& maker) {
  const std::string& definition = trace.member("definition").name();
  const std::string& solution = trace.member("solution").name();
  JsonAt workload = trace.member("workload");
  JsonAt axes = workload.member("axes");
  ObjectBuilder axis_values;
  for (const Json::Member& member : axes.object()) {
    const std::string& name = member.first;
    JsonAt a = axes.member(member);
    if (name.empty() || name.size() > 255) a.fail("an axis name of 1 to 255 bytes", quoted_excerpt(name));
    axis_values.set(name, Json(static_cast<double>(a.integer(-(1LL << 53), 1LL << 53))));
  }
  Json params = axis_values.take();
  if (auto inputs = workload.find("inputs")) {
    inputs->object();
    params.set("inputs", inputs->value());  // random, scalar, or a safetensors file: part of what is computed
  }
  std::string workload_id;
  if (auto uuid = workload.find("uuid")) workload_id = uuid->name();
  else workload_id = "axes-" + Digest::of(canonical(params)).hex().substr(0, 16);  // the first schema had no uuid

  JsonAt eval = trace.member("evaluation");
  const std::string& fib_status = eval.member("status").string();
  std::string status;
  for (const auto& [k, v] : kStatuses)
    if (k == fib_status) status = std::string(v);
  if (status.empty())
    eval.member("status").fail("one of PASSED, INCORRECT_SHAPE, INCORRECT_NUMERICAL, INCORRECT_DTYPE, RUNTIME_ERROR, "
                               "COMPILE_ERROR, TIMEOUT");
  JsonAt env_at = eval.member("environment");
  std::optional<JsonAt> hw = env_at.find("hardware");
  if (!hw) hw = env_at.find("device");  // the first schema's name
  if (!hw) env_at.member("hardware");   // fails, naming the member
  const std::string& hardware = hw->name(true);
  Json environment = record_environment(*hw, hardware, "", "FlashInfer-Bench", options);
  if (!options.environment) {
    if (auto libs = env_at.find("libs")) {
      ObjectBuilder software;
      for (const Json::Member& member : libs->object()) {
        JsonAt l = libs->member(member);
        if (!l.value().is_null()) software.set(member.first, Json(cut_text(l.string(), 128)));
      }
      environment.find("spec")->set("software", software.take());
    }
  }
  const std::string& timestamp = eval.member("timestamp").name();

  Json spec = object({{"status", Json(status)}});
  Json measurements = Json::array();
  Json native = object({{"status", Json(fib_status)}});
  if (auto perf = eval.find("performance")) {
    double latency = perf->member("latency_ms").number_in(0, kMaxMs);
    native.set("latency_ms", Json(latency));
    measurements.push_back(harness_measurement("latency", "mean", "ns", latency * 1e6));
    if (auto ref = perf->find("reference_latency_ms")) {
      double r = ref->number_in(0, kMaxMs);
      native.set("reference_latency_ms", Json(r));
      measurements.push_back(harness_measurement("reference-latency", "mean", "ns", r * 1e6));
    }
    if (auto sp = perf->find("speedup_factor")) {
      double s = sp->number_in(0, 1e12);
      native.set("speedup_factor", Json(s));
      measurements.push_back(harness_measurement("speedup", "mean", "ratio", s));
    }
    spec.set("timing", object({{"latencyNs", object({{"mean", Json(latency * 1e6)}})}, {"primaryStatistic", "mean"}}));
  }
  Json correctness = object({{"checked", status == "passed" || status == "incorrect"},
                             {"by", "FlashInfer-Bench: outputs compared with the definition's reference"},
                             {"passed", status == "passed"}});
  if (auto c = eval.find("correctness")) {
    c->object();
    error_measurement(*c, "max_relative_error", "relative-error", measurements, native);
    error_measurement(*c, "max_absolute_error", "absolute-error", measurements, native);
  }
  spec.set("measurements", std::move(measurements));
  spec.set("correctness", std::move(correctness));
  std::string log;
  if (auto l = eval.find("log")) log = l->string();
  if (status != "passed") spec.set("error", Json(fib_status + (log.empty() ? "" : ": " + cut_text(log, kMaxErrorChars))));
  if (log.find("Falling back to CUDA events") != std::string::npos) spec.set("measuredWith", "cuda_events");
  // Local time without a zone (datetime.now().isoformat()): not an RFC 3339
  // observedAt, so kept as the harness wrote it.
  spec.set("observedAtLocal", Json(timestamp));
  std::string external_id = definition + "/" + solution + "/" + workload_id + "/" + timestamp;
  spec.set("sourceNative", object({{"source", Json(kSource)},
                                   {"benchmark", Json(definition)},
                                   {"externalId", Json(external_id)},
                                   {"metrics", std::move(native)}}));

  Json workload_doc = harness_document(
      "Workload", object({{"definition", Json(definition)}, {"parameters", std::move(params)}}),
      object({{"name", Json(harness_slug("flashinfer-" + definition + "-" + workload_id))},
              {"title", Json(definition + " · " + workload_id)}}));
  Json implementation = harness_document(
      "Implementation", object({{"name", Json(solution)}}),
      object({{"name", Json(harness_slug("flashinfer-" + solution))}, {"title", Json(solution + " (FlashInfer-Bench solution)")}}));
  Json metadata = object({{"name", Json(harness_slug("flashinfer-" + definition + "-" + solution + "-" + workload_id))},
                          {"title", Json(definition + " · " + solution + " · " + fib_status)}});
  return maker.make(where, std::move(spec), std::move(metadata), protocol_document(), std::move(environment),
                        std::move(workload_doc), std::move(implementation));
}

}  // namespace

bool is_flashinfer_description(const Json& root) {
  if (!root.is_object()) return false;
  auto has = [&](std::string_view name) { return root.find(name) != nullptr; };
  bool definition = has("name") && has("axes") && has("reference") && (has("op_type") || has("type"));
  bool solution = has("name") && has("definition") && has("spec") && has("sources");
  return definition || solution;
}

HarnessImport import_flashinfer(std::string_view text, std::string_view source, const HarnessOptions& options) {
  HarnessImport out;
  import_flashinfer_lines(text, source, 1, options, collect_into(out));
  return out;
}

void import_flashinfer_lines(std::string_view text, std::string_view source, std::size_t first_line,
                             const HarnessOptions& options, const HarnessSink& sink) {
  struct Line {
    std::string_view body;
    std::size_t number;
  };
  std::vector<Line> lines;
  std::size_t line = first_line - 1, pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view body = text.substr(pos, end - pos);
    ++line;
    pos = end + 1;
    if (!body.empty() && body.back() == '\r') body.remove_suffix(1);
    if (body.find_first_not_of(" \t") == std::string_view::npos) continue;
    lines.push_back({body, line});
  }
  // Each trace is a JSON text of its own: read and mapped on both cores.
  map_in_order(lines.size(), [&](std::size_t i, BundleMaker& maker) -> RecordOutcome {
    const Line& l = lines[i];
    std::string where = std::string(source) + ":" + std::to_string(l.number);
    try {
      Json trace = parse_json(l.body, source, l.number);
      JsonAt at(where, trace);
      at.object();
      // A workload-only trace measured nothing: solution null (first schema: "").
      if (auto s = at.find("solution"); !s || (s->value().is_string() && s->value().as_string().empty())) return {};
      Bundle bundle = trace_bundle(at, where, options, maker);
      return HarnessRecord{std::move(where), std::move(bundle)};
    } catch (const Error& e) {
      return HarnessError{std::move(where), e.what()};
    }
  }, sink);
}

}  // namespace kistore
