#include "store/ingest/harness_import.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cmath>
#include <exception>
#include <stdexcept>
#include <utility>

#include "objects/digest.h"
#include "objects/error.h"
#include "objects/parallel.h"
#include "store/ingest/liger_tables.h"

namespace kistore {
namespace {

constexpr std::string_view kApi = "kernelindex.dev/v1alpha1";

Json object(std::initializer_list<JsonMember> members) { return json_object(members); }

// GPUs the harnesses name that Liger's table (store/ingest/liger_tables.h)
// does not: export variants of the A100 and H100.
constexpr liger::Gpu kMoreGpus[] = {
    {"NVIDIA A800-SXM4-80GB", "nvidia", "sm_80"},
    {"NVIDIA A800 80GB PCIe", "nvidia", "sm_80"},
    {"NVIDIA H800", "nvidia", "sm_90"},
    {"NVIDIA H20", "nvidia", "sm_90"},
};

const liger::Gpu* find_gpu(std::string_view product) {
  for (const auto& g : liger::kGpus)
    if (g.name == product) return &g;
  for (const auto& g : kMoreGpus)
    if (g.name == product) return &g;
  return nullptr;
}

std::string range_text(double low, double high) {
  return format_number(low) + " to " + format_number(high);
}

}  // namespace

Json json_object(std::initializer_list<JsonMember> members) {
  Json::Object out;
  out.reserve(members.size());
  for (const JsonMember& m : members) out.emplace_back(std::string(m.name), std::move(m.value));
  return Json(std::move(out));
}

std::size_t ObjectBuilder::place_of(std::string_view name) const {
  if (at_.empty()) {  // a few members: looked up in order
    for (std::size_t i = 0; i < members_.size(); ++i)
      if (members_[i].first == name) return i;
    return kAbsent;
  }
  auto it = at_.find(std::string(name));
  return it == at_.end() ? kAbsent : it->second;
}

void ObjectBuilder::set(std::string_view name, Json value) {
  // Past kIndexAbove members, the index is made once and kept from then on.
  if (at_.empty() && members_.size() >= kIndexAbove)
    for (std::size_t i = 0; i < members_.size(); ++i) at_.emplace(members_[i].first, i);
  if (const std::size_t i = place_of(name); i != kAbsent) {
    members_[i].second = std::move(value);
    return;
  }
  if (!at_.empty()) at_.emplace(std::string(name), members_.size());
  members_.emplace_back(std::string(name), std::move(value));
}

Json ObjectBuilder::take() {
  at_.clear();
  return Json(std::exchange(members_, {}));
}

HarnessSink collect_into(HarnessImport& out) {
  return {[&out](HarnessRecord&& r) { out.records.push_back(std::move(r)); },
          [&out](HarnessError&& e) { out.errors.push_back(std::move(e)); }};
}

void map_in_order(std::size_t n, const std::function<RecordOutcome(std::size_t, BundleMaker&)>& map,
                  const HarnessSink& sink) {
  const unsigned parts = std::min(2u, worker_threads());
  std::vector<BundleMaker> makers(parts);
  std::vector<RecordOutcome> outcomes;
  std::vector<std::exception_ptr> failures;
  for (std::size_t begin = 0; begin < n; begin += kMapWindow) {
    const std::size_t count = std::min(kMapWindow, n - begin);
    outcomes.assign(count, RecordOutcome{});
    failures.assign(count, nullptr);
    // Blocks of kMapBlock records are taken in turn by whichever part is
    // free: the writer's thread shares the cores, so fixed halves would
    // leave one part waiting for the other. Every record before the first
    // failure is mapped (each block is taken by some part); a record after
    // a failure seen so far is not, as it would never be handed over.
    std::atomic<std::size_t> next{0};
    std::atomic<std::size_t> failed_at{count};
    parallel_for(
        parts,
        [&](std::size_t part) {
          for (;;) {
            const std::size_t first = next.fetch_add(kMapBlock, std::memory_order_relaxed);
            if (first >= count) return;
            for (std::size_t i = first; i < std::min(count, first + kMapBlock); ++i) {
              if (i > failed_at.load(std::memory_order_relaxed)) return;
              try {
                outcomes[i] = map(begin + i, makers[part]);
              } catch (...) {
                failures[i] = std::current_exception();
                std::size_t seen = failed_at.load(std::memory_order_relaxed);
                while (i < seen && !failed_at.compare_exchange_weak(seen, i, std::memory_order_relaxed)) {
                }
                return;
              }
            }
          }
        },
        parts);
    for (std::size_t i = 0; i < count; ++i) {
      if (failures[i]) std::rethrow_exception(failures[i]);
      if (auto* r = std::get_if<HarnessRecord>(&outcomes[i])) sink.record(std::move(*r));
      else if (auto* e = std::get_if<HarnessError>(&outcomes[i])) sink.error(std::move(*e));
      outcomes[i] = RecordOutcome{};  // its documents freed as it goes
    }
  }
}

std::string describe_json(const Json& v) {
  switch (v.type()) {
    case Json::Type::kNull: return "null";
    case Json::Type::kBool: return v.as_bool() ? "true" : "false";
    case Json::Type::kNumber: return "the number " + format_number(v.as_number());
    case Json::Type::kString: return "the string " + quoted_excerpt(v.as_string());
    case Json::Type::kArray: return "an array of " + std::to_string(v.as_array().size());
    case Json::Type::kObject: return "an object";
  }
  return "a value";
}

JsonAt JsonAt::step(const Json& child) const {
  JsonAt out(source_, child);
  if (depth_ == kSteps) {  // spelled out: the new JsonAt starts from here
    out.base_ = pointer();
    out.steps_[0] = value_;
    out.depth_ = 1;
    return out;
  }
  out.base_ = base_;
  std::copy_n(steps_.begin(), depth_, out.steps_.begin());
  out.steps_[depth_] = value_;
  out.depth_ = depth_ + 1;
  return out;
}

std::string JsonAt::pointer() const {
  std::string out = base_;
  for (std::size_t i = 0; i < depth_; ++i) {
    const Json& container = *steps_[i];
    const Json* child = i + 1 < depth_ ? steps_[i + 1] : value_;
    if (container.is_array()) {
      out = pointer_child(out, static_cast<std::size_t>(child - container.as_array().data()));
      continue;
    }
    for (const Json::Member& m : container.as_object())
      if (&m.second == child) {
        out = pointer_child(out, m.first);
        break;
      }
  }
  return out;
}

std::string JsonAt::where() const {
  const std::string pointer = this->pointer();
  std::string out;
  out.reserve(source_.size() + 2 + std::max<std::size_t>(pointer.size(), 1));
  out.append(source_);
  out += ": ";
  out += pointer.empty() ? std::string_view("/") : std::string_view(pointer);
  return out;
}

void JsonAt::fail(std::string_view expected) const { fail(expected, describe_json(*value_)); }

void JsonAt::fail(std::string_view expected, std::string_view found) const {
  throw InvalidInput(where() + ": expected " + std::string(expected) + ", found " + std::string(found));
}

JsonAt JsonAt::member(std::string_view name) const {
  const Json* m = object().empty() ? nullptr : value_->find(name);
  if (!m) fail("a member \"" + std::string(name) + "\"", "an object without it");
  return step(*m);
}

JsonAt JsonAt::member(const Json::Member& m) const {
  return step(m.second);
}

std::optional<JsonAt> JsonAt::find(std::string_view name) const {
  object();
  const Json* m = value_->find(name);
  if (!m || m->is_null()) return std::nullopt;
  return step(*m);
}

JsonAt JsonAt::at(std::size_t index) const {
  const Json::Array& a = array();
  if (index >= a.size()) fail("an element " + std::to_string(index), "an array of " + std::to_string(a.size()));
  return step(a[index]);
}

const Json::Object& JsonAt::object() const {
  if (!value_->is_object()) fail("an object");
  return value_->as_object();
}

const Json::Array& JsonAt::array() const {
  if (!value_->is_array()) fail("an array");
  return value_->as_array();
}

const std::string& JsonAt::string() const {
  if (!value_->is_string()) fail("a string");
  return value_->as_string();
}

const std::string& JsonAt::name(bool allow_slash) const {
  const std::string& s = string();
  bool ok = !s.empty() && s.size() <= 255 && s != "." && s != "..";
  for (unsigned char c : s) ok = ok && c >= 0x20 && c != 0x7f && (allow_slash || c != '/');
  if (!ok)
    fail(std::string("a name of 1 to 255 bytes without control characters") + (allow_slash ? "" : " or '/'"));
  return s;
}

bool JsonAt::boolean() const {
  if (!value_->is_bool()) fail("true or false");
  return value_->as_bool();
}

double JsonAt::number() const {
  if (!value_->is_number()) fail("a number");
  return value_->as_number();
}

double JsonAt::number_in(double low, double high) const {
  double v = number();
  if (!(v >= low && v <= high)) fail("a number from " + range_text(low, high));
  return v;
}

long long JsonAt::integer(long long low, long long high) const {
  double v = number();
  if (!(v >= static_cast<double>(low) && v <= static_cast<double>(high)) || v != std::floor(v))
    fail("an integer from " + std::to_string(low) + " to " + std::to_string(high));
  return static_cast<long long>(v);
}

double JsonAt::number_string(double low, double high) const {
  const std::string& s = string();
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) || v < low ||
      v > high)
    fail("a number written as a string, from " + range_text(low, high));
  return v;
}

