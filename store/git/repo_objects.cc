#include "store/git/repo_objects.h"

#include "store/edge/files.h"
#include "store/git/git.h"
#include "store/git/store_access.h"
#include "store/git/store_repo.h"

namespace kistore::git {
namespace {

// libgit2's repository at `dir` itself. Error(kIO) naming the store.
git_repository* open_repository(const std::string& dir) {
  ensure_init();
  git_repository* repo = nullptr;
  int rc = git_repository_open_ext(&repo, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
  if (rc == GIT_ENOTFOUND) throw IOError(not_opened_message(dir));
  check(rc, dir + ": opening the store");
  // A repository shared with a group: what kistore's writers make in it
  // stays writable by the group (store/edge/files.h).
  try {
    if (std::optional<std::string> shared = config_value(repo, "core.sharedRepository", dir))
      share_under(git_repository_path(repo), *shared);
  } catch (...) {
    git_repository_free(repo);
    throw;
  }
  return repo;
}

}  // namespace

RepoObjects::RepoObjects(std::string dir, git_repository* repo) : dir_(std::move(dir)), repo_(repo) {
  gitdir_ = git_repository_path(repo_);
}

RepoObjects::RepoObjects(std::string dir, std::string gitdir)
    : dir_(std::move(dir)), gitdir_(std::move(gitdir)), native_(std::make_unique<NativeObjects>(gitdir_)) {}

RepoObjects::~RepoObjects() {
  if (odb_) git_odb_free(odb_);
  if (repo_) git_repository_free(repo_);
}

std::shared_ptr<RepoObjects> RepoObjects::open(const std::string& dir) {
  return std::make_shared<RepoObjects>(dir, open_repository(dir));
}

git_repository* RepoObjects::repo() {
  if (!repo_) repo_ = open_repository(dir_);
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
