#include "refs/index.h"

#include "objects/blob.h"
#include "objects/error.h"
#include "refs/index_lines.h"
#include "refs/layout.h"

namespace kistore {

namespace {

// A string JCS writes as it is, between quotes: printable ASCII other than
// '"' and '\\' (a digest, "sha256:<hex>", always is).
bool plain_string(std::string_view s) {
  for (char c : s)
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  return true;
}

// The JCS bytes of the ComparisonKey document when each of the three digests
// is a plain string or absent (null), written directly; nullopt otherwise.
// The same bytes canonical() gives for the document comparison_key builds:
// members in sorted order, strings quoted as they are.
std::optional<std::string> plain_key_document(const Json& run_spec) {
  std::string out = R"({"apiVersion":")";
  if (!plain_string(kApiVersion)) return std::nullopt;
  out.append(kApiVersion).append(R"(","kind":"ComparisonKey","spec":{)");
  const char* names[] = {"environmentDigest", "protocolDigest", "workloadDigest"};
  for (std::size_t i = 0; i < 3; ++i) {
    out.append(i ? ",\"" : "\"").append(names[i]).append("\":");
    const Json* v = run_spec.find(names[i]);
    if (!v || v->is_null()) {
      out.append("null");
    } else if (v->is_string() && plain_string(v->as_string())) {
      out.append("\"").append(v->as_string()).append("\"");
    } else {
      return std::nullopt;
    }
  }
  out.append("}}");
  return out;
}

}  // namespace

Digest comparison_key(const Json& run_spec) {
  if (auto plain = plain_key_document(run_spec)) return Digest::of(*plain);
  auto digest_of = [&](const char* name) -> Json {
    const Json* v = run_spec.find(name);
    return v ? *v : Json();
  };
  Json spec = Json::object();
  spec.set("environmentDigest", digest_of("environmentDigest"));
  spec.set("protocolDigest", digest_of("protocolDigest"));
  spec.set("workloadDigest", digest_of("workloadDigest"));
  Json doc = Json::object();
  doc.set("apiVersion", std::string(kApiVersion));
  doc.set("kind", "ComparisonKey");
  doc.set("spec", std::move(spec));
  return Digest::of(canonical(doc));
}

Json Measurement::to_json() const {
  Json out = Json::object();
  out.set("metric", metric);
  out.set("statistic", statistic);
  out.set("unit", unit);
  out.set("value", value);
  return out;
}

std::optional<Measurement> Measurement::from_json(const Json& json) {
  const Json *metric = json.find("metric"), *statistic = json.find("statistic"),
             *unit = json.find("unit"), *value = json.find("value");
  if (!metric || !metric->is_string() || !statistic || !statistic->is_string() || !unit ||
      !unit->is_string() || !value || !value->is_number())
    return std::nullopt;
  return Measurement{metric->as_string(), statistic->as_string(), unit->as_string(), value->as_number()};
}

std::optional<Measurement> primary_measurement(const Json& run_spec) {
  if (const Json* timing = run_spec.find("timing")) {
    const Json* stat = timing->find("primaryStatistic");
    const Json* latency = timing->find("latencyNs");
    if (stat && stat->is_string() && latency) {
      const Json* value = latency->find(stat->as_string());
      if (value && value->is_number())
        return Measurement{"latency", stat->as_string(), "ns", value->as_number()};
    }
  }
  if (const Json* list = run_spec.find("measurements"); list && list->is_array()) {
    for (const Json& m : list->as_array()) {
      const Json* stat = m.find("statistic");
      if (stat && stat->is_string() && stat->as_string() == "median") return Measurement::from_json(m);
    }
  }
  return std::nullopt;
}

std::string group_entry(const Json& run_spec) { return group_entry(primary_measurement(run_spec)); }

std::string group_entry(const std::optional<Measurement>& primary) {
  if (primary) return canonical(primary->to_json());
  return R"({"metric":null,"statistic":null,"unit":null,"value":null})";
}

std::string level_entry(const std::optional<Digest>& evidence) {
  Json out = Json::object();
  out.set("evidence", evidence ? Json(evidence->str()) : Json());
  return canonical(out);
}

std::string rerun_entry(Level verdict, double ratio) {
  Json out = Json::object();
  out.set("level", std::string(level_name(verdict)));
  out.set("ratio", ratio);
  return canonical(out);
}

std::optional<double> rerun_ratio(const Json& run_spec, const Json& rerun_spec) {
  auto run = primary_measurement(run_spec), rerun = primary_measurement(rerun_spec);
  if (!run || !rerun || run->unit != rerun->unit || run->value == 0) return std::nullopt;
  return rerun->value / run->value;
}

std::string attestation_entry(std::string_view author, std::string_view type) {
  Json out = Json::object();
  out.set("author", std::string(author));
  out.set("type", std::string(type));
  return canonical(out);
}

std::string attestation_entry(const Json& spec) {
  Json out = Json::object();
  out.set("author", *spec.find("author"));
  out.set("type", *spec.find("type"));
  return canonical(out);
}

std::vector<IndexEntry> index_entries(Format f, const Document& doc, std::string_view where, std::string_view pointer) {
  std::vector<IndexEntry> out;
  const Json& spec = doc.spec();
  if (doc.kind() == Kind::kRun) {
    out.push_back({group_path(f, comparison_key(spec), doc.digest()), group_entry(spec)});
    out.push_back({level_path(f, default_level(spec), doc.digest()), level_entry(std::nullopt)});
    if (auto path = source_path(spec, where, pointer)) out.push_back({*path, doc.digest().str()});
  } else if (doc.kind() == Kind::kAttestation) {
    Digest subject = *Digest::parse(spec.find("subject")->as_string());
    out.push_back({attestation_path(f, subject, doc.digest()), attestation_entry(spec)});
  }
  return out;
}

std::optional<Problem> metadata_problem(std::string_view path, std::string_view bytes) {
  if (bytes.starts_with('{') && is_canonical_json(bytes)) return std::nullopt;
  auto problem = [&](std::string detail) { return Problem{ProblemKind::kMetadataInvalid, std::string(path), std::move(detail)}; };
  try {
    Json meta = parse_json(bytes, path);
    if (!meta.is_object()) return problem("expected a JSON object");
    if (canonical(meta) != bytes) return problem("expected RFC 8785 bytes, found another form");
  } catch (const Error& e) {
    return problem(e.what());
  }
  return std::nullopt;
}

namespace {

// The facts of a document whose body (JSON with a known kind and a spec)
// passed the checks; `where` is its path.
void facts_of_body(Format f, const Json& spec, const Digest& digest, std::string_view where, ObjectFacts& facts) {
  if (facts.kind == Kind::kRun) {
    facts.key = comparison_key(spec);
    facts.primary = primary_measurement(spec);
    facts.group_path = group_path(f, *facts.key, digest);
    facts.group_bytes = group_entry(spec);
    facts.default_level = default_level(spec);
    try {
      if (f == Format::k3) {
        // Format 3 keys an upstream id by hash (refs/index_lines.h): any
        // pair of strings without U+0000 is one.
        const Json* native = spec.find("sourceNative");
        const Json* source = native ? native->find("source") : nullptr;
        const Json* id = native ? native->find("externalId") : nullptr;
        if (source && source->is_string() && id && id->is_string()) {
          if (source->as_string().find('\0') != std::string::npos || id->as_string().find('\0') != std::string::npos)
            throw InvalidInput(std::string(where) + ": /spec/sourceNative: expected a source and externalId without U+0000");
          facts.source_path = source_key(source->as_string(), id->as_string());
        }
      } else {
        facts.source_path = source_path(spec, where);
      }
    } catch (const Error& e) {
      facts.problem = Problem{ProblemKind::kObjectInvalid, std::string(where), e.what()};
      return;
    }
    for (std::string_view role : References::kRoles) {
      const Json* ref = spec.find(std::string(role) + "Digest");
      if (ref && ref->is_string())
        if (auto d = Digest::parse(ref->as_string())) facts.references.set(role, *d);
    }
  } else if (facts.kind == Kind::kAttestation) {
    const Json* subject = spec.find("subject");
    if (subject && subject->is_string()) facts.subject = Digest::parse(subject->as_string());
    if (spec.find("author") && spec.find("type")) facts.attestation_bytes = attestation_entry(spec);
  }
}

}  // namespace

std::optional<std::string> rerun_entry_problem(const ObjectFacts& run, const ObjectFacts& rerun, std::string_view bytes) {
  if (rerun.digest == run.digest) return "names the run itself; a rerun is another measurement";
  auto implementation = [](const ObjectFacts& facts) { return facts.references.find("implementation"); };
  if (!run.key || rerun.key != run.key || !implementation(run) || implementation(rerun) != implementation(run))
    return "names " + rerun.digest->str() + ", which is no controlled rerun of " + run.digest->str() +
           " (expected the same comparison key and implementation)";
  if (!run.primary || !rerun.primary || run.primary->unit != rerun.primary->unit || run.primary->value == 0)
    return "the rerun and the run have no primary measurements in one unit to compare";
  const double ratio = rerun.primary->value / run.primary->value;
  if (bytes == rerun_entry(Level::kReproduced, ratio) || bytes == rerun_entry(Level::kDisputed, ratio))
    return std::nullopt;
  return "expected " + rerun_entry(Level::kReproduced, ratio) + " or " + rerun_entry(Level::kDisputed, ratio) +
         ", found " + std::string(bytes.substr(0, 80));
}

ObjectFacts object_facts(Format f, std::string_view path, std::string_view frame, ObjectCheck check,
                         const DictionaryLookup& dictionaries) {
  ObjectFacts facts;
  const std::string where(path);
  auto fail = [&](ProblemKind kind, std::string detail) {
    facts.problem = Problem{kind, where, std::move(detail)};
    return facts;
  };
  facts.digest = parse_object_path(path);
  if (!facts.digest) return fail(ProblemKind::kLayout, "expected objects/sha256/<2 hex>/<2 hex>/<60 hex>");
  std::string bytes;
  try {
    bytes = decode_object(frame, path, dictionaries);
  } catch (const Error& e) {
    return fail(ProblemKind::kObjectCorrupt, e.what());
  }
  Digest actual = Digest::of(bytes);
  if (actual != *facts.digest)
    return fail(ProblemKind::kObjectHashMismatch,
                "expected bytes hashing to " + facts.digest->str() + ", found " + actual.str());
  Json body;
  try {
    body = parse_json(bytes, path);
    if (check == ObjectCheck::kDeep) Document::validate(body, Location{where, ""});
  } catch (const Error& e) {
    return fail(ProblemKind::kObjectInvalid, e.what());
  }
  if (check == ObjectCheck::kDeep && canonical(body) != bytes)
    return fail(ProblemKind::kObjectNotCanonical, "expected RFC 8785 bytes, found another form");
  const Json* kind = body.find("kind");
  std::optional<Kind> parsed;
  if (kind && kind->is_string()) parsed = parse_kind(kind->as_string());
  const Json* spec = body.find("spec");
  if (!parsed || !spec || !spec->is_object())
    return fail(ProblemKind::kObjectInvalid, "expected a document with a known kind and a spec");
  facts.kind = *parsed;
  facts_of_body(f, *spec, *facts.digest, path, facts);
  return facts;
}

}  // namespace kistore
