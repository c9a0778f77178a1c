// ssh host keys against known_hosts files (store/sync/known_hosts.h), as
// `ssh -o StrictHostKeyChecking=yes` judges them.
#include "store/sync/known_hosts.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

const std::string kKey = "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl";
const std::string kOther = "AAAAC3NzaC1lZDI1NTE5AAAAIBn2Kq3qU8qgd6qDq7WgX3FM2g1lXe2tDXr3pXGC9H8y";

ssh::HostKey key(const std::string& host, const std::string& port, const std::string& base64) {
  ssh::HostKey k;
  k.host = host;
  k.port = port;
  k.type = "ssh-ed25519";
  k.blob = *ssh::base64_decode(base64);
  k.fingerprint = "SHA256:test";
  return k;
}

TEST_CASE("base64: round trip, with and without padding", "[known_hosts]") {
  for (const std::string& text : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    auto data = reinterpret_cast<const unsigned char*>(text.data());
    CHECK(ssh::base64_decode(ssh::base64_encode(data, text.size(), true)) == text);
    CHECK(ssh::base64_decode(ssh::base64_encode(data, text.size(), false)) == text);
  }
  CHECK(ssh::base64_encode(reinterpret_cast<const unsigned char*>("ab"), 2, true) == "YWI=");
  CHECK(ssh::base64_encode(reinterpret_cast<const unsigned char*>("ab"), 2, false) == "YWI");
  CHECK_FALSE(ssh::base64_decode("YW!="));
}

TEST_CASE("known_hosts: listed, unknown, changed and revoked keys", "[known_hosts]") {
  TempDir tmp;
  const std::string file = tmp.path + "/known_hosts";
  write_file(file, "# a comment\n"
                   "|1|hashed=|entry= ssh-ed25519 " + kOther + "\n"
                   "git.example.org,10.0.0.1 ssh-ed25519 " + kKey + " comment\n"
                   "[127.0.0.1]:2222 ssh-ed25519 " + kKey + "\n"
                   "*.example.net,!bad.example.net ssh-ed25519 " + kKey + "\n"
                   "@revoked revoked.example.org ssh-ed25519 " + kKey + "\n"
                   "changed.example.org ssh-ed25519 " + kOther + "\n");
  const std::vector<std::string> files = {tmp.path + "/missing", file};

  CHECK(ssh::host_key_refusal(key("git.example.org", "", kKey), files).empty());
  CHECK(ssh::host_key_refusal(key("10.0.0.1", "22", kKey), files).empty());
  CHECK(ssh::host_key_refusal(key("127.0.0.1", "2222", kKey), files).empty());
  CHECK(ssh::host_key_refusal(key("a.example.net", "", kKey), files).empty());

  std::string unknown = ssh::host_key_refusal(key("127.0.0.1", "2200", kKey), files);
  CHECK_THAT(unknown, Catch::Contains("[127.0.0.1]:2200 is not known"));
  CHECK_THAT(unknown, Catch::Contains("SHA256:test"));
  CHECK_THAT(unknown, Catch::Contains("ssh-keyscan -p 2200 127.0.0.1"));
  CHECK_THAT(ssh::host_key_refusal(key("bad.example.net", "", kKey), files), Catch::Contains("is not known"));

  std::string changed = ssh::host_key_refusal(key("changed.example.org", "", kKey), files);
  CHECK_THAT(changed, Catch::Contains("has CHANGED"));
  CHECK_THAT(changed, Catch::Contains(file + ":7"));
  CHECK_THAT(ssh::host_key_refusal(key("git.example.org", "", kOther), files), Catch::Contains(file + ":3"));
  std::string revoked = ssh::host_key_refusal(key("revoked.example.org", "", kKey), files);
  CHECK_THAT(revoked, Catch::Contains("is REVOKED at " + file + ":6"));

  CHECK(ssh::known_hosts_name("h", "") == "h");
  CHECK(ssh::known_hosts_name("h", "22") == "h");
  CHECK(ssh::known_hosts_name("h", "2222") == "[h]:2222");
}

TEST_CASE("known_hosts: OpenSSH's rules for ports, hashed names and @revoked", "[known_hosts]") {
  TempDir tmp;
  const std::string file = tmp.path + "/known_hosts", other = tmp.path + "/other";
  // Salt "0123456789abcdefghij"; HMAC-SHA1 of "hashed.example.org" and of
  // "[hashed.example.org]:2222" (as `ssh-keygen -H` writes them).
  const std::string salt = "|1|MDEyMzQ1Njc4OWFiY2RlZmdoaWo=|";
  write_file(file, "git.example.org ssh-ed25519 " + kKey + "\n" +
                   salt + "Wl88TWPSdn8x/P2qxic6NYyEkNg= ssh-ed25519 " + kKey + "\n" +
                   salt + "f4CSm/r/16BUDFgqQXcyIJqDX+Y= ssh-ed25519 " + kOther + "\n" +
                   "@cert-authority *.example.com ssh-ed25519 " + kKey + "\n");
  // A port-less entry names port 22 only.
  CHECK(ssh::host_key_refusal(key("git.example.org", "22", kKey), {file}).empty());
  CHECK_THAT(ssh::host_key_refusal(key("git.example.org", "2222", kKey), {file}),
             Catch::Contains("[git.example.org]:2222 is not known"));
  // Hashed names: each names exactly its host (and port).
  CHECK(ssh::host_key_refusal(key("hashed.example.org", "", kKey), {file}).empty());
  CHECK(ssh::host_key_refusal(key("hashed.example.org", "2222", kOther), {file}).empty());
  CHECK_THAT(ssh::host_key_refusal(key("hashed.example.org", "2222", kKey), {file}), Catch::Contains("has CHANGED"));
  CHECK_THAT(ssh::host_key_refusal(key("other.example.org", "", kKey), {file}), Catch::Contains("is not known"));
  // @cert-authority is not a host key.
  CHECK_THAT(ssh::host_key_refusal(key("a.example.com", "", kKey), {file}), Catch::Contains("is not known"));
  // @revoked in any file wins over a valid entry in another, read before it.
  write_file(other, "@revoked * ssh-ed25519 " + kKey + "\n");
  CHECK_THAT(ssh::host_key_refusal(key("git.example.org", "", kKey), {file, other}),
             Catch::Contains("is REVOKED at " + other + ":1"));
  CHECK(ssh::host_key_refusal(key("hashed.example.org", "2222", kOther), {file, other}).empty());
}

}  // namespace
}  // namespace kistore
