// The objects of a store's repository, read by kistore's own reader first
// and through libgit2 when it cannot answer. Private to store/.
//
// A Store and its Snapshots share one RepoObjects. It holds the native
// reader (store/git/native_repo.h) when Store::open found a repository it reads
// completely, and the libgit2 repository, opened (and libgit2 initialised,
// store/git/git.h ensure_init) only when a caller first asks for it: a read-only
// command that finds every object natively never initialises libgit2, whose
// start-up (a CA bundle parsed by mbedTLS) costs more than the command.
// Whatever the native reader cannot read (absent, damaged, an odd form) is
// read through libgit2, so errors are libgit2's, word for word, as before.
//
// Thread-safety: one thread, as the Store it belongs to.
#pragma once

#include <git2.h>

#include <memory>
#include <string>

#include "objects/error.h"
#include "store/git/native_repo.h"

namespace kistore::git {

class RepoObjects {
 public:
  // A repository libgit2 opened already (owned from here); no native reader.
  RepoObjects(std::string dir, git_repository* repo);
  // The repository at `dir` (not above it), opened by libgit2 now; no
  // native reader. Error(kIO) as repo().
  static std::shared_ptr<RepoObjects> open(const std::string& dir);
  // The repository at `dir` that locate_repository found at `gitdir`;
  // libgit2 opens it on first use.
  RepoObjects(std::string dir, std::string gitdir);
  ~RepoObjects();
  RepoObjects(const RepoObjects&) = delete;
  RepoObjects& operator=(const RepoObjects&) = delete;

  // The repository's folder, ending in '/' (as git_repository_path).
  const std::string& gitdir() const { return gitdir_; }
  // The libgit2 repository, opened on first call. Error(kIO) naming the
  // store when libgit2 cannot open it (as Store::open's messages).
  git_repository* repo();
  // Its object database (opened with it). Error(kIO) as repo().
  git_odb* odb();
  // Whether libgit2's repository has been opened.
  bool opened() const { return repo_ != nullptr; }

  // The object `id` natively when the reader can; else through libgit2's
  // object database: Error(code) "<what>: <libgit2's message>" when it
  // cannot read it either.
  void read(const git_oid& id, git_object_t& type, std::string& out, const std::string& what,
            ErrorCode code = ErrorCode::kCorruption);
  // Only the native reader; false when it cannot answer.
  bool read_native(const git_oid& id, git_object_t& type, std::string& out) const {
    return native_ && native_->read(id, type, out);
  }
  // Forgets the packs mapped so far (after a writer added one).
  void refresh();

 private:
  std::string dir_, gitdir_;
  git_repository* repo_ = nullptr;
  git_odb* odb_ = nullptr;
  std::unique_ptr<NativeObjects> native_;
};

}  // namespace kistore::git
