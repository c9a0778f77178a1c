#include "store/git/sync_repo.h"

#include <git2/sys/repository.h>  // git_repository_set_config

namespace kistore::git {

void RepositoryCloser::operator()(git_repository* repo) const { git_repository_free(repo); }

bool has_object(git_repository* repo, const git_oid& id) {
  Odb odb = open_odb(repo);
  bool known = git_odb_exists(odb.get(), &id);
  git_error_clear();
  return known;
}

int compare_and_swap_ref(git_repository* repo, const std::string& name, const git_oid& to, const git_oid* from,
                         const std::string& log) {
  return move_ref(repo, name, to, from, log);
}

std::vector<git_oid> commits_to_take(git_repository* repo, const git_oid& incoming, const git_oid* hidden) {
  std::vector<git_oid> fresh;
  git_revwalk* raw = nullptr;
  check(git_revwalk_new(&raw, repo), "walking history");
  Revwalk walk(raw);
  git_revwalk_sorting(raw, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
  check(git_revwalk_push(raw, &incoming), "walking the incoming history");
  if (hidden) check(git_revwalk_hide(raw, hidden), "walking history");
  git_oid id;
  while (git_revwalk_next(&id, raw) == 0) fresh.push_back(id);
  return fresh;
}

void set_head(git_repository* repo, const std::string& ref, const std::string& what) {
  check(git_repository_set_head(repo, ref.c_str()), what);
}

OwnedRepository open_repository(const std::string& gitdir, const std::string& what) {
  ensure_init();
  git_repository* raw = nullptr;
  check(git_repository_open_ext(&raw, gitdir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr), what);
  return OwnedRepository(raw);
}

void add_object_folder(git_repository* repo, const std::string& objects, const std::string& what) {
  git_odb* odb = nullptr;
  check(git_repository_odb(&odb, repo), what);
  Odb owned(odb);
  check(git_odb_add_disk_alternate(odb, objects.c_str()), what);
}

OwnedRepository reopen(git_repository* repo, const std::string& what) {
  git_repository* raw = nullptr;
  check(git_repository_open_ext(&raw, git_repository_path(repo), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr), what);
  return OwnedRepository(raw);
}

void use_settings_file(git_repository* packer, const std::string& settings, const std::string& label) {
  git_config* cfg = nullptr;
  check(git_config_new(&cfg), "config");
  Config owned(cfg);
  std::string base = git_repository_path(packer);
  check(git_config_add_file_ondisk(cfg, (base + "config").c_str(), GIT_CONFIG_LEVEL_LOCAL, packer, 0),
        label + ": reading config");
  check(git_config_add_file_ondisk(cfg, settings.c_str(), GIT_CONFIG_LEVEL_APP, packer, 0),
        label + ": reading " + settings);
  check(git_repository_set_config(packer, cfg), "config");
}

}  // namespace kistore::git
