#include "store/ingest/import_kernelbench.h"

#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "objects/error.h"

namespace kistore {
namespace {

constexpr std::string_view kSource = "kernelbench";
constexpr double kMaxMs = kMaxSeconds * 1e3;

Json object(std::initializer_list<JsonMember> members) { return json_object(members); }

// One protocol for every KernelBench time, the reference's and the generated
// kernels', correct or not: so that they share a comparison group, where a
// wrong kernel is listed unrankable beside the right ones.
Json protocol_document() {
  Json spec = object(
      {{"harness", object({{"name", "KernelBench"}, {"repository", "https://github.com/ScalingIntelligence/KernelBench"}})},
       {"measurement", object({{"timer", "cuda_events"}, {"primaryStatistic", "mean"}})},
       {"correctness", "outputs of the generated ModelNew compared with the PyTorch reference Model's on random "
                       "inputs, over several trials (KernelBench's eval)"},
       {"comparability", object({{"family", "kernelbench"},
                                 {"notes", "KernelBench's timing: mean of the timed trials (CUDA events), each time "
                                           "rounded by the harness to 3 significant digits."}})}});
  return harness_document("BenchmarkProtocol", std::move(spec),
                          object({{"name", "kernelbench-cuda-events-mean"}, {"title", "KernelBench · CUDA events, mean"}}));
}

Json workload_document(long long level, long long problem, const std::string& problem_file) {
  std::string definition = "KernelBench level " + std::to_string(level) + " problem " + std::to_string(problem);
  Json params = object({{"level", Json(level)}, {"problem", Json(problem)}});
  std::string title = definition + (problem_file.empty() ? "" : " (" + problem_file + ")");
  return harness_document("Workload", object({{"definition", Json(definition)}, {"parameters", std::move(params)}}),
                          object({{"name", Json(harness_slug("kernelbench-level" + std::to_string(level) + "-problem" +
                                                             std::to_string(problem)))},
                                  {"title", Json(title)}}));
}

// runtime_stats {mean, std, min, max, num_trials, ...} (milliseconds) ->
// measurements in ns, the mean first; the harness's numbers as given.
void timing_of(const JsonAt& stats, Json& spec, Json& native) {
  Json measurements = Json::array();
  double mean = stats.member("mean").number_in(0, kMaxMs);
  native.set("mean", Json(mean));
  measurements.push_back(harness_measurement("latency", "mean", "ns", mean * 1e6));
  for (std::string_view stat : {"std", "min", "max"}) {
    if (auto v = stats.find(stat)) {
      double ms = v->number_in(0, kMaxMs);
      native.set(stat, Json(ms));
      measurements.push_back(harness_measurement("latency", stat == "std" ? "stdev" : stat, "ns", ms * 1e6));
    }
  }
  if (auto n = stats.find("num_trials")) {
    long long trials = n->integer(0, 1LL << 40);
    native.set("num_trials", Json(trials));
    measurements.push_back(harness_measurement("latency", "count", "samples", static_cast<double>(trials)));
  }
  spec.set("timing", object({{"latencyNs", object({{"mean", Json(mean * 1e6)}})}, {"primaryStatistic", "mean"}}));
  spec.set("measurements", std::move(measurements));
}

const std::string& hardware_of(const JsonAt& holder) { return holder.member("hardware").name(true); }

// The error text of a failed sample: the first of KernelBench's error
// members that it has, with the exception's name.
std::string sample_error(const JsonAt& metadata) {
  for (std::string_view key : {"compilation_error", "runtime_error", "cuda_error", "other_error", "correctness_issue"}) {
    auto v = metadata.find(key);
    if (!v) continue;
    std::string text = v->value().is_string() ? v->string() : describe_json(v->value());
    if (auto n = metadata.find(std::string(key) + "_name"); n && n->value().is_string())
      text = n->string() + ": " + text;
    return std::string(key) + ": " + cut_text(text, kMaxErrorChars);
  }
  return "";
}

std::string status_of(bool compiled, bool correct, const JsonAt& metadata) {
  if (compiled && correct) return "passed";
  if (metadata.find("compilation_error")) return "compile_error";
  if (metadata.find("runtime_error") || metadata.find("cuda_error") || metadata.find("other_error"))
    return "runtime_error";
  return compiled ? "incorrect" : "compile_error";
}

// Per-trial differences, kept as the harness wrote them (strings with six
// decimals), within bounds.
Json differences(const JsonAt& list) {
  if (list.array().size() > 1000) list.fail("at most 1000 trials");
  Json::Array out;
  for (std::size_t i = 0; i < list.array().size(); ++i) {
    JsonAt v = list.at(i);
    out.emplace_back(v.value().is_number() ? v.value() : Json(cut_text(v.string(), 64)));
  }
  return Json(std::move(out));
}

Bundle sample_bundle(const JsonAt& sample, long long level, long long problem, const HarnessOptions& options,
                     BundleMaker& maker) {
  long long sample_id = sample.member("sample_id").integer(0, 1LL << 40);
  bool compiled = sample.member("compiled").boolean();
  bool correct = sample.member("correctness").boolean();
  JsonAt metadata = sample.member("metadata");
  metadata.object();
  const std::string& hardware = hardware_of(metadata);
  Json environment = record_environment(metadata.member("hardware"), hardware, "", "KernelBench", options);

  std::string status = status_of(compiled, correct, metadata);
  Json spec = object({{"status", Json(status)}});
  Json native = Json::object();
  double runtime = sample.member("runtime").number();
  if (runtime != -1.0) runtime = sample.member("runtime").number_in(0, kMaxMs);
  native.set("runtime", Json(runtime));
  auto stats = sample.find("runtime_stats");
  if (stats && !stats->object().empty()) {
    timing_of(*stats, spec, native);
  } else if (runtime > 0) {
    spec.set("timing", object({{"latencyNs", object({{"mean", Json(runtime * 1e6)}})}, {"primaryStatistic", "mean"}}));
    spec.set("measurements", Json(Json::Array{harness_measurement("latency", "mean", "ns", runtime * 1e6)}));
  } else {
    spec.set("measurements", Json::array());
  }
  if (status != "passed") spec.set("error", Json(sample_error(metadata).empty() ? "outputs did not match the reference"
                                                                             : sample_error(metadata)));
  Json correctness = object({{"checked", compiled},
                             {"by", "KernelBench: outputs compared with the PyTorch reference on random inputs"},
                             {"passed", compiled && correct}});
  if (auto t = metadata.find("correctness_trials")) {
    correctness.set("trials", Json(cut_text(t->string(), 64)));
    native.set("correctness_trials", Json(cut_text(t->string(), 64)));
  }
  if (auto d = metadata.find("max_difference")) correctness.set("maxDifference", differences(*d));
  if (auto d = metadata.find("avg_difference")) correctness.set("avgDifference", differences(*d));
  spec.set("correctness", std::move(correctness));

  std::string kernel = "level_" + std::to_string(level) + "_problem_" + std::to_string(problem) + "_sample_" +
                       std::to_string(sample_id) + "_kernel.py";
  std::string external_id = options.run_name + "/level" + std::to_string(level) + "/problem" +
                            std::to_string(problem) + "/sample" + std::to_string(sample_id);
  spec.set("sourceNative", object({{"source", Json(kSource)},
                                   {"benchmark", Json("level" + std::to_string(level) + "/" + std::to_string(problem))},
                                   {"externalId", Json(external_id)},
                                   {"metrics", std::move(native)}}));
  Json implementation = harness_document(
      "Implementation", object({{"name", Json(options.run_name + "/" + kernel)}, {"project", Json(options.run_name)}}),
      object({{"name", Json(harness_slug("kernelbench-" + options.run_name + "-" + kernel))},
              {"title", Json(kernel + " · " + options.run_name)}}));
  Json run_metadata = object({{"name", Json(harness_slug("kernelbench-" + external_id))},
                              {"title", Json("KernelBench level " + std::to_string(level) + " problem " +
                                             std::to_string(problem) + " · " + options.run_name + " sample " +
                                             std::to_string(sample_id) + " · " + status)}});
  return maker.make(sample.where(), std::move(spec), std::move(run_metadata), protocol_document(),
                        std::move(environment), workload_document(level, problem, ""), std::move(implementation));
}

long long number_prefix(std::string_view s) {
  long long v = -1;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data() || v < 1 || v > 1000000) return -1;
  if (end != s.data() + s.size() && *end != '_') return -1;
  return v;
}

// Which reference a baseline file times: PyTorch eager, or torch.compile in
// a mode, as generate_baseline_time.py names its files.
std::pair<std::string, std::string> baseline_implementation(const std::string& run_name) {
  std::string_view compile = "torch_compile_";
  if (auto at = run_name.find(compile); at != std::string::npos) {
    std::string mode = run_name.substr(at + compile.size());
    if (auto dot = mode.find('.'); dot != std::string::npos) mode.resize(dot);
    return {"torch.compile (" + mode + ")", "torch-compile-" + mode};
  }
  return {"PyTorch eager", "pytorch-eager"};
}

Bundle baseline_bundle(BundleMaker& maker, const JsonAt& stats, long long level, long long problem, const std::string& problem_file,
                     const HarnessOptions& options) {
  const std::string& hardware = hardware_of(stats);
  Json environment = record_environment(stats.member("hardware"), hardware, "", "KernelBench", options);
  Json spec = object({{"status", "passed"}});
  Json native = Json::object();
  timing_of(stats, spec, native);
  spec.set("correctness", object({{"checked", false}, {"by", "the PyTorch reference itself: the output others are checked against"}}));
  auto [impl_name, impl_slug] = baseline_implementation(options.run_name);
  std::string external_id = "baseline/" + options.run_name + "/level" + std::to_string(level) + "/" + problem_file;
  spec.set("sourceNative", object({{"source", Json(kSource)},
                                   {"benchmark", Json("level" + std::to_string(level) + "/" + std::to_string(problem))},
                                   {"externalId", Json(external_id)},
                                   {"metrics", std::move(native)}}));
  Json implementation = harness_document("Implementation", object({{"name", Json(impl_name)}, {"project", "PyTorch"}}),
                                         object({{"name", Json("kernelbench-" + impl_slug)},
                                                 {"title", Json(impl_name + " · KernelBench reference")}}));
  Json run_metadata = object({{"name", Json(harness_slug("kernelbench-" + external_id))},
                              {"title", Json("KernelBench level " + std::to_string(level) + " " + problem_file + " · " +
                                             impl_name + " · " + hardware)}});
  return maker.make(stats.where(), std::move(spec), std::move(run_metadata), protocol_document(), std::move(environment),
                        workload_document(level, problem, problem_file), std::move(implementation));
}

bool is_baseline(const Json& root) {
  for (const auto& [k, v] : root.as_object())
    if (k.rfind("level", 0) == 0) return true;
  return false;
}

}  // namespace