std::string harness_slug(std::string_view s) {
  std::string out;
  bool dash = false;
  for (unsigned char c : s) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<unsigned char>(c - 'A' + 'a');
      alnum = true;
    }
    if (alnum) {
      if (dash && !out.empty()) out += '-';
      dash = false;
      out += static_cast<char>(c);
    } else {
      dash = true;
    }
  }
  if (out.size() > 100) out.resize(100);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

Json harness_document(std::string_view kind, Json spec, Json metadata) {
  return object({{"apiVersion", Json(kApi)},
                 {"kind", Json(kind)},
                 {"spec", std::move(spec)},
                 {"metadata", std::move(metadata)}});
}

Json harness_measurement(std::string_view metric, std::string_view statistic, std::string_view unit,
                         double value) {
  return object({{"metric", Json(metric)}, {"statistic", Json(statistic)}, {"unit", Json(unit)}, {"value", Json(value)}});
}

std::optional<std::string> known_gpu_architecture(std::string_view product) {
  if (const liger::Gpu* g = find_gpu(product)) return std::string(g->architecture);
  return std::nullopt;
}

std::string known_gpu_names() {
  std::string out;
  for (const auto& g : liger::kGpus) out += (out.empty() ? "" : ", ") + std::string(g.name);
  for (const auto& g : kMoreGpus) out += ", " + std::string(g.name);
  return out;
}

