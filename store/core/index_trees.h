// Format 3's index (SPEC §2, refs/index_lines.h, refs/index_trie.h) read from
// a snapshot's trees and changed in place: what add, rerun, attest, merge and
// upgrade write, and what queries read.
//
// A change of some facts becomes, per family, the plan refs/index_plan.h
// computes (reading only the changed keys' paths), and the plan becomes
// paths of a ChangeSet: files written, paths removed, folders moved whole. So
// the refs/ tree a change leaves is build_trie of the facts, whatever order
// and batching they came in: two stores with the same facts have the same
// refs/ tree id.
//
// Thread-safety: as the Snapshot's (one thread).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "refs/index_lines.h"
#include "refs/index_plan.h"
#include "store/core/layout_trees.h"
#include "store/core/store.h"

namespace kistore {

// "refs/<family>".
std::string family_dir(Family family);

// A TrieReader over refs/<family>/ of a snapshot. Error(kCorruption) naming
// the path for a file it cannot read.
class SnapshotTrie : public TrieReader {
 public:
  SnapshotTrie(const Snapshot& snapshot, Family family) : snapshot_(snapshot), dir_(family_dir(family)) {}
  std::vector<Entry> list(const std::string& path) override;
  std::string read(const std::string& path) override;
  std::string where(const std::string& path) const override { return full(path); }

 private:
  std::string full(const std::string& path) const { return path.empty() ? dir_ : dir_ + "/" + path; }
  const Snapshot& snapshot_;
  std::string dir_;
};

inline constexpr std::size_t kRebuildAbove = 2048;

// Facts to put into an index and keys to take out of it, by family.
struct IndexChanges {
  std::map<Family, TrieChanges> families;
  // Adds the fact's line (replacing the line of its key, if any).
  void put(const IndexFact& fact);
  // The same for a line already rendered (render_line) under its key.
  void put_line(Family family, std::string key, std::string line);
  // Takes the line of `key` out of `family`, if there is one.
  void remove(Family family, std::string key);
  // Forgets a put of `key` in `family` made before (a rerun's documents put
  // its group line, which a rerun does not have); false when there was none.
  bool unput(Family family, std::string_view key);
  bool empty() const { return families.empty(); }
};

// Adds to `change` the paths that turn `base`'s refs/ into build_trie of its
// facts with `changes` made: files as upserts, removals, folders moved whole
// as `change.folders`. A family changed in more than kRebuildAbove keys (a
// bulk add, a big merge) is rebuilt whole from its lines instead: its folder
// removed and every file of build_trie written (the same tree, at the cost
// of the family's size rather than of the plan's per-key walk). A fact put twice, or put and removed, is
// std::invalid_argument (a programming error); Error(kCorruption) when an
// index file on the way is not sorted lines under its path (a store that no
// longer verifies); Error(kInvalidInput) when keys would need a trie deeper
// than kTrieMaxFolders (digests ground to collide).
void apply_index_changes(const Snapshot& base, const IndexChanges& changes, ChangeSet& change);

// The same below the tree `root` (null: the empty tree) that `trees` reads:
// what a merge, which builds on a commit of its own, writes.
void apply_index_changes(const LayoutTrees& trees, const git_oid* root, const IndexChanges& changes, ChangeSet& change);

// The line of `key` in `family` of `snapshot`, if any: the one file the key
// would be in is read.
std::optional<IndexFact> find_fact(const Snapshot& snapshot, Family family, const std::string& key);

// The path ("refs/<family>/…") of the file of `snapshot` that holds the line
// of `key`, or would hold it: for messages about a line.
std::string fact_file(const Snapshot& snapshot, Family family, const std::string& key);

// Every line of `family` whose key starts with `prefix` (hex digits), in key
// order: the files below the folder the prefix leads to.
std::vector<IndexFact> facts_with_prefix(const Snapshot& snapshot, Family family, const std::string& prefix);

}  // namespace kistore