HarnessImport import_kernelbench(const Json& root_value, std::string_view source, const HarnessOptions& options) {
  HarnessImport out;
  import_kernelbench(root_value, source, options, collect_into(out));
  return out;
}

void import_kernelbench(const Json& root_value, std::string_view source, const HarnessOptions& options,
                        const HarnessSink& sink) {
  JsonAt root(source, root_value);
  root.object();
  // The records in file order, then mapped on both cores (map_in_order):
  // a baseline timing, an evaluated sample, or a member that names no problem.
  struct Record {
    JsonAt at;
    long long level = 0, problem = 0;
    const std::string* file = nullptr;  // a baseline's problem file
    bool bad_problem = false;
  };
  std::vector<Record> records;
  const bool baseline = is_baseline(root_value);
  // Maps the records gathered so far and hands them over.
  auto map_records = [&] {
    map_in_order(records.size(), [&](std::size_t i, BundleMaker& maker) -> RecordOutcome {
      const Record& r = records[i];
      if (r.bad_problem)
        return HarnessError{r.at.where(), r.at.where() + ": expected a problem id (a number from 1) as member name, found " +
                                              quoted_excerpt(*r.file)};
      try {
        if (!baseline) return HarnessRecord{r.at.where(), sample_bundle(r.at, r.level, r.problem, options, maker)};
        const std::string& file = *r.file;
        long long problem = number_prefix(file);
        if (problem < 0 || file.size() > 255 || file.find('/') != std::string::npos)
          r.at.fail("a problem file name such as \"1_Square_matrix_multiplication_.py\" as member name",
                    quoted_excerpt(file));
        return HarnessRecord{r.at.where(), baseline_bundle(maker, r.at, r.level, problem, file, options)};
      } catch (const Error& e) {
        return HarnessError{r.at.where(), e.what()};
      }
    }, sink);
    records.clear();
  };
  if (baseline) {
    for (const Json::Member& level_member : root.object()) {
      const std::string& level_key = level_member.first;
      JsonAt lv = root.member(level_member);
      long long level = level_key.size() == 6 && level_key.rfind("level", 0) == 0 ? number_prefix(level_key.substr(5)) : -1;
      if (level < 1 || level > 9) lv.fail("a member \"level1\" to \"level9\" (a baseline file)", "a member " + quoted_excerpt(level_key));
      for (const auto& member : lv.object()) records.push_back({lv.member(member), level, 0, &member.first, false});
      map_records();  // before the next level is looked at, which may throw
    }
  } else {
    if (!options.level)
      throw InvalidInput(std::string(source) +
                         ": KernelBench eval results do not record their level (the harness keeps it in the run's "
                         "folder name); pass --level 1, 2 or 3");
    for (const Json::Member& member : root.object()) {
      const auto& [key, samples] = member;
      JsonAt at = root.member(member);
      long long problem = number_prefix(key);
      if (problem < 0 || key.find('_') != std::string::npos) {
        records.push_back({at, 0, 0, &key, true});
      } else if (samples.is_array()) {
        for (std::size_t i = 0; i < samples.as_array().size(); ++i) records.push_back({at.at(i), *options.level, problem});
      } else {
        records.push_back({at, *options.level, problem});  // before pass@k: one sample
      }
    }
  }
  map_records();
}

}  // namespace kistore
