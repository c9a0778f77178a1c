// The store: a git repository whose branch tree is the evidence (SPEC §2).
//
// A Store is opened on a directory holding a git repository (bare, as `kistore
// init` makes it, or a plain `git clone` of one). All state is the tree of one
// branch, the one HEAD names. Readers take a Snapshot of the branch head and
// never see a half-made change. Writers describe a change as a function of
// the snapshot it applies to; Store::commit writes the objects (one pack for
// a bulk change), makes one commit, and moves the branch by compare-and-swap,
// calling the function again on the new head when another writer moved it
// first. A crash at any point leaves the branch at its last commit: new
// objects are written before the branch moves, and the move is one atomic
// rename of a lock file.
//
// Reading needs no libgit2: Store::open finds the repository, its branch
// and the objects a Snapshot reads with kistore's own reader
// (store/git/native_repo.h), and opens libgit2 (whose start-up costs more than
// a query) only when something first needs it: repo(), settings, writers,
// history, or an object the own reader cannot read, which libgit2 then
// reads or refuses with its own message, as it always did.
//
// Thread-safety: a Store and its Snapshots belong to one thread; open one
// Store per thread. Separate processes may write to one store at once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "objects/blob.h"
#include "objects/commit_id.h"
#include "objects/digest.h"
#include "objects/document.h"
#include "refs/layout.h"

struct git_repository;
struct git_oid;

namespace kistore {
class DictionaryCache;
namespace git {
class RepoObjects;
class RawTree;
}  // namespace git

// A read-only view of the branch at one commit. It shares the Store's
// objects (and libgit2 repository, once opened); it belongs to the Store's
// thread.
class Snapshot {
 public:
  // The commit `commit_id` ("" for an empty store) whose tree is `tree`
  // (null for an empty store), read through `objects`.
  Snapshot(std::shared_ptr<git::RepoObjects> objects, const git_oid* tree, std::string commit_id);

  // The commit this snapshot shows; "" for an empty store.
  const std::string& commit_id() const { return commit_id_; }
  // The same as a CommitId. Error(kIO) for an empty store, which has none.
  CommitId commit() const;
  bool empty() const { return !tree_; }
  // The format of this tree (refs/layout.h): format 2 when FORMAT holds
  // "kistore 2\n" or the store is empty, format 1 when there is no FORMAT,
  // format 3 for "kistore 3\n" (which Store::open refuses: refs/layout.h).
  // Error(kIO), quoting what FORMAT holds, when it names any other format.
  Format format() const;
  // The id of the commit's tree; null for an empty store.
  const git_oid* tree_id() const { return tree_.get(); }

  // Bytes of the blob at `path`, or nullopt if there is none.
  // Error(kCorruption) "reading <path>: …" when its object cannot be read;
  // Error(kCorruption) "<dir>: a tree object is malformed: …" for a damaged
  // tree on the way.
  std::optional<std::string> read(std::string_view path) const;
  bool exists(std::string_view path) const;
  // Names in the directory `dir` ("" for the root), sorted; empty if absent.
  // Error(kIO) "reading <dir>: …" (libgit2's message) when a tree on the
  // way cannot be read or parsed.
  std::vector<std::string> list(std::string_view dir) const;
  // An entry of a folder: its name, whether it is a folder, and its git id
  // (40 hex digits).
  struct Entry {
    std::string name;
    bool folder = false;
    std::string id;
    friend bool operator==(const Entry&, const Entry&) = default;
  };
  // The entries of the folder `dir` ("" for the root), in tree order; empty
  // if there is none. Error(kCorruption) naming the folder when a tree on the
  // way cannot be read or is malformed.
  std::vector<Entry> entries(std::string_view dir) const;
  // Calls fn(path, bytes) for every blob below `dir`, depth first, in tree
  // order, and other(path) for entries that are neither blobs nor trees
  // (submodule links), which no store should hold. Reads through libgit2;
  // Error(kIO) naming the path that cannot be read.
  void walk(std::string_view dir, const std::function<void(const std::string&, std::string_view)>& fn,
            const std::function<void(const std::string&)>& other = nullptr) const;

