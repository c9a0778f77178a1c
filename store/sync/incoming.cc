#include "store/sync/incoming.h"

#include "objects/parallel.h"

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <variant>
#include "refs/layout.h"
#include "store/core/index_trees.h"
#include "store/git/git.h"
#include "store/git/objwrite.h"

namespace kistore {
namespace {

using Delta = git::TreeDelta;

std::string short_id(const std::string& id) { return id.substr(0, 12); }

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
    "adds a path outside the store layout (FORMAT, objects/sha256/…, dictionaries/<id>, "
    "refs/{metadata,groups,levels,reruns,attestations,sources}/…)";
constexpr char kObjectRemoved[] = "removes an object its parent has; objects are never removed";
constexpr char kObjectChangedInMerge[] =
    "holds a blob that none of the merge's parents has at this path; objects are immutable";

}  // namespace

IncomingChecker::IncomingChecker(const LayoutTrees& trees, LevelAudit& levels)
    : trees_(trees), commits_(trees.commits()), levels_(levels) {}

void IncomingChecker::check_commit(const git_oid& id) {
  commit_ = commits_.read(git::to_commit_id(id));
  commit_id_ = git::oid_str(id);
  tree_ = commit_->tree;
  in_tree_ = {};
  pending_lines_.clear();
  parent_.reset();
  others_.clear();
  for (std::size_t i = 0; i < commit_->parents.size(); ++i) {
    git_oid pt = commits_.read(commit_->parents[i]).tree;
    if (i == 0) parent_ = pt;
    else others_.push_back(pt);
  }

  dictionaries_ = std::make_unique<DictionaryCache>(
      [this, tree = tree_](const std::string& path) { return trees_.read(&tree, path); });
  if (!check_format()) return;
  std::vector<Delta> deltas = trees_.diff(parent(), &tree_);
  reruns_in_tree_.reset();
  prefetch_facts(deltas);
  for (std::size_t i = 0; i < deltas.size(); ++i) {
    if (full()) return;
    check_delta(deltas[i]);
    if (progress && (i % 256 == 255 || i + 1 == deltas.size())) progress(i + 1, deltas.size());
  }
  if (format_ == Format::k3 && !full()) check_lines();
  pending_lines_.clear();
  for (std::size_t i = 0; i < others_.size() && !full(); ++i) check_other_parent(i + 1, others_[i]);
  check_levels();
}

// A merge against a parent beyond the first (the first is check_delta's):
// what it takes from that parent was checked in that parent's tree, so it
// holds there only if the merge keeps what it rests on: the parent's format,
// every object (one of the parents' frames where they differ: each decodes
// to the same bytes), every dictionary as it is (the frames name them), and
// every index entry, but a level (check_levels judges it) and a source id
// that an earlier claim in the merge's tree blocks (merge.cc leaves it out).
void IncomingChecker::check_other_parent(std::size_t n, const git_oid& other) {
  const std::string which = "the merge's parent " + std::to_string(n + 1);
  if (std::optional<Format> theirs = trees_.format_of(&other); theirs && *theirs != format_)
    return problem(ProblemKind::kLayout, std::string(kFormatPath),
                   "joins " + which + ", a " + format_name(*theirs) + " tree, into a " + format_name(format_) +
                       " one; only an upgrade commit turns an older format into format 3");
  // Only what that parent holds matters (removed or changed): the merge's
  // additions are the first parent's checks, and a small parent costs little.
  constexpr git::DiffSides kTheirs = git::DiffSides::kRemovedOrChanged;
  for (const Delta& d : trees_.diff(&other, &tree_, "objects", kTheirs))
    if (d.status == Delta::kRemoved) problem(ProblemKind::kHistoryRewritten, d.path, kObjectRemoved);
    else if (d.status == Delta::kModified && d.ids_differ() && !from_a_parent(d))
      problem(ProblemKind::kHistoryRewritten, d.path, kObjectChangedInMerge);
  for (const Delta& d : trees_.diff(&other, &tree_, "dictionaries", kTheirs))
    if (d.status == Delta::kRemoved || (d.status == Delta::kModified && d.ids_differ()))
      problem(ProblemKind::kHistoryRewritten, d.path,
              (d.status == Delta::kRemoved ? "drops a dictionary " : "holds another dictionary under this ID than ") +
                  which + " has; a Dictionary_ID names one dictionary for ever, and that parent's frames need it");
  if (format_ == Format::k3) {
    // Every line that parent has stays, but a level (check_levels judges it).
    for (Family family : kFamilies) {
      if (family == Family::kLevels || full()) continue;
      try {
        for (const std::string& key : dropped_keys(trees_, &other, &tree_, family))
          problem(ProblemKind::kIndexRemoved, family_dir(family) + " @" + key,
                  "drops a line " + which + " has; lines are only added");
      } catch (const Error& e) {
        if (e.code() == ErrorCode::kIO) throw;
        problem(ProblemKind::kLayout, family_dir(family), e.what());
      }
    }
    return;
  }
  for (const Delta& d : trees_.diff(&other, &tree_, "refs", kTheirs))
    if (d.status == Delta::kRemoved && !d.path.starts_with("refs/levels/") &&
        !(d.path.starts_with("refs/sources/") && trees_.source_blocked(&tree_, d.path)))
      problem(ProblemKind::kIndexRemoved, d.path, "drops an index entry " + which + " has; entries are only added");
}

// The commit's format (refs/layout.h): one kistore reads, and its first
// parent's, except at an upgrade (Kistore-Op: upgrade, format 1 to format 2),
// which touches no object and is checked as a tree of its own: every entry of
// its index as if it were new, against the objects its parent already had.
// False when nothing more can be checked.
bool IncomingChecker::check_format() {
  std::optional<Format> mine = trees_.format_of(&tree_);
  if (!mine) {
    problem(ProblemKind::kLayout, std::string(kFormatPath),
            unknown_format_problem(trees_.read(&tree_, std::string(kFormatPath)).value_or("")));
    return false;
  }
  format_ = *mine;
  if (!parent_) return true;
  std::optional<Format> theirs = trees_.format_of(&*parent_);
  if (!theirs || *theirs == format_) return true;  // a parent's own problem is reported where it came in
  if (static_cast<int>(*theirs) > static_cast<int>(format_) || commit_op(commit_->message) != "upgrade" ||
      !others_.empty()) {
    problem(ProblemKind::kLayout, std::string(kFormatPath),
            "changes the store from " + format_name(*theirs) + " to " + format_name(format_) +
                "; only an upgrade commit (Kistore-Op: upgrade) of one parent moves a store to a later format");
    return false;
  }
  for (const Delta& d : trees_.diff(&*parent_, &tree_, "objects"))
    problem(ProblemKind::kHistoryRewritten, d.path, "an upgrade commit changes an object; an upgrade touches none");
  parent_.reset();  // every index entry below is checked as new
  reruns_in_tree_.reset();
  for (const Delta& d : trees_.diff(nullptr, &tree_))
    if (!d.path.starts_with("objects/")) check_delta(d);
  if (format_ == Format::k3 && !full()) {
    // Format 3's index is lines (check_delta leaves them to the line
    // checks): every line of the upgrade is new, checked against the
    // objects, its files the trie of its lines, and every object has its
    // lines. Later commits trust this tree's lines as their parent's.
    for (const Delta& d : trees_.diff(nullptr, &tree_, "objects"))
      if (const ObjectFacts& f = facts_of(d.new_id, d.path); f.valid() && f.digest) pending_lines_.push_back(&f);
    check_lines();
    pending_lines_.clear();
  }
  parent_ = commits_.read(commit_->parents.front()).tree;
  check_levels();
  return false;
}

// Every run whose level entry the commit changes against its first parent,
// at a merge every run whose entry another parent holds and the merge drops
// or changes, and every run that a valid rerun commit reachable from another
// parent but not from the first is about, must have exactly the entry the
// signed history gives here. That is all that can differ: the first parent's
// entries are the level function of its own history (checked when it came
// in), and a run's level changes only with the valid rerun commits of the
// history. Comparing the merge's whole tree with its other parents instead
// would cost the whole tree for each merge with a small or unrelated parent
// (thousands of such merges fit in a small pack), and a merge base the
// history below it.
void IncomingChecker::check_levels() {
  const std::vector<CommitId>& parents = commit_->parents;
  const CommitId& commit = commit_->id;
  std::set<Digest> runs;
  try {
    runs = levels_.level_changes(parents.empty() ? std::nullopt : std::optional<CommitId>(parents.front()), commit);
    for (std::size_t i = 1; i < parents.size(); ++i) runs.merge(levels_.level_changes(parents[i], commit, true));
    if (parents.size() > 1) runs.merge(levels_.runs_rerun_since(parents, {parents.front()}));
  } catch (const Error& e) {
    // Format 3: a levels file that does not read as lines (check_index_files
    // reports it too); no level can be judged in such a tree.
    if (e.code() == ErrorCode::kIO) throw;
    const std::string dir = family_dir(Family::kLevels);
    if (std::none_of(problems_.begin(), problems_.end(), [&](const Problem& p) { return p.path.starts_with(dir); }))
      problem(ProblemKind::kLayout, dir, e.what());
    return;
  }
  for (const Digest& run : runs) {
    if (full()) return;
    const ObjectFacts* f = object_in_tree(run);
    if (!f || !f->valid() || f->kind != Kind::kRun) continue;  // an entry naming no run is reported where it is
    std::optional<LevelEntryValue> recorded = levels_.entry_at(commit, run);
    LevelJudgement j = levels_.judge(commit, run, f->default_level, recorded);
    if (j.agrees) continue;
    std::string what = "run " + run.str();
    if (format_ != Format::k3)  // format 3: a line or none, one key each
      if (int n = level_count(run); n != 1) what += " has " + std::to_string(n) + " levels";
    problem(ProblemKind::kLevelUnjustified,
            format_ == Format::k3 ? family_dir(Family::kLevels) + " @" + run.hex()
                                  : level_path(format_, recorded ? recorded->level : j.decision.entry.level, run),
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
    if (d.status == Delta::kRemoved ? !id : id && git::same_id(*id, d.new_id)) return true;
  }
  return false;
}

// Whether the merge's blob at d.path (d.new_id) is one of its parents' blobs
// there (the first's or another's).
bool IncomingChecker::from_a_parent(const Delta& d) const {
  if (parent_)
    if (auto id = trees_.entry(&*parent_, d.path); id && git::same_id(*id, d.new_id)) return true;
  return inherited(d);
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
  if (d.path.starts_with("dictionaries/")) return check_dictionary(d);
  if (d.path == kFormatPath) {
    // A format change is check_format's; here the bytes are the format's own.
    if (!removed && trees_.format_of(&tree_) != Format::k2 && trees_.format_of(&tree_) != Format::k3)
      problem(ProblemKind::kLayout, d.path, "expected \"kistore 2\\n\" or \"kistore 3\\n\"");
    return;
  }
  if (format_ == Format::k3 && d.path.starts_with("refs/")) {
    // Lines, not entries: check_index_files. A path outside the families is none of them.
    const std::size_t slash = d.path.find('/', 5);
    if (!removed && (slash == std::string::npos || !parse_family(std::string_view(d.path).substr(5, slash - 5))))
      problem(ProblemKind::kLayout, d.path, kOutsideLayout);
    return;
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

// What the blob `blob` at `path` implies, read once per blob, path and
// format: the same bytes at another object path are another object.
std::string IncomingChecker::facts_key(const git_oid& blob, const std::string& path) const {
  std::string key(reinterpret_cast<const char*>(blob.id), sizeof blob.id);
  key += static_cast<char>(format_);  // what it implies (its group path) depends on the tree's format
  key += path;
  return key;
}

const ObjectFacts& IncomingChecker::facts_of(const git_oid& blob, const std::string& path) {
  std::string key = facts_key(blob, path);
  auto it = facts_.find(key);
  if (it != facts_.end()) return it->second;
  ObjectFacts facts =
      object_facts(format_, path, trees_.blob(blob), ObjectCheck::kDeep, dictionaries_->lookup());
  return facts_.emplace(key, std::move(facts)).first->second;
}

// The deep check (object_facts) of the objects a commit of one parent adds,
// on every core, before the checks that follow look their facts up: it is
// most of a big commit's cost. Only objects the store's packs hold whole are
// read here (PackReader is safe on any thread, libgit2 is not); anything
// else, and anything that throws, is left to facts_of, in order.
void IncomingChecker::prefetch_facts(const std::vector<Delta>& deltas) {
  if (!others_.empty()) return;  // a merge's objects mostly come from its other parents, checked there
  struct Job {
    const Delta* delta;
    std::string key;
  };
  std::vector<Job> jobs;
  for (const Delta& d : deltas) {
    if (d.status != Delta::kAdded || !d.path.starts_with("objects/") || git::mode_is_link(d.new_mode)) continue;
    std::string key = facts_key(d.new_id, d.path);
    if (!facts_.count(key)) jobs.push_back({&d, std::move(key)});
  }
  if (jobs.size() < kPrefetchAtLeast) return;
  std::vector<std::optional<ObjectFacts>> made(jobs.size());
  const DictionaryLookup dictionaries = dictionaries_->lookup();  // serialised by the cache
  parallel_for(jobs.size(), [&](std::size_t i) {
    try {
      std::optional<std::string> bytes = trees_.stored_blob(jobs[i].delta->new_id);
      if (bytes) made[i] = object_facts(format_, jobs[i].delta->path, *bytes, ObjectCheck::kDeep, dictionaries);
    } catch (const Error&) {
      // facts_of meets it again in order, and says so there
    }
  });
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (made[i]) facts_.emplace(std::move(jobs[i].key), std::move(*made[i]));
}

// Dictionaries are immutable, as objects are (frames name them by ID): one
// may be added, if it is a zstd dictionary of the ID its name says that zstd
// can compress with as well as decode with, and never changed or removed.
void IncomingChecker::check_dictionary(const Delta& d) {
  if (d.status == Delta::kRemoved)
    return problem(ProblemKind::kHistoryRewritten, d.path, "removes a dictionary its parent has; dictionaries are never removed");
  // Not even to another parent's: the first parent's frames need its own.
  if (d.status == Delta::kModified)
    return problem(ProblemKind::kHistoryRewritten, d.path,
                   "changes a dictionary its parent has; dictionaries are immutable");
  if (inherited(d)) return;
  std::optional<std::uint32_t> id = parse_dictionary_path(format_, d.path);
  if (!id)
    return problem(ProblemKind::kLayout, d.path,
                   format_ == Format::k1 ? "adds a dictionary to a format-1 tree, which has none"
                                         : "expected dictionaries/<Dictionary_ID, decimal, 1 to 4294967295>");
  if (dictionary_id_reserved(*id)) return problem(ProblemKind::kLayout, d.path, reserved_dictionary_id_detail(*id));
  try {
    std::shared_ptr<const Dictionary> dictionary = dictionaries_->find(*id);
    // Writers compress with the dictionary of the highest ID: one zstd
    // decodes with but cannot compress with must never come in.
    if (dictionary && !dictionary->compression_problem().empty())
      problem(ProblemKind::kObjectCorrupt, d.path,
              "expected a zstd dictionary that zstd can compress with as well as decode with (writers compress new "
              "objects with a store's dictionary), found one it cannot: " +
                  dictionary->compression_problem());
  } catch (const Error& e) {
    problem(ProblemKind::kObjectCorrupt, d.path, e.what());
  }
}

// Facts of the object `d` as the commit's tree has it; null when absent.
// Asked several times per new run (its entries, its level): looked up once
// per commit.
const ObjectFacts* IncomingChecker::object_in_tree(const Digest& d) {
  std::string key(reinterpret_cast<const char*>(d.bytes().data()), d.bytes().size());
  if (auto it = in_tree_.objects.find(key); it != in_tree_.objects.end()) return it->second;
  std::string path = object_path(d);
  auto id = trees_.entry(&tree_, path);
  const ObjectFacts* f = id ? &facts_of(*id, path) : nullptr;  // facts_ never moves its values
  in_tree_.objects.emplace(std::move(key), f);
  return f;
}

// How many level entries the run has in the commit's tree, counted once
// per commit.
int IncomingChecker::level_count(const Digest& run) {
  std::string key(reinterpret_cast<const char*>(run.bytes().data()), run.bytes().size());
  if (auto it = in_tree_.level_counts.find(key); it != in_tree_.level_counts.end()) return it->second;
  int n = trees_.level_count(&tree_, run);
  in_tree_.level_counts.emplace(std::move(key), n);
  return n;
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
  if (format_ == Format::k3) return pending_lines_.push_back(&f);  // check_pending_lines
  if (f.kind == Kind::kRun) {
    std::string what = "run " + digest.str();
    // A controlled rerun (format 2) is indexed under its run, not in a group.
    if (!reruns_in_tree().count(digest))
      expect_entry(f.group_path, f.group_bytes, what, ProblemKind::kMissingGroup, ProblemKind::kGroupMismatch);
    // The first claim of a source id stays (add, verify): another run's
    // entry there, or an id that blocks this one, is no problem.
    if (f.source_path && !trees_.entry(&tree_, *f.source_path) && !trees_.source_blocked(&tree_, *f.source_path))
      problem(ProblemKind::kMissingSource, *f.source_path, "adds " + what + " without this index entry");
    int levels = level_count(digest);
    if (levels == 0)
      problem(ProblemKind::kMissingLevel, level_path(format_, f.default_level, digest), "adds " + what + " without a level");
    else if (levels > 1)
      problem(ProblemKind::kLevelMismatch, "refs/levels", what + " has " + std::to_string(levels) + " levels");
  } else if (f.kind == Kind::kAttestation && f.subject) {
    expect_entry(attestation_path(format_, *f.subject, digest), f.attestation_bytes, "attestation " + digest.str(),
                 ProblemKind::kMissingAttestation, ProblemKind::kAttestationMismatch);
    // Its subject must be a run the tree holds, as add requires: verify
    // reports an attestation of a protocol or an environment.
    run_for(*f.subject, d.path, ProblemKind::kAttestationMismatch);
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
  std::string bytes = trees_.blob(d.new_id);
  auto outside = [&](const std::string& expected) { problem(ProblemKind::kLayout, path, "expected " + expected); };
  const std::string h = format_ == Format::k1 ? "<64 hex>" : "<2 hex>/<2 hex>/<60 hex>";
  if (path.starts_with("refs/metadata/")) {
    auto digest = parse_metadata_path(format_, path);
    if (!digest) return outside("refs/metadata/" + h);
    return check_metadata_entry(path, *digest, bytes);
  }
  if (path.starts_with("refs/sources/")) return check_source_entry(path, bytes);
  if (path.starts_with("refs/levels/")) {
    auto entry = parse_level_path(format_, path);
    if (!entry) return outside("refs/levels/<" + std::string(level_names()) + ">/" + h);
    return check_level_entry(path, entry->run, entry->level, bytes);
  }
  if (path.starts_with("refs/groups/")) {
    auto entry = parse_group_path(format_, path);
    if (!entry) return outside("refs/groups/" + h + "/<64 hex>");
    return check_group_entry(path, entry->run, bytes);
  }
  if (path.starts_with("refs/attestations/")) {
    auto entry = parse_attestation_path(format_, path);
    if (!entry) return outside("refs/attestations/" + h + "/<64 hex>");
    return check_attestation_entry(path, entry->run, entry->attestation, bytes);
  }
  if (format_ == Format::k2 && path.starts_with("refs/reruns/")) {
    auto entry = parse_rerun_path(format_, path);
    if (!entry) return outside("refs/reruns/" + h + "/<64 hex>");
    return check_rerun_entry(path, entry->run, entry->rerun, bytes);
  }
  problem(ProblemKind::kLayout, path, "adds a path outside the store layout (refs/{metadata,groups,levels,reruns,attestations,sources}/…)");
}

// Every rerun the commit's tree indexes under refs/reruns/ (format 2), read
// once per commit: reruns are few (each is a controller's signed commit).
const std::set<Digest>& IncomingChecker::reruns_in_tree() {
  if (reruns_in_tree_) return *reruns_in_tree_;
  reruns_in_tree_.emplace();
  if (format_ == Format::k3) {
    // A reruns file that does not read as lines is the commit's problem,
    // named where it is found, not an error that ends the pull.
    try {
      for (const FactChange& c : diff_facts(trees_, nullptr, &tree_, Family::kReruns))
        reruns_in_tree_->insert(std::get<RerunFact>(parse_line(Family::kReruns, *c.after, kRerunsDir, 0)).rerun);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kIO) throw;
      problem(ProblemKind::kLayout, std::string(kRerunsDir), e.what());
    }
  }
  if (format_ == Format::k2)
    for (const Delta& d : trees_.diff(nullptr, &tree_, std::string(kRerunsDir)))
      if (auto p = parse_rerun_path(format_, d.path)) reruns_in_tree_->insert(p->rerun);
  return *reruns_in_tree_;
}

// refs/reruns/<run>/<rerun>: a controlled rerun of the run (same comparison
// key and implementation), with the verdict and ratio its bytes state.
// Whether a valid rerun commit added it is the level audit's (check_levels).
void IncomingChecker::check_rerun_entry(const std::string& path, const Digest& run_digest, const Digest& rerun_digest,
                                        const std::string& bytes) {
  const ObjectFacts* run = run_for(run_digest, path, ProblemKind::kRerunMismatch);
  const ObjectFacts* rerun = run ? run_for(rerun_digest, path, ProblemKind::kRerunMismatch) : nullptr;
  if (!rerun) return;
  if (auto why = rerun_entry_problem(*run, *rerun, bytes)) problem(ProblemKind::kRerunMismatch, path, *why);
}

void IncomingChecker::check_metadata_entry(const std::string& path, const Digest& digest, const std::string& bytes) {
  if (!trees_.entry(&tree_, object_path(digest)))
    return problem(ProblemKind::kDanglingRef, path, "metadata for " + digest.str() + ", which is not in the store");
  if (auto p = metadata_problem(path, bytes)) problem(p->kind, p->path, p->detail);
}

void IncomingChecker::check_group_entry(const std::string& path, const Digest& run_digest, const std::string& bytes) {
  const ObjectFacts* run = run_for(run_digest, path, ProblemKind::kGroupMismatch);
  if (!run) return;
  if (reruns_in_tree().count(run_digest))
    return problem(ProblemKind::kGroupMismatch, path,
                   "run " + run_digest.str() + " is a controlled rerun (indexed under refs/reruns/), not a member of a group");
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
  run_for(run, path, ProblemKind::kAttestationMismatch);
}

void IncomingChecker::check_source_entry(const std::string& path, const std::string& bytes) {
  auto run_digest = Digest::parse(bytes);
  if (!run_digest) return problem(ProblemKind::kSourceMismatch, path, "expected a run digest, found " + bytes.substr(0, 80));
  const ObjectFacts* run = run_for(*run_digest, path, ProblemKind::kSourceMismatch);
  if (!run) return;
  if (!run->source_path || *run->source_path != path)
    problem(ProblemKind::kSourceMismatch, path, "the run " + run_digest->str() + " does not have this source id");
}

// refs/levels/<level>/<run>.
void IncomingChecker::check_level_entry(const std::string& path, const Digest& run_digest, Level level,
                                        const std::string& bytes) {
  const ObjectFacts* run = run_for(run_digest, path, ProblemKind::kLevelMismatch);
  if (!run) return;
  int levels = level_count(run_digest);
  if (levels != 1)
    problem(ProblemKind::kLevelMismatch, path, "run " + run_digest.str() + " has " + std::to_string(levels) + " levels");
  if (!valid_level_bytes(bytes))
    problem(ProblemKind::kLevelMismatch, path, "expected {\"evidence\":<digest or null>}, found " + bytes.substr(0, 80));
  else if (level == run->default_level && bytes != level_entry(std::nullopt))
    problem(ProblemKind::kLevelMismatch, path, "expected {\"evidence\":null} for a default level, found " + bytes);
  // Whether the level is the one the history gives: check_levels.
}

void IncomingChecker::check_level_removal(const Delta& d) {
  auto entry = parse_level_path(format_, d.path);
  if (!entry) return;  // a path outside the layout leaving is no harm
  if (level_count(entry->run) == 0)
    problem(ProblemKind::kIndexRemoved, d.path, "removes the only level of run " + entry->run.str());
}

// Format 3: each family's lines that the commit changes against its first
// parent (diff_incoming reads only the files that differ, each checked as
// lines of the family under its digits, and parses each new line once: the
// parent is the store's or was checked before), its files exactly the trie
// of its lines (check_trie_edits), and each new or changed line against the
// objects (check_line).
const IncomingChecker::FamilyChanges& IncomingChecker::changes_of(Family family) {
  auto [it, fresh] = family_changes_.try_emplace(family);
  if (fresh) {
    try {
      it->second.changes = diff_incoming(trees_, parent(), &tree_, family);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kIO) throw;
      it->second.error = e.what();
    }
  }
  return it->second;
}

// Format 3's lines of the commit: the new objects' own lines
// (check_pending_lines), then every changed line and the trie
// (check_index_files), each family's changes read once for both.
void IncomingChecker::check_lines() {
  family_changes_.clear();
  check_pending_lines();
  pending_lines_.clear();
  if (!full()) check_index_files();
  family_changes_.clear();
}

void IncomingChecker::check_index_files() {
  for (Family family : kFamilies) {
    if (full()) return;
    const FamilyChanges& read = changes_of(family);
    if (read.error) {
      problem(ProblemKind::kLayout, family_dir(family), *read.error);
      family_changes_.erase(family);
      continue;
    }
    const std::vector<CheckedFactChange>& checked = read.changes;
    check_trie_edits(family, checked);
    for (const CheckedFactChange& c : checked) {
      if (full()) return;
      check_line(family, c.change, c.after);
    }
    family_changes_.erase(family);
  }
}

// The family's tree is the trie of its lines (SPEC §2): the edits that the
// first parent's trie takes for these changes (plan_trie_update, which reads
// only the changed keys' paths) are exactly what the commit did. A file of
// the plan holds the plan's bytes, a folder it moves keeps its id, nothing
// is left where the plan removes, and nothing else below refs/<family>/
// differs: so a file past T, a folder that should be a file, a name that
// does not run through its keys' shared digits or a line in the wrong file
// is refused at the cost of what the commit changed.
void IncomingChecker::check_trie_edits(Family family, const std::vector<CheckedFactChange>& changes) {
  const std::string dir = family_dir(family);
  TrieChanges wanted;
  for (const CheckedFactChange& checked : changes) {
    const FactChange& c = checked.change;
    if (c.after) wanted.put.push_back(KeyedLine{c.key, *c.after});
    else wanted.remove.push_back(c.key);
  }
  TriePlan plan;
  try {
    plan = trees_.plan(parent(), family, wanted);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kIO) throw;
    return problem(ProblemKind::kLayout, dir, e.what());
  } catch (const std::invalid_argument& e) {
    return problem(ProblemKind::kLayout, dir, e.what());
  }
  auto full_path = [&](const std::string& path) { return path.empty() ? dir : dir + "/" + path; };
  const std::string trie_words = " (the trie of the family's lines, T = " + std::to_string(kTrieMaxLines) + ": docs/format.md)";
  for (const auto& [path, edit] : plan) {
    const std::string at = full_path(path);
    std::optional<std::pair<git_oid, bool>> found = trees_.entry_any(&tree_, at);
    if (edit.kind == TrieEdit::Kind::kWrite) {
      if (!found || found->second || !git::same_id(found->first, git::object_id(GIT_OBJECT_BLOB, edit.bytes)))
        problem(ProblemKind::kLayout, at,
                std::string("expected the file of ") + std::to_string(std::count(edit.bytes.begin(), edit.bytes.end(), '\n')) +
                    " lines that the changed lines make here" + trie_words + ", found " +
                    (!found ? "none" : found->second ? "a folder" : "other bytes"));
    } else if (edit.kind == TrieEdit::Kind::kMove) {
      std::optional<std::pair<git_oid, bool>> was = trees_.entry_any(parent(), full_path(edit.from));
      if (!found || !was || !git::same_id(found->first, was->first) || found->second != was->second)
        problem(ProblemKind::kLayout, at,
                "expected " + full_path(edit.from) + " of the parent, moved here whole" + trie_words + ", found " +
                    (!found ? "none" : "something else"));
    } else {
      auto beneath = plan.lower_bound(path + "/");
      const bool rebuilt = beneath != plan.end() && beneath->first.starts_with(path + "/");
      if (found && !rebuilt)
        problem(ProblemKind::kLayout, at, "expected nothing here" + trie_words + ", found a " + (found->second ? "folder" : "file"));
    }
  }
  // Nothing else differs: what is gone went where the plan changes a path
  // (or a path above it); what is new is a file the plan writes, or lies in
  // a folder it moves whole.
  auto planned = [&](std::string_view rel, bool new_side) {
    for (std::size_t end = rel.size();; end = rel.rfind('/', end - 1)) {
      auto it = plan.find(std::string(rel.substr(0, end)));
      if (it != plan.end()) {
        if (!new_side) return true;
        if (end == rel.size()) return it->second.kind == TrieEdit::Kind::kWrite || it->second.kind == TrieEdit::Kind::kMove;
        return it->second.kind == TrieEdit::Kind::kMove;
      }
      if (end == 0 || end == std::string_view::npos || rel.rfind('/', end - 1) == std::string_view::npos) break;
    }
    return false;
  };
  for (const Delta& d : trees_.diff(parent(), &tree_, dir)) {
    const std::string_view rel = std::string_view(d.path).substr(std::min(d.path.size(), dir.size() + 1));
    const bool old_ok = !d.old_mode || planned(rel, false), new_ok = !d.new_mode || planned(rel, true);
    if (!old_ok || !new_ok)
      problem(ProblemKind::kLayout, d.path, "changes the index where its lines do not" + trie_words);
  }
}

// Whether a merge took this line (or its absence) from one of its other
// parents, whose side is checked on its own.
bool IncomingChecker::line_inherited(Family family, const FactChange& c) const {
  for (const git_oid& other : others_) {
    std::optional<std::string> line = trees_.index_line(&other, family, c.key);
    if (c.after ? line == c.after : !line) return true;
  }
  return false;
}

// A run is a controlled rerun (a line of refs/reruns) or a member of a
// group, never both, whichever parent of a merge each line came from: true
// (the problem recorded) when the group or rerun line `fact` makes it both.
bool IncomingChecker::grouped_rerun(const IndexFact& fact, const std::string& where) {
  if (const auto* g = std::get_if<GroupFact>(&fact)) {
    if (!reruns_in_tree().count(g->run)) return false;
    problem(ProblemKind::kGroupMismatch, where,
            "run " + g->run.str() + " is a controlled rerun (a line of refs/reruns), not a member of a group");
    return true;
  }
  if (const auto* r = std::get_if<RerunFact>(&fact)) {
    const ObjectFacts* rerun = object_in_tree(r->rerun);
    if (!rerun || !rerun->valid() || !rerun->key ||
        !trees_.index_line(&tree_, Family::kGroups, rerun->key->hex() + r->rerun.hex()))
      return false;
    problem(ProblemKind::kRerunMismatch, where,
            "the rerun " + r->rerun.str() + " is also a member of its group (a line of refs/groups); a controlled "
            "rerun is indexed under its run only");
    return true;
  }
  return false;
}

// A new, changed or removed line against the objects of the commit's tree.
void IncomingChecker::check_line(Family family, const FactChange& c, const std::optional<IndexFact>& parsed) {
  const std::string where = family_dir(family) + " @" + c.key;
  if (line_inherited(family, c)) {
    // Checked in that parent's tree; but whether a run is a controlled rerun
    // is the merge's tree's (one parent's group line, another's rerun line).
    if (c.after) grouped_rerun(*parsed, where);
    return;
  }
  if (!c.after) {
    // Only a level goes (back to its default: check_levels judges it).
    if (family != Family::kLevels) problem(ProblemKind::kIndexRemoved, where, "removes a line; lines are only added");
    return;
  }
  const IndexFact& fact = *parsed;  // diff_incoming parsed it
  std::visit(
      [&](const auto& f) {
        using T = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<T, MetadataFact>) {
          if (!trees_.entry(&tree_, object_path(f.document)))
            problem(ProblemKind::kDanglingRef, where, "metadata for " + f.document.str() + ", which is not in the store");
        } else if constexpr (std::is_same_v<T, GroupFact>) {
          const ObjectFacts* run = run_for(f.run, where, ProblemKind::kGroupMismatch);
          if (!run) return;
          const std::string bytes = group_entry(f.primary);
          if (grouped_rerun(fact, where)) return;
          if (run->key != f.key)
            problem(ProblemKind::kGroupMismatch, where, "the run's comparison key is " + (run->key ? run->key->str() : std::string("none")));
          else if (run->group_bytes != bytes)
            problem(ProblemKind::kGroupMismatch, where, "expected the run's primary measurement " + run->group_bytes + ", found " + bytes);
        } else if constexpr (std::is_same_v<T, LevelFact>) {
          run_for(f.run, where, ProblemKind::kLevelMismatch);  // whether the history gives it: check_levels
        } else if constexpr (std::is_same_v<T, RerunFact>) {
          const ObjectFacts* run = run_for(f.run, where, ProblemKind::kRerunMismatch);
          const ObjectFacts* rerun = run ? run_for(f.rerun, where, ProblemKind::kRerunMismatch) : nullptr;
          if (rerun)
            if (auto why = rerun_entry_problem(*run, *rerun, rerun_entry(f.verdict, f.ratio)))
              problem(ProblemKind::kRerunMismatch, where, *why);
          grouped_rerun(fact, where);
        } else if constexpr (std::is_same_v<T, AttestationFact>) {
          check_attestation_entry(where, f.run, f.attestation, attestation_entry(f.author, f.type));
        } else {
          const ObjectFacts* run = run_for(f.run, where, ProblemKind::kSourceMismatch);
          if (run && run->source_path != c.key)
            problem(ProblemKind::kSourceMismatch, where, "the run " + f.run.str() + " does not have this source id");
        }
      },
      fact);
}

// Format 3: a new object comes with its lines (a run's group line unless it
// is a controlled rerun, a claim of its upstream id by some run, an
// attestation's line under its subject); a run at its default level has no
// level line (check_levels judges those it has). The lines are looked up
// once every object of the commit is known, in the order of their keys, so
// that each index file is read and split once (LayoutTrees::index_file)
// however many of the commit's objects it indexes.
void IncomingChecker::check_pending_lines() {
  struct Lookup {
    Family family;
    std::string key;
    const ObjectFacts* facts;
  };
  std::vector<Lookup> lookups;
  for (const ObjectFacts* f : pending_lines_) {
    const Digest& digest = *f->digest;
    if (f->kind == Kind::kRun) {
      if (f->key && !reruns_in_tree().count(digest)) lookups.push_back({Family::kGroups, f->key->hex() + digest.hex(), f});
      if (f->source_path) lookups.push_back({Family::kSources, *f->source_path, f});
    } else if (f->kind == Kind::kAttestation && f->subject) {
      lookups.push_back({Family::kAttestations, f->subject->hex() + digest.hex(), f});
      run_for(*f->subject, object_path(digest), ProblemKind::kAttestationMismatch);
    }
  }
  pending_lines_.clear();
  std::sort(lookups.begin(), lookups.end(),
            [](const Lookup& a, const Lookup& b) { return std::tie(a.family, a.key) < std::tie(b.family, b.key); });
  for (const Lookup& l : lookups) {
    if (full()) return;
    const ObjectFacts& f = *l.facts;
    const Digest& digest = *f.digest;
    const std::string where = family_dir(l.family) + " @" + l.key;
    // The commit's own change of the line where it made one (a new object's
    // lines mostly come with it), else the line its tree holds.
    const FamilyChanges& changed = changes_of(l.family);
    auto it = std::lower_bound(changed.changes.begin(), changed.changes.end(), l.key,
                               [](const CheckedFactChange& c, const std::string& k) { return c.change.key < k; });
    const std::optional<std::string> line = it != changed.changes.end() && it->change.key == l.key
                                                ? it->change.after
                                                : trees_.index_line(&tree_, l.family, l.key);
    if (l.family == Family::kGroups) {
      const std::string expected = render_line(GroupFact{*f.key, digest, f.primary});
      if (!line) problem(ProblemKind::kMissingGroup, where, "adds run " + digest.str() + " without its group line");
      else if (*line != expected)
        problem(ProblemKind::kGroupMismatch, where,
                "expected " + expected.substr(0, expected.size() - 1) + ", found " + line->substr(0, 200));
    } else if (l.family == Family::kSources) {
      if (!line) problem(ProblemKind::kMissingSource, where, "adds run " + digest.str() + " without a claim of its upstream id");
    } else if (!line) {
      problem(ProblemKind::kMissingAttestation, where, "adds attestation " + digest.str() + " without its line");
    } else {
      const auto fact = std::get<AttestationFact>(parse_line(Family::kAttestations, *line, where, 1));
      const std::string found = attestation_entry(fact.author, fact.type);
      if (found != f.attestation_bytes)
        problem(ProblemKind::kAttestationMismatch, where, "expected " + f.attestation_bytes + ", found " + found);
    }
  }
}

}  // namespace kistore
