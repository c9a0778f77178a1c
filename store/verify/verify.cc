#include "store/verify/verify.h"

#include <array>
#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "objects/blob.h"
#include "objects/parallel.h"
#include "objects/phase_timer.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "store/git/git.h"
#include "store/git/incoming_walk.h"
#include "store/history/level_audit.h"
#include "store/git/raw_tree.h"

namespace kistore {
namespace {

// What verify keeps of the index entries until it checks them against the
// objects, compactly: no path where the layout gives it from the entry's
// digests (refs/layout.h parses only what it renders: lowercase hex, exact
// level names, so a parsed path is its digests' rendering), bytes only where
// they are not the usual ones.
struct PairEntry {
  std::string path;  // groups: "" (it is group_path(first, second))
  Digest first, second;
  std::string bytes;
};
struct LevelEntry {
  std::string bytes;  // "" when they are level_entry(nullopt), the default's
  Level level;
  Digest run;
};
struct MetadataEntry {
  Digest digest;
};
// A source entry's bytes: the digest they spell, or the bytes when they spell none.
struct SourceBytes {
  std::optional<Digest> digest;
  std::string other;
  std::string str() const { return digest ? digest->str() : other; }
};
struct IndexEntries {
  std::vector<MetadataEntry> metadata;
  std::vector<PairEntry> groups, attestations, reruns;
  std::vector<LevelEntry> levels;
  std::vector<std::pair<std::string, SourceBytes>> sources;  // in tree order
};

// What one part of the walk found, in tree order: its problems, its
// objects' facts and its index entries; merged in part order.
struct WalkPartResult {
  std::vector<Problem> problems, warnings;
  IndexEntries index;
};

// An object's facts and what check_index counted of it: its group and level
// entries (atomic: entries are checked on every core).
struct StoredObject {
  ObjectFacts facts;
  std::atomic<int> groups{0}, levels{0};
};

// Problems and warnings found by one block of a parallel check, appended to
// the report in block order, so the report is the same whatever the thread
// count.
struct Findings {
  std::vector<Problem> problems, warnings;
};
// The block of the calling thread, or null: findings go to the report.
thread_local Findings* t_findings = nullptr;

template <typename T>
void append(std::vector<T>& to, std::vector<T>& from) {
  if (to.empty()) to.swap(from);
  else to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  std::vector<T>().swap(from);
}


class Verifier {
 public:
  Verifier(const Store& store, const VerifyOptions& options)
      : store_(store), options_(options), snap_(store.snapshot()), format_(snap_.format()),
        audit_(store.repo(), options.trust) {}

  VerifyReport run() {
    // The shape check (one thread) and the walk (every core) run at once, the
    // walk trusting the shape check to hash every tree. When the shape check
    // finds anything wrong, what the walk found is dropped and the walk runs
    // again as it would alone (hashing trees, throwing on one it cannot
    // read), or not at all when a tree is too deep: the report is the same as
    // from one after the other.
    Shape shape;
    std::exception_ptr shape_error;
    std::thread shape_thread([&] {
      try {
        shape = check_shape();
      } catch (...) {
        shape_error = std::current_exception();
      }
    });
    std::vector<WalkPartResult> parts;
    std::vector<Problem> links;
    std::exception_ptr walk_error;
    try {
      walk(parts, links, true);
    } catch (...) {
      walk_error = std::current_exception();
    }
    timer_.lap("walk");
    shape_thread.join();
    timer_.lap("shape check (after the walk)");
    if (shape_error) std::rethrow_exception(shape_error);
    append(report_.problems, shape.problems);
    if (shape.too_deep) {
      // A tree deeper than any walk goes: report that, and the history.
      check_history();
      return std::move(report_);
    }
    if (!shape.hashed) {
      parts.clear(), links.clear();
      for (ObjectShard& shard : objects_) shard.map.clear();
      walk(parts, links, false);
    } else if (walk_error) {
      std::rethrow_exception(walk_error);
    }
    append(report_.problems, links);
    merge(parts);
    timer_.lap("merge");
    check_index();
    timer_.lap("index: source entries");
    check_history();
    timer_.lap("history");
    report_.objects = object_count();
    return std::move(report_);
  }

