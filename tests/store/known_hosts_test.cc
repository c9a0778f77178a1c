// ssh host keys against known_hosts files (store/known_hosts.h), as
// `ssh -o StrictHostKeyChecking=yes` judges them.
#include "store/known_hosts.h"

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
  CHECK_THAT(revoked, Catch::Contains("has CHANGED"));
  CHECK_THAT(revoked, Catch::Contains("(revoked)"));

  CHECK(ssh::known_hosts_name("h", "") == "h");
  CHECK(ssh::known_hosts_name("h", "22") == "h");
  CHECK(ssh::known_hosts_name("h", "2222") == "[h]:2222");
}

}  // namespace
}  // namespace kistore
