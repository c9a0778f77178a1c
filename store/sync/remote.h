// kistore's own references for a named remote, private to store/ (pull.cc,
// push.cc, remote.cc; the remotes themselves are git config, managed by
// add_remote/remove_remote/list_remotes in sync.h):
//
//   refs/kistore/incoming/<remote>  the quarantine: the remote's branch head
//                                   while a pull checks it; removed however
//                                   the pull ends
//   refs/kistore/synced/<remote>    the last commit synced with the remote; a
//                                   remote whose branch no longer contains it
//                                   rewrote its history
//
// A URL given where a remote's name goes (`kistore pull /srv/e.git`, as git
// takes one) has the same references under refs/kistore/incoming-url/ and
// refs/kistore/synced-url/, named by the SHA-1 (hex) of the URL without its
// password, so that pulling the same URL again still detects a rewrite.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

struct git_repository;
struct git_oid;

namespace kistore {

std::string incoming_ref(const std::string& remote);
std::string synced_ref(const std::string& remote);

// In a plain git clone of a store, git keeps refs/remotes/<remote>/<branch>:
// after a pull or push that synced `branch` (refs/heads/NAME) with the named
// `remote` at `id`, it is moved there, so that `git status` says the clone is
// up to date with it. Nothing when the remote is a URL or the ref does not
// exist (a store made by kistore keeps its own refs/kistore/synced/).
void keep_tracking_ref(git_repository* repo, const std::string& remote, const std::string& branch, const git_oid& id);

// Whether `name` can name a configured remote (git's rules, without "/").
bool valid_remote_name(const std::string& name);

// Whether `text`, which names no configured remote, is an address to use
// directly: a scheme://, file:// or scp-like (host:path) URL, or a path
// ("/", "./", "../" or "~/" first, or an existing folder).
bool looks_like_url(const std::string& text);

// `text` (a name or address given for a remote) as its references and
// messages name it: a configured remote's name as it is; otherwise, when it
// looks like a URL, the URL without its password (a path made absolute).
std::string remote_label(git_repository* repo, const std::string& text);

// A remote's label (remote_label) as a commit message may name it: a
// configured name or a network URL as it is (without password); a folder
// of this machine (a path or a file:// URL) by its last name alone, so that
// no history that is pushed and cloned carries a local path ("/home/<user>/
// stores/lab.git" -> "lab.git"). Never fails.
std::string remote_in_history(const std::string& label);

// A remote as one command uses it, resolved once from what the person gave
// (a configured remote's name, or an address): every connection, pull and
// reference of that command takes this value, so that a push that pulls on
// the way, or a retry, talks to the remote the command started with even if
// the config changes meanwhile.
struct ResolvedRemote {
  std::string label;     // as references and messages name it (remote_label)
  std::string url;       // for fetching; may hold a password (print redact_url)
  std::string push_url;  // for pushing: the remote's push URL, else url
};

// Resolves `text` in `repo`'s config. Error(kInvalidInput) when it names no
// remote and is no address ("no remote named ..."), or names a remote without
// a URL; Error(kIO) when the config cannot be read.
ResolvedRemote resolve_remote(git_repository* repo, const std::string& text);

}  // namespace kistore
