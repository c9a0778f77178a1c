#include "store/history/level_audit.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "objects/blob.h"
#include "objects/error.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "refs/index_lines.h"
#include "store/core/dictionaries.h"
#include "store/core/index_diff.h"
#include "store/core/layout_trees.h"
#include "store/git/commit_graph.h"
#include "store/git/raw_tree.h"

namespace kistore {

std::optional<LevelEntryValue> parse_level_entry(std::string_view bytes) {
  try {
    Json j = parse_json(bytes, "level entry");
    if (!j.is_object() || j.as_object().size() != 1) return std::nullopt;
    const Json* e = j.find("evidence");
    if (!e) return std::nullopt;
    LevelEntryValue v;
    if (e->is_string()) {
      v.evidence = Digest::parse(e->as_string());
      if (!v.evidence) return std::nullopt;
    } else if (!e->is_null()) {
      return std::nullopt;
    }
    if (level_entry(v.evidence) != bytes) return std::nullopt;
    return v;  // the caller sets the level from the entry's folder
  } catch (const Error&) {
    return std::nullopt;
  }
}

namespace {

constexpr Level kAllLevels[] = {Level::kDisputed, Level::kReported, Level::kSourceNative, Level::kReproduced};
// No level entry is longer than {"evidence":"sha256:<64 hex>"}; no object frame
// longer than a document's limit and the frame's overhead.
constexpr std::size_t kMaxLevelEntryBytes = 256;
constexpr std::size_t kMaxFrameBytes = (16u << 20) + 4096;

std::string short_id(const std::string& id) { return id.substr(0, 12); }

// A level entry's path in either format: the audit reads histories that an
// upgrade crosses (verify and pull check that each tree holds its own format).
std::optional<LevelEntryPath> parse_level_path_any(std::string_view path) {
  if (auto p = parse_level_path(Format::k2, path)) return p;
  return parse_level_path(Format::k1, path);
}

// The runs whose value differs between two maps by run (one side lacking it included).
template <typename Map>
std::set<Digest> runs_that_differ(const Map& before, const Map& after) {
  std::set<Digest> out;
  for (const auto& [run, value] : before)
    if (auto it = after.find(run); it == after.end() || it->second != value) out.insert(run);
  for (const auto& [run, value] : after)
    if (!before.count(run)) out.insert(run);
  return out;
}

std::string oid_key(const git_oid& id) { return std::string(reinterpret_cast<const char*>(id.id), GIT_OID_RAWSZ); }

std::string describe(const std::optional<LevelEntryValue>& v) {
  if (!v) return "no single level entry";
  return std::string(level_name(v->level)) + " " + level_entry(v->evidence);
}

}  // namespace

struct LevelAudit::State {
  std::unique_ptr<git::CommitGraph> owned;  // when the audit opened the door itself
  git::CommitGraph& commits;
  std::vector<AllowedSigner> trust;
  std::unique_ptr<git::TreeReader> trees;  // raw trees, checked against their ids, kept
  std::unique_ptr<LayoutTrees> layout;     // format 3's index files (refs/layout.h), made when first read
  // Tips whose history was walked; for a tip walked with nothing hidden, the
  // rerun commits reachable from it (so reachability needs no graph query).
  std::vector<CommitId> walked;
  std::unordered_set<CommitId> known;  // every commit walked: its ancestors are known too
  std::unordered_map<std::string, std::unordered_set<std::string>> complete;
  // Rerun commits, every one before its ancestors (newest first), their audits,
  // and the valid ones by the run they are valid for.
  std::vector<std::string> order;
  std::unordered_map<std::string, RerunCommitAudit> audits;
  std::map<Digest, std::vector<RerunCommit>> valid_by_run;
  std::map<std::pair<std::string, std::string>, bool> ancestry;
  std::unordered_map<git_oid, Format, git::OidHash, git::OidEq> formats;  // by tree id
  // For each commit asked about (and its ancestors), the valid rerun commits
  // reachable from it (hex ids, sorted).
  std::unordered_map<CommitId, std::shared_ptr<const std::vector<std::string>>> rerun_sets;

