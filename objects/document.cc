#include "objects/document.h"

#include <algorithm>
#include <array>

#include "objects/error.h"

namespace kistore {
namespace {

// The first string or member name under `v` (at `at`) that is not UTF-8:
// false when there is none, else its place and what stands there.
bool find_non_utf8(const Json& v, const Location& at, Location& bad, std::string& found) {
  auto check = [&](std::string_view text, const Location& where) {
    const std::size_t offset = first_invalid_utf8(text);
    if (offset == std::string_view::npos) return false;
    bad = where;
    found = describe_utf8_fault(text, offset);
    return true;
  };
  if (v.is_string()) return check(v.as_string(), at);
  if (v.is_array()) {
    for (std::size_t i = 0; i < v.as_array().size(); ++i)
      if (find_non_utf8(v.as_array()[i], at.child(i), bad, found)) return true;
  } else if (v.is_object()) {
    for (const auto& [name, value] : v.as_object())
      if (check(name, at.child(name)) || find_non_utf8(value, at.child(name), bad, found)) return true;
  }
  return false;
}

// Documents are UTF-8 text (RFC 8785 writes strings' other bytes as they
// are): a string that did not come through parse_json (a CSV cell, a
// program's output) is refused here, the one door every document passes.
void require_utf8(const Json& value, const std::string& canonical_bytes, const Location& where) {
  if (first_invalid_utf8(canonical_bytes) == std::string_view::npos) return;
  Location bad = where;
  std::string found = "bytes that are not UTF-8";
  find_non_utf8(value, where, bad, found);
  throw InvalidInput(bad.format("expected UTF-8 text, found " + found));
}

struct KindInfo {
  Kind kind;
  std::string_view name;
  std::string_view role;
};

constexpr std::array<KindInfo, 6> kKinds{{
    {Kind::kRun, "BenchmarkRun", "run"},
    {Kind::kProtocol, "BenchmarkProtocol", "protocol"},
    {Kind::kEnvironment, "ExecutionEnvironment", "environment"},
    {Kind::kWorkload, "Workload", "workload"},
    {Kind::kImplementation, "Implementation", "implementation"},
    {Kind::kAttestation, "Attestation", "attestation"},
}};

// Roles a bundle may carry, in the order documents() lists them.
constexpr std::array<Kind, 5> kBundleRoles{Kind::kRun, Kind::kProtocol, Kind::kEnvironment,
                                          Kind::kWorkload, Kind::kImplementation};

// What a message says was found: a short, quoted rendering of the value.
std::string describe(const Json* v) {
  if (!v) return "nothing";
  switch (v->type()) {
    case Json::Type::kNull: return "null";
    case Json::Type::kBool: return v->as_bool() ? "true" : "false";
    case Json::Type::kNumber: return "the number " + format_number(v->as_number());
    case Json::Type::kString: {
      std::string s;
      const std::string& text = v->as_string();
      write_json_string(text.size() > 80 ? text.substr(0, 77) + "..." : text, s);
      return s;
    }
    case Json::Type::kArray: return "an array";
    case Json::Type::kObject: return "an object";
  }
  return "?";
}

[[noreturn]] void reject(const Location& at, std::string_view expected, const Json* found) {
  throw InvalidInput(at.format("expected " + std::string(expected) + ", found " + describe(found)));
}

const Json& require(const Json& obj, std::string_view name, Json::Type type,
                    std::string_view expected, const Location& at) {
  const Json* v = obj.find(name);
  if (!v || v->type() != type) reject(at.child(name), expected, v);
  return *v;
}

const Json& require_object(const Json& obj, std::string_view name, const Location& at) {
  return require(obj, name, Json::Type::kObject, "an object", at);
}

const Json& require_string(const Json& obj, std::string_view name, const Location& at) {
  return require(obj, name, Json::Type::kString, "a string", at);
}

void optional_type(const Json& obj, std::string_view name, Json::Type type,
                   std::string_view expected, const Location& at) {
  const Json* v = obj.find(name);
  if (v && v->type() != type) reject(at.child(name), expected, v);
}

void require_digest(const Json& obj, std::string_view name, const Location& at) {
  const Json* v = obj.find(name);
  if (!v || !v->is_string() || !Digest::parse(v->as_string()))
    reject(at.child(name), "a digest (\"sha256:\" and 64 lowercase hex digits)", v);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// RFC 3339 date-time: YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM).
bool is_rfc3339(std::string_view s) {
  auto digits = [&](std::size_t pos, std::size_t n) {
    if (pos + n > s.size()) return false;
    for (std::size_t i = pos; i < pos + n; ++i)
      if (!is_digit(s[i])) return false;
    return true;
  };
  if (s.size() < 20 || !digits(0, 4) || s[4] != '-' || !digits(5, 2) || s[7] != '-' ||
      !digits(8, 2) || (s[10] != 'T' && s[10] != 't') || !digits(11, 2) || s[13] != ':' ||
      !digits(14, 2) || s[16] != ':' || !digits(17, 2))
    return false;
  int month = (s[5] - '0') * 10 + (s[6] - '0'), day = (s[8] - '0') * 10 + (s[9] - '0');
  int hour = (s[11] - '0') * 10 + (s[12] - '0'), minute = (s[14] - '0') * 10 + (s[15] - '0');
  int second = (s[17] - '0') * 10 + (s[18] - '0');
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
    return false;
  std::size_t i = 19;
  if (i < s.size() && s[i] == '.') {
    std::size_t start = ++i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == start) return false;
  }
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) return i + 1 == s.size();
  return i + 6 == s.size() && (s[i] == '+' || s[i] == '-') && digits(i + 1, 2) &&
         s[i + 3] == ':' && digits(i + 4, 2);
}

void validate_measurements(const Json& spec, bool required, const Location& at) {
  const Json* m = spec.find("measurements");
  if (!m) {
    if (required) reject(at.child("measurements"), "an array of measurements", m);
    return;
  }
  if (!m->is_array()) reject(at.child("measurements"), "an array of measurements", m);
  Location list = at.child("measurements");
  for (std::size_t i = 0; i < m->as_array().size(); ++i) {
    const Json& item = m->as_array()[i];
    Location here = list.child(i);
    if (!item.is_object())
      reject(here, "a measurement object {metric, statistic, unit, value}", &item);
    require_string(item, "metric", here);
    require_string(item, "statistic", here);
    require_string(item, "unit", here);
    require(item, "value", Json::Type::kNumber, "a number", here);
  }
}

void validate_run(const Json& spec, const Location& at) {
  require_string(spec, "status", at);
  validate_measurements(spec, true, at);
  for (auto name : {"protocolDigest", "workloadDigest", "environmentDigest", "implementationDigest"})
    require_digest(spec, name, at);
  if (const Json* timing = spec.find("timing")) {
    Location t = at.child("timing");
    if (!timing->is_object()) reject(t, "an object", timing);
    optional_type(*timing, "primaryStatistic", Json::Type::kString, "a string", t);
    if (const Json* lat = timing->find("latencyNs")) {
      if (!lat->is_object()) reject(t.child("latencyNs"), "an object of statistics", lat);
      for (const auto& [name, value] : lat->as_object())
        if (!value.is_number()) reject(t.child("latencyNs").child(name), "a number of nanoseconds", &value);
    }
  }
  if (const Json* observed = spec.find("observedAt")) {
    if (!observed->is_string() || !is_rfc3339(observed->as_string()))
      reject(at.child("observedAt"), "an RFC 3339 date-time (2025-11-11T06:22:57.000Z)", observed);
  }
  if (const Json* native = spec.find("sourceNative")) {
    Location n = at.child("sourceNative");
    if (!native->is_object()) reject(n, "an object {source, benchmark, externalId, metrics}", native);
    require_string(*native, "source", n);
    require_string(*native, "benchmark", n);
    require_string(*native, "externalId", n);
    optional_type(*native, "metrics", Json::Type::kObject, "an object", n);
  }
}

void validate_spec(Kind kind, const Json& spec, const Location& at) {
  switch (kind) {
    case Kind::kRun:
      validate_run(spec, at);
      break;
    case Kind::kProtocol:
      require_object(spec, "harness", at);
      require_object(spec, "measurement", at);
      break;
    case Kind::kEnvironment: {
      const Json& hw = require_object(spec, "hardware", at);
      for (auto name : {"vendor", "product", "architecture"}) require_string(hw, name, at.child("hardware"));
      break;
    }
    case Kind::kWorkload:
      require_string(spec, "definition", at);
      require_object(spec, "parameters", at);
      break;
    case Kind::kImplementation:
      require_string(spec, "name", at);
      optional_type(spec, "project", Json::Type::kString, "a string", at);
      optional_type(spec, "revision", Json::Type::kString, "a string", at);
      break;
    case Kind::kAttestation: {
      require_digest(spec, "subject", at);
      const Json& type = require_string(spec, "type", at);
      if (type.as_string() != "reproduction" && type.as_string() != "note")
        reject(at.child("type"), "\"reproduction\" or \"note\"", &type);
      require_string(spec, "author", at);
      require_string(spec, "body", at);
      validate_measurements(spec, false, at);
      break;
    }
  }
}

}  // namespace