 private:
  // Reading, decoding, hashing and parsing run on every core; what the
  // objects imply is then merged in tree order, so reports are the same
  // whatever the thread count. Submodule links go to `links`.
  void walk(std::vector<WalkPartResult>& parts, std::vector<Problem>& links, bool trees_checked) {
    std::mutex links_mutex;
    // Frames that name a dictionary decode with the tree's (loaded once, on
    // the first frame that names it, by whichever thread meets it first).
    const DictionaryLookup dictionaries = snap_.dictionaries();
    snap_.walk_parallel(
        "", 0, [&](std::size_t n) { parts.resize(n); },
        [&](std::size_t part, const std::string& path, const std::string_view* bytes, const std::string& error) {
          WalkPartResult& out = parts[part];
          if (!bytes) {
            out.problems.push_back({ProblemKind::kObjectCorrupt, path, error});
          } else if (path.starts_with("objects/")) {
            ObjectFacts facts = object_facts(format_, path, *bytes,
                                             options_.deep ? ObjectCheck::kDeep : ObjectCheck::kShallow, dictionaries);
            if (facts.problem) out.problems.push_back(std::move(*facts.problem));  // facts.problem stays set: invalid
            std::string().swap(facts.group_path);  // group_path_of gives it again
            if (facts.digest) {
              // Into its shard here, on every core; a part holds one shard's objects (objects/sha256/<first byte>),
              // in tree order, so the last of a digest listed twice stays, as in one map filled in tree order.
              ObjectShard& shard = objects_[facts.digest->bytes()[0]];
              std::lock_guard lock(shard.mutex);
              shard.map.try_emplace(*facts.digest).first->second.facts = std::move(facts);
            }
          } else {
            // Metadata documents are checked here, on every core: a parse per document.
            if (parse_metadata_path(format_, path))
              if (auto p = metadata_problem(path, *bytes)) out.problems.push_back(std::move(*p));
            visit(out, path, *bytes);
          }
        },
        [&](const std::string& path) {
          std::lock_guard lock(links_mutex);
          links.push_back({ProblemKind::kLayout, path, "expected only blobs and trees, found a submodule or link entry"});
        },
        [](const std::string& path) { return path.starts_with("objects/"); },
        options_.progress ? std::function<void(std::size_t, std::size_t)>(
                                [&](std::size_t done, std::size_t total) { options_.progress(done, total); })
                          : nullptr,
        trees_checked);
  }

  // The parts' findings, in part order (tree order), into the report and
  // index_ (the objects went into objects_ during the walk).
  void merge(std::vector<WalkPartResult>& parts) {
    for (WalkPartResult& part : parts) {
      append(report_.problems, part.problems);
      append(report_.warnings, part.warnings);
      append(index_.metadata, part.index.metadata);
      append(index_.groups, part.index.groups);
      append(index_.attestations, part.index.attestations);
      append(index_.reruns, part.index.reruns);
      append(index_.levels, part.index.levels);
      append(index_.sources, part.index.sources);
      part = WalkPartResult();
    }
    std::vector<WalkPartResult>().swap(parts);
  }

  // The head tree's shape (incoming_walk.h): every mode 100644 or 040000, no
  // path more than 16 folders deep, sound names, entries in git's order and
  // none twice. False when a path is too deep to walk. Trees that cannot be
  // read, and submodule links, the walk reports itself, naming the path.
  // Runs on a thread of its own, through a repository handle of its own.
  struct Shape {
    std::vector<Problem> problems;  // to report
    bool too_deep = false;
    bool hashed = true;  // every tree was read and hashed to its id, and nothing was wrong
  };
  Shape check_shape() const {
    Shape out;
    if (snap_.empty()) return out;
    git_repository* raw_repo = nullptr;
    const std::string gitdir = git_repository_path(store_.repo());
    git::check(git_repository_open_ext(&raw_repo, gitdir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr),
               gitdir + ": opening for reading");
    git::Repository repo(raw_repo);
    git_oid head = git::parse_oid(snap_.commit_id());
    git_commit* raw = nullptr;
    git::check(git_commit_lookup(&raw, raw_repo, &head), "reading the head commit " + snap_.commit_id());
    git::Commit commit(raw);
    git::StoreTreeSource source(raw_repo);
    git::WalkResult shape =
        git::check_tree_shape(source, *git_commit_tree_id(raw), "the tree of " + snap_.commit_id().substr(0, 12));
    out.hashed = shape.problems.empty() && !shape.too_deep;
    out.too_deep = shape.too_deep;
    for (Problem& p : shape.problems) {
      // A tree whose entries are out of order or listed twice is reported
      // here: the walk takes entries as they come and sees neither (an index
      // entry listed twice would then count once).
      const bool order =
          p.kind == ProblemKind::kObjectCorrupt && p.detail.find("out of order or twice") != std::string::npos;
      if ((p.kind != ProblemKind::kLayout && !order) || p.detail.find("mode 160000") != std::string::npos) continue;
      out.problems.push_back(std::move(p));
    }
    return out;
  }

  void problem(ProblemKind kind, std::string path, std::string detail) {
    (t_findings ? t_findings->problems : report_.problems).push_back({std::move(kind), std::move(path), std::move(detail)});
  }
  void warning(ProblemKind kind, std::string path, std::string detail) {
    (t_findings ? t_findings->warnings : report_.warnings).push_back({std::move(kind), std::move(path), std::move(detail)});
  }