  State(std::unique_ptr<git::CommitGraph> own, git::CommitGraph& c, std::vector<AllowedSigner> t)
      : owned(std::move(own)), commits(c), trust(std::move(t)), trees(c.trees({nullptr, true, true})) {}

  git_oid commit_tree(const CommitId& commit) { return commits.read(commit).tree; }
  // The rerun bookkeeping below names commits by hex, as refs/'s rules do.
  static std::vector<std::string> hex(const std::vector<CommitId>& ids) {
    std::vector<std::string> out;
    out.reserve(ids.size());
    for (const CommitId& id : ids) out.push_back(id.hex());
    return out;
  }

  void learn(const std::string& tip);
  RerunCommitAudit audit(const std::string& id);
  bool is_ancestor(const std::string& ancestor, const std::string& descendant);
  bool reachable(const std::string& commit, const std::string& tip);
  std::shared_ptr<const std::vector<std::string>> reruns_below(const CommitId& start);
  std::optional<Document> run_document(const git_oid& tree, const Digest& d);
  std::optional<LevelEntryValue> single_entry(const git_oid& tree, const Digest& run);
  Format format_at(const git_oid& tree);
  LayoutTrees& index();
  // Format 3: the run's level line below the tree, read as an entry.
  std::optional<LevelEntryValue> level_line(const git_oid& tree, const Digest& run);
  // Format 3: the runs whose level line differs between the trees; with
  // theirs_only, those `from` has a line for.
  std::set<Digest> line_changes(const git_oid* from, const git_oid& to, bool theirs_only);
  // Every run's level that is not its default, whatever the tree's format:
  // what two trees of different formats are compared by.
  std::map<Digest, LevelEntryValue> non_default_levels(const git_oid& tree);
  std::map<Digest, std::vector<std::pair<Level, std::string>>> level_map(const git_oid& tree);
  std::vector<AddedRerun> added_reruns(const git_oid& tree, const std::map<Digest, std::optional<LevelEntryValue>>& changes,
                                       const std::set<Digest>& added_objects);
  std::string short_reason(const RerunCommitAudit& a, const Digest& run) const;
  std::string reason(const RerunCommitAudit& a, const Digest& run) const;
};

LevelAudit::LevelAudit(git::CommitGraph& commits, std::vector<AllowedSigner> trust)
    : state_(std::make_unique<State>(nullptr, commits, std::move(trust))) {}
LevelAudit::LevelAudit(git_repository* repo, std::vector<AllowedSigner> trust) {
  std::unique_ptr<git::CommitGraph> commits = git::repository_commits(repo);
  git::CommitGraph& door = *commits;
  state_ = std::make_unique<State>(std::move(commits), door, std::move(trust));
}
LevelAudit::LevelAudit(const Store& store, std::vector<AllowedSigner> trust) : LevelAudit(store.repo(), std::move(trust)) {}
LevelAudit::~LevelAudit() = default;

void LevelAudit::State::learn(const std::string& tip) {
  const CommitId tip_id = git::parse_commit_id(tip);
  if (known.count(tip_id)) return;
  const bool whole = walked.empty();
  std::unordered_set<std::string> found;
  std::vector<std::string> fresh;
  const std::string what = "walking history from " + tip;
  std::string stopped = commits.walk({{tip_id}, walked, git::WalkOrder::kTopological, what}, [&](const CommitId& id) {
    const git::CommitInfo c = commits.read(id);
    known.insert(id);
    if (commit_op(c.message) != "rerun") return true;
    std::string hex = id.hex();
    found.insert(hex);
    if (audits.count(hex)) return true;
    RerunCommitAudit a = audit(hex);
    if (a.valid) valid_by_run[a.valid->first].push_back(a.valid->second);
    audits.emplace(hex, std::move(a));
    fresh.push_back(hex);
    return true;
  });
  // No commit of this walk is an ancestor of one found before (it would have
  // been found then): listing them first keeps descendants before ancestors.
  order.insert(order.begin(), fresh.begin(), fresh.end());
  if (!stopped.empty()) throw Error(ErrorCode::kIO, what + ": " + stopped);
  walked.push_back(tip_id);
  if (whole) complete.emplace(tip, std::move(found));
}

std::optional<Document> LevelAudit::State::run_document(const git_oid& tree, const Digest& d) {
  const std::string path = object_path(d);
  auto blob = trees->blob_at(&tree, path);
  if (!blob) return std::nullopt;
  try {
    auto frame = commits.blob(*blob, kMaxFrameBytes);
    if (!frame) return std::nullopt;
    // A frame that names a dictionary decodes with this tree's (rare here:
    // a cache for this one document).
    DictionaryCache dictionaries([&](const std::string& p) -> std::optional<std::string> {
      auto id = trees->blob_at(&tree, p);
      if (!id) return std::nullopt;
      return commits.blob(*id, kMaxDictionaryBytes);
    });
    std::string bytes = decode_object(*frame, path, dictionaries.lookup());
    if (Digest::of(bytes) != d) return std::nullopt;
    Document doc = Document::from_canonical(bytes, std::nullopt, Location{path, ""});
    if (doc.kind() != Kind::kRun) return std::nullopt;
    return doc;
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kIO) throw;
    return std::nullopt;  // not a valid run object: no rerun, nor a run to rerun
  }
}

