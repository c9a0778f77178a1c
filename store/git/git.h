// Small RAII and error helpers around libgit2, private to store/.
//
// Only store/ knows libgit2. Every libgit2 call that can fail goes through
// check(), which turns its error into kistore::Error(kIO) naming what was
// being done and libgit2's own message. Beside the owning pointers: object
// ids as text and as hash keys, references read, written and moved by
// compare-and-swap, ancestry, and whole blobs.
//
// Thread-safety: as libgit2's: a git_repository (and what it hands out)
// belongs to one thread; HashCheck sets a process-wide option.
#pragma once

#include <git2.h>

#include <memory>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "objects/error.h"

namespace kistore::git {

// Folders a path may go below a store's root (SPEC §2: tree depth ≤ 16):
// every walk of a tree stops there instead of following the input down. The
// deepest path kistore writes, objects/sha256/<h0h1>/<h2h3>/<h4…>, is 4.
inline constexpr unsigned kMaxTreeDepth = 16;

// Initialises libgit2 once per process. Costly (Debian's libgit2 parses the
// system's CA bundle here): only what uses libgit2 calls it, when it first
// does (Store::repo, store/git/repo_objects.h), never a read that kistore's own
// reader answers (store/git/native_repo.h).
void ensure_init();

// While alive, libgit2 re-hashes (on) or trusts (off) every object it reads
// (process-wide; off by default, as in git). Restores the previous setting.
class HashCheck {
 public:
  explicit HashCheck(bool on);
  ~HashCheck();
  HashCheck(const HashCheck&) = delete;
  HashCheck& operator=(const HashCheck&) = delete;

 private:
  bool previous_;
};

// While alive, libgit2 keeps no parsed object and maps packs in windows of
// kStreamWindowBytes, at most kStreamMappedBytes at once (process-wide): for
// a walk that reads each of many objects once (a pull), whose memory then
// does not follow the number of objects read. The outermost one restores
// libgit2's settings.
class StreamingReads {
 public:
  static constexpr std::size_t kStreamWindowBytes = std::size_t(8) << 20;
  static constexpr std::size_t kStreamMappedBytes = std::size_t(32) << 20;
  StreamingReads();
  ~StreamingReads();
  StreamingReads(const StreamingReads&) = delete;
  StreamingReads& operator=(const StreamingReads&) = delete;

 private:
  std::size_t window_ = 0, mapped_ = 0;
};

// libgit2's last error message, or "unknown error".
std::string last_error();

// Throws Error(code) "<what>: <libgit2 message>" when rc < 0.
inline void check(int rc, std::string_view what, ErrorCode code = ErrorCode::kIO) {
  if (rc < 0) throw Error(code, std::string(what) + ": " + last_error());
}

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { if (p) Free(p); }
};
template <typename T, void (*Free)(T*)>
using Ptr = std::unique_ptr<T, Deleter<T, Free>>;

using Repository = Ptr<git_repository, git_repository_free>;
using Odb = Ptr<git_odb, git_odb_free>;
using OdbObject = Ptr<git_odb_object, git_odb_object_free>;
using Tree = Ptr<git_tree, git_tree_free>;
using TreeEntry = Ptr<git_tree_entry, git_tree_entry_free>;
using Commit = Ptr<git_commit, git_commit_free>;
using Blob = Ptr<git_blob, git_blob_free>;
using Reference = Ptr<git_reference, git_reference_free>;
using Signature = Ptr<git_signature, git_signature_free>;
using Config = Ptr<git_config, git_config_free>;
using Revwalk = Ptr<git_revwalk, git_revwalk_free>;
using Remote = Ptr<git_remote, git_remote_free>;
using Diff = Ptr<git_diff, git_diff_free>;

// The object database of `repo`. Error(kIO) when libgit2 cannot open it.
Odb open_odb(git_repository* repo);

// Moves the reference `name` to `to` only if it still points at `from`, or,
// with `from` null, only if it does not exist yet: both checked under the
// reference's lock (an all-zero current id means "must not exist" to
// libgit2). git_reference_create without force checks existence before it
// takes the lock, so two first commits could both "succeed" and one be
// lost. Returns libgit2's code: GIT_EMODIFIED, GIT_EEXISTS or GIT_ELOCKED
// when another writer came first. On success frees the new reference.
inline int move_ref(git_repository* repo, const std::string& name, const git_oid& to, const git_oid* from,
                    const std::string& log) {
  git_oid absent{};
  git_reference* ref = nullptr;
  int rc = git_reference_create_matching(&ref, repo, name.c_str(), &to, 1, from ? from : &absent, log.c_str());
  if (rc == 0) git_reference_free(ref);
  return rc;
}