  // Reads every blob below `dir` on `threads` threads (0: one per core, at
  // most 8; objects/parallel.h), each through a repository handle of its own.
  // The blobs are split into parts, in tree order; count(n) is called first
  // with the number of parts, then fn(part, path, bytes, error) for every
  // blob, concurrently for different parts but in tree order within a part
  // (so parts 0..n-1 concatenated are the tree order). bytes is null and
  // error says why when a blob cannot be read (its git object is damaged).
  // other(path) is called, from any thread but one call at a time, for
  // entries that are neither blobs nor trees; progress(done, 0) on the
  // calling thread. Each blob is hashed against its git id unless
  // self_checked(path) says the caller checks its content itself (verify's
  // objects, named by their sha256). A tree that cannot be read (or holds
  // content with another id) throws Error(kCorruption); with trees_checked
  // (the caller hashes every tree below `dir` itself: verify's shape check)
  // trees are not hashed here. Folders more than kMaxTreeDepth + 1 deep are
  // not entered (no store's are).
  void walk_parallel(std::string_view dir, unsigned threads, const std::function<void(std::size_t)>& count,
                     const std::function<void(std::size_t, const std::string&, const std::string_view*,
                                              const std::string&)>& fn,
                     const std::function<void(const std::string&)>& other,
                     const std::function<bool(const std::string&)>& self_checked,
                     const std::function<void(std::size_t, std::size_t)>& progress = nullptr,
                     bool trees_checked = false) const;

  bool has_object(const Digest& d) const;
  // The zstd dictionaries of this tree (dictionaries/<id>), for decoding
  // frames that name one (objects/blob.h); loaded on first use, and valid
  // while the Store lives. It reads through the Store's objects: call it
  // where this Snapshot itself may be used (verify's walk calls it from its
  // threads, one at a time: the cache serialises its reads).
  DictionaryLookup dictionaries() const;
  // The object's decompressed bytes, re-hashed: Error(kCorruption) with both
  // digests if they do not hash to `d`; Error(kNotFound) if absent.
  std::string object_bytes(const Digest& d) const;
  std::optional<Json> metadata(const Digest& d) const;
  // The stored document with its metadata. Errors as object_bytes.
  // Without metadata (with_metadata false), refs/metadata is not read.
  Document document(const Digest& d, bool with_metadata = true) const;
  // Every object digest in the store, in path order. Error(kIO) when a
  // tree of objects/sha256 cannot be read.
  std::vector<Digest> object_digests() const;

  // A full digest ("sha256:<hex>" or 64 hex) or a unique prefix of 8+ hex
  // digits (with or without "sha256:"), resolved among the objects.
  // Error(kNotFound) when nothing matches, Error(kInvalidInput) when the ref is
  // malformed or ambiguous (naming the candidates).
  Digest resolve(std::string_view ref) const;

 private:
  friend class Store;
  // The libgit2 repository, opened on first use (store/git/repo_objects.h).
  git_repository* repo() const;

  // Path lookups read raw trees (store/git/raw_tree.h) through the objects and
  // index their entries once: the index's flat folders hold an entry per
  // run, and a query looks up a handful of them.
  // The entry `name` of the tree at `dir`: copies its id to `id` and says
  // whether it is a tree. False when there is none (with is_tree given,
  // also for a submodule link).
  bool find_entry(std::string_view dir, std::string_view name, unsigned char id[20], bool* is_tree) const;
  // The raw tree at folder `dir` ("" the root), read once and kept; null
  // for a folder that is not there. Error(kCorruption) when a tree on the
  // way cannot be read.
  const git::RawTree* raw_tree_index(std::string_view dir) const;
  // The tree object `id` (at `where`, "" the root). Errors as raw_tree_index.
  std::shared_ptr<const git::RawTree> load_tree(const git_oid& id, const std::string& where) const;
  // What list() and object_digests() answer through libgit2's trees, where
  // the raw trees could not be read: libgit2 reads them or says why.
  std::vector<std::string> list_libgit2(std::string_view dir) const;
  std::vector<Digest> object_digests_libgit2() const;

