#include "refs/index_facts.h"

#include "objects/error.h"
#include "objects/json.h"
#include "refs/index.h"

namespace kistore {

std::vector<IndexFact> document_facts(const Document& doc, std::string_view where, std::string_view pointer) {
  std::vector<IndexFact> out;
  if (doc.metadata()) out.push_back(MetadataFact{doc.digest(), doc.metadata_canonical()});
  const Json& spec = doc.spec();
  if (doc.kind() == Kind::kRun) {
    out.push_back(GroupFact{comparison_key(spec), doc.digest(), primary_measurement(spec)});
    if (const Json* native = spec.find("sourceNative")) {
      const std::string& source = native->find("source")->as_string();
      const std::string& id = native->find("externalId")->as_string();
      for (const auto& [member, value] : {std::pair{"source", &source}, std::pair{"externalId", &id}})
        if (value->find('\0') != std::string::npos)
          throw InvalidInput(std::string(where) + ": " + std::string(pointer) + "/spec/sourceNative/" + member +
                             ": expected a string without U+0000 (an upstream id's key separates source and "
                             "externalId with it), found " + quoted_excerpt(*value));
      out.push_back(SourceFact{source, id, doc.digest()});
    }
  } else if (doc.kind() == Kind::kAttestation) {
    out.push_back(AttestationFact{*Digest::parse(spec.find("subject")->as_string()), doc.digest(),
                                  spec.find("author")->as_string(), spec.find("type")->as_string()});
  }
  return out;
}

namespace {

// The entry's bytes as a JSON object, or Error(kCorruption) naming the path.
Json entry_object(std::string_view path, std::string_view bytes) {
  Json value;
  try {
    value = parse_json(bytes, path);
  } catch (const Error& e) {
    throw Corruption(e.what());
  }
  if (!value.is_object() || canonical(value) != bytes)
    throw Corruption(std::string(path) + ": expected the RFC 8785 form of a JSON object, found " +
                     quoted_excerpt(bytes));
  return value;
}

Error unexpected(std::string_view path, std::string_view expected, std::string_view bytes) {
  return Corruption(std::string(path) + ": expected " + std::string(expected) + ", found " + quoted_excerpt(bytes));
}

}  // namespace

std::optional<IndexFact> entry_fact(Format f, std::string_view path, std::string_view bytes) {
  if (auto d = parse_metadata_path(f, path)) return MetadataFact{*d, canonical(entry_object(path, bytes))};
  if (auto g = parse_group_path(f, path)) {
    Json value = entry_object(path, bytes);
    if (bytes == group_entry(std::nullopt)) return GroupFact{g->key, g->run, {}};
    auto m = Measurement::from_json(value);
    if (!m || canonical(m->to_json()) != bytes)
      throw unexpected(path, "a primary measurement {metric, statistic, unit, value}", bytes);
    return GroupFact{g->key, g->run, *m};
  }
  if (auto l = parse_level_path(f, path)) {
    if (bytes == level_entry(std::nullopt)) return std::nullopt;
    Json value = entry_object(path, bytes);
    const Json* evidence = value.find("evidence");
    std::optional<Digest> d;
    if (value.as_object().size() == 1 && evidence && evidence->is_string()) d = Digest::parse(evidence->as_string());
    if (!d || level_entry(d) != bytes) throw unexpected(path, "{\"evidence\": a digest or null}", bytes);
    if (l->level != Level::kDisputed && l->level != Level::kReproduced)
      throw unexpected(path, "evidence only for a disputed or reproduced level", bytes);
    return LevelFact{l->run, l->level, *d};
  }
  if (auto r = parse_rerun_path(f, path)) {
    Json value = entry_object(path, bytes);
    const Json *level = value.find("level"), *ratio = value.find("ratio");
    std::optional<Level> verdict;
    if (level && level->is_string()) verdict = parse_level(level->as_string());
    if (value.as_object().size() != 2 || !verdict || (*verdict != Level::kDisputed && *verdict != Level::kReproduced) ||
        !ratio || !ratio->is_number() || rerun_entry(*verdict, ratio->as_number()) != bytes)
      throw unexpected(path, "{\"level\": \"disputed\" or \"reproduced\", \"ratio\": a number}", bytes);
    return RerunFact{r->run, r->rerun, *verdict, ratio->as_number()};
  }
  if (auto a = parse_attestation_path(f, path)) {
    Json value = entry_object(path, bytes);
    const Json *author = value.find("author"), *type = value.find("type");
    if (value.as_object().size() != 2 || !author || !author->is_string() || !type || !type->is_string() ||
        (type->as_string() != "note" && type->as_string() != "reproduction"))
      throw unexpected(path, "{\"author\": a string, \"type\": \"note\" or \"reproduction\"}", bytes);
    return AttestationFact{a->run, a->attestation, author->as_string(), type->as_string()};
  }
  if (auto s = parse_source_path(path)) {
    auto run = Digest::parse(bytes);
    if (!run || run->str() != bytes) throw unexpected(path, "a run digest \"sha256:<64 hex>\"", bytes);
    return SourceFact{s->source, s->external_id, *run};
  }
  throw Corruption(std::string(path) + ": expected an index entry of " + format_name(f) + ", found another path");
}

}  // namespace kistore