// The tree's format; a FORMAT this kistore does not read counts as format 2
// here (verify and pull refuse it on their own).
Format LevelAudit::State::format_at(const git_oid& tree) {
  if (auto it = formats.find(tree); it != formats.end()) return it->second;
  Format f = Format::k1;
  if (auto id = trees->blob_at(&tree, kFormatPath)) {
    auto bytes = commits.blob(*id, kFormat3Bytes.size());
    f = bytes && parse_format_bytes(*bytes) == Format::k3 ? Format::k3 : Format::k2;
  }
  return formats[tree] = f;
}

LayoutTrees& LevelAudit::State::index() {
  if (!layout) layout = std::make_unique<LayoutTrees>(commits);
  return *layout;
}

std::optional<LevelEntryValue> LevelAudit::State::level_line(const git_oid& tree, const Digest& run) {
  std::optional<std::string> line = index().index_line(&tree, Family::kLevels, run.hex());
  if (!line) return std::nullopt;
  try {
    const auto fact = std::get<LevelFact>(parse_line(Family::kLevels, *line, "refs/levels", 0));
    return LevelEntryValue{fact.level, fact.evidence};
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kIO) throw;
    return std::nullopt;  // not a level line: verify and pull say why
  }
}

std::set<Digest> LevelAudit::State::line_changes(const git_oid* from, const git_oid& to, bool theirs_only) {
  std::set<Digest> out;
  for (const FactChange& c : diff_facts(index(), from, &to, Family::kLevels))
    if (!theirs_only || c.before) out.insert(*Digest::parse_hex(c.key));
  return out;
}

std::map<Digest, LevelEntryValue> LevelAudit::State::non_default_levels(const git_oid& tree) {
  std::map<Digest, LevelEntryValue> out;
  if (format_at(tree) == Format::k3) {
    for (const FactChange& c : diff_facts(index(), nullptr, &tree, Family::kLevels)) {
      const auto fact = std::get<LevelFact>(parse_line(Family::kLevels, *c.after, "refs/levels", 0));
      out.emplace(fact.run, LevelEntryValue{fact.level, fact.evidence});
    }
    return out;
  }
  std::unordered_map<std::string, std::optional<LevelEntryValue>> by_blob;  // most entries share {"evidence":null}
  for (const auto& [run, entries] : level_map(tree)) {
    if (entries.size() != 1) continue;
    const auto& [level, blob] = entries.front();
    auto it = by_blob.find(blob);
    if (it == by_blob.end()) {
      git_oid id;
      std::memcpy(id.id, blob.data(), GIT_OID_RAWSZ);
      auto bytes = commits.blob(id, kMaxLevelEntryBytes);
      it = by_blob.emplace(blob, bytes ? parse_level_entry(*bytes) : std::nullopt).first;
    }
    if (it->second && it->second->evidence) out.emplace(run, LevelEntryValue{level, it->second->evidence});
  }
  return out;
}

