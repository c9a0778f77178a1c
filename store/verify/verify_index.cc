// verify's checks of the index against the objects, and of every object
// against the index (verify_state.h).
#include <algorithm>
#include <atomic>
#include <exception>
#include <stdexcept>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "store/verify/verify_state.h"

namespace kistore::verifying {
namespace {

// One pass over the entries the walk gathered (state.index) and the objects
// (state.objects): each entry kind in turn, then every object on every core.
class IndexCheck {
 public:
  explicit IndexCheck(VerifyState& state) : s_(state) {}

  // The entry that keeps a source id from being a path of its own (a
  // shorter id that is a prefix of it, or longer ids below it), or "".
  // Called from check_run_indexed's threads.
  std::string source_holder(std::string_view path) const {
    for (std::size_t slash = path.find('/', 13); slash != std::string::npos; slash = path.find('/', slash + 1))
      if (auto held = source_at(path.substr(0, slash))) return std::string(s_.index.source_path(s_.index.sources[*held]));
    const std::string folder = std::string(path) + "/";
    auto below = std::lower_bound(by_path_.begin(), by_path_.end(), std::string_view(folder),
                                  [&](std::uint32_t i, std::string_view p) { return source_path(i) < p; });
    if (below != by_path_.end() && source_path(*below).starts_with(folder)) return std::string(source_path(*below));
    return "";
  }

  std::string_view source_path(std::uint32_t i) const { return s_.index.source_path(s_.index.sources[i]); }
  // Where in s_.index.sources the entry at `path` is (the first, should a tree
  // list one twice), or nullopt.
  std::optional<std::size_t> source_at(std::string_view path) const {
    const std::uint32_t at =
        first_by_path_.find(path_hash(path), [&](std::uint32_t place) { return source_path(place) == path; });
    if (at == kNone) return std::nullopt;
    return at;
  }
  static std::size_t path_hash(std::string_view path) { return std::hash<std::string_view>{}(path); }
  // The entries by path (then place), for the folder lookups above; and each path's first entry.
  void index_sources() {
    const std::size_t n = s_.index.sources.size();
    if (n >= kNone) throw std::length_error("verify: more than 4,294,967,294 source entries");
    by_path_.resize(n);
    for (std::size_t i = 0; i < n; ++i) by_path_[i] = static_cast<std::uint32_t>(i);
    std::sort(by_path_.begin(), by_path_.end(), [&](std::uint32_t a, std::uint32_t b) {
      const int c = source_path(a).compare(source_path(b));
      return c < 0 || (c == 0 && a < b);
    });
    // The first entry of each path (the lowest place), by a hash of the
    // path: a run's lookup is one probe, where a binary search compared ~20
    // paths in text scattered over the whole index. A later entry of a path
    // is the tree's problem: nothing more to check of it.
    source_checked_.assign(n, 0);
    first_by_path_.clear();
    first_by_path_.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::string_view path = source_path(i);
      const bool first = first_by_path_
                             .insert(path_hash(path), i, [&](std::uint32_t place) { return source_path(place) == path; },
                                     [&](std::uint32_t place) { return path_hash(source_path(place)); })
                             .second;
      if (!first) source_checked_[i] = 1;
    }
  }

