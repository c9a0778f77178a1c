// Raw git trees: entry order, entry parsing, path lookups, listings and the
// added/removed/changed diff, over a tree object's bytes. Private to store/.
//
// A tree object is a sequence of entries "<octal mode> <name>\0<20-byte id>"
// in git's order (compare_entries). kistore reads trees this way rather than
// through libgit2's git_tree: libgit2 1.5 parses every entry into a heap
// object, caches only trees under 4 KiB, and its tree diff walks every entry
// of both sides; the index's flat folders hold an entry per run. Here a tree
// is its bytes, read once (through the PackReader when the store holds it as
// a whole stored object, else through libgit2's object database), indexed
// for lookup by name only when looked up, and diffed by a merge walk that
// skips subtrees with equal ids, so the cost follows the change, not the size
// of the trees.
//
// Parsing follows libgit2's own rule for a well-formed tree (tree.c,
// git_tree__parse_raw): an octal mode up to 0xFFFF, one space, a name of 1 to
// 65,535 bytes, a NUL, a 20-byte id. The kind of an entry follows from its
// mode as libgit2 decides it: (mode & 0170000) 040000 a tree, 0160000 a
// submodule link (a commit elsewhere), anything else a blob. Nothing here
// checks that names are sorted or unique: a store's trees come from kistore
// or git; verify and pull check what they read path by path.
//
// Who uses it: Snapshot's path lookups (store.cc), verify's whole-store
// listing and history check, pull's incoming checks and merges, push's
// selection of new objects, and objwrite's tree builder (its base trees).
//
// Thread-safety: the free functions are reentrant. A TreeReader and the
// RawTrees it hands out belong to one thread (the reader keeps a cache and a
// RawTree builds its lookup index on first use); open one per thread.
#pragma once

#include <git2.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/git/git.h"

namespace kistore::git {

class PackReader;

// git's order of tree entries: by name, bytewise, a tree's name compared as
// if it ended in "/". Negative, zero or positive, as memcmp.
int compare_entries(std::string_view a, bool a_tree, std::string_view b, bool b_tree);

inline constexpr std::uint32_t kModeBlob = 0100644;
inline constexpr std::uint32_t kModeTree = 040000;
inline constexpr std::uint32_t kModeLink = 0160000;

inline bool mode_is_tree(std::uint32_t mode) { return (mode & 0170000) == 040000; }
inline bool mode_is_link(std::uint32_t mode) { return (mode & 0170000) == 0160000; }

// One entry of a tree object's bytes.
struct RawEntry {
  std::string_view name;
  std::string_view bytes;  // the whole entry, as stored (empty for an entry found by RawTree::find)
  std::uint32_t mode = 0;
  const unsigned char* id = nullptr;  // 20 bytes inside the tree's bytes
  bool tree() const { return mode_is_tree(mode); }
  bool link() const { return mode_is_link(mode); }
  // GIT_OBJECT_TREE, GIT_OBJECT_COMMIT (a submodule link) or GIT_OBJECT_BLOB.
  git_object_t type() const { return tree() ? GIT_OBJECT_TREE : link() ? GIT_OBJECT_COMMIT : GIT_OBJECT_BLOB; }
  git_oid oid() const;
};

// Reads the entry at the start of `rest` (a tree's bytes) into `e` and
// advances past it; false when `rest` is empty. Error(kCorruption) "a tree
// object is malformed: …" saying what is wrong when the bytes are not an entry.
bool next_entry(std::string_view& rest, RawEntry& e);

// Error(kCorruption) "<where>: the tree object <id> holds content with another
// id" unless `data` hashes (as a git tree) to `id`.
void check_tree_id(std::string_view data, const git_oid& id, const std::string& where);

// One tree object's bytes, owned, and an index of its entries by name built
// on the first find() in a tree over kScanBytes (8 bytes per entry).
class RawTree {
 public:
  RawTree(std::string stored);  // bytes read from a pack
  explicit RawTree(OdbObject object);  // bytes held by libgit2
  ~RawTree();  // in raw_tree.cc: the rooms above git/ free a RawTree without calling libgit2
  RawTree(const RawTree&) = delete;
  RawTree& operator=(const RawTree&) = delete;

  std::string_view bytes() const { return data_; }
  // The entry called `name`, if any. Error(kCorruption) when the tree is
  // malformed (found while indexing it) or over 4 GiB.
  std::optional<RawEntry> find(std::string_view name) const;

 private:
  struct Slot {
    std::uint32_t name;  // offset of the name in the bytes
    std::uint16_t name_size;
    std::uint16_t mode;
  };
  void build_index() const;
  static constexpr std::size_t kScanBytes = 512;  // find() scans trees up to this size