// Every run's level entries below the tree: the level and the blob id of each.
std::map<Digest, std::vector<std::pair<Level, std::string>>> LevelAudit::State::level_map(const git_oid& tree) {
  std::map<Digest, std::vector<std::pair<Level, std::string>>> out;
  trees->diff(nullptr, &tree, "refs/levels", [&](const git::TreeDelta& d) {
    if (auto p = parse_level_path_any(d.path)) out[p->run].emplace_back(p->level, oid_key(d.new_id));
  });
  for (auto& [run, entries] : out) std::sort(entries.begin(), entries.end());
  return out;
}

std::optional<LevelEntryValue> LevelAudit::State::single_entry(const git_oid& tree, const Digest& run) {
  std::optional<LevelEntryValue> out;
  int found = 0;
  const Format format = format_at(tree);
  if (format == Format::k3) {
    // A run without a line is at its default level (SPEC §2), as a format-2
    // entry {"evidence":null} at that level says.
    if (auto line = level_line(tree, run)) return line;
    if (auto doc = run_document(tree, run)) return LevelEntryValue{default_level(doc->spec()), std::nullopt};
    return std::nullopt;
  }
  for (Level l : kAllLevels) {
    auto blob = trees->blob_at(&tree, level_path(format, l, run));
    if (!blob) continue;
    ++found;
    auto bytes = commits.blob(*blob, kMaxLevelEntryBytes);
    out = bytes ? parse_level_entry(*bytes) : std::nullopt;
    if (out) out->level = l;
  }
  if (found != 1) return std::nullopt;
  return out;
}

// Format 1: a rerun of R is a run object the commit adds, named as evidence
// by R's new level entry, with R's comparison key and implementation. Its
// verdict is the level that entry sets (format 1 records no other).
std::vector<AddedRerun> LevelAudit::State::added_reruns(const git_oid& tree,
                                                        const std::map<Digest, std::optional<LevelEntryValue>>& changes,
                                                        const std::set<Digest>& added_objects) {
  std::vector<AddedRerun> out;
  for (const auto& [run, entry] : changes) {
    if (!entry || !entry->evidence || *entry->evidence == run || !added_objects.count(*entry->evidence)) continue;
    auto verdict = verdict_of(entry->level);
    if (!verdict) continue;
    auto rerun = run_document(tree, *entry->evidence);
    auto original = rerun ? run_document(tree, run) : std::nullopt;
    if (!original || comparison_key(rerun->spec()) != comparison_key(original->spec())) continue;
    auto impl = run_reference(*original, "implementation");
    if (!impl || run_reference(*rerun, "implementation") != impl) continue;
    out.push_back(AddedRerun{run, *entry->evidence, *verdict, true});
  }
  return out;
}