  // fn(i) for every i < n, on every core, in fixed blocks whose findings are
  // appended in block order: the same report as one loop. fn may only read
  // the verifier's state, count through StoredObject's atomics and report.
  template <typename F>
  void check_in_parallel(std::size_t n, F&& fn) {
    const std::size_t blocks = std::min<std::size_t>(n, 256);
    std::vector<Findings> found(blocks);
    parallel_for(blocks, [&](std::size_t b) {
      t_findings = &found[b];
      for (std::size_t i = n * b / blocks; i < n * (b + 1) / blocks; ++i) fn(i);
      t_findings = nullptr;
    });
    for (Findings& f : found) {
      append(report_.problems, f.problems);
      append(report_.warnings, f.warnings);
    }
  }

  // One index entry (or FORMAT), placed by the layout of the store's format,
  // into `out`. Called from the walk's threads: reads only what is constant.
  void visit(WalkPartResult& out, const std::string& path, std::string_view bytes) const {
    auto problem = [&](ProblemKind kind, const std::string& where, std::string detail) {
      out.problems.push_back({kind, where, std::move(detail)});
    };
    auto h = [&] { return std::string(format_ == Format::k1 ? "<64 hex>" : "<2 hex>/<2 hex>/<60 hex>"); };
    auto outside = [&](const std::string& expected) { problem(ProblemKind::kLayout, path, "expected " + expected + ", found another name"); };
    IndexEntries& index = out.index;
    if (path == kFormatPath) return;  // its bytes are the format's own (Snapshot::format)
    if (path.starts_with("dictionaries/")) return check_dictionary(out, path, bytes);
    if (path.starts_with("refs/metadata/")) {
      auto d = parse_metadata_path(format_, path);
      if (!d) return outside("refs/metadata/" + h());
      index.metadata.push_back({*d});  // its bytes were checked while read
      return;
    }
    if (path.starts_with("refs/groups/")) {
      auto e = parse_group_path(format_, path);
      if (!e) return outside("refs/groups/" + h() + "/<64 hex>");
      index.groups.push_back({std::string(), e->key, e->run, std::string(bytes)});
      return;
    }
    if (path.starts_with("refs/attestations/")) {
      auto e = parse_attestation_path(format_, path);
      if (!e) return outside("refs/attestations/" + h() + "/<64 hex>");
      index.attestations.push_back({path, e->run, e->attestation, std::string(bytes)});
      return;
    }
    if (path.starts_with("refs/levels/")) {
      auto e = parse_level_path(format_, path);
      if (!e) return outside("refs/levels/<" + std::string(level_names()) + ">/" + h());
      index.levels.push_back({bytes == null_entry_ ? std::string() : std::string(bytes), e->level, e->run});
      return;
    }
    if (format_ == Format::k2 && path.starts_with("refs/reruns/")) {
      auto e = parse_rerun_path(format_, path);
      if (!e) return outside("refs/reruns/" + h() + "/<64 hex>");
      index.reruns.push_back({path, e->run, e->rerun, std::string(bytes)});
      return;
    }
    if (path.starts_with("refs/sources/")) {
      SourceBytes value;
      value.digest = Digest::parse(bytes);
      if (value.digest && value.digest->str() != bytes) value.digest.reset();
      if (!value.digest) value.other = std::string(bytes);
      index.sources.emplace_back(path, std::move(value));
      return;
    }
    problem(ProblemKind::kLayout, path,
            std::string("path outside the store layout of ") + format_name(format_) +
                (format_ == Format::k1 ? " (objects/sha256/…, refs/{metadata,groups,levels,attestations,sources}/…)"
                                       : " (FORMAT, objects/sha256/…, dictionaries/<id>, refs/{metadata,groups,levels,reruns,attestations,sources}/…)"));
  }

  // dictionaries/<id>: a zstd dictionary whose Dictionary_ID is <id>, an
  // ID outside the ranges zstd reserves (objects/blob.h); one zstd cannot
  // compress with is a warning. Called from the walk's threads, as visit.
  void check_dictionary(WalkPartResult& out, const std::string& path, std::string_view bytes) const {
    std::optional<std::uint32_t> id = parse_dictionary_path(format_, path);
    if (!id)
      return out.problems.push_back({ProblemKind::kLayout, path,
                                     format_ == Format::k1
                                         ? "a dictionary in a format-1 store, which has none"
                                         : "expected dictionaries/<Dictionary_ID, decimal, 1 to 4294967295>"});
    if (dictionary_id_reserved(*id))
      out.problems.push_back({ProblemKind::kLayout, path, reserved_dictionary_id_detail(*id)});
    try {
      Dictionary check(bytes, *id, path);
      // Frames that name it still decode, and writers pass it over
      // (store/core/frame_encoder.h): a warning, as it can never be removed.
      if (!check.compression_problem().empty())
        out.warnings.push_back({ProblemKind::kDictionaryReadOnly, path,
                                check.compression_problem() +
                                    "; writers compress with another dictionary or none, and a pull refuses it"});
    } catch (const Error& e) {
      out.problems.push_back({ProblemKind::kObjectCorrupt, path, e.what()});
    }
  }

