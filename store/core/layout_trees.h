// The trees of a store's commits read as the layout says (SPEC §2), for the
// checks and merges of pull (incoming.h, merge.h), private to store/: the
// blob at a path, a run's level entry, whether a source id is blocked, and
// what differs between two trees.
//
// Trees are read raw (raw_tree.h), through the store's packs first, checked
// against their ids (what a pull reads came from a remote, or is merged with
// what did), and kept by id for the reader's life: the index's big folders
// (refs/levels/<level>, a source's ids) are looked up again for every new
// object. A tree root is given as its id; null is the empty tree.
//
// Errors: Error(kCorruption) for a tree that cannot be read, is malformed or
// does not hash to its id; Error(kIO) for a blob libgit2 cannot read.
//
// The trees are read through libgit2's door over a repository (and its
// packs), or through any CommitGraph (an in-memory one in unit tests).
//
// Thread-safety: one thread, except stored_blob; must not outlive the
// repository.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "objects/digest.h"
#include "refs/index_lines.h"
#include "refs/index_plan.h"
#include "refs/layout.h"
#include "refs/level.h"
#include "store/git/commit_graph.h"
#include "store/git/git.h"
#include "store/git/packread.h"
#include "store/git/raw_tree.h"

namespace kistore {

// A run's level entry: which level, and the blob that holds its evidence.
struct LevelState {
  Level level;
  git_oid id;
  friend bool operator==(const LevelState& a, const LevelState& b) {
    return a.level == b.level && git::same_id(a.id, b.id);
  }
};

class LayoutTrees {
 public:
  // The trees of `repo`, whose packs are mapped now: packs written later are
  // read through libgit2. With `check_ids` false, trees are not hashed
  // against their ids: only for a repository every object of which was
  // rehashed on its way in (a quarantine after walk_incoming) or is the
  // store's own.
  explicit LayoutTrees(git_repository* repo, bool check_ids = true);
  // The trees of the repository behind `commits` (the door of
  // store/git/commit_graph.h; an in-memory one in unit tests), which must
  // outlive this, read through it alone.
  explicit LayoutTrees(git::CommitGraph& commits, bool check_ids = true);
  ~LayoutTrees();  // out of line: the rooms that hold one call no libgit2

  // The commits of the same repository, for the checks and merges that read
  // history beside the trees.
  git::CommitGraph& commits() const { return *commits_; }

  // The blob id at `path` below `root`, if any.
  std::optional<git_oid> entry(const git_oid* root, const std::string& path) const;
  // The bytes of the blob `id`: from the store's packs where it is a whole
  // stored object (hashed against its id with check_ids), else through
  // libgit2. Errors: Error(kCorruption) for content with another id,
  // Error(kIO) for a blob libgit2 cannot read.
  std::string blob(const git_oid& id) const;
  // As blob, from the packs alone (nullopt where blob would ask libgit2):
  // safe to call from any thread.
  std::optional<std::string> stored_blob(const git_oid& id) const;
  // The bytes of the blob at `path` below `root`, if any.
  std::optional<std::string> read(const git_oid* root, const std::string& path) const;
  // The format of the tree `root` (refs/layout.h): format 2 for the empty
  // tree or FORMAT "kistore 2\n", format 3 for "kistore 3\n" (which pull
  // and push refuse from a remote until every room knows it), format 1
  // without FORMAT, nullopt when FORMAT holds anything else (what it holds:
  // read(root, "FORMAT")).
  std::optional<Format> format_of(const git_oid* root) const;
  // Format 3 (refs/layout.h): the line of `key` in refs/<family>/ below
  // `root`, if any, reading the folders on its path and the one file it
  // would be in (refs/index_plan.h find_line; Error(kCorruption) naming that
  // file when it is not sorted lines under its digits).
  std::optional<std::string> index_line(const git_oid* root, Family family, const std::string& key) const;
  // Format 3: the edits that turn refs/<family>/ below `root` into the trie
  // of its lines with `changes` made (refs/index_plan.h plan_trie_update,
  // reading only the changed keys' paths). Errors as plan_trie_update.
  TriePlan plan(const git_oid* root, Family family, const TrieChanges& changes) const;
  // The entry at `path` below `root`, a blob or a tree: its id and whether
  // it is a tree; nullopt when there is none.
  std::optional<std::pair<git_oid, bool>> entry_any(const git_oid* root, const std::string& path) const;
  // The run's level entry below `root` (in the tree's format), the first of disputed, reported,
  // source-native, reproduced that exists.
  std::optional<LevelState> level_of(const git_oid* root, const Digest& run) const;
  // How many level entries the run has below `root`.
  int level_count(const git_oid* root, const Digest& run) const;
  // Whether the source id `path` (refs/sources/...) cannot be an entry of its
  // own below `root`: a folder of other ids is there, or a shorter id is a
  // prefix of it. add then keeps the first claim and indexes nothing (verify
  // warns).
  bool source_blocked(const git_oid* root, const std::string& path) const;

  // The non-tree paths that differ between `from` and `to`, below the folder
  // `dir` ("" for all), in git's order (TreeReader::diff); with `sides`, only
  // those of one side (and the trees only the other side has are not read).
  std::vector<git::TreeDelta> diff(const git_oid* from, const git_oid* to, const std::string& dir = "",
                                   git::DiffSides sides = git::DiffSides::kBoth) const;

 private:
  git_repository* repo_ = nullptr;  // null behind another door than libgit2's
  std::unique_ptr<git::CommitGraph> own_commits_;
  git::CommitGraph* commits_;
  std::optional<git::ObjectDatabase> odb_;
  std::unique_ptr<git::PackReader> packs_;
  std::unique_ptr<git::TreeReader> reader_;
  bool check_ids_;
  mutable std::unordered_map<git_oid, std::optional<Format>, git::OidHash, git::OidEq> formats_;  // format_of, by root
  // The last few blobs blob() read: a merge looks up one key after another
  // in the same index file (up to 256 lines, deflated), and each lookup read
  // and inflated the whole file again.
  // Only blobs of at most kRecentBlobBytes are kept (index files and FORMAT;
  // not a big document).
  static constexpr std::size_t kRecentBlobs = 4, kRecentBlobBytes = std::size_t(1) << 20;
  mutable std::array<std::optional<std::pair<git_oid, std::string>>, kRecentBlobs> recent_;
  mutable std::size_t recent_next_ = 0;

 public:
  // The index file at `path` in its family's trie (its blob `id`; `where`,
  // its place in the tree, "refs/<family>/<path>") split into checked lines
  // (parse_trie_file), kept for the next lookups: a merge or an incoming check
  // looks up key after key, in order, and most fall in the file the one
  // before read. Kept by blob and place together, since a file's check
  // depends on the digits of its path.
  std::shared_ptr<const TrieFileLines> index_file(const git_oid& id, const std::string& path,
                                                  const std::string& where) const;

 private:
  static constexpr std::size_t kParsedFiles = 8;
  struct ParsedFile {
    git_oid id;
    std::string where;
    std::shared_ptr<const TrieFileLines> lines;
  };
  mutable std::array<std::optional<ParsedFile>, kParsedFiles> parsed_;
  mutable std::size_t parsed_next_ = 0;
};

}  // namespace kistore