LevelAudit::RerunCommitAudit LevelAudit::State::audit(const std::string& hex) {
  RerunCommitAudit a;
  a.commit = hex;
  const CommitId id = git::parse_commit_id(hex);
  const git::CommitInfo c = commits.read(id);
  {
    LogEntry e;
    e.id = hex;
    e.committer_time = c.committer_time;
    git::CommitSignature sig = commits.signature(id);
    e.signature = std::move(sig.signature);
    e.signed_payload = std::move(sig.payload);
    a.signature = judge_signature(e, trust);
  }
  a.facts.op = "rerun";
  a.facts.signed_by_controller = a.signature.state == SignatureStatus::kTrusted;

  const git_oid tree = c.tree;
  std::optional<git_oid> parent;
  if (!c.parents.empty()) parent = commits.read(c.parents[0]).tree;
  const git_oid* before = parent ? &*parent : nullptr;
  std::set<Digest> touched, added;
  const Format format = format_at(tree);
  if (format == Format::k3 || (before && format_at(*before) == Format::k3)) {
    // A commit that changes the format is no rerun commit: it changes no
    // level here (check_rerun_commit then refuses it).
    if (!before || format_at(*before) == format) {
      try {
        touched = line_changes(before, tree, false);
      } catch (const Error& e) {
        // Levels files that do not read as lines (verify and pull say why):
        // such a commit changes no level, so it is no valid rerun commit.
        if (e.code() == ErrorCode::kIO) throw;
        return a;
      }
    }
  } else {
    trees->diff(before, &tree, "refs/levels", [&](const git::TreeDelta& d) {
      if (auto p = parse_level_path_any(d.path)) touched.insert(p->run);
    });
  }
  trees->diff(
      before, &tree, "objects",
      [&](const git::TreeDelta& d) {
        if (auto digest = parse_object_path(d.path); digest && d.status == git::TreeDelta::kAdded) added.insert(*digest);
      },
      git::DiffSides::kAddedOrChanged);
  for (const Digest& run : touched) {
    std::optional<LevelEntryValue> entry = single_entry(tree, run);
    // A run this commit adds enters at its default level: that is no level change.
    if (added.count(run) && entry && !entry->evidence)
      if (auto doc = run_document(tree, run); doc && entry->level == default_level(doc->spec())) continue;
    a.facts.level_changes[run] = entry;
  }
  a.facts.reruns_added = added_reruns(tree, a.facts.level_changes, added);
  for (const auto& change : a.facts.level_changes) a.checks[change.first] = check_rerun_commit(hex, change.first, a.facts);
  if (a.facts.level_changes.size() == 1) {
    const auto& [run, check] = *a.checks.begin();
    if (check.valid) a.valid.emplace(run, *check.valid);
  }
  return a;
}

bool LevelAudit::State::is_ancestor(const std::string& ancestor, const std::string& descendant) {
  if (ancestor == descendant) return false;
  auto key = std::make_pair(ancestor, descendant);
  if (auto it = ancestry.find(key); it != ancestry.end()) return it->second;
  std::optional<bool> descends = commits.descends_from(git::parse_commit_id(descendant), git::parse_commit_id(ancestor));
  if (!descends) throw Error(ErrorCode::kIO, "comparing commits " + short_id(descendant) + " and " + short_id(ancestor));
  return ancestry[key] = *descends;
}

bool LevelAudit::State::reachable(const std::string& commit, const std::string& tip) {
  if (commit == tip) return true;
  if (auto it = complete.find(tip); it != complete.end()) return it->second.count(commit) > 0;
  return is_ancestor(commit, tip);
}

std::string LevelAudit::State::short_reason(const RerunCommitAudit& a, const Digest& run) const {
  if (!a.facts.signed_by_controller) {
    switch (a.signature.state) {
      case SignatureStatus::kUnsigned: return "unsigned rerun";
      case SignatureStatus::kUntrusted: return "signer not trusted";
      case SignatureStatus::kInvalid: return "invalid signature";
      case SignatureStatus::kTrusted: break;
    }
  }
  return a.checks.at(run).invalid;
}

std::string LevelAudit::State::reason(const RerunCommitAudit& a, const Digest& run) const {
  std::string why = a.checks.at(run).invalid;
  if (!a.facts.signed_by_controller) why += " (" + a.signature.text() + ")";
  return "rerun commit " + a.commit + " is no valid rerun commit for this run: " + why;
}

