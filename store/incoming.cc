#include "store/incoming.h"

#include "refs/layout.h"
#include "store/git.h"

namespace kistore {
namespace {

using Delta = git::TreeDelta;

std::string short_id(const std::string& id) { return id.substr(0, 12); }

// Two digests as "<64 hex>/<64 hex>" (the rest of a refs/groups/ or
// refs/attestations/ path).
std::optional<std::pair<Digest, Digest>> digest_pair(std::string_view rest) {
  std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto a = Digest::parse_hex(rest.substr(0, slash)), b = Digest::parse_hex(rest.substr(slash + 1));
  if (!a || !b) return std::nullopt;
  return std::make_pair(*a, *b);
}

// {"evidence": digest or null} in RFC 8785 form.
bool valid_level_bytes(const std::string& bytes) {
  try {
    Json j = parse_json(bytes, "level");
    if (!j.is_object() || j.as_object().size() != 1 || canonical(j) != bytes) return false;
    const Json* e = j.find("evidence");
    return e && (e->is_null() || (e->is_string() && Digest::parse(e->as_string())));
  } catch (const Error&) {
    return false;
  }
}

constexpr char kOutsideLayout[] =
    "adds a path outside the store layout (objects/sha256/…, refs/{metadata,groups,levels,attestations,sources}/…)";
constexpr char kObjectRemoved[] = "removes an object its parent has; objects are never removed";

}  // namespace

IncomingChecker::IncomingChecker(const LayoutTrees& trees, LevelAudit& levels)
    : trees_(trees), repo_(trees.repo()), levels_(levels) {}

void IncomingChecker::check_commit(const git_oid& id) {
  git_commit* raw = nullptr;
  git::check(git_commit_lookup(&raw, repo_, &id), "reading commit " + git::oid_str(id));
  git::Commit commit(raw);
  commit_ = raw;
  commit_id_ = git::oid_str(id);
  tree_ = *git_commit_tree_id(raw);
  parent_.reset();
  others_.clear();
  for (unsigned i = 0; i < git_commit_parentcount(raw); ++i) {
    git_oid pt = git::commit_tree(repo_, *git_commit_parent_id(raw, i));
    if (i == 0) parent_ = pt;
    else others_.push_back(pt);
  }

  std::vector<Delta> deltas = trees_.diff(parent(), &tree_);
  for (std::size_t i = 0; i < deltas.size(); ++i) {
    if (full()) return;
    check_delta(deltas[i]);
    if (progress && (i % 256 == 255 || i + 1 == deltas.size())) progress(i + 1, deltas.size());
  }
  // A merge must keep every object of every parent, not only the first's.
  for (const git_oid& other : others_)
    for (const Delta& d : trees_.diff(&other, &tree_, "objects"))
      if (d.status == Delta::kRemoved) problem(ProblemKind::kHistoryRewritten, d.path, kObjectRemoved);
  check_levels(raw);
}

namespace {

// The merge bases of `parents` (none: unrelated histories).
std::vector<std::string> merge_bases(git_repository* repo, const std::vector<git_oid>& parents) {
  git_oidarray bases{};
  int rc = git_merge_bases_many(&bases, repo, parents.size(), parents.data());
  std::vector<std::string> out;
  if (rc == 0)
    for (std::size_t i = 0; i < bases.count; ++i) out.push_back(git::oid_str(bases.ids[i]));
  git_oidarray_dispose(&bases);
  if (rc < 0 && rc != GIT_ENOTFOUND) git::check(rc, "finding the merge base of a merge");
  git_error_clear();
  return out;
}

}  // namespace

// Every run whose level entry the commit changes against any parent, and at
// a merge every run that a valid rerun commit on either side since the merge
// base is about, must have exactly the entry the signed history gives here.
void IncomingChecker::check_levels(git_commit* commit) {
  std::vector<git_oid> parent_ids;
  std::vector<std::string> parents;
  for (unsigned i = 0; i < git_commit_parentcount(commit); ++i) {
    parent_ids.push_back(*git_commit_parent_id(commit, i));
    parents.push_back(git::oid_str(parent_ids.back()));
  }
  std::set<Digest> runs;
  if (parents.empty()) runs = levels_.level_changes(std::nullopt, commit_id_);
  for (const std::string& p : parents) runs.merge(levels_.level_changes(p, commit_id_));
  if (parents.size() > 1) runs.merge(levels_.runs_rerun_since(parents, merge_bases(repo_, parent_ids)));
  for (const Digest& run : runs) {
    if (full()) return;
    const ObjectFacts* f = object_in_tree(run);
    if (!f || !f->valid() || f->kind != Kind::kRun) continue;  // an entry naming no run is reported where it is
    std::optional<LevelEntryValue> recorded = levels_.entry_at(commit_id_, run);
    LevelJudgement j = levels_.judge(commit_id_, run, f->default_level, recorded);
    if (j.agrees) continue;
    std::string what = "run " + run.str();
    if (int n = trees_.level_count(&tree_, run); n != 1) what += " has " + std::to_string(n) + " levels";
    problem(ProblemKind::kLevelUnjustified, level_path(recorded ? recorded->level : j.decision.entry.level, run),
            what + ": " + j.detail);
  }
}

void IncomingChecker::problem(ProblemKind kind, std::string path, const std::string& detail) {
  if (full()) return;
  problems_.push_back({kind, std::move(path), "commit " + short_id(commit_id_) + ": " + detail});
}

// Whether a merge took this change from one of its other parents (whose
// side is checked on its own, or is already part of this store).
bool IncomingChecker::inherited(const Delta& d) const {
  for (const git_oid& other : others_) {
    auto id = trees_.entry(&other, d.path);
    if (d.status == Delta::kRemoved ? !id : id && git_oid_equal(&*id, &d.new_id)) return true;
  }
  return false;
}

void IncomingChecker::check_delta(const Delta& d) {
  bool removed = d.status == Delta::kRemoved;
  if (!removed && git::mode_is_link(d.new_mode))
    return problem(ProblemKind::kLayout, d.path, "adds an entry that is not a file (a submodule link)");
  if (d.path.starts_with("objects/")) {
    if (removed) return problem(ProblemKind::kHistoryRewritten, d.path, kObjectRemoved);
    if (inherited(d)) return;
    if (d.status == Delta::kModified)
      return problem(ProblemKind::kHistoryRewritten, d.path, "changes an object its parent has; objects are immutable");
    return check_new_object(d);
  }
  if (d.path.starts_with("refs/")) {
    if (removed) {
      // Only a level moves (the run keeps exactly one); every other entry stays.
      if (d.path.starts_with("refs/levels/")) return check_level_removal(d);
      return problem(ProblemKind::kIndexRemoved, d.path, "removes an index entry; entries are only added");
    }
    if (inherited(d)) return;
    return check_entry(d);
  }
  if (!removed) problem(ProblemKind::kLayout, d.path, kOutsideLayout);
}

// What the blob `blob` at `path` implies, read once per blob and path: the
// same bytes at another object path are another object.
const ObjectFacts& IncomingChecker::facts_of(const git_oid& blob, const std::string& path) {
  std::string key(reinterpret_cast<const char*>(blob.id), GIT_OID_RAWSZ);
  key += path;
  auto it = facts_.find(key);
  if (it != facts_.end()) return it->second;
  return facts_.emplace(key, object_facts(path, git::blob_bytes(repo_, blob), ObjectCheck::kDeep)).first->second;
}

// Facts of the object `d` as the commit's tree has it; null when absent.
const ObjectFacts* IncomingChecker::object_in_tree(const Digest& d) {
  std::string path = object_path(d);
  auto id = trees_.entry(&tree_, path);
  if (!id) return nullptr;
  return &facts_of(*id, path);
}

void IncomingChecker::expect_entry(const std::string& path, const std::string& bytes, const std::string& what,
                                   ProblemKind missing, ProblemKind mismatch) {
  auto found = trees_.read(&tree_, path);
  if (!found) problem(missing, path, "adds " + what + " without this index entry");
  else if (*found != bytes) problem(mismatch, path, "expected " + bytes + " for " + what + ", found " + *found);
}

void IncomingChecker::check_new_object(const Delta& d) {
  const ObjectFacts& f = facts_of(d.new_id, d.path);
  if (f.digest) ++new_objects_;
  if (!f.valid()) return problem(f.problem->kind, f.problem->path, f.problem->detail);
  const Digest& digest = *f.digest;
  if (f.kind == Kind::kRun) {
    std::string what = "run " + digest.str();
    expect_entry(f.group_path, f.group_bytes, what, ProblemKind::kMissingGroup, ProblemKind::kGroupMismatch);
    // The first claim of a source id stays (add, verify): another run's
    // entry there, or an id that blocks this one, is no problem.
    if (f.source_path && !trees_.entry(&tree_, *f.source_path) && !trees_.source_blocked(&tree_, *f.source_path))
      problem(ProblemKind::kMissingSource, *f.source_path, "adds " + what + " without this index entry");
    int levels = trees_.level_count(&tree_, digest);
    if (levels == 0)
      problem(ProblemKind::kMissingLevel, level_path(f.default_level, digest), "adds " + what + " without a level");
    else if (levels > 1)
      problem(ProblemKind::kLevelMismatch, "refs/levels", what + " has " + std::to_string(levels) + " levels");
  } else if (f.kind == Kind::kAttestation && f.subject) {
    expect_entry(attestation_path(*f.subject, digest), f.attestation_bytes, "attestation " + digest.str(),
                 ProblemKind::kMissingAttestation, ProblemKind::kAttestationMismatch);
    if (!trees_.entry(&tree_, object_path(*f.subject)))
      problem(ProblemKind::kDanglingRef, d.path, "attests run " + f.subject->str() + ", which is not in the store");
  }
}

// The run at `run`, or a problem about `path` (`mismatch` when it names
// something else than a run) and null.
const ObjectFacts* IncomingChecker::run_for(const Digest& run, const std::string& path, ProblemKind mismatch) {
  const ObjectFacts* f = object_in_tree(run);
  if (!f) problem(ProblemKind::kDanglingRef, path, "names run " + run.str() + ", which is not in the store");
  else if (!f->valid()) return nullptr;  // reported where the object came in
  else if (f->kind != Kind::kRun) problem(mismatch, path, "names " + run.str() + ", which is not a run");
  else return f;
  return nullptr;
}

// A new or changed entry below refs/.
void IncomingChecker::check_entry(const Delta& d) {
  const std::string& path = d.path;
  std::string_view rest = path;
  auto take = [&](std::string_view prefix) {
    if (!rest.starts_with(prefix)) return false;
    rest.remove_prefix(prefix.size());
    return true;
  };
  std::string bytes = git::blob_bytes(repo_, d.new_id);
  if (take("refs/metadata/")) return check_metadata_entry(path, rest, bytes);
  if (take("refs/sources/")) return check_source_entry(path, bytes);
  if (take("refs/levels/")) return check_level_entry(path, rest, bytes);
  bool group = take("refs/groups/");
  if (group || take("refs/attestations/")) {
    auto pair = digest_pair(rest);
    if (!pair) return problem(ProblemKind::kLayout, path, "expected " + path.substr(0, path.find('/', 5)) + "/<64 hex>/<64 hex>");
    if (group) return check_group_entry(path, pair->second, bytes);
    return check_attestation_entry(path, pair->first, pair->second, bytes);
  }
  problem(ProblemKind::kLayout, path, "adds a path outside the store layout (refs/{metadata,groups,levels,attestations,sources}/…)");
}

void IncomingChecker::check_metadata_entry(const std::string& path, std::string_view name, const std::string& bytes) {
  auto digest = Digest::parse_hex(name);
  if (!digest) return problem(ProblemKind::kLayout, path, "expected refs/metadata/<64 hex>");
  if (!trees_.entry(&tree_, object_path(*digest)))
    return problem(ProblemKind::kDanglingRef, path, "metadata for " + digest->str() + ", which is not in the store");
  if (auto p = metadata_problem(path, bytes)) problem(p->kind, p->path, p->detail);
}

void IncomingChecker::check_group_entry(const std::string& path, const Digest& run_digest, const std::string& bytes) {
  const ObjectFacts* run = run_for(run_digest, path, ProblemKind::kGroupMismatch);
  if (!run) return;
  if (run->group_path != path)
    return problem(ProblemKind::kGroupMismatch, path, "the run's comparison key puts it at " + run->group_path);
  if (run->group_bytes != bytes)
    problem(ProblemKind::kGroupMismatch, path, "expected the run's primary measurement " + run->group_bytes + ", found " + bytes);
}

void IncomingChecker::check_attestation_entry(const std::string& path, const Digest& run, const Digest& attestation,
                                              const std::string& bytes) {
  const ObjectFacts* att = object_in_tree(attestation);
  if (!att)
    return problem(ProblemKind::kDanglingRef, path, "names attestation " + attestation.str() + ", which is not in the store");
  if (!att->valid()) return;
  if (att->kind != Kind::kAttestation || !att->subject || *att->subject != run)
    return problem(ProblemKind::kAttestationMismatch, path,
                   "names " + attestation.str() + ", which is not an attestation of " + run.str());
  if (att->attestation_bytes != bytes)
    problem(ProblemKind::kAttestationMismatch, path, "expected " + att->attestation_bytes + ", found " + bytes);
}

void IncomingChecker::check_source_entry(const std::string& path, const std::string& bytes) {
  auto run_digest = Digest::parse(bytes);
  if (!run_digest) return problem(ProblemKind::kSourceMismatch, path, "expected a run digest, found " + bytes.substr(0, 80));
  const ObjectFacts* run = run_for(*run_digest, path, ProblemKind::kSourceMismatch);
  if (!run) return;
  if (!run->source_path || *run->source_path != path)
    problem(ProblemKind::kSourceMismatch, path, "the run " + run_digest->str() + " does not have this source id");
}

// refs/levels/<level>/<run> (`rest` is what follows refs/levels/).
void IncomingChecker::check_level_entry(const std::string& path, std::string_view rest, const std::string& bytes) {
  std::size_t slash = rest.find('/');
  auto level = parse_level(rest.substr(0, slash));
  auto run_digest = slash == std::string_view::npos ? std::nullopt : Digest::parse_hex(rest.substr(slash + 1));
  if (!level || !run_digest)
    return problem(ProblemKind::kLayout, path, "expected refs/levels/<" + std::string(level_names()) + ">/<64 hex>");
  const ObjectFacts* run = run_for(*run_digest, path, ProblemKind::kLevelMismatch);
  if (!run) return;
  int levels = trees_.level_count(&tree_, *run_digest);
  if (levels != 1)
    problem(ProblemKind::kLevelMismatch, path, "run " + run_digest->str() + " has " + std::to_string(levels) + " levels");
  if (!valid_level_bytes(bytes))
    problem(ProblemKind::kLevelMismatch, path, "expected {\"evidence\":<digest or null>}, found " + bytes.substr(0, 80));
  else if (*level == run->default_level && bytes != level_entry(std::nullopt))
    problem(ProblemKind::kLevelMismatch, path, "expected {\"evidence\":null} for a default level, found " + bytes);
  // Whether the level is the one the history gives: check_levels.
}

void IncomingChecker::check_level_removal(const Delta& d) {
  std::string_view rest = std::string_view(d.path).substr(std::string_view("refs/levels/").size());
  std::size_t slash = rest.find('/');
  auto run_digest = slash == std::string_view::npos ? std::nullopt : Digest::parse_hex(rest.substr(slash + 1));
  if (!run_digest) return;  // a path outside the layout leaving is no harm
  if (trees_.level_count(&tree_, *run_digest) == 0)
    problem(ProblemKind::kIndexRemoved, d.path, "removes the only level of run " + run_digest->str());
}

}  // namespace kistore