std::string_view kind_name(Kind kind) { return kKinds[static_cast<int>(kind)].name; }
std::string_view role_name(Kind kind) { return kKinds[static_cast<int>(kind)].role; }

std::optional<Kind> parse_kind(std::string_view name) {
  for (const auto& k : kKinds)
    if (k.name == name) return k.kind;
  return std::nullopt;
}

std::string known_kinds() {
  std::string out;
  for (const auto& k : kKinds) {
    if (!out.empty()) out += ", ";
    out += k.name;
  }
  return out;
}

Location Location::child(std::string_view member) const {
  return Location{source, pointer_child(pointer, member)};
}

Location Location::child(std::size_t index) const {
  return Location{source, pointer_child(pointer, index)};
}

std::string Location::format(std::string_view message) const {
  std::string out = source;
  if (!pointer.empty()) out += ": " + pointer;
  out += ": ";
  out += message;
  return out;
}

void Document::validate(const Json& json, const Location& where) {
  if (!json.is_object()) reject(where, "a document object", &json);
  for (const auto& [name, value] : json.as_object()) {
    if (name != "apiVersion" && name != "kind" && name != "spec" && name != "metadata")
      throw InvalidInput(where.child(name).format(
          "expected only apiVersion, kind, spec and metadata at the top of a document, found \"" +
          name + "\""));
  }
  const Json& api = require_string(json, "apiVersion", where);
  if (api.as_string() != kApiVersion) reject(where.child("apiVersion"), "\"kernelindex.dev/v1alpha1\"", &api);
  const Json& kind_json = require_string(json, "kind", where);
  std::optional<Kind> kind = parse_kind(kind_json.as_string());
  if (!kind) reject(where.child("kind"), "one of " + known_kinds(), &kind_json);
  const Json& spec = require_object(json, "spec", where);
  validate_spec(*kind, spec, where.child("spec"));
  if (const Json* meta = json.find("metadata"); meta && !meta->is_object())
    reject(where.child("metadata"), "an object", meta);
}