  // The entry that keeps a source id from being a path of its own (a
  // shorter id that is a prefix of it, or longer ids below it), or "".
  // Called from check_run_indexed's threads.
  std::string source_holder(const std::string& path) const {
    for (std::size_t slash = path.find('/', 13); slash != std::string::npos; slash = path.find('/', slash + 1))
      if (auto held = source_at(std::string_view(path).substr(0, slash))) return index_.sources[*held].first;
    std::call_once(sources_sorted_once_, [&] {
      for (const auto& [p, value] : index_.sources) sources_sorted_.push_back(p);
      std::sort(sources_sorted_.begin(), sources_sorted_.end());
    });
    const std::string folder = path + "/";
    auto below = std::lower_bound(sources_sorted_.begin(), sources_sorted_.end(), std::string_view(folder));
    if (below != sources_sorted_.end() && below->starts_with(folder)) return std::string(*below);
    return "";
  }

  // Where in index_.sources the entry at `path` is (the first, should a tree
  // list one twice), or nullopt.
  std::optional<std::size_t> source_at(std::string_view path) const {
    auto it = source_index_.find(path);
    if (it == source_index_.end()) return std::nullopt;
    return it->second;
  }
  void index_sources() {
    source_index_.reserve(index_.sources.size());
    source_checked_.assign(index_.sources.size(), 0);
    for (std::size_t i = 0; i < index_.sources.size(); ++i)
      if (!source_index_.try_emplace(index_.sources[i].first, i).second) source_checked_[i] = 1;  // a second entry: the tree's problem
  }

  // Where a valid run's group entry must be (kept out of objects_ to save memory).
  std::string group_path_of(const Digest& digest, const ObjectFacts& run) const {
    return run.key ? group_path(format_, *run.key, digest) : run.group_path;
  }

  const ObjectFacts* object(const Digest& d) const {
    const auto& map = objects_[d.bytes()[0]].map;
    auto it = map.find(d);
    return it == map.end() ? nullptr : &it->second.facts;
  }
  StoredObject* stored(const Digest& d) {
    auto& map = objects_[d.bytes()[0]].map;
    auto it = map.find(d);
    return it == map.end() ? nullptr : &it->second;
  }
  std::size_t object_count() const {
    std::size_t n = 0;
    for (const ObjectShard& shard : objects_) n += shard.map.size();
    return n;
  }

  // Every index entry against the objects, then every object against the index.
  void check_index() {
    // The source entries' index is built beside the checks that do not use
    // it (metadata, reruns, groups, levels), on a thread of its own.
    std::exception_ptr sources_error;
    std::jthread sources([&] {
      try {
        index_sources();
      } catch (...) {
        sources_error = std::current_exception();
      }
    });
    // By digest, the first entry (in tree order) of each.
    std::stable_sort(index_.metadata.begin(), index_.metadata.end(),
                     [](const MetadataEntry& a, const MetadataEntry& b) { return a.digest < b.digest; });
    for (std::size_t i = 0; i < index_.metadata.size(); ++i) {
      const MetadataEntry& m = index_.metadata[i];
      if (i > 0 && index_.metadata[i - 1].digest == m.digest) continue;
      if (!object(m.digest))
        problem(ProblemKind::kDanglingRef, metadata_path(format_, m.digest), "names " + m.digest.str() + ", which is not in the store");
    }
    std::vector<MetadataEntry>().swap(index_.metadata);
    timer_.lap("index: metadata");
    check_reruns();
    timer_.lap("index: reruns");
    check_groups();
    timer_.lap("index: groups");
    check_levels();
    timer_.lap("index: levels");
    check_attestations();
    timer_.lap("index: attestations");
    sources.join();
    if (sources_error) std::rethrow_exception(sources_error);
    timer_.lap("index: waiting for the source index");
    std::vector<const std::pair<const Digest, StoredObject>*> all;
    all.reserve(object_count());
    for (const ObjectShard& shard : objects_)
      for (const auto& entry : shard.map) all.push_back(&entry);
    check_in_parallel(all.size(), [&](std::size_t i) {
      const auto& [digest, stored] = *all[i];
      const ObjectFacts& facts = stored.facts;
      if (!facts.valid()) return;
      if (facts.kind == Kind::kRun) {
        check_run_indexed(digest, stored);
      } else if (facts.kind == Kind::kAttestation && !attested_.count(digest)) {
        problem(ProblemKind::kMissingAttestation, object_path(digest), "attestation " + digest.str() + " is not indexed under its subject");
      }
    });
    timer_.lap("index: objects");
    check_sources();
  }

