#include "store/git/store_repo.h"

#include "store/edge/files.h"
#include "store/git/repo_objects.h"

namespace kistore::git {

bool repository_exists(const std::string& dir) {
  git_repository* existing = nullptr;
  if (git_repository_open_ext(&existing, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) return false;
  git_repository_free(existing);
  return true;
}

std::shared_ptr<RepoObjects> create_bare_repository(const std::string& dir, const std::string& branch,
                                                    const std::string& description) {
  git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
  opts.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH | GIT_REPOSITORY_INIT_NO_REINIT;
  opts.initial_head = branch.c_str();
  opts.description = description.c_str();
  git_repository* repo = nullptr;
  check(git_repository_init_ext(&repo, dir.c_str(), &opts), dir + ": creating the store");
  return std::make_shared<RepoObjects>(dir, repo);
}

std::optional<std::string> head_target(git_repository* repo, const std::string& what) {
  git_reference* raw = nullptr;
  check(git_reference_lookup(&raw, repo, "HEAD"), what);
  Reference head(raw);
  if (git_reference_type(raw) != GIT_REFERENCE_SYMBOLIC) return std::nullopt;
  return git_reference_symbolic_target(raw);
}

std::optional<git_oid> ref_id(git_repository* repo, const std::string& name, const std::string& what) {
  git_reference* raw = nullptr;
  int rc = git_reference_lookup(&raw, repo, name.c_str());
  if (rc == GIT_ENOTFOUND) return git_error_clear(), std::nullopt;
  check(rc, what);
  Reference ref(raw);
  const git_oid* target = git_reference_target(raw);
  return target ? *target : git_oid{};
}

std::optional<std::string> first_ref_matching(git_repository* repo, const char* glob) {
  git_reference_iterator* it = nullptr;
  check(git_reference_iterator_glob_new(&it, repo, glob), "listing references");
  std::optional<std::string> found;
  const char* name = nullptr;
  if (git_reference_next_name(&name, it) == 0) found = name;
  git_reference_iterator_free(it);
  git_error_clear();
  return found;
}

bool oid_from_hex(const std::string& text, git_oid& out) { return git_oid_fromstr(&out, text.c_str()) == 0; }

void share_ref_files(git_repository* repo, const std::string& name) {
  // libgit2 writes a ref and its log with the process's umask; in a shared
  // repository they and the folders it made for them get the group's bits
  // (nothing happens elsewhere: adjust_shared knows the shared folder).
  const std::string gitdir = git_repository_path(repo);
  for (const std::string& path : {gitdir + name, gitdir + "logs/" + name}) {
    for (std::string p = path; p.size() > gitdir.size(); p.erase(p.rfind('/'))) adjust_shared(p);
  }
}

BranchMove move_branch(git_repository* repo, const std::string& name, const git_oid& to, const git_oid* from,
                       const std::string& log, const std::string& what) {
  int rc = move_ref(repo, name, to, from, log);
  if (rc == 0) {
    share_ref_files(repo, name);
    return BranchMove::kMoved;
  }
  if (rc != GIT_EMODIFIED && rc != GIT_EEXISTS && rc != GIT_ELOCKED) check(rc, what);
  git_error_clear();
  return rc == GIT_ELOCKED ? BranchMove::kLocked : BranchMove::kRaced;
}

bool refresh_objects(git_repository* repo) {
  git_odb* odb = nullptr;
  if (git_repository_odb(&odb, repo) != 0) return false;
  git_odb_refresh(odb);
  git_odb_free(odb);
  return true;
}

std::optional<std::string> config_value(git_repository* repo, const std::string& key, const std::string& where) {
  git_config* raw = nullptr;
  check(git_repository_config_snapshot(&raw, repo), where + ": reading config");
  Config cfg(raw);
  const char* value = nullptr;
  if (git_config_get_string(&value, raw, key.c_str()) < 0) return git_error_clear(), std::nullopt;
  return std::string(value);
}

std::string linked_worktree_of(git_repository* repo) {
  if (git_repository_is_worktree(repo) != 1) return "";
  const char* common = git_repository_commondir(repo);
  return common ? common : "?";
}

std::string incomplete_clone(git_repository* repo) {
  const int shallow = git_repository_is_shallow(repo);
  git_error_clear();
  if (shallow == 1)
    return "a shallow clone: its history stops at commits git fetched without their parents, and a run's level is "
           "read from the whole signed history; run `git fetch --unshallow` in it, or clone it again without --depth";
  git_config* raw = nullptr;
  if (git_repository_config_snapshot(&raw, repo) < 0) return git_error_clear(), "";
  Config cfg(raw);
  bool partial = false;
  const char* value = nullptr;
  if (git_config_get_string(&value, raw, "extensions.partialclone") == 0 && value && *value) partial = true;
  git_error_clear();
  git_config_iterator* it = nullptr;
  if (!partial && git_config_iterator_glob_new(&it, raw, "^remote\\..*\\.promisor$") == 0) {
    git_config_entry* entry = nullptr;
    while (!partial && git_config_next(&entry, it) == 0) {
      int yes = 0;
      partial = git_config_parse_bool(&yes, entry->value) == 0 && yes;
    }
    git_config_iterator_free(it);
  }
  git_error_clear();
  if (partial)
    return "a partial clone (git clone --filter): its objects are partly left on the server, and kistore checks every "
           "document it reads; clone it again without --filter (`kistore clone <url>`)";
  return "";
}

namespace {

// The repository's own config, for writing. Error(kIO) "<where>: opening config: <why>".
Config writable_config(git_repository* repo, const std::string& where) {
  git_config* raw = nullptr;
  check(git_repository_config(&raw, repo), where + ": opening config");
  return Config(raw);
}

}  // namespace

void set_config_value(git_repository* repo, const std::string& key, const std::string& value,
                      const std::string& where) {
  Config cfg = writable_config(repo, where);
  check(git_config_set_string(cfg.get(), key.c_str(), value.c_str()), where + ": writing config");
}

void set_config_number(git_repository* repo, const std::string& key, std::int32_t value, const std::string& where) {
  Config cfg = writable_config(repo, where);
  check(git_config_set_int32(cfg.get(), key.c_str(), value), where + ": writing config");
}

}  // namespace kistore::git
