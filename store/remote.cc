// The remotes of a store (sync.h: add_remote, remove_remote, list_remotes)
// and kistore's references for each (remote.h).
#include "store/remote.h"

#include <algorithm>
#include <filesystem>

#include "store/git.h"
#include "store/sync.h"
#include "store/url.h"

namespace kistore {
namespace {

bool valid_remote_name(const std::string& name) {
  int valid = 0;
  return git_remote_name_is_valid(&valid, name.c_str()) == 0 && valid && name.find('/') == std::string::npos;
}

}  // namespace

std::string incoming_ref(const std::string& remote) { return "refs/kistore/incoming/" + remote; }
std::string synced_ref(const std::string& remote) { return "refs/kistore/synced/" + remote; }

void add_remote(Store& store, const std::string& name, const std::string& url) {
  git::ensure_init();
  if (!valid_remote_name(name))
    throw InvalidInput("remote name \"" + name + "\": expected a name git accepts for a remote (e.g. origin), without \"/\"");
  if (url.empty()) throw InvalidInput("remote \"" + name + "\": the URL is empty");
  // A password never reaches the config (a file anyone with the store may
  // read, copy or back up): the URL is kept without it.
  std::string stored = redact_url(url);
  if (url_kind(url) == UrlKind::kPath) {
    stored = std::filesystem::absolute(url).lexically_normal().string();
    if (stored.size() > 1 && stored.back() == '/') stored.pop_back();
  }
  git_remote* remote = nullptr;
  int rc = git_remote_create(&remote, store.repo(), name.c_str(), stored.c_str());
  if (rc == GIT_EEXISTS)
    throw InvalidInput("remote \"" + name + "\" already exists (remove it first with `kistore remote remove " + name + "`)");
  if (rc == GIT_EINVALIDSPEC) throw InvalidInput("remote \"" + name + "\": " + scrub_secrets(git::last_error(), url, ""));
  if (rc < 0) throw IOError(store.dir() + ": adding remote " + name + ": " + scrub_secrets(git::last_error(), url, ""));
  git_remote_free(remote);
}

void remove_remote(Store& store, const std::string& name) {
  git::ensure_init();
  git_remote* remote = nullptr;
  int rc = git_remote_lookup(&remote, store.repo(), name.c_str());
  if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) {
    git_error_clear();
    throw InvalidInput("no remote named \"" + redact_url(name) + "\"");
  }
  git::check(rc, "reading remote " + redact_url(name));
  git_remote_free(remote);
  git::check(git_remote_delete(store.repo(), name.c_str()), store.dir() + ": removing remote " + name);
  git::delete_ref(store.repo(), synced_ref(name));
  git::delete_ref(store.repo(), incoming_ref(name));
}

std::vector<RemoteInfo> list_remotes(const Store& store) {
  git::ensure_init();
  git_strarray names{};
  git::check(git_remote_list(&names, store.repo()), store.dir() + ": listing remotes");
  std::vector<RemoteInfo> out;
  for (std::size_t i = 0; i < names.count; ++i) {
    git_remote* remote = nullptr;
    if (git_remote_lookup(&remote, store.repo(), names.strings[i]) < 0) continue;
    out.push_back({names.strings[i], git_remote_url(remote) ? git_remote_url(remote) : ""});
    git_remote_free(remote);
  }
  git_strarray_dispose(&names);
  std::sort(out.begin(), out.end(), [](const RemoteInfo& a, const RemoteInfo& b) { return a.name < b.name; });
  return out;
}

}  // namespace kistore