Document Document::from_json(Json json, const Location& where) {
  validate(json, where);
  Document doc;
  doc.kind_ = *parse_kind(json.find("kind")->as_string());
  auto data = std::make_shared<Data>();
  if (Json* meta = json.find("metadata")) {
    data->metadata = std::move(*meta);
    json.erase("metadata");
    data->metadata_canonical = kistore::canonical(*data->metadata);
    require_utf8(*data->metadata, data->metadata_canonical, where.child("metadata"));
  }
  data->body = std::move(json);
  data->canonical = kistore::canonical(data->body);
  require_utf8(data->body, data->canonical, where);
  doc.digest_ = Digest::of(data->canonical);
  doc.data_ = std::move(data);
  return doc;
}

Document Document::from_canonical(std::string_view bytes, std::optional<Json> metadata,
                                  const Location& where) {
  Json body = parse_json(bytes, where.source);
  if (body.find("metadata")) throw InvalidInput(where.format("a stored object must not carry metadata"));
  if (metadata) body.set("metadata", std::move(*metadata));
  return from_json(std::move(body), where);
}

Json Document::with_metadata() const {
  Json out = data_->body;
  if (data_->metadata) out.set("metadata", *data_->metadata);
  return out;
}

bool Document::made_from(const Json& json) const {
  if (!json.is_object()) return false;
  std::size_t body_members = 0;
  for (const auto& [name, value] : json.as_object()) {
    if (name == "metadata") {
      if (!data_->metadata || !(*data_->metadata == value)) return false;
      continue;
    }
    const Json* mine = data_->body.find(name);
    if (!mine || !(*mine == value)) return false;
    ++body_members;
  }
  if (data_->metadata && !json.find("metadata")) return false;
  return body_members == data_->body.as_object().size();
}