  // The valid run an entry at `path` names, or null: a dangling-ref, or
  // `mismatch` when it names another kind (an invalid object is reported
  // where it is stored).
  const ObjectFacts* run_named(const Digest& digest, const std::string& path, ProblemKind mismatch) {
    const ObjectFacts* run = object(digest);
    if (!run) problem(ProblemKind::kDanglingRef, path, "names run " + digest.str() + ", which is not in the store");
    else if (!run->valid()) return nullptr;
    else if (run->kind != Kind::kRun) problem(mismatch, path, "expected a run, found a " + std::string(kind_name(run->kind)));
    else return run;
    return nullptr;
  }

  // Format 2: the reruns the signed history adds (valid rerun commits, as
  // the level audit knows them) are exactly those under refs/reruns/, each
  // a controlled rerun of its run, with that commit's verdict and the ratio
  // of their primary values; a rerun is no member of a group.
  void check_reruns() {
    if (format_ != Format::k2 || snap_.empty()) return;
    std::map<std::pair<Digest, Digest>, Level> expected;
    for (const LevelAudit::RerunCommitAudit* a : audit_.rerun_commits(snap_.commit_id()))
      if (a->valid) expected.emplace(std::pair{a->valid->first, a->valid->second.evidence}, level_of(a->valid->second.verdict));
    std::set<std::pair<Digest, Digest>> indexed;
    for (const auto& r : index_.reruns) {
      indexed.emplace(r.first, r.second);
      const ObjectFacts* run = run_named(r.first, r.path, ProblemKind::kRerunMismatch);
      const ObjectFacts* rerun = run ? run_named(r.second, r.path, ProblemKind::kRerunMismatch) : nullptr;
      if (!rerun) continue;
      reruns_indexed_.insert(r.second);
      if (auto why = rerun_entry_problem(*run, *rerun, r.bytes)) {
        problem(ProblemKind::kRerunMismatch, r.path, *why);
        continue;
      }
      auto it = expected.find({r.first, r.second});
      if (it == expected.end())
        problem(ProblemKind::kRerunMismatch, r.path, "no valid rerun commit (signed by a controller) adds this rerun of " + r.first.str());
      else if (r.bytes.find(std::string("\"") + std::string(level_name(it->second)) + "\"") == std::string::npos)
        problem(ProblemKind::kRerunMismatch, r.path, "the rerun commit that adds it says " + std::string(level_name(it->second)));
    }
    for (const auto& [pair, verdict] : expected) {
      reruns_indexed_.insert(pair.second);
      if (!indexed.count(pair) && object(pair.first) && object(pair.second))
        problem(ProblemKind::kRerunMismatch, rerun_path(pair.first, pair.second),
                "a valid rerun commit adds this " + std::string(level_name(verdict)) + " rerun of " + pair.first.str() +
                    ", which is not indexed");
    }
  }

  void check_groups() {
    check_in_parallel(index_.groups.size(), [&](std::size_t i) {
      const PairEntry& g = index_.groups[i];
      // A valid run in its place with its bytes (most entries) needs no path spelled out.
      StoredObject* found = stored(g.second);
      if (found && found->facts.valid() && found->facts.kind == Kind::kRun && found->facts.key == g.first &&
          g.bytes == found->facts.group_bytes && !reruns_indexed_.count(g.second)) {
        ++found->groups;
        return;
      }
      const std::string path = group_path(format_, g.first, g.second);
      const ObjectFacts* run = run_named(g.second, path, ProblemKind::kGroupMismatch);
      if (!run) return;
      ++found->groups;
      if (reruns_indexed_.count(g.second)) {
        problem(ProblemKind::kGroupMismatch, path, "run " + g.second.str() + " is a controlled rerun, indexed under refs/reruns/, not in a group");
        return;
      }
      if (run->key != g.first)  // the path and the run's own group path name the same run
        problem(ProblemKind::kGroupMismatch, path, "the run's comparison key puts it at " + group_path_of(g.second, *run));
      else if (g.bytes != run->group_bytes)
        problem(ProblemKind::kGroupMismatch, path, "expected the run's primary measurement " + run->group_bytes + ", found " + g.bytes);
    });
    std::vector<PairEntry>().swap(index_.groups);
  }