LevelDecision LevelAudit::decide(const CommitId& commit, const Digest& run, Level default_level) {
  return decide(std::vector<CommitId>{commit}, run, default_level);
}

LevelDecision LevelAudit::decide(const std::vector<CommitId>& parent_ids, const Digest& run, Level default_level) {
  State& s = *state_;
  const std::vector<std::string> parents = State::hex(parent_ids);
  for (const std::string& p : parents) s.learn(p);
  std::vector<RerunCommit> valid;
  if (auto it = s.valid_by_run.find(run); it != s.valid_by_run.end())
    for (const RerunCommit& c : it->second)
      if (std::any_of(parents.begin(), parents.end(), [&](const std::string& p) { return s.reachable(c.commit, p); }))
        valid.push_back(c);
  return decide_level(default_level, valid,
                      [&s](const std::string& a, const std::string& d) { return s.is_ancestor(a, d); });
}

LevelJudgement LevelAudit::judge(const CommitId& commit_id, const Digest& run, Level default_level,
                                 const std::optional<LevelEntryValue>& recorded) {
  State& s = *state_;
  const std::string commit = commit_id.hex();
  LevelJudgement j;
  j.decision = decide(commit_id, run, default_level);
  j.agrees = recorded && *recorded == j.decision.entry;
  if (j.agrees) return j;
  // Rerun commits in this history that touched the run's level and are no
  // valid rerun commit for it: the likely story of a wrong entry.
  std::vector<const RerunCommitAudit*> invalid;
  const RerunCommitAudit* writer = nullptr;
  for (const std::string& id : s.order) {
    const RerunCommitAudit& a = s.audits.at(id);
    auto change = a.facts.level_changes.find(run);
    if (change == a.facts.level_changes.end() || a.checks.at(run).valid || !s.reachable(id, commit)) continue;
    invalid.push_back(&a);
    if (!writer && change->second == recorded) writer = &a;
  }
  const LevelEntryValue& want = j.decision.entry;
  if (writer) j.why = s.short_reason(*writer, run);
  else if (!j.decision.deciding.empty()) j.why = "the signed history says " + std::string(level_name(want.level));
  else j.why = "no signed rerun";

  std::string basis;
  if (j.decision.deciding.empty()) {
    basis = "no valid rerun commit: default level " + std::string(level_name(want.level));
  } else {
    basis = "decided by rerun commit";
    for (std::size_t i = 0; i < j.decision.deciding.size(); ++i)
      basis += (i ? ", " : " ") + j.decision.deciding[i].commit;
  }
  j.detail = "expected " + describe(want) + " (" + basis + "), found " + describe(recorded);
  for (std::size_t i = 0; i < invalid.size() && i < 3; ++i) j.detail += "; " + s.reason(*invalid[i], run);
  return j;
}

void LevelAudit::walk(const CommitId& tip) { state_->learn(tip.hex()); }

std::set<Digest> LevelAudit::level_changes(const std::optional<CommitId>& from, const CommitId& to, bool theirs_only) {
  State& s = *state_;
  std::optional<git_oid> before;
  if (from) before = s.commit_tree(*from);
  git_oid after = s.commit_tree(to);
  std::set<Digest> out;
  if (before && s.format_at(*before) != s.format_at(after) &&
      (s.format_at(*before) == Format::k3 || s.format_at(after) == Format::k3)) {
    // Across an upgrade to format 3 the entries became lines, and default
    // levels have none: compare the levels that are not a run's default.
    return runs_that_differ(s.non_default_levels(*before), s.non_default_levels(after));
  }
  if (s.format_at(after) == Format::k3) return s.line_changes(before ? &*before : nullptr, after, theirs_only);
  if (before && s.format_at(*before) != s.format_at(after)) {
    // Across an upgrade every path moved: compare what the entries say
    // (level and bytes), not where they are.
    return runs_that_differ(s.level_map(*before), s.level_map(after));
  }
  s.trees->diff(before ? &*before : nullptr, &after, "refs/levels", [&](const git::TreeDelta& d) {
    if (auto p = parse_level_path_any(d.path)) out.insert(p->run);
  }, theirs_only ? git::DiffSides::kRemovedOrChanged : git::DiffSides::kBoth);
  return out;
}

