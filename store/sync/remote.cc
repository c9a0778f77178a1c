// The remotes of a store (sync.h: add_remote, remove_remote, list_remotes)
// and kistore's references for each (remote.h).
#include "store/sync/remote.h"

#include <algorithm>
#include <filesystem>

#include "objects/nearest.h"
#include "objects/sha1.h"
#include "store/git/git.h"
#include "store/git/remote_config.h"
#include "store/git/remote_connection.h"
#include "store/sync/sync.h"
#include "store/sync/url.h"

namespace kistore {
namespace {

// The folder name of a URL's references: SHA-1 hex of it without password.
std::string url_key(const std::string& url) {
  std::string text = redact_url(url);
  unsigned char sum[20];
  Sha1 sha;
  sha.init();
  sha.update(text.data(), text.size());
  sha.final(sum);
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : sum) hex += digits[c >> 4], hex += digits[c & 15];
  return hex;
}

}  // namespace

bool valid_remote_name(const std::string& name) {
  return git::remote_name_is_valid(name) && name.find('/') == std::string::npos;
}

bool looks_like_url(const std::string& text) {
  if (text.empty()) return false;
  if (text.find("://") != std::string::npos) return true;
  if (text[0] == '/' || text.starts_with("./") || text.starts_with("../") || text.starts_with("~/")) return true;
  if (url_kind(text) == UrlKind::kSsh) return true;
  std::error_code ec;
  return std::filesystem::is_directory(text, ec);
}

std::string remote_label(git_repository* repo, const std::string& text) {
  if (valid_remote_name(text) && git::lookup_remote(repo, text, nullptr) == 0) return text;
  git::clear_error();
  if (!looks_like_url(text)) return text;
  if (url_kind(text) == UrlKind::kPath) return std::filesystem::absolute(text).lexically_normal().string();
  return redact_url(text);
}

std::string remote_in_history(const std::string& label) {
  // remote_label makes a path absolute: a label of kind kPath without a
  // leading '/' is a configured remote's name ("team/lab" stays whole).
  const UrlKind kind = url_kind(label);
  if (kind != UrlKind::kFile && !(kind == UrlKind::kPath && label.starts_with('/'))) return label;
  std::string_view path = label;
  if (kind == UrlKind::kFile) path.remove_prefix(std::min(path.size(), path.find("://") + 3));
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const std::size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") return "a folder of this machine";
  return std::string(name);
}

ResolvedRemote resolve_remote(git_repository* repo, const std::string& text) {
  git::ensure_init();
  git::ConfiguredRemote named;
  int rc = valid_remote_name(text) ? git::lookup_remote(repo, text, &named) : GIT_ENOTFOUND;
  if ((rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) && looks_like_url(text)) {
    // A URL where a remote's name goes, as git takes one: used as given (a
    // path made absolute), shown and keyed without its password.
    git::clear_error();
    std::string label = remote_label(repo, text);
    std::string url = url_kind(text) == UrlKind::kPath ? label : text;
    return {label, url, url};
  }
  if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) {
    git::clear_error();
    std::vector<std::string> names;
    if (git::remote_names(repo, names) < 0) names.clear();
    git::clear_error();
    std::string near = nearest_name(text, names);
    if (!near.empty())
      throw InvalidInput("no remote named \"" + redact_url(text) + "\"; did you mean \"" + near +
                         "\"? (`kistore remote` lists the remotes)");
    throw InvalidInput("no remote named \"" + redact_url(text) +
                       "\" (add one with `kistore remote add NAME URL`, or give a URL or path instead of a name)");
  }
  git::check(rc, "reading remote " + redact_url(text));
  if (named.url.empty()) throw InvalidInput("remote \"" + text + "\" has no URL");
  return {text, named.url, named.push_url.empty() ? named.url : named.push_url};
}

std::string incoming_ref(const std::string& remote) {
  return valid_remote_name(remote) ? "refs/kistore/incoming/" + remote : "refs/kistore/incoming-url/" + url_key(remote);
}
void keep_tracking_ref(git_repository* repo, const std::string& remote, const std::string& branch, const git_oid& id) {
  const std::string heads = "refs/heads/";
  if (!valid_remote_name(remote) || branch.compare(0, heads.size(), heads) != 0) return;
  const std::string tracking = "refs/remotes/" + remote + "/" + branch.substr(heads.size());
  if (!git::ref_target(repo, tracking)) return;
  git::set_ref(repo, tracking, id, "kistore: sync with " + remote);
}

std::string synced_ref(const std::string& remote) {
  return valid_remote_name(remote) ? "refs/kistore/synced/" + remote : "refs/kistore/synced-url/" + url_key(remote);
}

void add_remote(Store& store, const std::string& name, const std::string& url) {
  git::ensure_init();
  store.check_settings_writable();
  if (!valid_remote_name(name))
    throw InvalidInput("remote name \"" + name +
                       "\": expected a name git accepts for a remote (e.g. origin), without \"/\"");
  if (url.empty()) throw InvalidInput("remote \"" + name + "\": the URL is empty");
  // A password never reaches the config (a file anyone with the store may
  // read, copy or back up): the URL is kept without it.
  std::string stored = redact_url(url);
  if (url_kind(url) == UrlKind::kPath) {
    stored = std::filesystem::absolute(url).lexically_normal().string();
    if (stored.size() > 1 && stored.back() == '/') stored.pop_back();
  }
  int rc = git::create_remote(store.repo(), name, stored);
  if (rc == GIT_EEXISTS)
    throw InvalidInput("remote \"" + name + "\" already exists (remove it first with `kistore remote remove " + name +
                       "`)");
  if (rc == GIT_EINVALIDSPEC)
    throw InvalidInput("remote \"" + name + "\": " + scrub_secrets(git::last_error(), url, ""));
  if (rc < 0) throw IOError(store.dir() + ": adding remote " + name + ": " + scrub_secrets(git::last_error(), url, ""));
}

void remove_remote(Store& store, const std::string& name) {
  git::ensure_init();
  store.check_settings_writable();
  int rc = git::lookup_remote(store.repo(), name, nullptr);
  if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) {
    git::clear_error();
    throw InvalidInput("no remote named \"" + redact_url(name) + "\"");
  }
  git::check(rc, "reading remote " + redact_url(name));
  git::check(git::delete_remote(store.repo(), name), store.dir() + ": removing remote " + name);
  git::delete_ref(store.repo(), synced_ref(name));
  git::delete_ref(store.repo(), incoming_ref(name));
}

std::vector<RemoteInfo> list_remotes(const Store& store) {
  git::ensure_init();
  std::vector<std::string> names;
  git::check(git::remote_names(store.repo(), names), store.dir() + ": listing remotes");
  std::vector<RemoteInfo> out;
  for (const std::string& name : names) {
    git::ConfiguredRemote remote;
    if (git::lookup_remote(store.repo(), name, &remote) < 0) continue;
    out.push_back({name, remote.url});
  }
  std::sort(out.begin(), out.end(), [](const RemoteInfo& a, const RemoteInfo& b) { return a.name < b.name; });
  return out;
}

}  // namespace kistore