  // Every level entry is exactly what the signed history gives at the head
  // (store/history/level_audit.h), evidence included, and that evidence is a stored
  // rerun of its run. A run with several entries is judged entry by entry.
  void check_levels() {
    LevelAudit& audit = audit_;
    for (const auto& l : index_.levels) {
      auto path = [&] { return level_path(format_, l.level, l.run); };  // spelled out for problems only
      const std::string& bytes = l.bytes.empty() ? null_entry_ : l.bytes;
      StoredObject* found = stored(l.run);
      const ObjectFacts* run = found ? &found->facts : nullptr;
      if (!run || !run->valid() || run->kind != Kind::kRun) {
        run_named(l.run, path(), ProblemKind::kLevelMismatch);
        continue;
      }
      ++found->levels;
      if (l.level == run->default_level && bytes != null_entry_) {
        problem(ProblemKind::kLevelMismatch, path(), "expected {\"evidence\":null} for a default level, found " + bytes.substr(0, 80));
        continue;
      }
      // The default's bytes (most entries) are not parsed again.
      std::optional<LevelEntryValue> recorded =
          l.bytes.empty() ? std::optional<LevelEntryValue>(LevelEntryValue{}) : parse_level_entry(bytes);
      if (!recorded) {
        problem(ProblemKind::kLevelMismatch, path(), "expected {\"evidence\":<digest or null>}, found " + bytes.substr(0, 80));
        continue;
      }
      recorded->level = l.level;
      LevelJudgement j = audit.judge(snap_.commit_id(), l.run, run->default_level, recorded);
      if (!j.agrees) problem(ProblemKind::kLevelUnjustified, path(), j.detail);
      else if (auto why = evidence_problem(*recorded, stored_reruns(l.run, *run, recorded->evidence)))
        problem(ProblemKind::kLevelUnjustified, path(), *why);
    }
    std::vector<LevelEntry>().swap(index_.levels);
  }

  // Of `evidence`, what the store holds as a rerun of the run `digest`: a
  // valid run object (not the run itself) with its comparison key and its
  // implementation (store/write/rerun.h).
  std::set<Digest> stored_reruns(const Digest& digest, const ObjectFacts& run, const std::optional<Digest>& evidence) const {
    if (!evidence || *evidence == digest) return {};
    const ObjectFacts* rerun = object(*evidence);
    if (!rerun || !rerun->valid() || rerun->kind != Kind::kRun) return {};
    auto key = [](const ObjectFacts& f) { return f.key; };
    auto implementation = [](const ObjectFacts& f) -> std::optional<Digest> {
      for (const auto& [role, d] : f.references)
        if (role == "implementation") return d;
      return std::nullopt;
    };
    if (!key(run) || key(*rerun) != key(run) || !implementation(run) || implementation(*rerun) != implementation(run))
      return {};
    return {*evidence};
  }

  void check_attestations() {
    for (const auto& a : index_.attestations) {
      const ObjectFacts* run = object(a.first);
      const ObjectFacts* att = object(a.second);
      if (!run) problem(ProblemKind::kDanglingRef, a.path, "attests run " + a.first.str() + ", which is not in the store");
      else if (run->valid() && run->kind != Kind::kRun)
        problem(ProblemKind::kAttestationMismatch, a.path, "attests a " + std::string(kind_name(run->kind)) + ", not a run");
      if (!att) { problem(ProblemKind::kDanglingRef, a.path, "names attestation " + a.second.str() + ", which is not in the store"); continue; }
      if (!att->valid()) continue;
      if (att->kind != Kind::kAttestation) { problem(ProblemKind::kAttestationMismatch, a.path, "expected an Attestation, found a " + std::string(kind_name(att->kind))); continue; }
      attested_.insert(a.second);
      if (!att->subject || *att->subject != a.first)
        problem(ProblemKind::kAttestationMismatch, a.path, "the attestation's subject is " + (att->subject ? att->subject->str() : std::string("missing")));
      else if (a.bytes != att->attestation_bytes)
        problem(ProblemKind::kAttestationMismatch, a.path, "expected " + att->attestation_bytes + ", found " + a.bytes);
    }
  }

