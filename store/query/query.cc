#include "store/query/query.h"

#include <algorithm>

#include "objects/error.h"
#include "objects/shown_text.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "refs/level.h"
#include "store/core/index_trees.h"
#include "store/history/level_audit.h"

namespace kistore {

namespace {

// Format 3 (refs/layout.h): the run's line in refs/levels, if any.
std::optional<LevelFact> level_line(const Snapshot& snap, const Digest& run) {
  std::optional<IndexFact> fact = find_fact(snap, Family::kLevels, run.hex());
  if (!fact) return std::nullopt;
  return std::get<LevelFact>(*fact);
}

// Format 3: a run's level without a line is its default, which its document gives.
Level line_or_default(const Snapshot& snap, const Digest& run, const std::optional<LevelFact>& line) {
  return line ? line->level : default_level(snap.document(run, false).spec());
}

}  // namespace

std::vector<Digest> digests_below(const Snapshot& snap, std::string_view dir, std::string_view prefix) {
  std::vector<Digest> out;
  const std::string base(dir);
  auto matches = [&](const Digest& d) { return d.hex().compare(0, prefix.size(), prefix) == 0; };
  if (snap.format() == Format::k3) {
    // Group keys: the first 64 digits of refs/groups' keys; runs at a level
    // (reproduced, disputed: the others have no line, runs_at_level reads them).
    if (base == kGroupsDir) {
      for (const IndexFact& f : facts_with_prefix(snap, Family::kGroups, std::string(prefix)))
        if (const Digest& key = std::get<GroupFact>(f).key; out.empty() || out.back() != key) out.push_back(key);
      return out;
    }
    for (Level l : {Level::kDisputed, Level::kReproduced})
      if (base == level_dir(l))
        for (const IndexFact& f : facts_with_prefix(snap, Family::kLevels, std::string(prefix)))
          if (const auto& line = std::get<LevelFact>(f); line.level == l) out.push_back(line.run);
    return out;
  }
  if (snap.format() == Format::k1) {
    for (const std::string& name : snap.list(base))
      if (auto d = Digest::parse_hex(name); d && matches(*d)) out.push_back(*d);
    return out;
  }
  // Format 2 fans out: a prefix of 2 or 4 hex digits or more names the
  // folders to read, so a lookup reads three small trees, not the index.
  auto level = [&](const std::string& at, std::size_t from) {
    std::vector<std::string> names;
    if (prefix.size() >= from + 2) names.emplace_back(prefix.substr(from, 2));
    else names = snap.list(at);
    return names;
  };
  for (const std::string& a : level(base, 0)) {
    if (a.size() != 2) continue;
    for (const std::string& b : level(base + "/" + a, 2)) {
      if (b.size() != 2) continue;
      for (const std::string& rest : snap.list(base + "/" + a + "/" + b))
        if (auto d = parse_fanout(a + "/" + b + "/" + rest); d && matches(*d)) out.push_back(*d);
    }
  }
  return out;
}

std::optional<Level> recorded_level(const Snapshot& snap, const Digest& run) {
  if (snap.format() == Format::k3) {
    // A run's level line, else its default: a run of the store always has one.
    if (auto line = level_line(snap, run)) return line->level;
    if (!snap.has_object(run)) return std::nullopt;
    Document doc = snap.document(run, false);
    if (doc.kind() != Kind::kRun) return std::nullopt;
    return default_level(doc.spec());
  }
  for (Level l : {Level::kReproduced, Level::kDisputed, Level::kSourceNative, Level::kReported})
    if (snap.exists(level_path(snap.format(), l, run))) return l;
  return std::nullopt;
}

std::optional<LevelEntryValue> recorded_entry(const Snapshot& snap, const Digest& run) {
  if (snap.format() == Format::k3) {
    if (auto line = level_line(snap, run)) return LevelEntryValue{line->level, line->evidence};
    return std::nullopt;
  }
  std::optional<Level> level = recorded_level(snap, run);
  if (!level) return std::nullopt;
  auto bytes = snap.read(level_path(snap.format(), *level, run));
  std::optional<LevelEntryValue> entry = bytes ? parse_level_entry(*bytes) : std::nullopt;
  if (entry) entry->level = *level;
  return entry;
}

Level run_level(const Snapshot& snap, const Document& run) {
  if (snap.format() == Format::k3)
    if (auto line = level_line(snap, run.digest())) return line->level;
  for (Level l : {Level::kReproduced, Level::kDisputed})
    if (snap.exists(level_path(snap.format(), l, run.digest()))) return l;
  return default_level(run.spec());
}

namespace {

// The standing when no history needs reading, or nullopt when it does.
std::optional<LevelStanding> without_history(const Snapshot& snap, const Document& run, Level stored,
                                             std::optional<bool> has_reruns) {
  const Level fallback = default_level(run.spec());
  if (stored != fallback) return std::nullopt;
  if (!has_reruns) has_reruns = !reruns_of(snap, run.digest()).empty();
  if (*has_reruns) return std::nullopt;
  LevelStanding out;
  out.level = out.stored = stored;
  return out;
}

LevelStanding with_history(const Snapshot& snap, LevelAudit& audit, const Document& run, Level stored) {
  const Level fallback = default_level(run.spec());
  LevelStanding out;
  out.stored = stored;
  out.checked = true;
  // What the tree records: a default level has no entry in format 3 and an
  // empty one before; judge compares whole entries.
  std::optional<LevelEntryValue> entry;
  if (stored == fallback) {
    entry = LevelEntryValue{fallback, std::nullopt};
  } else if (snap.format() == Format::k3) {
    if (auto line = level_line(snap, run.digest())) entry = LevelEntryValue{line->level, line->evidence};
  } else if (auto bytes = snap.read(level_path(snap.format(), stored, run.digest()))) {
    if ((entry = parse_level_entry(*bytes))) entry->level = stored;
  }
  LevelJudgement j = audit.judge(snap.commit(), run.digest(), fallback, entry);
  out.level = j.decision.entry.level;
  out.justified = j.agrees;
  if (!j.agrees) out.why = j.why;
  return out;
}

}  // namespace

LevelStanding level_standing(const Snapshot& snap, LevelAudit& audit, const Document& run,
                             std::optional<bool> has_reruns) {
  const Level stored = run_level(snap, run);
  if (snap.empty()) return LevelStanding{stored, stored, false, true, {}};
  if (auto quick = without_history(snap, run, stored, has_reruns)) return *quick;
  return with_history(snap, audit, run, stored);
}

AuditOnDemand::AuditOnDemand(const Store& store, std::vector<AllowedSigner> trust)
    : store_(store), trust_(std::move(trust)) {}
AuditOnDemand::~AuditOnDemand() = default;

LevelAudit& AuditOnDemand::operator*() {
  if (!audit_) audit_ = std::make_unique<LevelAudit>(store_, std::move(trust_));
  return *audit_;
}

LevelStanding level_standing(const Snapshot& snap, AuditOnDemand& audit, const Document& run,
                             std::optional<bool> has_reruns) {
  const Level stored = run_level(snap, run);
  if (snap.empty()) return LevelStanding{stored, stored, false, true, {}};
  if (auto quick = without_history(snap, run, stored, has_reruns)) return *quick;
  return with_history(snap, *audit, run, stored);
}

std::vector<GroupMember> group_members(const Snapshot& snap, const Digest& key, bool levels) {
  std::vector<GroupMember> out;
  if (snap.format() == Format::k3) {
    for (IndexFact& f : facts_with_prefix(snap, Family::kGroups, key.hex())) {
      auto& line = std::get<GroupFact>(f);
      GroupMember m{line.run, std::move(line.primary), Level::kReported, ""};
      // The run's status decides whether it may rank at all; its document is
      // read once for that and for its default level.
      // (Without levels, as before, a run whose document cannot be read is
      // still listed: its status stays unread.)
      std::optional<Document> doc;
      try {
        doc.emplace(snap.document(m.run, false));
      } catch (const Error&) {
        if (levels) throw;
      }
      if (doc)
        if (const Json* status = doc->spec().find("status"); status && status->is_string()) m.status = status->as_string();
      if (levels) {
        auto line = level_line(snap, m.run);
        m.level = line ? line->level : default_level(doc->spec());
      }
      out.push_back(std::move(m));
    }
    return out;
  }
  for (const std::string& name : snap.list(group_dir(snap.format(), key))) {
    auto run = Digest::parse_hex(name);
    if (!run) continue;
    GroupMember m{*run, std::nullopt, Level::kReported, ""};
    const std::string path = group_path(snap.format(), key, *run);
    if (auto bytes = snap.read(path)) {
      try {
        m.primary = Measurement::from_json(parse_json(*bytes, path));
      } catch (const Error&) {
      }
    }
    if (levels) m.level = recorded_level(snap, *run).value_or(Level::kReported);
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<Digest> attestations_of(const Snapshot& snap, const Digest& run) {
  std::vector<Digest> out;
  if (snap.format() == Format::k3) {
    for (const IndexFact& f : facts_with_prefix(snap, Family::kAttestations, run.hex()))
      out.push_back(std::get<AttestationFact>(f).attestation);
    return out;
  }
  for (const std::string& name : snap.list(attestations_dir(snap.format(), run)))
    if (auto d = Digest::parse_hex(name)) out.push_back(*d);
  return out;
}

std::vector<RerunInfo> reruns_of(const Snapshot& snap, const Digest& run) {
  std::vector<RerunInfo> out;
  if (snap.format() == Format::k1) return out;
  if (snap.format() == Format::k3) {
    for (const IndexFact& f : facts_with_prefix(snap, Family::kReruns, run.hex())) {
      const auto& line = std::get<RerunFact>(f);
      out.push_back(RerunInfo{line.rerun, line.verdict, line.ratio, true});
    }
    return out;
  }
  for (const std::string& name : snap.list(reruns_dir(run))) {
    auto d = Digest::parse_hex(name);
    if (!d) continue;
    RerunInfo info{*d, Level::kDisputed, 0, false};
    const std::string path = rerun_path(run, *d);
    try {
      if (auto bytes = snap.read(path)) {
        Json entry = parse_json(*bytes, path);
        const Json *level = entry.find("level"), *ratio = entry.find("ratio");
        auto parsed = level && level->is_string() ? parse_level(level->as_string()) : std::nullopt;
        if (parsed && ratio && ratio->is_number()) info = RerunInfo{*d, *parsed, ratio->as_number(), true};
      }
    } catch (const Error&) {
    }
    out.push_back(info);
  }
  return out;
}

std::vector<Digest> group_keys(const Snapshot& snap) { return digests_below(snap, kGroupsDir); }

GroupRef resolve_group_ref(const Snapshot& snap, std::string_view ref) {
  std::optional<std::string> hex = parse_hex_ref(ref);
  if (!hex)
    throw InvalidInput("REF \"" + std::string(ref) +
                       "\": expected a run or group digest, or a prefix of at least 8 hex digits (as kistore ls "
                       "or groups print them)");
  std::vector<Digest> keys = digests_below(snap, kGroupsDir, *hex);
  if (keys.size() == 1) return GroupRef{keys.front(), std::nullopt};
  if (keys.size() > 1) {
    constexpr std::size_t kNamed = 5;  // one line: a message is printed on one
    std::string names;
    for (std::size_t i = 0; i < keys.size() && i < kNamed; ++i) names += (i ? ", " : "") + keys[i].str();
    if (keys.size() > kNamed) names += ", …";
    throw InvalidInput("REF \"" + std::string(ref) + "\" is ambiguous: it matches " + std::to_string(keys.size()) +
                       " groups (" + names + "); give more of the key's hex digits");
  }
  Digest run = snap.resolve(ref);
  Document doc = snap.document(run, false);
  if (doc.kind() != Kind::kRun)
    throw InvalidInput("REF \"" + std::string(ref) + "\": expected a run or a group, found a " +
                       std::string(kind_name(doc.kind())));
  return GroupRef{comparison_key(doc.spec()), run};
}

std::vector<Digest> runs_at_level(const Snapshot& snap, Level level) {
  if (snap.format() != Format::k3 || level == Level::kDisputed || level == Level::kReproduced)
    return digests_below(snap, level_dir(level));
  // Format 3 writes no line for a default level: every run of the index (a
  // member of a group, or a controlled rerun beside its run) without a level
  // line, whose document gives that level, in digest order.
  std::vector<Digest> runs;
  for (const IndexFact& f : facts_with_prefix(snap, Family::kGroups, "")) runs.push_back(std::get<GroupFact>(f).run);
  for (const IndexFact& f : facts_with_prefix(snap, Family::kReruns, "")) runs.push_back(std::get<RerunFact>(f).rerun);
  std::sort(runs.begin(), runs.end());
  runs.erase(std::unique(runs.begin(), runs.end()), runs.end());
  std::vector<Digest> out;
  for (const Digest& run : runs)
    if (line_or_default(snap, run, level_line(snap, run)) == level) out.push_back(run);
  return out;
}

std::vector<std::string> run_story_paths(const Digest& run) {
  // Patterns, not paths: "*" stands for any level. Both formats' names, so
  // that the story reads across an upgrade.
  return {object_path(run),
          "refs/levels/*/" + run.hex(),
          "refs/levels/*/" + fanout(run),
          attestations_dir(Format::k1, run) + "/",
          attestations_dir(Format::k2, run) + "/",
          reruns_dir(run) + "/"};
}

std::string implementation_name(const Snapshot& snap, const Document& run, ImplementationNames* names) {
  if (auto impl = run_reference(run, "implementation")) {
    auto read = [&]() -> std::optional<std::string> {
      if (!snap.has_object(*impl)) return std::nullopt;
      try {
        Document d = snap.document(*impl, false);
        if (const Json* name = d.spec().find("name"); name && name->is_string()) return cut_text(name->as_string());
      } catch (const Error&) {
      }
      return std::nullopt;
    };
    std::optional<std::string> name;
    if (!names) name = read();
    else if (auto it = names->find(*impl); it != names->end()) name = it->second;
    else name = names->emplace(*impl, read()).first->second;
    if (name) return *name;
  }
  if (const Json* native = run.spec().find("sourceNative")) {
    if (const Json* id = native->find("externalId"); id && id->is_string()) {
      // KernelIndex ids read <kernel>/<pass>/<provider>/...: the provider is the third part.
      std::string_view s = id->as_string();
      std::size_t a = s.find('/'), b = a == s.npos ? a : s.find('/', a + 1);
      if (b != s.npos) return cut_text(s.substr(b + 1, s.find('/', b + 1) - b - 1));
    }
  }
  std::optional<Json> meta = run.metadata() ? run.metadata() : snap.metadata(run.digest());
  if (meta)
    if (const Json* name = meta->find("name"); name && name->is_string()) return cut_text(name->as_string());
  return "?";
}

}  // namespace kistore
