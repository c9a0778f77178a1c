// What a connection offers when a server asks who it is (store/sync/credentials.h),
// driven through the git door's request and answer (store/git/remote_connection.h)
// with no server: the order of the offers, that nothing is offered twice, and
// the refusals a user reads.
#include "store/sync/credentials.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <optional>
#include <string>

#include "store/sync/sync.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using Answer = git::CredentialAnswer;
using test_support::TempDir;

git::CredentialRequest ssh_request(const char* user = "root") {
  git::CredentialRequest r;
  r.url = "ssh://root@127.0.0.1:2222/srv/e.git";
  r.user_from_url = user;
  r.ssh_key = true;
  return r;
}

git::CredentialRequest password_request(const char* url) {
  git::CredentialRequest r;
  r.url = url;
  r.user_password = true;
  return r;
}

TEST_CASE("CredentialOffer over ssh: the agent, then the key file, then a refusal", "[credentials]") {
  TempDir tmp;
  const std::string key = tmp.path + "/id_ed25519";
  std::ofstream(key) << "key\n";
  std::ofstream(key + ".pub") << "ssh-ed25519 AAAA\n";
  Credentials c;
  c.ssh_agent = "/run/agent.sock";
  c.ssh_key = key;
  CredentialOffer offer("ssh://root@127.0.0.1:2222/srv/e.git", c);

  std::optional<Answer> first = offer.offer(ssh_request());
  REQUIRE(first);
  CHECK(first->kind == Answer::kSshAgent);
  CHECK(first->user == "root");
  std::optional<Answer> second = offer.offer(ssh_request());
  REQUIRE(second);
  CHECK(second->kind == Answer::kSshKey);
  CHECK(second->private_key == key);
  CHECK(second->public_key == key + ".pub");
  CHECK(offer.failure().empty());
  CHECK_FALSE(offer.offer(ssh_request()));
  CHECK(offer.failure() ==
        "authentication failed for ssh://root@127.0.0.1:2222/srv/e.git: the server refused the ssh key");
}

TEST_CASE("CredentialOffer over ssh: a named key that is not there, and a user from the options", "[credentials]") {
  Credentials c;
  c.ssh_key = "/nonexistent/key";
  c.ssh_key_named = true;
  c.user = "alice";
  CredentialOffer offer("ssh://127.0.0.1/srv/e.git", c);
  git::CredentialRequest username = ssh_request(nullptr);
  username.username = true;
  std::optional<Answer> name = offer.offer(username);
  REQUIRE(name);
  CHECK(name->kind == Answer::kUsername);
  CHECK(name->user == "alice");
  CHECK_FALSE(offer.offer(ssh_request(nullptr)));
  CHECK(offer.failure() ==
        "authentication failed for ssh://127.0.0.1/srv/e.git: KISTORE_SSH_KEY names /nonexistent/key, which does "
        "not exist");
}

TEST_CASE("CredentialOffer over https: the token only within its URL, never after a redirect", "[credentials]") {
  Credentials c;
  c.token = "t0ken";
  c.token_url = "https://example.org/team";

  SECTION("the configured origin within the token's URL: the token, once, as kistore's password") {
    CredentialOffer offer("https://example.org/team/e.git", c);
    std::optional<Answer> a = offer.offer(password_request("https://example.org/team/e.git"));
    REQUIRE(a);
    CHECK(a->kind == Answer::kUserPassword);
    CHECK(a->user == "kistore");
    CHECK(a->password == "t0ken");
    CHECK_FALSE(offer.offer(password_request("https://example.org/team/e.git")));
    CHECK(offer.failure() == "authentication failed for https://example.org/team/e.git: the server refused the "
                             "credentials");
  }
  SECTION("a redirect to another origin: nothing, and the refusal names both") {
    CredentialOffer offer("https://example.org/team/e.git", c);
    CHECK_FALSE(offer.offer(password_request("https://example.org:8443/team/e.git")));
    CHECK(offer.failure() ==
          "authentication failed for https://example.org/team/e.git: refusing to send credentials to "
          "https://example.org:8443: the remote redirected from https://example.org:443 to https://example.org:8443, "
          "another host, scheme or port than the one configured");
  }
  SECTION("a URL outside the token's: no token, and the message says why") {
    CredentialOffer offer("https://example.org/other/e.git", c);
    CHECK_FALSE(offer.offer(password_request("https://example.org/other/e.git")));
    CHECK(offer.failure().starts_with("authentication failed for https://example.org/other/e.git: the server asks "
                                      "for credentials, and no credentials were offered to https://example.org:443: "));
  }
}

TEST_CASE("CredentialOffer gives up after three requests", "[credentials]") {
  Credentials c;
  c.url_password = "pw";
  CredentialOffer offer("http://127.0.0.1:8080/e.git", c);
  std::optional<Answer> a = offer.offer(password_request("http://127.0.0.1:8080/e.git"));
  REQUIRE(a);
  CHECK(a->password == "pw");
  CHECK_FALSE(offer.offer(password_request("http://127.0.0.1:8080/e.git")));
  CHECK_FALSE(offer.offer(password_request("http://127.0.0.1:8080/e.git")));
  CHECK_FALSE(offer.offer(password_request("http://127.0.0.1:8080/e.git")));
  CHECK(offer.failure() ==
        "authentication failed for http://127.0.0.1:8080/e.git: the remote refused every credential offered");
}