  // A run has one group entry, one level, its source entry (or a warning
  // when an earlier claim holds the id), and what it names is in the store
  // (else a warning: an external reference).
  void check_run_indexed(const Digest& digest, const StoredObject& stored) {
    const ObjectFacts& facts = stored.facts;
    const int groups = stored.groups, levels = stored.levels;
    // A controlled rerun is indexed under its run (check_reruns), not in a group.
    const bool rerun = reruns_indexed_.count(digest) > 0;
    if (!rerun && groups == 0)
      problem(ProblemKind::kMissingGroup, group_path_of(digest, facts), "run " + digest.str() + " is missing from its group");
    else if (!rerun && groups > 1)
      problem(ProblemKind::kGroupMismatch, "refs/groups", "run " + digest.str() + " is in " + std::to_string(groups) + " groups");
    if (levels == 0)
      problem(ProblemKind::kMissingLevel, level_path(format_, facts.default_level, digest), "run " + digest.str() + " has no level");
    else if (levels > 1)
      problem(ProblemKind::kLevelMismatch, "refs/levels", "run " + digest.str() + " has " + std::to_string(levels) + " levels");
    if (facts.source_path) {
      std::optional<std::size_t> at = source_at(*facts.source_path);
      const SourceBytes* entry = at ? &index_.sources[*at].second : nullptr;
      if (!entry) {
        std::string holder = source_holder(*facts.source_path);
        if (holder.empty())
          problem(ProblemKind::kMissingSource, *facts.source_path, "run " + digest.str() + " is missing from the source index");
        else
          warning(ProblemKind::kSourceClaimed, *facts.source_path,
                  "run " + digest.str() + " claims this source id, which is blocked by " + holder);
      } else if (entry->digest == digest) {
        source_checked_[*at] = 1;  // names this valid run, whose source id it is (only this run's thread writes it)
      } else {
        warning(ProblemKind::kSourceClaimed, *facts.source_path,
                "run " + digest.str() + " claims this source id, which names " + entry->str() + " (the first claim)");
      }
    }
    for (const auto& [role, ref] : facts.references)
      if (!object(ref))
        warning(ProblemKind::kExternalReference, object_path(digest), "the run's " + role + " " + ref.str() + " is not in the store");
  }

  void check_sources() {
    std::optional<std::unordered_map<std::string_view, const Digest*>> claimed;  // source path -> a run claiming it
    for (std::size_t i = 0; i < index_.sources.size(); ++i) {
      if (source_checked_[i]) continue;  // a run's own entry (check_run_indexed), or a second entry of its path
      const auto& [path, value] = index_.sources[i];
      const std::string bytes = value.str();
      const ObjectFacts* run = value.digest ? object(*value.digest) : nullptr;
      if (!run || !run->valid() || run->kind != Kind::kRun)
        problem(ProblemKind::kSourceMismatch, path, "names " + bytes + ", which is not a run in the store");
      else if (run->source_path != path) {
        if (!claimed) {
          claimed.emplace();
          for (const ObjectShard& shard : objects_)
            for (const auto& [digest, stored] : shard.map)
              if (stored.facts.valid() && stored.facts.source_path) (*claimed)[*stored.facts.source_path] = &digest;
        }
        auto it = claimed->find(path);
        std::string claimant = it == claimed->end() ? "" : "; run " + it->second->str() + " does";
        problem(ProblemKind::kSourceMismatch, path, "the run " + bytes + " does not have this source id" + claimant);
      }
    }
  }