  std::string stored_;
  OdbObject object_;
  std::string_view data_;
  mutable std::vector<Slot> index_;  // sorted by name
  mutable bool indexed_ = false;
};

// One path whose non-tree entry differs between two trees.
struct TreeDelta {
  enum Status : char { kAdded = 'A', kRemoved = 'D', kModified = 'M' };
  Status status;
  std::string path;         // from the root of the trees compared
  git_oid old_id{}, new_id{};  // all zero on the side that lacks the path
  std::uint32_t old_mode = 0, new_mode = 0;  // 0 on the side that lacks the path
  bool ids_differ() const { return !same_id(old_id, new_id); }
};

// Which sides of a diff matter. A diff that wants no removed paths does not
// read the trees that only the old side has, and one that wants no added
// paths does not read those only the new side has.
enum class DiffSides { kBoth, kAddedOrChanged, kRemovedOrChanged };

// Paths a diff looks below (TreeReader::diff with patterns), each
// '/'-separated from the root. A name "*" stands for any one name in that
// folder (as "refs/levels/*/<hex>" for a run's entry at every level); a
// pattern ending in "/" names what lies below that folder, one without it
// the non-tree entry at that path or, where that is a folder, everything
// below it. For literal paths that is git's pathspec; git's "*" also spans
// '/', which no path of a store's layout needs.
class PathPatterns {
 public:
  explicit PathPatterns(const std::vector<std::string>& patterns);
  bool empty() const { return root_.children.empty() && !root_.below; }
  // Whether the patterns name the path of a non-tree entry `path` (it or a
  // folder above it), as the diff would report it.
  bool matches(std::string_view path) const;

  // The patterns as a tree of names (for the walks in raw_tree.cc).
  struct Node {
    std::map<std::string, Node, std::less<>> children;  // by name; "*" any name
    bool entry = false;  // the non-tree entry at this path
    bool below = false;  // everything below the folder at this path
  };

 private:
  friend class TreeReader;
  Node root_;
};

// Reads object `id` into `type` and `bytes`; false, with `why` saying why,
// when it cannot (absent, unreadable). A TreeReader's source other than
// libgit2's object database (an in-memory repository in tests).
using ObjectLoader = std::function<bool(const git_oid& id, git_object_t& type, std::string& bytes, std::string& why)>;

// Reads the trees of one repository: whole stored objects through `packs`
// first (may be null), else through `odb`, which must outlive the reader, or
// through `load`.
class TreeReader {
 public:
  struct Options {
    const PackReader* packs = nullptr;
    // Hash every tree read against its id: for trees that came from
    // elsewhere (pull), or a walk that must stand without libgit2's check.
    bool check_ids = false;
    // Keep the trees read, by id: for many lookups in the same trees.
    bool keep = false;
  };
  TreeReader(git_odb* odb, Options options);
  TreeReader(ObjectLoader load, Options options);
  TreeReader(const TreeReader&) = delete;
  TreeReader& operator=(const TreeReader&) = delete;

  git_odb* odb() const { return odb_; }  // null for a reader over an ObjectLoader

  // The tree `id`; `where` names its path in messages ("" is the root).
  // Error(kCorruption) when it cannot be read, is not a tree or (check_ids)
  // holds content with another id.
  std::shared_ptr<const RawTree> tree(const git_oid& id, std::string_view where) const;

  // The id of the blob (neither a tree nor a submodule link) at `path`
  // ("a/b/c") below the tree `root` (null: the empty tree), if every folder
  // on the way is a tree and the last name is a blob. Errors as tree().
  std::optional<git_oid> blob_at(const git_oid* root, std::string_view path) const;
  // The id of the tree at `dir` below `root` ("": `root` itself). Errors as tree().
  std::optional<git_oid> tree_at(const git_oid* root, std::string_view dir) const;

  // Calls fn(delta) for every path below the folder `dir` ("" for all) whose
  // non-tree entry differs between the trees `from` and `to` (either may be
  // null: the empty tree), depth first in git's order: added, removed, or
  // modified (same name, both non-trees, another id or mode). A name that is
  // a tree on one side and not on the other is a removal and an addition.
  // Subtrees with equal ids are skipped. With on_new_tree, it is called with
  // each tree of `to` below `dir` that `from` does not hold at the same path
  // with the same id, before what lies below it. Errors as tree().
  void diff(const git_oid* from, const git_oid* to, std::string_view dir,
            const std::function<void(const TreeDelta&)>& fn, DiffSides sides = DiffSides::kBoth,
            const std::function<void(const std::string& path, const git_oid& id)>& on_new_tree = nullptr) const;

  // As diff above, for the paths `patterns` names (each path once, however
  // many patterns name it), in git's order. Only the folders on the way to
  // them are read, and a folder with the same id on both sides is skipped,
  // so the cost follows the patterns and what changed along them, not the
  // size of the trees. Errors as tree().
  void diff(const git_oid* from, const git_oid* to, const PathPatterns& patterns,
            const std::function<void(const TreeDelta&)>& fn) const;

  // Calls fn(path, id, type) for every entry below the tree `root` (paths
  // prefixed by `prefix`, '/'-joined), depth first in tree order; trees are
  // not reported themselves, submodule links are (type GIT_OBJECT_COMMIT).
  // With on_tree, a subtree is entered only when on_tree(path, id) is true.
  // Errors as tree().
  void list(const git_oid& root, const std::string& prefix,
            const std::function<void(const std::string&, const git_oid&, git_object_t)>& fn,
            const std::function<bool(const std::string&, const git_oid&)>& on_tree = nullptr) const;

 private:
  struct Diff;
  struct PatternDiff;
  struct Found {
    git_oid id;
    std::uint32_t mode;
  };
  std::optional<Found> lookup(const git_oid& root, std::string_view path) const;

  git_odb* odb_ = nullptr;
  ObjectLoader load_;
  Options options_;
  mutable std::unordered_map<git_oid, std::shared_ptr<const RawTree>, OidHash, OidEq> kept_;
};

}  // namespace kistore::git