  // Every index entry against the objects, then every object against the index.
  void run() {
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
    std::stable_sort(s_.index.metadata.begin(), s_.index.metadata.end(),
                     [](const MetadataEntry& a, const MetadataEntry& b) { return a.digest < b.digest; });
    for (std::size_t i = 0; i < s_.index.metadata.size(); ++i) {
      const MetadataEntry& m = s_.index.metadata[i];
      if (i > 0 && s_.index.metadata[i - 1].digest == m.digest) continue;
      if (!s_.objects.contains(m.digest))
        s_.problem(ProblemKind::kDanglingRef,
                   s_.format == Format::k3 ? s_.line_at(Family::kMetadata, m.digest.hex()) : metadata_path(s_.format, m.digest),
                   "names " + m.digest.str() + ", which is not in the store");
    }
    std::vector<MetadataEntry>().swap(s_.index.metadata);
    s_.timer.lap("index: metadata");
    check_reruns();
    s_.timer.lap("index: reruns");
    check_groups();
    s_.timer.lap("index: groups");
    check_levels();
    check_unwritten_levels();
    s_.timer.lap("index: levels");
    check_trie();
    check_attestations();
    s_.timer.lap("index: attestations");
    sources.join();
    if (sources_error) std::rethrow_exception(sources_error);
    s_.timer.lap("index: waiting for the source index");
    std::vector<std::pair<const Digest*, const StoredObject*>> all;
    all.reserve(s_.objects.size());
    s_.objects.for_each([&](const Digest& digest, const StoredObject& object) { all.emplace_back(&digest, &object); });
    s_.check_in_parallel(all.size(), [&](std::size_t i) {
      const Digest& digest = *all[i].first;
      const StoredObject& stored = *all[i].second;
      if (!stored.valid) return;
      if (stored.kind == Kind::kRun) {
        check_run_indexed(digest, stored);
      } else if (stored.kind == Kind::kAttestation && !attested_.count(digest)) {
        s_.problem(ProblemKind::kMissingAttestation, object_path(digest), "attestation " + digest.str() + " is not indexed under its subject");
      }
    });
    s_.timer.lap("index: objects");
    check_sources();
  }

  // The valid run an entry at `path` names, or null: a dangling-ref, or
  // `mismatch` when it names another kind (an invalid object is reported
  // where it is stored).
  std::optional<ObjectFacts> run_named(const Digest& digest, const std::string& path, ProblemKind mismatch) {
    const StoredObject* run = s_.objects.find(digest);
    if (!run) s_.problem(ProblemKind::kDanglingRef, path, "names run " + digest.str() + ", which is not in the store");
    else if (!run->valid) return std::nullopt;
    else if (run->kind != Kind::kRun) s_.problem(mismatch, path, "expected a run, found a " + std::string(kind_name(run->kind)));
    else return s_.objects.facts(digest, *run);
    return std::nullopt;
  }

  // Format 2: the reruns the signed history adds (valid rerun commits, as
  // the level audit knows them) are exactly those under refs/reruns/, each
  // a controlled rerun of its run, with that commit's verdict and the ratio
  // of their primary values; a rerun is no member of a group.
  void check_reruns() {
    if (s_.format == Format::k1 || s_.snap.empty()) return;
    std::map<std::pair<Digest, Digest>, Level> expected;
    for (const LevelAudit::RerunCommitAudit* a : s_.audit.rerun_commits(s_.snap.commit()))
      if (a->valid) expected.emplace(std::pair{a->valid->first, a->valid->second.evidence}, level_of(a->valid->second.verdict));
    std::set<std::pair<Digest, Digest>> indexed;
    for (const auto& r : s_.index.reruns) {
      indexed.emplace(r.first, r.second);
      const std::optional<ObjectFacts> run = run_named(r.first, r.path, ProblemKind::kRerunMismatch);
      const std::optional<ObjectFacts> rerun = run ? run_named(r.second, r.path, ProblemKind::kRerunMismatch) : std::nullopt;
      if (!rerun) continue;
      reruns_indexed_.insert(r.second);
      if (auto why = rerun_entry_problem(*run, *rerun, r.bytes)) {
        s_.problem(ProblemKind::kRerunMismatch, r.path, *why);
        continue;
      }
      auto it = expected.find({r.first, r.second});
      if (it == expected.end())
        s_.problem(ProblemKind::kRerunMismatch, r.path, "no valid rerun commit (signed by a controller) adds this rerun of " + r.first.str());
      else if (r.bytes.find(std::string("\"") + std::string(level_name(it->second)) + "\"") == std::string::npos)
        s_.problem(ProblemKind::kRerunMismatch, r.path, "the rerun commit that adds it says " + std::string(level_name(it->second)));
    }
    for (const auto& [pair, verdict] : expected) {
      reruns_indexed_.insert(pair.second);
      if (!indexed.count(pair) && s_.objects.contains(pair.first) && s_.objects.contains(pair.second))
        s_.problem(ProblemKind::kRerunMismatch,
                   s_.format == Format::k3 ? s_.line_at(Family::kReruns, pair.first.hex() + pair.second.hex())
                                           : rerun_path(pair.first, pair.second),
                "a valid rerun commit adds this " + std::string(level_name(verdict)) + " rerun of " + pair.first.str() +
                    ", which is not indexed");
    }
  }

