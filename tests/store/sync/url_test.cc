// Remote URLs (store/sync/url.h): kinds, parts, and secrets kept out of messages.
#include "store/sync/url.h"

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

TEST_CASE("url_user and url_password: as sent, percent-decoded; none without one", "[url]") {
  CHECK(url_user("https://al%40ice:pw@git.example.org/e.git") == "al@ice");
  CHECK(url_user("https://alice@git.example.org/e.git") == "alice");
  CHECK(url_user("https://git.example.org/e.git").empty());
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

TEST_CASE("token_refusal: a token goes only over https, to the origin and path prefix it is bound to", "[url]") {
  using Catch::Matchers::Contains;
  const std::string bound = "https://git.example.org/team";
  // Within: the same origin (default port written or not, case aside), the
  // prefix's path or below it.
  CHECK(token_refusal("https://git.example.org/team", bound).empty());
  CHECK(token_refusal("https://alice@git.example.org/team/store.git", bound).empty());
  CHECK(token_refusal("https://GIT.example.org:443/team/store.git", bound).empty());
  CHECK(token_refusal("https://git.example.org/team/a/b.git?x=1", bound + "/").empty());
  CHECK(token_refusal("https://git.example.org/anything.git", "https://git.example.org").empty());
  CHECK(token_refusal("https://git.example.org/anything.git", "https://git.example.org/").empty());
  // Another host, port or scheme.
  CHECK_THAT(token_refusal("https://evil.example.net/team/s.git", bound),
             Contains("KISTORE_TOKEN is for https://git.example.org:443") && Contains("not https://evil.example.net:443"));
  CHECK_THAT(token_refusal("https://git.example.org:8443/team/s.git", bound), Contains("not https://git.example.org:8443"));
  CHECK_THAT(token_refusal("http://git.example.org/team/s.git", bound),
             Contains("never sent over plain http (http://git.example.org:80)"));
  CHECK_THAT(token_refusal("http://127.0.0.1:8080/team/s.git", "https://127.0.0.1:8080/"), Contains("plain http"));
  CHECK_THAT(token_refusal("ssh://git.example.org/team/s.git", bound), Contains("never sent over"));
  // Outside the path prefix: whole segments.
  CHECK_THAT(token_refusal("https://git.example.org/teamwork/s.git", bound), Contains("/teamwork/s.git is not below it"));
  CHECK_THAT(token_refusal("https://git.example.org/", bound), Contains("/ is not below it"));
  // Bound to nothing, or to what is no https prefix: offered nowhere.
  CHECK_THAT(token_refusal("https://git.example.org/team/s.git", ""), Contains("set KISTORE_TOKEN_URL"));
  CHECK_THAT(token_refusal("https://git.example.org/team/s.git", "http://git.example.org/team"),
             Contains("expected an https://host[:port][/path] prefix"));
  CHECK_THAT(token_refusal("https://git.example.org/team/s.git", "https://u:pw@git.example.org/team"),
             Contains("expected an https://host[:port][/path] prefix") && !Contains("pw"));
  CHECK_THAT(token_refusal("https://git.example.org/team/s.git", "git.example.org"), Contains("expected an https"));
}

}  // namespace
}  // namespace kistore