// git_oid as a key of unordered containers.
struct OidHash {
  std::size_t operator()(const git_oid& id) const noexcept {
    std::size_t h;
    __builtin_memcpy(&h, id.id, sizeof h);
    return h;
  }
};
// Whether two ids are the same (no libgit2 call: the rooms above git/ use it).
inline bool same_id(const git_oid& a, const git_oid& b) noexcept {
  return __builtin_memcmp(a.id, b.id, GIT_OID_RAWSZ) == 0;
}
struct OidEq {
  bool operator()(const git_oid& a, const git_oid& b) const noexcept { return same_id(a, b); }
};

// The id in 40 lowercase hex digits.
std::string oid_str(const git_oid& oid);

// The id written as `text` (40 hex digits). Error(kIO) naming it otherwise.
git_oid parse_oid(const std::string& text);

// Where the reference `name` points, resolved through symbolic references;
// nullopt when there is no such reference. Error(kIO) when it cannot be read.
std::optional<git_oid> ref_target(git_repository* repo, const std::string& name);
// Points `name` at `id` whatever it pointed at before (kistore's own refs
// under refs/kistore/; the branch moves by move_ref). Error(kIO) on failure.
void set_ref(git_repository* repo, const std::string& name, const git_oid& id, const std::string& log);
// Removes `name` if it exists; never fails.
void delete_ref(git_repository* repo, const std::string& name);
// What 4 to 40 hex digits name among the repository's objects (as git's
// abbreviated ids): one object (its id and type: "commit", "tree", "blob",
// "tag"), none, or several. Never fails: a `hex` that is not 4 to 40 hex
// digits names none.
struct NamedObject {
  enum class Found { kOne, kNone, kSeveral } found = Found::kNone;
  git_oid id{};
  std::string type;
};
NamedObject object_by_prefix(git_repository* repo, const std::string& hex);
// Whether `name` is a well-formed full reference name (git check-ref-format:
// "refs/heads/main", "HEAD"). Never fails.
bool valid_ref_name(const std::string& name);
// The first parent of commit `commit`; nullopt for a root commit.
// Error(kIO) when it cannot be read as a commit.
std::optional<git_oid> first_parent(git_repository* repo, const git_oid& commit);
// Whether `commit` is `ancestor` or descends from it (false when either is
// missing).
bool descends_from(git_repository* repo, const git_oid& commit, const git_oid& ancestor);
// The commit's SSH/GPG signature (armored) and the bytes it signs; both ""
// for an unsigned commit (or one that cannot be read). Never fails.
void commit_signature(git_repository* repo, const git_oid& commit, std::string& signature, std::string& payload);
// The id of the tree of commit `commit`. Error(kIO) "<what>: <why>" when it
// cannot be read as a commit; `what` is "reading commit <hex>" when empty.
git_oid commit_tree(git_repository* repo, const git_oid& commit, const std::string& what = "");
// The repository's git folder (with a trailing "/").
std::string gitdir(git_repository* repo);
// How many commits `head` reaches, itself included. Error(kIO) on failure.
std::size_t count_commits(git_repository* repo, const git_oid& head);

// A repository's object database, for the rooms above git/: they hold it and
// read through it without calling libgit2 themselves (its calls are in
// git.cc). Error(kIO) naming `what` when an object cannot be read.
class ObjectDatabase {
 public:
  explicit ObjectDatabase(git_repository* repo);
  ~ObjectDatabase();
  ObjectDatabase(ObjectDatabase&& other) noexcept : odb_(other.odb_) { other.odb_ = nullptr; }
  ObjectDatabase(const ObjectDatabase&) = delete;
  ObjectDatabase& operator=(const ObjectDatabase&) = delete;
  ObjectDatabase& operator=(ObjectDatabase&&) = delete;

  git_odb* get() const { return odb_; }
  // The object's size, from its header only.
  std::size_t size_of(const git_oid& id, const std::string& what) const;
  // Calls fn with the object's bytes (valid during the call only).
  void read(const git_oid& id, const std::string& what, const std::function<void(std::string_view)>& fn) const;

 private:
  git_odb* odb_ = nullptr;
};
// The content of the blob `id`. Error(kIO) when it cannot be read (or,
// under HashCheck(true), does not hash to its id).
std::string blob_bytes(git_repository* repo, const git_oid& id);

}  // namespace kistore::git
