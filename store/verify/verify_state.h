// The state one verify_store() call shares between its checks, private to
// store/verify/: the snapshot it verifies, every object's facts, the index
// entries as the walk found them, and the report being written. The checks
// are in their own files: the walk of the tree and its shape
// (verify_tree.cc), the index against the objects (verify_index.cc), the
// history (verify_history.cc); verify.cc runs them in order.
//
// Thread-safety: the walk fills `objects` (object_table.h) under its locks,
// and gives each part of the tree a WalkPartResult of its own; checks that
// run on every core report through check_in_parallel. Everything else runs
// on one thread.
#pragma once

#include <array>
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "objects/parallel.h"
#include "objects/phase_timer.h"
#include "refs/index.h"
#include "refs/index_trie.h"
#include "refs/layout.h"
#include "store/core/index_trees.h"
#include "store/git/commit_graph.h"
#include "store/history/level_audit.h"
#include "store/verify/object_table.h"
#include "store/verify/verify.h"

namespace kistore::verifying {

// What verify keeps of the index entries until it checks them against the
// objects, compactly: no path where the layout gives it from the entry's
// digests (refs/layout.h parses only what it renders: lowercase hex, exact
// level names, so a parsed path is its digests' rendering), bytes only where
// they are not the usual ones.
struct PairEntry {
  std::string path;
  Digest first, second;
  std::string bytes;
};
// A group entry: the run under its key, with the primary measurement its
// bytes spell (MeasurementKinds), or the bytes themselves when they spell
// none (`other`, only then set).
struct GroupEntry {
  Digest key, run;
  Primary primary;
  std::unique_ptr<std::string> other;
  std::string bytes(const MeasurementKinds& kinds) const { return other ? *other : group_entry(kinds.measurement(primary)); }
};
struct LevelEntry {
  std::string bytes;  // "" when they are level_entry(nullopt), the default's
  Level level;
  Digest run;
};
struct MetadataEntry {
  Digest digest;
};
// A source entry: its path (formats 1 and 2) or key (format 3) and the
// digest its bytes spell, or the bytes when they spell none; both in
// IndexEntries::source_text.
struct SourceEntry {
  std::optional<Digest> run;
  std::uint64_t path_at = 0, other_at = 0;
  std::uint32_t path_size = 0, other_size = 0;
};
// Format 3 (refs/layout.h) fills the same entries from the lines of its
// index files (a source entry keyed by the upstream id's key, not a path),
// and summarises each file for the trie's shape check (check_trie_shape).
struct IndexEntries {
  std::vector<MetadataEntry> metadata;
  std::vector<GroupEntry> groups;
  std::vector<PairEntry> attestations, reruns;
  std::vector<LevelEntry> levels;
  std::vector<SourceEntry> sources;  // in tree order
  std::string source_text;           // their paths and other bytes
  std::map<Family, std::vector<TrieFileSummary>> trie_files;  // format 3

  // Formats 1 and 2: the entry at `path`, of `bytes`.
  void add_source(std::string_view path, std::string_view bytes) {
    std::optional<Digest> run = Digest::parse(bytes);
    if (run && run->str() != bytes) run.reset();
    SourceEntry& e = add_source_at(path, run);
    if (!run) {
      e.other_at = source_text.size(), e.other_size = static_cast<std::uint32_t>(bytes.size());
      source_text += bytes;
    }
  }
  // Format 3: the line of `key` naming `run`.
  void add_source(std::string_view key, const Digest& run) { add_source_at(key, run); }
  SourceEntry& add_source_at(std::string_view path, const std::optional<Digest>& run) {
    SourceEntry& e = sources.emplace_back();
    e.run = run;
    e.path_at = source_text.size(), e.path_size = static_cast<std::uint32_t>(path.size());
    source_text += path;
    return e;
  }
  std::string_view source_path(const SourceEntry& e) const { return std::string_view(source_text).substr(e.path_at, e.path_size); }
  std::string source_bytes(const SourceEntry& e) const {
    return e.run ? e.run->str() : std::string(std::string_view(source_text).substr(e.other_at, e.other_size));
  }
};

// What one part of the walk found, in tree order: its problems, its
// objects' facts and its index entries; merged in part order.
struct WalkPartResult {
  std::vector<Problem> problems, warnings;
  IndexEntries index;
};

// Problems and warnings found by one block of a parallel check, appended to
// the report in block order, so the report is the same whatever the thread
// count.
struct Findings {
  std::vector<Problem> problems, warnings;
};
// The block of the calling thread, or null: findings go to the report.
inline thread_local Findings* t_findings = nullptr;

// Moves `from`'s elements to the end of `to` and frees `from`; takes `from`
// whole when `to` is empty and has no room reserved for them.
template <typename T>
void append(std::vector<T>& to, std::vector<T>& from) {
  if (to.empty() && to.capacity() < from.size()) to.swap(from);
  else to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  std::vector<T>().swap(from);
}

// The state shared by the checks of one verify_store() call.
struct VerifyState {
  VerifyState(const Store& store, const VerifyOptions& options)
      : store(store),
        options(options),
        snap(store.snapshot()),
        format(snap.format()),
        commits(git::repository_commits(store.repo())),
        audit(*commits, options.trust) {}

