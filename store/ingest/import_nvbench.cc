#include "store/ingest/import_nvbench.h"

#include <cmath>
#include <map>
#include <utility>

#include "objects/error.h"

namespace kistore {
namespace {

constexpr std::string_view kSource = "nvbench";

Json object(std::initializer_list<JsonMember> members) { return json_object(members); }

// A summary tag that becomes a measurement: what it measures, which
// statistic, the KernelIndex unit, the factor from nvbench's SI unit, and
// the largest value a file may hold.
struct SummaryMapping {
  std::string_view tag;
  std::string_view metric;
  std::string_view statistic;
  std::string_view unit;
  double scale;
  double max;
};

constexpr double kMaxCount = 1e15;
constexpr double kMaxRate = 1e18;

constexpr SummaryMapping kSummaries[] = {
    {"nv/cold/time/gpu/mean", "latency", "mean", "ns", 1e9, kMaxSeconds},
    {"nv/cold/time/gpu/median", "latency", "median", "ns", 1e9, kMaxSeconds},
    {"nv/cold/time/gpu/min", "latency", "min", "ns", 1e9, kMaxSeconds},
    {"nv/cold/time/gpu/max", "latency", "max", "ns", 1e9, kMaxSeconds},
    {"nv/cold/time/gpu/q1", "latency", "p25", "ns", 1e9, kMaxSeconds},
    {"nv/cold/time/gpu/q3", "latency", "p75", "ns", 1e9, kMaxSeconds},
    {"nv/cold/time/gpu/stdev/absolute", "latency", "stdev", "ns", 1e9, kMaxSeconds},
    {"nv/cold/time/gpu/stdev/relative", "latency", "relative-stdev", "ratio", 1, kMaxCount},
    {"nv/cold/sample_size", "latency", "count", "samples", 1, kMaxCount},
    {"nv/cold/time/cpu/mean", "cpu-latency", "mean", "ns", 1e9, kMaxSeconds},
    {"nv/batch/time/gpu/mean", "batch-latency", "mean", "ns", 1e9, kMaxSeconds},
    {"nv/batch/sample_size", "batch-latency", "count", "samples", 1, kMaxCount},
    {"nv/cold/bw/global/bytes_per_second", "global-memory-throughput", "mean", "B/s", 1, kMaxRate},
    {"nv/cold/bw/global/utilization", "global-memory-throughput", "utilization", "ratio", 1, kMaxCount},
    {"nv/cold/bw/item_rate", "item-throughput", "mean", "items/s", 1, kMaxRate},
};

// The members of a benchmark and state that say when nvbench stops measuring
// (they differ between nvbench versions; each present one is kept).
constexpr std::string_view kStoppingCriteria[] = {
    "min_samples", "min_time", "max_noise", "skip_time", "timeout",
    "cold_warmup_runs", "cold_max_warmup_walltime", "batch_target_time"};

struct FileFacts {
  std::string binary;          // basename of meta.argv[0]
  Json harness;                // the protocol's harness member
  std::map<long long, Json> environments;  // device id -> its document (or the --environment one)
  std::map<long long, std::string> device_names;
  std::map<long long, std::string> device_errors;  // a device whose environment cannot be made
  // What every state of the file shares, made once (each run's bundle has
  // them): the environments that validate, and the implementation. One
  // that does not is made from its JSON for each state, which then fails
  // with the state's own message.
  std::map<long long, Document> environment_documents;
  std::optional<Document> implementation;
};

// The documents of a state's bundle that depend on the file alone, or on the
// state's stopping criteria alone.
Json implementation_json(const std::string& binary) {
  return harness_document("Implementation", object({{"name", Json(binary)}}),
                          object({{"name", Json(harness_slug("nvbench-" + binary))},
                                  {"title", Json(binary + " (nvbench benchmark binary)")}}));
}

Json protocol_json(const FileFacts& f, Json stopping_criteria) {
  Json protocol_spec = object(
      {{"harness", f.harness},
       {"measurement", object({{"timer", "cuda_events"},
                               {"primaryStatistic", "mean"},
                               {"pass", "cold: isolated launches, nvbench's default measurement"},
                               {"stoppingCriteria", std::move(stopping_criteria)}})},
       {"comparability", object({{"family", "nvbench"},
                                 {"notes", "nvbench's GPU time of cold (isolated) launches, mean over the "
                                           "samples nvbench took until its stopping criteria held."}})}});
  return harness_document("BenchmarkProtocol", std::move(protocol_spec),
                          object({{"name", "nvbench-cold-gpu-mean"}, {"title", "nvbench · cold GPU time, mean"}}));
}

// Document::from_json of `json`, or nullopt where it would throw.
std::optional<Document> made_once(Json json, std::string_view source, std::string_view pointer) {
  try {
    return Document::from_json(std::move(json), Location{std::string(source), std::string(pointer)});
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The protocol of a benchmark's first state, made once: the states of a
// benchmark mostly share their stopping criteria.
struct UsualProtocol {
  Json stopping_criteria;
  Document document;
};

FileFacts file_facts(const JsonAt& root, const HarnessOptions& options) {
  FileFacts f;
  f.binary = "nvbench benchmark";
  f.harness = object({{"name", "nvbench"}, {"repository", "https://github.com/NVIDIA/nvbench"}});
  if (auto meta = root.find("meta")) {
    if (auto argv = meta->find("argv"); argv && !argv->array().empty()) {
      std::string arg0 = argv->at(0).name(true);
      std::size_t slash = arg0.rfind('/');
      std::string base = slash == std::string::npos ? arg0 : arg0.substr(slash + 1);
      if (!base.empty() && base != "." && base != "..") f.binary = base;
    }
    if (auto version = meta->find("version")) {
      if (auto nv = version->find("nvbench")) {
        if (auto s = nv->find("string")) f.harness.set("version", Json(s->name()));
        if (auto sha = nv->find("git_sha")) f.harness.set("revision", Json(sha->name()));
      }
    }
  }
  JsonAt devices = root.member("devices");
  for (std::size_t i = 0; i < devices.array().size(); ++i) {
    JsonAt d = devices.at(i);
    long long id = d.member("id").integer(0, 1 << 20);
    const std::string& name = d.member("name").name();
    long long sm = d.member("sm_version").integer(100, 10000);
    Json extra = Json::object();
    if (auto n = d.find("number_of_sms")) extra.set("smCount", Json(n->integer(1, 1 << 20)));
    if (auto m = d.find("global_memory_size")) extra.set("memoryBytes", Json(m->number_in(0, 1e15)));
    f.device_names[id] = name;
    // Only the states measured on a device whose environment cannot be made
    // fail: a file of two GPUs with --environment of one keeps the other's.
    try {
      f.environments[id] = record_environment(d.member("name"), name, "sm_" + std::to_string(sm / 10), "nvbench",
                                              options, std::move(extra));
    } catch (const Error& e) {
      f.device_errors[id] = e.what();
    }
  }
  for (const auto& [id, env] : f.environments)
    if (auto doc = made_once(env, root.where(), "/environment")) f.environment_documents.emplace(id, std::move(*doc));
  f.implementation = made_once(implementation_json(f.binary), root.where(), "/implementation");
  return f;
}

Json axis_parameters(const JsonAt& state) {
  ObjectBuilder params;
  auto values = state.find("axis_values");
  if (!values) return Json::object();
  for (std::size_t i = 0; i < values->array().size(); ++i) {
    JsonAt a = values->at(i);
    const std::string& name = a.member("name").name();
    const std::string& type = a.member("type").string();
    JsonAt v = a.member("value");
    // nvbench writes axis values as strings (int64 would not survive a
    // double); older files had numbers.
    constexpr double kExact = 9007199254740992.0;  // 2^53: integers a double holds exactly
    if (type == "int64" || type == "float64") {
      double x = v.value().is_string() ? v.number_string(-1.7e308, 1.7e308) : v.number();
      if (type == "int64" && (x != std::floor(x) || x < -kExact || x > kExact))
        v.fail("an integer of at most 2^53 in magnitude");
      params.set(name, Json(x));
    } else if (type == "string" || type == "type") {
      params.set(name, Json(v.name(true)));
    } else {
      a.member("type").fail("one of int64, float64, string, type");
    }
  }
  return params.take();
}

Json stopping_criteria(const JsonAt& state) {
  Json out = Json::object();
  for (std::string_view k : kStoppingCriteria)
    if (auto v = state.find(k)) out.set(k, Json(v->number_in(-1e12, 1e12)));
  return out;
}

Bundle map_state(const JsonAt& bench, const JsonAt& state, const FileFacts& f, const std::optional<UsualProtocol>& usual,
                 const HarnessOptions& options, BundleMaker& maker) {
  const std::string& bench_name = bench.member("name").name(true);
  const std::string& state_name = state.member("name").name(true);
  long long device = state.member("device").integer(0, 1 << 20);
  if (auto bad = f.device_errors.find(device); bad != f.device_errors.end()) throw InvalidInput(bad->second);
  auto env = f.environments.find(device);
  if (env == f.environments.end()) state.member("device").fail("the id of a device in /devices");
  bool skipped = false;
  if (auto s = state.find("is_skipped")) skipped = s->boolean();

  Json measurements = Json::array();
  ObjectBuilder native_metrics;
  std::optional<double> mean_ns;
  if (auto summaries = state.find("summaries")) {
    for (std::size_t i = 0; i < summaries->array().size(); ++i) {
      JsonAt s = summaries->at(i);
      const std::string& tag = s.member("tag").name(true);
      JsonAt data = s.member("data");
      std::optional<JsonAt> value;
      for (std::size_t j = 0; j < data.array().size(); ++j) {
        JsonAt d = data.at(j);
        if (d.member("name").string() == "value") value = d.member("value");
      }
      if (!value) continue;  // sidecar references (nv/json/bin:…) have filename and size instead
      if (native_metrics.contains(tag)) s.member("tag").fail("a tag that appears once in the state", quoted_excerpt(tag) + " again");
      native_metrics.set(tag, Json(value->string()));
      for (const SummaryMapping& m : kSummaries) {
        if (m.tag != tag) continue;
        // nvbench writes "inf" for a noise it could not compute: no measurement then.
        if (m.statistic == "relative-stdev" && value->string() == "inf") break;
        double v = value->number_string(0, m.max) * m.scale;
        measurements.push_back(harness_measurement(m.metric, m.statistic, m.unit, v));
        if (tag == "nv/cold/time/gpu/mean") mean_ns = v;
      }
    }
  }

  Json stopping = stopping_criteria(state);
  BundlePart protocol = usual && usual->stopping_criteria == stopping ? BundlePart(usual->document)
                                                                      : BundlePart(protocol_json(f, std::move(stopping)));

  Json params = axis_parameters(state);
  Json workload = harness_document("Workload", object({{"definition", Json(bench_name)}, {"parameters", params}}),
                                   object({{"name", Json(harness_slug("nvbench-" + bench_name + "-" + state_name))},
                                           {"title", Json(bench_name + " · " + state_name)}}));
  BundlePart implementation = f.implementation ? BundlePart(*f.implementation) : BundlePart(implementation_json(f.binary));
  auto env_document = f.environment_documents.find(device);
  BundlePart environment = env_document != f.environment_documents.end() ? BundlePart(env_document->second)
                                                                         : BundlePart(env->second);

  std::string device_name = f.device_names.at(device);
  std::string external_id = f.binary + "/" + bench_name + "/" + state_name + "/" + device_name + "/" +
                            options.file_digest.substr(0, 16);
  Json spec = object({{"status", Json(skipped ? "skipped" : "passed")}});
  if (skipped) {
    std::string reason = "skipped by the benchmark";
    if (auto r = state.find("skip_reason")) reason = cut_text(r->string(), kMaxErrorChars);
    spec.set("error", Json(reason));
    measurements = Json::array();
  }
  if (mean_ns && !skipped)
    spec.set("timing", object({{"latencyNs", object({{"mean", Json(*mean_ns)}})}, {"primaryStatistic", "mean"}}));
  spec.set("measurements", std::move(measurements));
  spec.set("correctness", object({{"checked", false}, {"by", "nvbench does not check a kernel's output"}}));
  spec.set("sourceNative", object({{"source", Json(kSource)},
                                   {"benchmark", Json(bench_name)},
                                   {"externalId", Json(external_id)},
                                   {"metrics", native_metrics.take()}}));
  Json metadata = object({{"name", Json(harness_slug("nvbench-" + bench_name + "-" + state_name))},
                          {"title", Json(bench_name + " · " + state_name + " · " + device_name)}});
  return maker.make(state.where(), std::move(spec), std::move(metadata), std::move(protocol), std::move(environment),
                    std::move(workload), std::move(implementation));
}

}  // namespace

HarnessImport import_nvbench(const Json& root_value, std::string_view source, const HarnessOptions& options) {
  HarnessImport out;
  import_nvbench(root_value, source, options, collect_into(out));
  return out;
}

void import_nvbench(const Json& root_value, std::string_view source, const HarnessOptions& options,
                    const HarnessSink& sink) {
  JsonAt root(source, root_value);
  root.object();
  FileFacts facts = file_facts(root, options);
  JsonAt benches = root.member("benchmarks");
  for (std::size_t b = 0; b < benches.array().size(); ++b) {
    JsonAt bench = benches.at(b);
    bench.object();
    auto states = bench.find("states");
    if (!states) continue;
    // Made here, once, from the first state (a state it does not fit, or
    // one in error, makes its protocol from its JSON, as without it).
    std::optional<UsualProtocol> usual;
    try {
      if (states->value().is_array() && !states->array().empty()) {
        JsonAt first = states->at(0);
        first.object();
        Json stopping = stopping_criteria(first);
        if (auto doc = made_once(protocol_json(facts, stopping), first.where(), "/protocol"))
          usual = UsualProtocol{std::move(stopping), std::move(*doc)};
      }
    } catch (const Error&) {
    }
    // Each state reads the parsed file and the file's facts: mapped on both cores.
    map_in_order(states->array().size(), [&](std::size_t s, BundleMaker& maker) -> RecordOutcome {
      JsonAt state = states->at(s);
      try {
        state.object();
        return HarnessRecord{state.where(), map_state(bench, state, facts, usual, options, maker)};
      } catch (const Error& e) {
        return HarnessError{state.where(), e.what()};
      }
    }, sink);
  }
}

}  // namespace kistore