  // No commit reachable from the head may lose or change an object its
  // parent had: objects are immutable, so history is append-only.
  void check_history() {
    if (snap_.empty()) return;
    git_repository* repo = store_.repo();
    git_revwalk* raw = nullptr;
    git::check(git_revwalk_new(&raw, repo), "walking history");
    git::Revwalk walk(raw);
    git_oid head;
    git_oid_fromstr(&head, snap_.commit_id().c_str());
    git::check(git_revwalk_push(walk.get(), &head), "walking history");
    git::Odb odb = git::open_odb(repo);
    git::TreeReader trees(odb.get(), {});  // libgit2 checks each tree's id (verify_store turns its check on)
    git_oid id;
    while (git_revwalk_next(&id, walk.get()) == 0) {
      git_commit* c = nullptr;
      if (git_commit_lookup(&c, repo, &id) < 0) {
        problem(ProblemKind::kHistoryMissing, git::oid_str(id), "a commit in the history cannot be read: " + git::last_error());
        continue;
      }
      git::Commit commit(c);
      for (unsigned i = 0; i < git_commit_parentcount(c); ++i) {
        git_commit* p = nullptr;
        if (git_commit_parent(&p, c, i) < 0) {
          problem(ProblemKind::kHistoryMissing, git::oid_str(*git_commit_parent_id(c, i)),
                  "a parent of commit " + git::oid_str(id) + " cannot be read: " + git::last_error());
          continue;
        }
        git::Commit parent(p);
        check_format_change(c, p, trees);
        try {
          // Objects and dictionaries are immutable. A dictionary "changed"
          // against a parent is also how one ID naming two dictionaries shows
          // (a merge whose other parent had another dictionary of that ID):
          // frames made with the other one no longer decode.
          for (const char* dir : {"objects", "dictionaries"})
            trees.diff(git_commit_tree_id(p), git_commit_tree_id(c), dir, [&](const git::TreeDelta& d) {
              if (git::mode_is_link(d.old_mode) || (d.status == git::TreeDelta::kModified && !d.ids_differ())) return;
              if (dir[0] == 'o' && d.status == git::TreeDelta::kModified && frame_of_another_parent(c, i, d, trees)) return;
              problem(ProblemKind::kHistoryRewritten, d.path,
                      "commit " + git::oid_str(id) + " " + (d.status == git::TreeDelta::kRemoved ? "removed" : "changed") +
                          (dir[0] == 'o' ? " an object" : " a dictionary") + " its parent " +
                          git::oid_str(*git_commit_id(p)) + " had" +
                          (dir[0] == 'o' ? "" : ": a Dictionary_ID names one dictionary for ever"));
            }, git::DiffSides::kRemovedOrChanged);
        } catch (const Error& e) {
          problem(ProblemKind::kHistoryMissing, git::oid_str(id), e.what());
        }
      }
    }
  }
  // Where a merge's parents hold one document under different frames (other
  // dictionaries), the merge keeps one of them: its blob at d.path is the one
  // parent `skip` lacks but another parent has. Each decodes to the same bytes.
  static bool frame_of_another_parent(git_commit* merge, unsigned skip, const git::TreeDelta& d,
                                      const git::TreeReader& trees) {
    for (unsigned k = 0; k < git_commit_parentcount(merge); ++k) {
      if (k == skip) continue;
      git_commit* q = nullptr;
      if (git_commit_parent(&q, merge, k) < 0) continue;  // reported as a missing parent
      git::Commit other(q);
      std::optional<git_oid> id = trees.blob_at(git_commit_tree_id(q), d.path);
      if (id && git_oid_equal(&*id, &d.new_id)) return true;
    }
    return false;
  }
  // A store's format only moves forward, by an upgrade commit (Kistore-Op:
  // upgrade, format 1 to format 2, one parent): a commit that drops FORMAT
  // or adds it otherwise is a problem at FORMAT.
  void check_format_change(git_commit* commit, git_commit* parent, const git::TreeReader& trees) {
    auto format_at = [&](git_commit* c) { return trees.blob_at(git_commit_tree_id(c), kFormatPath).has_value(); };
    const bool before = format_at(parent), after = format_at(commit);
    if (before == after) return;
    const std::string id = git::oid_str(*git_commit_id(commit));
    const char* message = git_commit_message(commit);
    if (before)
      problem(ProblemKind::kLayout, std::string(kFormatPath),
              "commit " + id + " removes FORMAT, which its parent " + git::oid_str(*git_commit_id(parent)) +
                  " had: a store's format never goes back to format 1");
    else if (commit_op(message ? message : "") != "upgrade" || git_commit_parentcount(commit) != 1)
      problem(ProblemKind::kLayout, std::string(kFormatPath),
              "commit " + id + " turns format 1 into format 2 without being an upgrade commit (Kistore-Op: upgrade, one parent)");
  }

  const Store& store_;
  const VerifyOptions& options_;
  Snapshot snap_;
  Format format_;
  LevelAudit audit_;  // the signed history, judged against options_.trust
  VerifyReport report_;
  PhaseTimer timer_{"KISTORE_VERIFY_TIMING", "verify"};  // bench/: where the time goes
  const std::string null_entry_ = level_entry(std::nullopt);  // a default level's entry
  // Every object's facts (group_path left empty: group_path_of), by the first
  // byte of its digest, each shard filled by the walk's parts under its lock.
  struct ObjectShard {
    std::mutex mutex;
    std::unordered_map<Digest, StoredObject> map;
  };
  std::array<ObjectShard, 256> objects_;
  IndexEntries index_;
  std::set<Digest> reruns_indexed_;  // format 2: runs that are controlled reruns (check_reruns)
  // The attestations check_index found indexed.
  std::set<Digest> attested_;
  std::unordered_map<std::string_view, std::size_t> source_index_;  // path -> its first entry in index_.sources
  std::vector<char> source_checked_;  // per index_.sources entry: nothing more to check
  mutable std::once_flag sources_sorted_once_;
  mutable std::vector<std::string_view> sources_sorted_;  // every source path, sorted (source_holder)
};

}  // namespace

VerifyReport verify_store(const Store& store, const VerifyOptions& options) {
  git::HashCheck hashes(true);  // every commit and tree of the history is checked against its id
  VerifyReport report;
  PhaseTimer timer("KISTORE_VERIFY_TIMING", "verify");
  {
    Verifier verifier(store, options);
    report = verifier.run();
    timer.lap("all but freeing");
  }
  timer.lap("freeing");
  return report;
}

}  // namespace kistore