  const Store& store;
  const VerifyOptions& options;
  Snapshot snap;
  mutable std::mutex snap_lock;  // line_at's reads of snap, from any thread
  Format format;
  std::unique_ptr<git::CommitGraph> commits;  // the store's commits, through the git door
  LevelAudit audit;  // the signed history, judged against options.trust
  VerifyReport report;
  PhaseTimer timer{options.timing, "verify"};  // bench/: where the time goes
  const std::string null_entry = level_entry(std::nullopt);  // a default level's entry
  // What verify keeps of every object, filled by the walk's parts.
  ObjectTable objects;
  IndexEntries index;

  void problem(ProblemKind kind, std::string path, std::string detail) {
    (t_findings ? t_findings->problems : report.problems).push_back({std::move(kind), std::move(path), std::move(detail)});
  }
  void warning(ProblemKind kind, std::string path, std::string detail) {
    (t_findings ? t_findings->warnings : report.warnings).push_back({std::move(kind), std::move(path), std::move(detail)});
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
      append(report.problems, f.problems);
      append(report.warnings, f.warnings);
    }
  }

  // Where a valid run's group entry must be (kept out of objects to save memory).
  std::string group_path_of(const Digest& digest, const StoredObject& run) const {
    const std::optional<Digest> key = objects.key(run);
    if (!key) return object_path(digest);  // a valid run has a key: not met
    if (format == Format::k3) return line_at(Family::kGroups, key->hex() + digest.hex());
    return group_path(format, *key, digest);
  }
  // Format 3: where a problem about the line of `key` is reported: the file
  // that holds it (or would), then the key ("refs/groups/04a2…/3 @04a2…").
  // Read only for problems, which are few. Called from check_in_parallel's
  // threads: the Snapshot's tree cache is one thread's, so one call at a
  // time (without the lock, two threads missing the cache at once free the
  // tree the other is reading).
  std::string line_at(Family family, const std::string& key) const {
    std::string file = family_dir(family);
    std::lock_guard lock(snap_lock);
    try {
      file = fact_file(snap, family, key);
    } catch (const Error&) {
      // a trie that cannot be followed: its own problems say why
    }
    return file + " @" + key;
  }

  // The valid run `d`, or null.
  const StoredObject* valid_run(const Digest& d) const {
    const StoredObject* o = objects.find(d);
    return o && o->valid && o->kind == Kind::kRun ? o : nullptr;
  }
};

// The walk of the tree (verify_tree.cc): every object's facts into
// state.objects, the index entries into `parts`, in tree order; submodule
// links into `links`. With `trees_checked`, the walk trusts check_shape to
// hash every tree.
void walk_tree(VerifyState& state, std::vector<WalkPartResult>& parts, std::vector<Problem>& links, bool trees_checked);
// The parts' findings, in part order, into state.report and state.index.
void merge_parts(VerifyState& state, std::vector<WalkPartResult>& parts);

// The head tree's shape (incoming_walk.h): every mode 100644 or 040000, no
// path more than 16 folders deep, sound names, entries in git's order and
// none twice. Trees that cannot be read, and submodule links, the walk
// reports itself, naming the path. Runs on a thread of its own, through a
// repository handle of its own.
struct Shape {
  std::vector<Problem> problems;  // to report
  bool too_deep = false;          // a path too deep to walk
  bool hashed = true;  // every tree was read and hashed to its id, and nothing was wrong
};
Shape check_shape(const VerifyState& state);

// Every index entry against the objects, then every object against the
// index (verify_index.cc).
void check_index(VerifyState& state);

// No commit reachable from the head may lose or change an object its parent
// had, and the format only moves forward (verify_history.cc).
void check_history(VerifyState& state);
// The same over the commits of `commits` reachable from `head`: the problems,
// in the order found (unit tests read a repository made in memory).
std::vector<Problem> history_problems(git::CommitGraph& commits, const CommitId& head);

}  // namespace kistore::verifying
