// The state one verify_store() call shares between its checks, private to
// store/verify/: the snapshot it verifies, every object's facts, the index
// entries as the walk found them, and the report being written. The checks
// are in their own files: the walk of the tree and its shape
// (verify_tree.cc), the index against the objects (verify_index.cc), the
// history (verify_history.cc); verify.cc runs them in order.
//
// Thread-safety: the walk fills `objects` shard by shard under each shard's
// lock, and gives each part of the tree a WalkPartResult of its own; checks
// that run on every core report through check_in_parallel. Everything else
// runs on one thread.
#pragma once

#include <array>
#include <algorithm>
#include <atomic>
#include <map>
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
#include "store/verify/verify.h"

namespace kistore::verifying {

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
// Format 3 (refs/layout.h) fills the same entries from the lines of its
// index files (a source entry keyed by the upstream id's key, not a path),
// and summarises each file for the trie's shape check (check_trie_shape).
struct IndexEntries {
  std::vector<MetadataEntry> metadata;
  std::vector<PairEntry> groups, attestations, reruns;
  std::vector<LevelEntry> levels;
  std::vector<std::pair<std::string, SourceBytes>> sources;  // in tree order
  std::map<Family, std::vector<TrieFileSummary>> trie_files;  // format 3
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
inline thread_local Findings* t_findings = nullptr;

template <typename T>
void append(std::vector<T>& to, std::vector<T>& from) {
  if (to.empty()) to.swap(from);
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
  // Every object's facts (group_path left empty: group_path_of), by the first
  // byte of its digest, each shard filled by the walk's parts under its lock.
  struct ObjectShard {
    std::mutex mutex;
    std::unordered_map<Digest, StoredObject> map;
  };
  std::array<ObjectShard, 256> objects;
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
  std::string group_path_of(const Digest& digest, const ObjectFacts& run) const {
    if (format == Format::k3 && run.key) return line_at(Family::kGroups, run.key->hex() + digest.hex());
    return run.key ? group_path(format, *run.key, digest) : run.group_path;
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

  const ObjectFacts* object(const Digest& d) const {
    const auto& map = objects[d.bytes()[0]].map;
    auto it = map.find(d);
    return it == map.end() ? nullptr : &it->second.facts;
  }
  StoredObject* stored(const Digest& d) {
    auto& map = objects[d.bytes()[0]].map;
    auto it = map.find(d);
    return it == map.end() ? nullptr : &it->second;
  }
  std::size_t object_count() const {
    std::size_t n = 0;
    for (const ObjectShard& shard : objects) n += shard.map.size();
    return n;
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