  std::shared_ptr<git::RepoObjects> objects_;
  std::shared_ptr<const git_oid> tree_;
  std::string commit_id_;
  mutable std::optional<Format> format_;  // format(), once read
  mutable std::unordered_map<std::string, std::shared_ptr<const git::RawTree>> raw_;
  mutable std::shared_ptr<DictionaryCache> dictionaries_;  // dictionaries(), once made
};

// A change to the branch tree: blobs to write at paths, blobs already
// stored to place at paths, paths to remove.
struct ChangeSet {
  std::map<std::string, std::string> upserts;  // path -> bytes
  // path -> the id (40 hex) of a blob the store already holds: a merge takes
  // the other side's entries as they are rather than writing their bytes
  // again. A path in both maps takes its bytes from upserts.
  std::map<std::string, std::string> links;
  // path -> the id (40 hex) of a tree the store already holds: a folder moved
  // whole (format 3's trie, store/core/index_trees.h). Nothing of the change
  // may lie beneath it.
  std::map<std::string, std::string> folders;
  std::vector<std::string> removals;
  std::string op;       // the Kistore-Op trailer: add, attest, rerun, merge, import
  std::string summary;  // one line
  std::string body;     // may be empty
  std::vector<CommitId> extra_parents;  // for merges
};

// Whether this process has, so far, written an author as the fallback
// "kistore <kistore@localhost>" (no --author, KISTORE_AUTHOR or git identity),
// so that the command line can say how to set one, as git does.
bool used_fallback_identity();

// Why a write of this process left a plain clone's work tree behind its
// branch (the first time it did: a link or a file of the user's in the way,
// a full disk), "<folder>: <why>"; "" when none did. The store's commit
// stands either way; the command line warns, as git does when a checkout
// keeps a user's files. note_work_tree_behind records one (store/ only).
std::string work_tree_left_behind();
void note_work_tree_behind(const std::string& dir, const std::string& why);

struct CommitOptions {
  // Author and committer, "Name <email>"; empty: git's user.name/user.email,
  // else "kistore <kistore@localhost>".
  std::string author;
  // The commit's time in seconds since 1970 (UTC), for reproducible
  // histories; nullopt: now.
  std::optional<std::int64_t> time;
  // Signs the commit's bytes, returning an armored signature (git's gpgsig
  // header), or empty to leave it unsigned.
  std::function<std::string(std::string_view commit_bytes)> sign;
  // Called with (done, total) while objects are written.
  std::function<void(std::size_t, std::size_t)> progress;
  // Only `kistore upgrade` commits onto a tree of an older format; every
  // other writer is refused there (Error(kIO), before anything is written).
  bool upgrade = false;
};

class Store {
 public:
  // Creates an empty store (a bare repository whose HEAD names refs/heads/main)
  // at `dir`. Error(kIO) if a repository is already there or it cannot be made.
  static Store init(const std::string& dir);
  // Opens the repository at `dir` (bare or not). Error(kIO) naming `dir` if
  // there is none, or if it is a git repository with nothing of a store
  // (store/core/store_shape.h), saying what was found there. kReading leaves
  // libgit2 uninitialised until something needs it (repo(), a write, an
  // object the own reader cannot read); kAnything initialises it here, for
  // commands that call into libgit2 from the start.
  enum class Use { kAnything, kReading };
  static Store open(const std::string& dir, Use use = Use::kAnything);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::string& dir() const { return dir_; }
  // "refs/heads/main", or whatever HEAD names.
  const std::string& branch() const { return branch_; }
  // The libgit2 repository, opened (and libgit2 initialised) on first call.
  // Error(kIO) naming the store when libgit2 cannot open it.
  git_repository* repo() const;
  // A folder inside the repository for local state that is never synced
  // (the trust list): "<git dir>/kistore". Created on demand by writers.
  std::string local_dir() const;
  // Local (never synced) settings, kept in the repository's git config under
  // "kistore.<key>".
  std::optional<std::string> setting(const std::string& key) const;
  void set_setting(const std::string& key, const std::string& value);

