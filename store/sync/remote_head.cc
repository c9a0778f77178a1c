#include "store/sync/remote_head.h"

#include "store/sync/connection.h"
#include "store/sync/url.h"

namespace kistore {

std::string remote_head_advice(Store& store, const std::string& remote, const std::string& branch,
                               const SyncOptions& options) {
  Connection conn(store, resolve_remote(store.repo(), remote), git::Direction::kFetch, options);
  conn.connect();
  // git's upload-pack lists HEAD only when what it names exists.
  if (conn.head("HEAD") || !conn.head(branch)) return "";
  std::string url = redact_url(conn.url());
  std::string short_name = branch.starts_with("refs/heads/") ? branch.substr(11) : branch;
  std::string fix = "git symbolic-ref HEAD " + branch;
  std::string path = url_kind(conn.url()) == UrlKind::kFile ? conn.url().substr(7) : conn.url();
  std::string where = on_this_machine(conn.url())
                          ? "run `git --git-dir=" + path + " " + fix.substr(4) + "`"
                          : "on the server, run `" + fix + "` in that repository (a push over " +
                                url.substr(0, url.find(':')) + ":// cannot change HEAD)";
  return url + ": its HEAD names a branch it does not have, so a stock `git clone` of it checks out nothing; " + where +
         ", or clone with `git clone -b " + short_name + " " + url + "`";
}

}  // namespace kistore