  void check_groups() {
    const ObjectTable& objects = s_.objects;
    s_.check_in_parallel(s_.index.groups.size(), [&](std::size_t i) {
      const GroupEntry& g = s_.index.groups[i];
      // A valid run in its place with its bytes (most entries) needs no path spelled out.
      StoredObject* found = s_.objects.find(g.run);
      if (found && found->valid && found->kind == Kind::kRun && found->key != kNone &&
          objects.digests.at(found->key) == g.key && !g.other && g.primary == found->primary &&
          !reruns_indexed_.count(g.run)) {
        std::atomic_ref(found->groups).fetch_add(1, std::memory_order_relaxed);
        return;
      }
      const std::string path = s_.format == Format::k3 ? s_.line_at(Family::kGroups, g.key.hex() + g.run.hex())
                                                       : group_path(s_.format, g.key, g.run);
      const std::optional<ObjectFacts> run = run_named(g.run, path, ProblemKind::kGroupMismatch);
      if (!run) return;
      std::atomic_ref(found->groups).fetch_add(1, std::memory_order_relaxed);
      if (reruns_indexed_.count(g.run)) {
        s_.problem(ProblemKind::kGroupMismatch, path, "run " + g.run.str() + " is a controlled rerun, indexed under refs/reruns/, not in a group");
        return;
      }
      const std::string bytes = g.bytes(objects.kinds);
      if (run->key != g.key)  // the path and the run's own group path name the same run
        s_.problem(ProblemKind::kGroupMismatch, path, "the run's comparison key puts it at " + s_.group_path_of(g.run, *found));
      else if (bytes != run->group_bytes)
        s_.problem(ProblemKind::kGroupMismatch, path, "expected the run's primary measurement " + run->group_bytes + ", found " + bytes);
    });
    std::vector<GroupEntry>().swap(s_.index.groups);
  }

  // Every level entry is exactly what the signed history gives at the head
  // (store/history/level_audit.h), evidence included, and that evidence is a stored
  // rerun of its run. A run with several entries is judged entry by entry.
  void check_levels() {
    LevelAudit& audit = s_.audit;
    for (const auto& l : s_.index.levels) {
      auto path = [&] {  // spelled out for problems only
        return s_.format == Format::k3 ? s_.line_at(Family::kLevels, l.run.hex()) : level_path(s_.format, l.level, l.run);
      };
      const std::string& bytes = l.bytes.empty() ? s_.null_entry : l.bytes;
      StoredObject* found = s_.objects.find(l.run);
      const StoredObject* run = found;
      if (!run || !run->valid || run->kind != Kind::kRun) {
        run_named(l.run, path(), ProblemKind::kLevelMismatch);
        continue;
      }
      ++found->levels;
      if (l.level == run->default_level && bytes != s_.null_entry) {
        s_.problem(ProblemKind::kLevelMismatch, path(), "expected {\"evidence\":null} for a default level, found " + bytes.substr(0, 80));
        continue;
      }
      // The default's bytes (most entries) are not parsed again.
      std::optional<LevelEntryValue> recorded =
          l.bytes.empty() ? std::optional<LevelEntryValue>(LevelEntryValue{}) : parse_level_entry(bytes);
      if (!recorded) {
        s_.problem(ProblemKind::kLevelMismatch, path(), "expected {\"evidence\":<digest or null>}, found " + bytes.substr(0, 80));
        continue;
      }
      recorded->level = l.level;
      LevelJudgement j = audit.judge(s_.snap.commit(), l.run, run->default_level, recorded);
      if (!j.agrees) s_.problem(ProblemKind::kLevelUnjustified, path(), j.detail);
      else if (auto why = evidence_problem(*recorded, stored_reruns(l.run, *found, recorded->evidence)))
        s_.problem(ProblemKind::kLevelUnjustified, path(), *why);
    }
    std::vector<LevelEntry>().swap(s_.index.levels);
  }

