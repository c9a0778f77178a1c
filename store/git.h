// Small RAII and error helpers around libgit2, private to store/.
//
// Only store/ knows libgit2. Every libgit2 call that can fail goes through
// check(), which turns its error into kistore::Error(kIO) naming what was
// being done and libgit2's own message.
#pragma once

#include <git2.h>

#include <memory>
#include <string>
#include <string_view>

#include "objects/error.h"

namespace kistore::git {

// Folders a path may go below a store's root (SPEC §2: tree depth ≤ 16):
// every walk of a tree stops there instead of following the input down. The
// deepest path kistore writes, objects/sha256/<h0h1>/<h2h3>/<h4…>, is 4.
inline constexpr unsigned kMaxTreeDepth = 16;

// Initialises libgit2 once per process.
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
using Packbuilder = Ptr<git_packbuilder, git_packbuilder_free>;
using Revwalk = Ptr<git_revwalk, git_revwalk_free>;
using Remote = Ptr<git_remote, git_remote_free>;
using Diff = Ptr<git_diff, git_diff_free>;

struct BufFree {
  void operator()(git_buf* b) const { git_buf_dispose(b); delete b; }
};

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

inline std::string oid_str(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &oid);
  return buf;
}

}  // namespace kistore::git