std::optional<LevelEntryValue> LevelAudit::entry_at(const CommitId& commit, const Digest& run) {
  return state_->single_entry(state_->commit_tree(commit), run);
}

std::optional<Level> LevelAudit::default_level_at(const CommitId& commit, const Digest& run) {
  auto doc = state_->run_document(state_->commit_tree(commit), run);
  if (!doc) return std::nullopt;
  return default_level(doc->spec());
}

// The valid rerun commits reachable from `start` (itself included), sorted:
// computed once per commit from its parents' sets, parents first, with an
// explicit stack (no recursion follows the history), each set shared with a
// parent's when it adds nothing. So the questions of every merge of a pull
// cost the rerun commits, not the history below the merge.
std::shared_ptr<const std::vector<std::string>> LevelAudit::State::reruns_below(const CommitId& start) {
  if (auto it = rerun_sets.find(start); it != rerun_sets.end()) return it->second;
  static const auto kNone = std::make_shared<const std::vector<std::string>>();
  std::vector<CommitId> stack{start};
  while (!stack.empty()) {
    const CommitId id = stack.back();
    if (rerun_sets.count(id)) {
      stack.pop_back();
      continue;
    }
    const std::vector<CommitId> parents = commits.read(id).parents;
    bool ready = true;
    for (const CommitId& p : parents)
      if (!rerun_sets.count(p)) {
        stack.push_back(p);
        ready = false;
      }
    if (!ready) continue;
    std::shared_ptr<const std::vector<std::string>> set = parents.empty() ? kNone : rerun_sets.at(parents[0]);
    std::vector<std::string> merged;
    bool grew = false;
    auto add = [&](const std::vector<std::string>& more) {
      if (!grew) merged = *set;
      std::vector<std::string> out;
      std::set_union(merged.begin(), merged.end(), more.begin(), more.end(), std::back_inserter(out));
      grew = grew || out.size() != merged.size();
      merged = std::move(out);
    };
    for (std::size_t i = 1; i < parents.size(); ++i) {
      const auto& theirs = rerun_sets.at(parents[i]);
      if (theirs != set && !theirs->empty()) add(*theirs);
    }
    const std::string hex = id.hex();
    if (auto a = audits.find(hex); a != audits.end() && a->second.valid) add({hex});
    if (grew) set = std::make_shared<const std::vector<std::string>>(std::move(merged));
    rerun_sets.emplace(id, std::move(set));
    stack.pop_back();
  }
  return rerun_sets.at(start);
}

std::set<Digest> LevelAudit::runs_rerun_since(const std::vector<CommitId>& tips, const std::vector<CommitId>& bases) {
  State& s = *state_;
  for (const CommitId& t : tips) s.learn(t.hex());
  for (const CommitId& b : bases) s.learn(b.hex());
  std::unordered_set<std::string> below_bases;
  for (const CommitId& b : bases)
    for (const std::string& c : *s.reruns_below(b)) below_bases.insert(c);
  std::set<Digest> out;
  for (const CommitId& t : tips)
    for (const std::string& c : *s.reruns_below(t))
      if (!below_bases.count(c)) out.insert(s.audits.at(c).valid->first);
  return out;
}

std::vector<const LevelAudit::RerunCommitAudit*> LevelAudit::rerun_commits(const CommitId& tip_id) {
  State& s = *state_;
  const std::string tip = tip_id.hex();
  s.learn(tip);
  std::vector<const RerunCommitAudit*> out;
  for (const std::string& id : s.order)
    if (s.reachable(id, tip)) out.push_back(&s.audits.at(id));
  return out;
}

}  // namespace kistore