  // Format 3 writes no line for a run at its default level: every run that
  // a valid rerun commit is about and that has no line must be at its
  // default by the signed history (two controllers' concurrent verdicts that
  // cancel out cannot: any valid rerun gives a level that is not a default).
  void check_unwritten_levels() {
    if (s_.format != Format::k3 || s_.snap.empty()) return;
    LevelAudit& audit = s_.audit;
    for (const Digest& digest : audit.runs_rerun_since({s_.snap.commit()}, {})) {
      const StoredObject* found = s_.valid_run(digest);
      if (!found || found->levels > 0) continue;
      const Level fallback = found->default_level;
      LevelJudgement j = audit.judge(s_.snap.commit(), digest, fallback, LevelEntryValue{fallback, std::nullopt});
      if (!j.agrees)
        s_.problem(ProblemKind::kMissingLevel, s_.line_at(Family::kLevels, digest.hex()),
                   "run " + digest.str() + " has no level line, so stands at its default; " + j.detail);
    }
  }

  // Format 3: each family's files are the trie of their lines (their lines
  // were read and checked as the walk met them).
  void check_trie() {
    if (s_.format != Format::k3) return;
    for (auto& [family, files] : s_.index.trie_files)
      for (Problem& p : check_trie_shape(family, files)) s_.problem(p.kind, std::move(p.path), std::move(p.detail));
    s_.index.trie_files.clear();
  }

  // Of `evidence`, what the store holds as a rerun of the run `digest`: a
  // valid run object (not the run itself) with its comparison key and its
  // implementation (store/write/rerun.h).
  // (Interned digests are equal exactly when their numbers are.)
  std::set<Digest> stored_reruns(const Digest& digest, const StoredObject& run, const std::optional<Digest>& evidence) const {
    if (!evidence || *evidence == digest) return {};
    const StoredObject* rerun = s_.valid_run(*evidence);
    if (!rerun) return {};
    constexpr std::size_t kImplementation = 3;
    static_assert(References::kRoles[kImplementation] == "implementation");
    if (run.key == kNone || rerun->key != run.key || run.references[kImplementation] == kNone ||
        rerun->references[kImplementation] != run.references[kImplementation])
      return {};
    return {*evidence};
  }

  void check_attestations() {
    for (const auto& a : s_.index.attestations) {
      const StoredObject* run = s_.objects.find(a.first);
      const std::optional<ObjectFacts> att = s_.objects.facts(a.second);
      if (!run) s_.problem(ProblemKind::kDanglingRef, a.path, "attests run " + a.first.str() + ", which is not in the store");
      else if (run->valid && run->kind != Kind::kRun)
        s_.problem(ProblemKind::kAttestationMismatch, a.path, "attests a " + std::string(kind_name(run->kind)) + ", not a run");
      if (!att) { s_.problem(ProblemKind::kDanglingRef, a.path, "names attestation " + a.second.str() + ", which is not in the store"); continue; }
      if (!att->valid()) continue;
      if (att->kind != Kind::kAttestation) { s_.problem(ProblemKind::kAttestationMismatch, a.path, "expected an Attestation, found a " + std::string(kind_name(att->kind))); continue; }
      attested_.insert(a.second);
      if (!att->subject || *att->subject != a.first)
        s_.problem(ProblemKind::kAttestationMismatch, a.path, "the attestation's subject is " + (att->subject ? att->subject->str() : std::string("missing")));
      else if (a.bytes != att->attestation_bytes)
        s_.problem(ProblemKind::kAttestationMismatch, a.path, "expected " + att->attestation_bytes + ", found " + a.bytes);
    }
  }

