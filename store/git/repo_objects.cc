#include "store/git/repo_objects.h"

#include "store/git/git.h"
#include "store/git/store_access.h"

namespace kistore::git {

RepoObjects::RepoObjects(std::string dir, git_repository* repo) : dir_(std::move(dir)), repo_(repo) {
  gitdir_ = git_repository_path(repo_);
}

RepoObjects::RepoObjects(std::string dir, std::string gitdir)
    : dir_(std::move(dir)), gitdir_(std::move(gitdir)), native_(std::make_unique<NativeObjects>(gitdir_)) {}

RepoObjects::~RepoObjects() {
  if (odb_) git_odb_free(odb_);
  if (repo_) git_repository_free(repo_);
}

git_repository* RepoObjects::repo() {
  if (repo_) return repo_;
  ensure_init();
  int rc = git_repository_open_ext(&repo_, dir_.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
  if (rc == GIT_ENOTFOUND) throw IOError(not_opened_message(dir_));
  check(rc, dir_ + ": opening the store");
  return repo_;
}

git_odb* RepoObjects::odb() {
  if (!odb_) odb_ = open_odb(repo()).release();
  return odb_;
}

void RepoObjects::read(const git_oid& id, git_object_t& type, std::string& out, const std::string& what,
                        ErrorCode code) {
  if (read_native(id, type, out)) return;
  git_odb_object* obj = nullptr;
  check(git_odb_read(&obj, odb(), &id), what, code);
  OdbObject owned(obj);
  type = git_odb_object_type(obj);
  out.assign(static_cast<const char*>(git_odb_object_data(obj)), git_odb_object_size(obj));
}

void RepoObjects::refresh() {
  if (native_) native_ = std::make_unique<NativeObjects>(gitdir_);
  if (odb_) git_odb_refresh(odb_);
}

}  // namespace kistore::git
