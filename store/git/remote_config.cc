#include "store/git/remote_config.h"

namespace kistore::git {

bool remote_name_is_valid(const std::string& name) {
  int valid = 0;
  return git_remote_name_is_valid(&valid, name.c_str()) == 0 && valid;
}

int lookup_remote(git_repository* repo, const std::string& name, ConfiguredRemote* out) {
  git_remote* raw = nullptr;
  int rc = git_remote_lookup(&raw, repo, name.c_str());
  if (rc < 0) return rc;
  Remote remote(raw);
  if (out) {
    const char* url = git_remote_url(raw);
    const char* push_url = git_remote_pushurl(raw);
    out->url = url ? url : "";
    out->push_url = push_url ? push_url : "";
  }
  return 0;
}

int remote_names(git_repository* repo, std::vector<std::string>& out) {
  git_strarray listed{};
  int rc = git_remote_list(&listed, repo);
  if (rc < 0) return rc;
  for (std::size_t i = 0; i < listed.count; ++i) out.emplace_back(listed.strings[i]);
  git_strarray_dispose(&listed);
  return 0;
}

int create_remote(git_repository* repo, const std::string& name, const std::string& url) {
  git_remote* raw = nullptr;
  int rc = git_remote_create(&raw, repo, name.c_str(), url.c_str());
  if (rc == 0) git_remote_free(raw);
  return rc;
}

int delete_remote(git_repository* repo, const std::string& name) { return git_remote_delete(repo, name.c_str()); }

}  // namespace kistore::git