  // A run has one group entry, one level, its source entry (or a warning
  // when an earlier claim holds the id), and what it names is in the store
  // (else a warning: an external reference).
  void check_run_indexed(const Digest& digest, const StoredObject& stored) {
    const int groups = stored.groups, levels = stored.levels;
    // A controlled rerun is indexed under its run (check_reruns), not in a group.
    const bool rerun = reruns_indexed_.count(digest) > 0;
    if (!rerun && groups == 0)
      s_.problem(ProblemKind::kMissingGroup, s_.group_path_of(digest, stored), "run " + digest.str() + " is missing from its group");
    else if (!rerun && groups > 1)
      s_.problem(ProblemKind::kGroupMismatch, "refs/groups", "run " + digest.str() + " is in " + std::to_string(groups) + " groups");
    if (levels == 0 && s_.format != Format::k3)  // format 3: no line for a default level
      s_.problem(ProblemKind::kMissingLevel, level_path(s_.format, stored.default_level, digest), "run " + digest.str() + " has no level");
    else if (levels > 1)
      s_.problem(ProblemKind::kLevelMismatch, "refs/levels", "run " + digest.str() + " has " + std::to_string(levels) + " levels");
    if (const std::optional<std::string_view> source = s_.objects.source(digest, stored)) {
      // Spelled out for problems only: line_at walks the Snapshot under a lock.
      auto where = [&] { return s_.format == Format::k3 ? s_.line_at(Family::kSources, std::string(*source)) : std::string(*source); };
      std::optional<std::size_t> at = source_at(*source);
      const SourceEntry* entry = at ? &s_.index.sources[*at] : nullptr;
      if (!entry) {
        std::string holder = source_holder(*source);
        if (holder.empty())
          s_.problem(ProblemKind::kMissingSource, where(), "run " + digest.str() + " is missing from the source index");
        else
          s_.warning(ProblemKind::kSourceClaimed, where(),
                  "run " + digest.str() + " claims this source id, which is blocked by " + holder);
      } else if (entry->run == digest) {
        source_checked_[*at] = 1;  // names this valid run, whose source id it is (only this run's thread writes it)
      } else {
        s_.warning(ProblemKind::kSourceClaimed, where(),
                "run " + digest.str() + " claims this source id, which names " + s_.index.source_bytes(*entry) + " (the first claim)");
      }
    }
    for (std::size_t i = 0; i < stored.references.size(); ++i) {
      if (stored.references[i] == kNone) continue;
      const Digest& ref = s_.objects.digests.at(stored.references[i]);
      if (!s_.objects.contains(ref))
        s_.warning(ProblemKind::kExternalReference, object_path(digest),
                   "the run's " + std::string(References::kRoles[i]) + " " + ref.str() + " is not in the store");
    }
  }

  void check_sources() {
    std::optional<std::unordered_map<std::string_view, Digest>> claimed;  // source path -> a run claiming it
    for (std::size_t i = 0; i < s_.index.sources.size(); ++i) {
      if (source_checked_[i]) continue;  // a run's own entry (check_run_indexed), or a second entry of its path
      const SourceEntry& entry = s_.index.sources[i];
      const std::string_view path = s_.index.source_path(entry);
      const std::string where = s_.format == Format::k3 ? s_.line_at(Family::kSources, std::string(path)) : std::string(path);
      const std::string bytes = s_.index.source_bytes(entry);
      const StoredObject* run = entry.run ? s_.valid_run(*entry.run) : nullptr;
      if (!run)
        s_.problem(ProblemKind::kSourceMismatch, where, "names " + bytes + ", which is not a run in the store");
      else if (s_.objects.source(*entry.run, *run) != path) {
        if (!claimed) {
          claimed.emplace();
          s_.objects.for_each([&](const Digest& digest, const StoredObject& object) {
            if (object.valid)
              if (auto source = s_.objects.source(digest, object)) claimed->insert_or_assign(*source, digest);
          });
        }
        auto it = claimed->find(path);
        std::string claimant = it == claimed->end() ? "" : "; run " + it->second.str() + " does";
        s_.problem(ProblemKind::kSourceMismatch, where, "the run " + bytes + " does not have this source id" + claimant);
      }
    }
  }

 private:
  VerifyState& s_;
  std::set<Digest> reruns_indexed_;  // format 2: runs that are controlled reruns (check_reruns)
  std::set<Digest> attested_;        // the attestations found indexed
  std::vector<std::uint32_t> by_path_;  // index.sources' entries by path, then place (index_sources)
  std::vector<char> source_checked_;  // per index.sources entry: nothing more to check
  PlaceSlots first_by_path_;  // a path's first entry in index.sources, by the path's hash
};

}  // namespace

void check_index(VerifyState& state) { IndexCheck(state).run(); }

}  // namespace kistore::verifying
