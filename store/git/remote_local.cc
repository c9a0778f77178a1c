#include "store/git/remote_local.h"

#include <optional>

#include "store/edge/files.h"
#include "store/git/store_repo.h"

namespace kistore::git {
namespace {

// Whether HEAD was made to name `branch` (see adopt_head).
bool point_head_at(git_repository* remote, const std::string& branch) {
  git_reference* head = nullptr;
  if (git_reference_lookup(&head, remote, "HEAD") != 0) return git_error_clear(), false;
  Reference owned(head);
  if (git_reference_type(head) != GIT_REFERENCE_SYMBOLIC) return false;
  git_reference* target = nullptr;
  int rc = git_reference_lookup(&target, remote, git_reference_symbolic_target(head));
  if (rc == 0) return git_reference_free(target), false;
  git_error_clear();
  const bool moved = rc == GIT_ENOTFOUND && git_repository_set_head(remote, branch.c_str()) == 0;
  git_error_clear();
  return moved;
}

}  // namespace

LocalRemote::LocalRemote(const std::string& path, const std::string& where) {
  if (git_repository_open_ext(&repo_, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) < 0)
    throw RemoteError("cannot open remote " + where + ": " + last_error());
}

LocalRemote::~LocalRemote() { git_repository_free(repo_); }

std::string LocalRemote::gitdir() const { return git_repository_path(repo_); }

std::string LocalRemote::pack_dir() const { return gitdir() + "objects/pack"; }

bool LocalRemote::checks_out(const std::string& branch) const {
  if (git_repository_is_bare(repo_)) return false;
  git_reference* head = nullptr;
  bool checked_out = git_reference_lookup(&head, repo_, "HEAD") == 0 &&
                     git_reference_type(head) == GIT_REFERENCE_SYMBOLIC && branch == git_reference_symbolic_target(head);
  git_reference_free(head);
  git_error_clear();
  return checked_out;
}

void LocalRemote::adopt_head(const std::string& branch) {
  if (!point_head_at(repo_, branch)) return;
  // libgit2 wrote HEAD with this user's umask (0644); in a repository shared
  // with a group git gives it the group's bits (as `git symbolic-ref` would),
  // so that the other members, who may push next, can still point it.
  const std::string gitdir = git_repository_path(repo_);
  try {
    if (std::optional<std::string> shared = config_value(repo_, "core.sharedRepository", gitdir))
      adjust_shared_by(gitdir + "HEAD", *shared);
  } catch (const Error&) {
    // An unreadable config: HEAD stays as libgit2 wrote it.
  }
}

}  // namespace kistore::git