  Snapshot snapshot() const;
  // The tree of the commit `commit_id` (40 hex digits), as snapshot() shows
  // the head's: for readers of the history (store/query/group_story.h) that look
  // at the index as an older commit had it. Error(kIO) naming the commit when
  // it cannot be read or is not a commit.
  Snapshot snapshot_at(const std::string& commit_id) const;

  // The author a commit would get: `option` ("Name <email>") if given, else
  // git's user.name/user.email, else "kistore <kistore@localhost>".
  // Error(kInvalidInput) naming `option` if it is not of that form, or its
  // name or email holds <, >, a line break or a NUL.
  std::string author(const std::string& option) const;

  // Applies the change that `build` computes from the current head: writes
  // it as one commit and moves the branch by compare-and-swap. When another
  // writer moved the branch first, calls `build` again on the new head (up to
  // a bounded number of times). `build` returns nullopt when there is nothing
  // to do: then no commit is made and commit returns nullopt. Returns the new
  // commit id. Error(kIO), before anything is written, when the branch's tree
  // holds anything that is not kistore's (store/core/store_shape.h), or is of a
  // format other than format 2 (unless options.upgrade). The first commit of
  // a store also writes FORMAT.
  std::optional<std::string> commit(const std::function<std::optional<ChangeSet>(const Snapshot&)>& build,
                                    const CommitOptions& options);

  // For writers that build their own trees (store/write/bulk_add.h): `write` is
  // given the current head, writes every object of the new commit (visible
  // to the repository's readers when it returns) and returns the commit's
  // id, or nullopt when there is nothing to do. The branch then moves by
  // compare-and-swap, and `write` runs again on the new head when another
  // writer moved it first, as for commit. Errors as commit (a store of
  // format 1 is refused unless `upgrade`); `write` itself writes FORMAT into
  // a new store's first tree. Whatever `write` throws passes through, with
  // the branch where it was.
  std::optional<std::string> commit_written(const std::function<std::optional<std::string>(const Snapshot&)>& write,
                                            const std::string& op,
                                            bool upgrade = false);
  // The text of a commit of `tree` on `base` (its parent, if any, then
  // change.extra_parents) with change's message, authored and signed as
  // `options` say. Error(kInvalidInput) for a malformed author.
  std::string commit_text(const Snapshot& base, const git_oid& tree, const ChangeSet& change,
                          const CommitOptions& options) const;
  // Removes what crashed writers left in the object folders (store/edge/tempfiles.h).
  void sweep_temp_files() const;
  // Error(kIO) naming the store, before anything is written, when its
  // branch's tree holds anything that is not kistore's (store/core/store_shape.h),
  // or naming the folder when this process may not write to it
  // (store/git/store_access.h: "permission denied").
  void check_writable() const;
  // Error(kIO) naming the folder, before anything is written, when this
  // process may not write the store's own settings (config, the trust list):
  // a read-only mount, or folders of another user. What trust, config and
  // remote check before they write.
  void check_settings_writable() const;

 private:
  // A Store over `objects`, on the branch HEAD names. Error(kIO) naming
  // `dir` when HEAD cannot be read or is detached.
  Store(std::shared_ptr<git::RepoObjects> objects, std::string dir);
  Store(std::shared_ptr<git::RepoObjects> objects, std::string dir, std::string branch);
  // open() where kistore's reader finds the repository; nullopt when libgit2
  // must open it (store/git/native_repo.h says when).
  static std::optional<Store> open_native(const std::string& dir);
  std::optional<Snapshot> snapshot_native() const;
  // Error(kIO) when the head's FORMAT names a format this release does not read.
  void check_format() const;
  std::string write_commit(const Snapshot& base, const ChangeSet& change, const CommitOptions& options);
  std::shared_ptr<git::RepoObjects> objects_;
  std::string dir_;
  std::string branch_;
};

// Commit messages kistore writes: "<summary>\n\n<body>\n\nKistore-Op: <op>\n".
std::string commit_message(const ChangeSet& change);
// The Kistore-Op trailer of a commit message, or "" if none.
std::string commit_op(std::string_view message);

}  // namespace kistore
