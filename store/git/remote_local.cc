#include "store/git/remote_local.h"

namespace kistore::git {
namespace {

void point_head_at(git_repository* remote, const std::string& branch) {
  git_reference* head = nullptr;
  if (git_reference_lookup(&head, remote, "HEAD") != 0) return git_error_clear();
  Reference owned(head);
  if (git_reference_type(head) != GIT_REFERENCE_SYMBOLIC) return;
  git_reference* target = nullptr;
  int rc = git_reference_lookup(&target, remote, git_reference_symbolic_target(head));
  if (rc == 0) return git_reference_free(target);
  git_error_clear();
  if (rc == GIT_ENOTFOUND) git_repository_set_head(remote, branch.c_str());
  git_error_clear();
}

}  // namespace

LocalRemote::LocalRemote(const std::string& path, const std::string& where) {
  if (git_repository_open_ext(&repo_, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) < 0)
    throw RemoteError("cannot open remote " + where + ": " + last_error());
}

LocalRemote::~LocalRemote() { git_repository_free(repo_); }

std::string LocalRemote::pack_dir() const { return std::string(git_repository_path(repo_)) + "objects/pack"; }

bool LocalRemote::checks_out(const std::string& branch) const {
  if (git_repository_is_bare(repo_)) return false;
  git_reference* head = nullptr;
  bool checked_out = git_reference_lookup(&head, repo_, "HEAD") == 0 &&
                     git_reference_type(head) == GIT_REFERENCE_SYMBOLIC && branch == git_reference_symbolic_target(head);
  git_reference_free(head);
  git_error_clear();
  return checked_out;
}

void LocalRemote::adopt_head(const std::string& branch) { point_head_at(repo_, branch); }

}  // namespace kistore::git