Document DocumentCache::make(Json json, const Location& where) {
  for (std::size_t i = 0; i < recent_.size(); ++i) {
    if (!recent_[i].made_from(json)) continue;
    std::rotate(recent_.begin(), recent_.begin() + static_cast<std::ptrdiff_t>(i),
                recent_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    return recent_.front();
  }
  Document doc = Document::from_json(std::move(json), where);
  if (recent_.size() < kEntries) recent_.push_back(doc);
  else recent_.back() = doc;
  std::rotate(recent_.begin(), recent_.end() - 1, recent_.end());
  return doc;
}

std::optional<Digest> run_reference(const Document& run, std::string_view role) {
  std::string member = std::string(role) + "Digest";
  const Json* v = run.spec().find(member);
  if (!v || !v->is_string()) return std::nullopt;
  return Digest::parse(v->as_string());
}

Bundle Bundle::from_json(Json json, const Location& where) {
  if (!json.is_object()) reject(where, "a bundle object {run, protocol, environment, ...}", &json);
  for (const auto& [name, value] : json.as_object()) {
    bool known = false;
    for (Kind k : kBundleRoles) known |= role_name(k) == name;
    if (!known)
      throw InvalidInput(where.child(name).format(
          "expected a bundle role (run, protocol, environment, workload, implementation), found \"" +
          name + "\""));
  }
  Bundle bundle;
  for (Kind role : kBundleRoles) {
    std::string_view name = role_name(role);
    Json* member = json.find(name);
    bool required = role == Kind::kRun || role == Kind::kProtocol || role == Kind::kEnvironment;
    if (!member) {
      if (required) reject(where.child(name), "a " + std::string(kind_name(role)) + " document", nullptr);
      bundle.external_.emplace_back(name);
      continue;
    }
    Location at = where.child(name);
    Document doc = Document::from_json(std::move(*member), at);
    if (doc.kind() != role)
      throw InvalidInput(at.child("kind").format("expected \"" + std::string(kind_name(role)) +
                                                 "\" for the bundle's " + std::string(name) +
                                                 ", found \"" + std::string(kind_name(doc.kind())) + "\""));
    if (role != Kind::kRun) {
      Digest recorded = *run_reference(bundle.run(), name);
      if (recorded != doc.digest())
        throw InvalidInput(where.child("run").child("spec").child(std::string(name) + "Digest")
                               .format("bundle's " + std::string(name) + " hashes to " +
                                       doc.digest().str() + ", run says " + recorded.str()));
    }
    bundle.documents_.push_back(std::move(doc));
  }
  return bundle;
}

Json Bundle::to_json() const {
  Json out = Json::object();
  for (const Document& doc : documents_) out.set(role_name(doc.kind()), doc.with_metadata());
  return out;
}

std::optional<Bundle> Bundle::from_documents(std::array<std::optional<Document>, 5> by_role) {
  Bundle bundle;
  for (std::size_t i = 0; i < kBundleRoles.size(); ++i) {
    Kind role = kBundleRoles[i];
    std::string_view name = role_name(role);
    std::optional<Document>& doc = by_role[i];
    if (!doc) {
      if (role == Kind::kRun || role == Kind::kProtocol || role == Kind::kEnvironment) return std::nullopt;
      bundle.external_.emplace_back(name);
      continue;
    }
    if (doc->kind() != role) return std::nullopt;
    if (role != Kind::kRun) {
      std::optional<Digest> recorded = run_reference(bundle.run(), name);
      if (!recorded || *recorded != doc->digest()) return std::nullopt;
    }
    bundle.documents_.push_back(std::move(*doc));
  }
  return bundle;
}

}  // namespace kistore