TEST_CASE("parse_netrc: machines, default, macros, quotes, as curl reads ~/.netrc", "[credentials][netrc]") {
  std::vector<NetrcEntry> e = parse_netrc(
      "machine git.example.org login ana password s3cret\n"
      "macdef init\nmachine evil.example.org login x password leaked\n\n"
      "machine Other.Example.org\n  login \"bo b\"\n  password \"p\\\"w\\\\d\"\n  account ignored\n"
      "default login anyone password everywhere\n"
      "machine broken login");
  REQUIRE(e.size() == 4);
  CHECK(e[0].machine == "git.example.org");
  CHECK(e[0].login == "ana");
  CHECK(e[0].password == "s3cret");
  CHECK(e[1].machine == "Other.Example.org");  // the macro's body is no entry
  CHECK(e[1].login == "bo b");
  CHECK(e[1].password == "p\"w\\d");
  CHECK(e[2].machine.empty());  // default
  CHECK(e[3].machine == "broken");
  CHECK(e[3].password.empty());

  CHECK(find_netrc(e, "GIT.example.org", "") == &e[0]);
  CHECK(find_netrc(e, "git.example.org", "ana") == &e[0]);
  CHECK(find_netrc(e, "git.example.org", "someone") == nullptr);  // the URL names another user
  CHECK(find_netrc(e, "other.example.org", "") == &e[1]);
  CHECK(find_netrc(e, "evil.example.org", "") == nullptr);
  CHECK(find_netrc(e, "unknown.example.org", "") == nullptr);  // `default` is never offered
  CHECK(find_netrc(e, "broken", "") == nullptr);               // no password
}

TEST_CASE("CredentialOffer over https: ~/.netrc's entry after the token, to its host's https origin only",
          "[credentials][netrc]") {
  Credentials c;
  c.netrc = parse_netrc("machine example.org login ana password from-netrc\n");

  SECTION("the configured https origin: the entry's login and password, once") {
    CredentialOffer offer("https://example.org/team/e.git", c);
    std::optional<Answer> a = offer.offer(password_request("https://example.org/team/e.git"));
    REQUIRE(a);
    CHECK(a->user == "ana");
    CHECK(a->password == "from-netrc");
    CHECK_FALSE(offer.offer(password_request("https://example.org/team/e.git")));
    CHECK(offer.failure() == "authentication failed for https://example.org/team/e.git: the server refused the "
                             "credentials");
  }
  SECTION("after the token, when the token is refused") {
    c.token = "t0ken";
    c.token_url = "https://example.org/team";
    CredentialOffer offer("https://example.org/team/e.git", c);
    std::optional<Answer> first = offer.offer(password_request("https://example.org/team/e.git"));
    REQUIRE(first);
    CHECK(first->password == "t0ken");
    std::optional<Answer> second = offer.offer(password_request("https://example.org/team/e.git"));
    REQUIRE(second);
    CHECK(second->password == "from-netrc");
  }
  SECTION("plain http: nothing, and the refusal says why") {
    CredentialOffer offer("http://example.org/team/e.git", c);
    CHECK_FALSE(offer.offer(password_request("http://example.org/team/e.git")));
    CHECK(offer.failure() == "authentication failed for http://example.org/team/e.git: no credentials were offered: "
                             "~/.netrc's entry for example.org goes over https only, and http://example.org:80 is "
                             "plain http");
  }
  SECTION("another host: nothing") {
    CredentialOffer offer("https://other.example.org/e.git", c);
    CHECK_FALSE(offer.offer(password_request("https://other.example.org/e.git")));
    CHECK(offer.failure().find("from-netrc") == std::string::npos);
  }
}

TEST_CASE("git credential helpers: what a helper is told of an https URL, and nothing of another", "[credentials]") {
  CHECK(GitCredentialHelpers::describe("https://alice:pw@example.org:8443/team/s.git?service=x") ==
        "protocol=https\nhost=example.org:8443\npath=team/s.git\n");
  CHECK(GitCredentialHelpers::describe("HTTPS://example.org") == "protocol=https\nhost=example.org\n");
  CHECK(GitCredentialHelpers::describe("http://example.org/s.git").empty());  // plain http: never
  CHECK(GitCredentialHelpers::describe("ssh://git@example.org/s.git").empty());
  CHECK(GitCredentialHelpers::describe("/srv/s.git").empty());
  CHECK(GitCredentialHelpers::describe("https://example.org/s.git\nhost=evil.example").empty());  // no injected field
  CHECK(GitCredentialHelpers::describe("https:///s.git").empty());
}

}  // namespace
}  // namespace kistore