std::optional<Json> gpu_environment(std::string_view product, std::string_view architecture,
                                    std::string_view harness, Json extra_hardware) {
  std::string arch(architecture);
  std::string vendor = "nvidia";
  if (arch.empty()) {
    if (const liger::Gpu* g = find_gpu(product)) {
      arch = std::string(g->architecture);
      vendor = std::string(g->vendor);
    }
  }
  if (arch.empty()) return std::nullopt;
  Json hardware = object({{"vendor", Json(vendor)}, {"product", Json(product)}, {"architecture", Json(arch)}});
  for (auto& [k, v] : extra_hardware.as_object()) hardware.set(k, v);
  Json spec = object({{"hardware", std::move(hardware)}});
  Json metadata = object({{"name", Json(harness_slug(std::string(harness) + "-" + std::string(product)))},
                          {"title", Json(std::string(harness) + " host · " + std::string(product))}});
  return harness_document("ExecutionEnvironment", std::move(spec), std::move(metadata));
}

std::string environment_needed(std::string_view source, std::string_view harness) {
  return std::string(source) + ": " + std::string(harness) +
         "'s file does not say which GPU it was measured on; run `kistore capture > env.json` on that "
         "machine and import with --environment env.json";
}

Json record_environment(const JsonAt& at, std::string_view product, std::string_view architecture,
                        std::string_view harness, const HarnessOptions& options, Json extra_hardware) {
  if (options.environment) {
    const Json* spec = options.environment->find("spec");
    const Json* hw = spec ? spec->find("hardware") : nullptr;
    const Json* p = hw ? hw->find("product") : nullptr;
    std::string want = p && p->is_string() ? p->as_string() : "";
    if (want != product)
      at.fail("the GPU of --environment (" + quoted_excerpt(want) + ")", quoted_excerpt(product));
    return *options.environment;
  }
  if (auto env = gpu_environment(product, architecture, harness, std::move(extra_hardware))) return *env;
  at.fail("a GPU whose architecture kistore knows (" + known_gpu_names() +
              "), or --environment FILE made by `kistore capture` on the machine that ran it",
          quoted_excerpt(product));
}

namespace {

// The document of `part`: as given, or made (by way of `cache`) from its JSON.
Document made(DocumentCache& cache, BundlePart&& part, std::string_view where, std::string_view pointer) {
  if (Document* doc = std::get_if<Document>(&part)) return std::move(*doc);
  return cache.make(std::move(std::get<Json>(part)), Location{std::string(where), std::string(pointer)});
}

}  // namespace

Bundle BundleMaker::make(std::string_view where, Json run_spec, Json run_metadata, BundlePart protocol,
                         BundlePart environment, BundlePart workload, BundlePart implementation) {
  const std::string source(where);
  std::array<std::optional<Document>, 5> by_role;  // Bundle::from_documents' order
  by_role[1] = made(protocol_, std::move(protocol), where, "/protocol");
  by_role[2] = made(environment_, std::move(environment), where, "/environment");
  by_role[3] = made(workload_, std::move(workload), where, "/workload");
  by_role[4] = made(implementation_, std::move(implementation), where, "/implementation");
  run_spec.set("protocolDigest", Json(by_role[1]->digest().str()));
  run_spec.set("workloadDigest", Json(by_role[3]->digest().str()));
  run_spec.set("environmentDigest", Json(by_role[2]->digest().str()));
  run_spec.set("implementationDigest", Json(by_role[4]->digest().str()));
  by_role[0] = Document::from_json(harness_document("BenchmarkRun", std::move(run_spec), std::move(run_metadata)),
                                   Location{source, "/run"});
  std::optional<Bundle> bundle = Bundle::from_documents(std::move(by_role));
  // Cannot fail: the roles are the kinds harness_document was given, and the
  // run names each document by the digest it was made with.
  if (!bundle) throw std::logic_error("a harness bundle's documents do not agree: " + source);
  return std::move(*bundle);
}

}  // namespace kistore
