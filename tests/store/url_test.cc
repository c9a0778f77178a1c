// Remote URLs (store/url.h): kinds, parts, and secrets kept out of messages.
#include "store/url.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace kistore {
namespace {

TEST_CASE("url_kind: paths, file://, scp-like ssh and the schemes kistore knows", "[url]") {
  struct Case {
    const char* url;
    UrlKind kind;
  };
  const std::vector<Case> cases = {
      {"/srv/evidence.git", UrlKind::kPath},
      {"../evidence.git", UrlKind::kPath},
      {"evidence", UrlKind::kPath},
      {"./a:b", UrlKind::kPath},           // a slash before the colon: a path
      {":evidence", UrlKind::kPath},       // a colon first: not scp syntax
      {"file:///srv/e.git", UrlKind::kFile},
      {"git://h/e.git", UrlKind::kGit},
      {"GIT://h/e.git", UrlKind::kGit},
      {"ssh://me@h:2222/e.git", UrlKind::kSsh},
      {"git+ssh://h/e.git", UrlKind::kSsh},
      {"ssh+git://h/e.git", UrlKind::kSsh},
      {"me@host:srv/e.git", UrlKind::kSsh},
      {"host:e.git", UrlKind::kSsh},
      {"http://h/e.git", UrlKind::kHttp},
      {"HTTPS://h/e.git", UrlKind::kHttp},
      {"ftp://h/e.git", UrlKind::kOther},
  };
  for (const Case& c : cases) {
    INFO(c.url);
    CHECK(static_cast<int>(url_kind(c.url)) == static_cast<int>(c.kind));
  }
  CHECK(on_this_machine("/srv/e.git"));
  CHECK(on_this_machine("file:///srv/e.git"));
  CHECK_FALSE(on_this_machine("me@host:e.git"));
}

TEST_CASE("url_password: the password as sent, percent-decoded; none without one", "[url]") {
  CHECK(url_password("https://alice:s3cret%3Apw@git.example.org:8443/e.git") == "s3cret:pw");
  CHECK(url_password("https://alice@git.example.org/e.git").empty());
  CHECK(url_password("https://git.example.org/e.git").empty());
  CHECK(url_password("/srv/e.git").empty());
  CHECK(url_password("me@host:srv/e.git").empty());
}

TEST_CASE("split_url: user, password, host and port", "[url]") {
  UrlParts p = split_url("https://alice:s3cret%3Apw@git.example.org:8443/e.git");
  CHECK(p.scheme == "https");
  CHECK(p.user == "alice");
  CHECK(p.password == "s3cret%3Apw");
  CHECK(p.host == "git.example.org");
  CHECK(p.port == "8443");

  p = split_url("ssh://root@[::1]:2222/srv/e.git");
  CHECK(p.user == "root");
  CHECK(p.host == "::1");
  CHECK(p.port == "2222");

  p = split_url("me@host:srv/e.git");
  CHECK(p.scheme == "ssh");
  CHECK(p.user == "me");
  CHECK(p.host == "host");
  CHECK(p.password.empty());
  CHECK(p.port.empty());

  p = split_url("/srv/e.git");
  CHECK(p.scheme.empty());
  CHECK(p.host.empty());
}

TEST_CASE("redact_url removes the password and nothing else", "[url]") {
  CHECK(redact_url("https://u:pw@h/x") == "https://u@h/x");
  CHECK(redact_url("https://u:pw@h:8443/x/y") == "https://u@h:8443/x/y");
  CHECK(redact_url("https://u@h/x") == "https://u@h/x");
  CHECK(redact_url("https://h/x") == "https://h/x");
  CHECK(redact_url("/srv/e.git") == "/srv/e.git");
  CHECK(redact_url("me@host:e.git") == "me@host:e.git");
  // An @ in the path is not userinfo.
  CHECK(redact_url("https://h/a:b@c") == "https://h/a:b@c");
}

TEST_CASE("scrub_secrets: no password or token survives in a message", "[url]") {
  const std::string url = "https://alice:s3cret%3Apw@h/e.git";
  std::string message = "401 at " + url + " with s3cret%3Apw, s3cret:pw and tok123";
  std::string scrubbed = scrub_secrets(message, url, "tok123");
  CHECK(scrubbed.find("s3cret") == std::string::npos);
  CHECK(scrubbed.find("tok123") == std::string::npos);
  CHECK(scrubbed.find("https://alice@h/e.git") != std::string::npos);
  // Secrets shorter than 3 characters would mask ordinary text: left alone.
  CHECK(scrub_secrets("a b", "https://u:a@h/x", "b") == "a b");
}

}  // namespace
}  // namespace kistore
