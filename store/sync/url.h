// The URLs of remotes: what kind of address a URL is, its parts, and the
// same URL (or a message quoting it) with its secrets removed. For the sync
// code (store/) and for the command line, which prints remotes' URLs only
// through redact_url.
//
// A URL is one of: a path on this machine ("/srv/e.git", "../e.git"), a
// file:// URL, an scp-like ssh address ("[user@]host:path": no scheme, a
// colon before any slash), or scheme://[user[:password]@]host[:port]/path
// with scheme git, ssh (also ssh+git, git+ssh), http or https, compared
// without regard to case. Nothing here touches the network or the disk.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace kistore {

// `url` with any password removed ("https://u:pw@h/x" -> "https://u@h/x").
// Never fails; a URL without a password comes back as it was.
std::string redact_url(std::string_view url);

enum class UrlKind { kPath, kFile, kGit, kSsh, kHttp, kOther };

// What kind of address `url` is; kOther for a scheme kistore does not know
// (libgit2 decides about those).
UrlKind url_kind(std::string_view url);
// A path or a file:// URL: a repository on this machine.
inline bool on_this_machine(std::string_view url) {
  UrlKind k = url_kind(url);
  return k == UrlKind::kPath || k == UrlKind::kFile;
}

struct UrlParts {
  std::string scheme, user, password, host, port;  // "" where the URL has none
};
// The parts of a scheme://[user[:password]@]host[:port]/... URL ([host] for
// IPv6), or of an scp-like address (scheme "ssh"); all empty for a path.
// The password is as written (still percent-encoded).
UrlParts split_url(std::string_view url);

// The user and the password of a URL's user:password, percent-decoded (what
// a server is sent); "" when the URL has none.
std::string url_user(std::string_view url);
std::string url_password(std::string_view url);

// The origin of an http(s) URL, as browsers compare them:
// "scheme://host:port", lowercased, with the scheme's default port when the
// URL gives none; "" for any other kind of URL. Credentials meant for a
// configured URL go only to its origin.
std::string http_origin(std::string_view url);

// Why a token bound to `bound` (KISTORE_TOKEN_URL: an
// https://host[:port][/path] prefix, without user or password) may not be
// sent to `url`; "" when it may: `url` is https, of the origin of `bound`
// (scheme, host, port, as http_origin gives them), and its path is the
// prefix's path or below it, whole segments ("/team" covers "/team/s.git",
// not "/teamwork"), as git matches credential.<url>. A reason too when
// `bound` is empty or no such prefix. Words for a message: never a secret.
std::string token_refusal(std::string_view url, std::string_view bound);

// `message` with every occurrence of `url` redacted, and the URL's password
// (as written and percent-decoded) and `token` replaced by "***" where they
// are 3 characters or longer (shorter ones would mask ordinary text). For
// messages from libgit2 or a server, which may quote what they were given.
std::string scrub_secrets(std::string message, const std::string& url, const std::string& token);

}  // namespace kistore
