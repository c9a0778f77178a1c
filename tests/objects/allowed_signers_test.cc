// Allowed-signers lines, one shape a line: the options ssh-keygen honours
// (namespaces, valid-after, valid-before, cert-authority) judged at a signing
// time, with `ssh-keygen -Y verify -Overify-time` as the reference; and what
// `trust remove PRINCIPAL` does to each shape of line.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "objects/error.h"
#include "objects/ssh_signature.h"

namespace fs = std::filesystem;
using kistore::AllowedSigner;
using kistore::SigningTime;

namespace {

const std::string K1 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILcs6kjfUX6rMLYlfkwh5FE004E4/mNGG4W2sUFDf16J";
const std::string K2 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGAnG9PdsHxmV0SH1JGHsL8XOuNA+DDm4s4TCrVU075B";
const std::string K3 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGoUkXLiHJ0h4WhLwcZ7N0HDyOEiWB3QNq0Z+ihLxQYc";

// 2026-01-15T12:00:00Z
constexpr std::int64_t kSigned = 1768478400;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const kistore::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("validity options: parsed as ssh-keygen parses them", "[ssh][trust]") {
  struct Case {
    std::string options;
    const char* error;  // nullptr: fine
  };
  const std::vector<Case> cases = {
      {"valid-after=\"20260101\"", nullptr},
      {"VALID-AFTER=\"202601011200\"", nullptr},
      {"valid-before=\"20260101120000Z\"", nullptr},
      {"valid-before=\"20260101z\"", nullptr},
      {"valid-after=\"20200101235960\"", nullptr},  // strptime's leap second
      {"valid-after=\"20200231\"", nullptr},        // runs on into March, as mktime
      {"cert-authority", nullptr},
      {"cert-authority,cert-authority,namespaces=\"git\"", nullptr},
      {"namespaces=\"git\",valid-after=\"20250101\",valid-before=\"20270101\"", nullptr},
      {"valid-after=20200101", "w: expected a double-quoted time after valid-after=, found \"20200101\""},
      {"valid-after=\"2020\"", "w: expected valid-after=\"YYYYMMDD[HHMM[SS]][Z]\""},
      {"valid-after=\"\"", "w: expected valid-after=\"YYYYMMDD[HHMM[SS]][Z]\""},
      {"valid-after=\"2020010100000\"", "w: expected valid-after=\"YYYYMMDD[HHMM[SS]][Z]\""},
      {"valid-after=\"20201301\"", "w: expected valid-after=\"YYYYMMDD[HHMM[SS]][Z]\""},
      {"valid-after=\"20200132\"", "w: expected valid-after=\"YYYYMMDD[HHMM[SS]][Z]\""},
      {"valid-after=\"20200101240000\"", "w: expected valid-after=\"YYYYMMDD[HHMM[SS]][Z]\""},
      {"valid-after=\"19700101000000Z\"", "w: expected valid-after=\"YYYYMMDD[HHMM[SS]][Z]\""},
      {"valid-after=\"+2020010\"", "w: expected valid-after=\"YYYYMMDD[HHMM[SS]][Z]\""},
      {"valid-before=\"20200101", "w: the valid-before value has no closing '\"'"},
      {"valid-after=\"20200101\",valid-after=\"20200101\"", "w: expected one valid-after option, found several"},
      {"valid-after=\"20200101\";x", "w: expected ',' or the end of the options after valid-after"},
      {"valid-after=\"20200101\",", "w: expected another option after the last ','"},
      {"valid-after=\"20200101\",valid-before=\"20200101\"", "w: expected valid-before later than valid-after"},
      {"valid-before=\"20200101Z\",valid-after=\"20210101Z\"", "w: expected valid-before later than valid-after"},
      {"valid-before=\"20200101\",valid-after=\"20210101Z\"", nullptr},  // judged at lookup
      {"foo=\"x\"", "w: expected an option namespaces=\"...\", valid-after=\"...\", valid-before=\"...\" or cert-authority"},
  };
  for (const Case& c : cases) {
    INFO(c.options);
    std::string error = error_of([&] { kistore::parse_signer_options(c.options, "w"); });
    if (c.error) CHECK(error.find(c.error) == 0);
    else CHECK(error.empty());
    // The same options on a line of a file: refused there with the file and line.
    std::string line_error = error_of([&] { kistore::parse_allowed_signers("a " + c.options + " " + K1 + "\n", "f"); });
    if (c.error) CHECK(line_error.find("f:1: ") == 0);
    else CHECK(line_error.empty());
  }
}

TEST_CASE("find_signer honours namespaces, valid-after, valid-before and cert-authority at the signing time",
          "[ssh][trust]") {
  const kistore::SshPublicKey key = kistore::parse_public_key(K1, "k");
  SigningTime at;
  at.seconds = kSigned;
  struct Case {
    std::string options;
    bool trusted;
    const char* why;  // part of the refusal
  };
  const std::vector<Case> cases = {
      {"", true, ""},
      {"namespaces=\"git\"", true, ""},
      {"namespaces=\"file\"", false, "namespaces=\"file\" does not let in namespace \"git\""},
      {"valid-after=\"20260101\"", true, ""},
      {"valid-after=\"20260115120000Z\"", true, ""},  // inclusive, as ssh-keygen
      {"valid-after=\"20260115120001Z\"", false, "the key is not valid before 2026-01-15T12:00:01Z"},
      {"valid-after=\"20270101\"", false, "the key is not valid before 2027-01-01T00:00:00"},
      {"valid-before=\"20260115120000Z\"", true, ""},
      {"valid-before=\"20260115115959Z\"", false, "the key is not valid after 2026-01-15T11:59:59Z"},
      {"valid-before=\"20200101\"", false, "the commit was signed at 2026-01-15T12:00:00Z"},
      {"valid-after=\"20250101\",valid-before=\"20270101\"", true, ""},
      {"valid-after=\"20260115120000Z\",valid-before=\"20270101\"", true, ""},
      {"valid-after=\"20270101\",valid-before=\"20260101Z\"", false, "the window is empty"},
      {"namespaces=\"git\",valid-before=\"20300101Z\"", true, ""},
      {"namespaces=\"file\",valid-before=\"20300101Z\"", false, "does not let in"},
      {"cert-authority", false, "cert-authority: the key is trusted to sign certificates only"},
  };
  for (const Case& c : cases) {
    INFO(c.options);
    const auto signers = kistore::parse_allowed_signers("alice " + c.options + " " + K1 + "\n", "f");
    kistore::SignerLookup found = kistore::lookup_signer(signers, key, "git", &at);
    CHECK((found.signer != nullptr) == c.trusted);
    if (!c.trusted) {
      CHECK(found.refused.find("line 1 (\"alice\"): ") == 0);
      CHECK(found.refused.find(c.why) != std::string::npos);
    }
    // Without a signing time, a window is never taken on trust.
    if (c.options.find("valid-") != std::string::npos) CHECK(kistore::find_signer(signers, key) == nullptr);
  }

  SECTION("a later line with the key still counts when an earlier one does not") {
    const auto signers = kistore::parse_allowed_signers(
        "alice valid-before=\"20200101Z\" " + K1 + "\nalice namespaces=\"git\" " + K1 + "\n", "f");
    kistore::SignerLookup found = kistore::lookup_signer(signers, key, "git", &at);
    REQUIRE(found.signer != nullptr);
    CHECK(found.signer->line == 2);
    CHECK(found.refused.empty());
  }

  SECTION("a time without Z is read in the zone the caller gives") {
    const auto signers = kistore::parse_allowed_signers("alice valid-after=\"20260115130000\" " + K1 + "\n", "f");
    CHECK(kistore::find_signer(signers, key, "git", &at) == nullptr);  // as UTC: 13:00 > 12:00
    SigningTime east = at;
    east.local_to_utc = [](std::int64_t civil) { return civil - 2 * 3600; };  // UTC+2: 13:00 is 11:00Z
    CHECK(kistore::find_signer(signers, key, "git", &east) != nullptr);
  }
}

TEST_CASE("ssh-keygen -Y verify -Overify-time agrees with find_signer on every option shape", "[ssh][trust]") {
  const fs::path dir = fs::temp_directory_path() / ("kistore-allowed-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto sh = [&](const std::string& command) {
    return std::system(("cd '" + dir.string() + "' && TZ=UTC " + command + " >/dev/null 2>&1").c_str());
  };
  REQUIRE(sh("ssh-keygen -q -t ed25519 -N '' -C k -f k") == 0);
  REQUIRE(sh("printf 'data\\n' > payload && ssh-keygen -q -Y sign -f k -n git payload") == 0);
  std::ifstream in(dir / "k.pub");
  std::stringstream text;
  text << in.rdbuf();
  const kistore::SshPublicKey key = kistore::parse_public_key(text.str(), "k.pub");
  SigningTime at;
  at.seconds = kSigned;
  const std::vector<std::string> shapes = {
      "",
      "namespaces=\"git\"",
      "namespaces=\"file\"",
      "valid-after=\"20260101\"",
      "valid-after=\"20260115120000\"",
      "valid-after=\"20260115120001Z\"",
      "valid-before=\"20260115120000Z\"",
      "valid-before=\"20260115115959\"",
      "valid-after=\"20250101\",valid-before=\"20270101\"",
      "valid-after=\"20270101\",valid-before=\"20280101\"",
      "valid-after=\"20260115120000\",valid-before=\"20260115120001Z\"",
      "valid-after=\"20260115120001\",valid-before=\"20260115120000Z\"",
      "NAMESPACES=\"g?t\",VALID-BEFORE=\"20300101Z\"",
      "cert-authority",
  };
  for (const std::string& options : shapes) {
    INFO(options);
    const std::string line = "alice " + options + " " + key.to_text() + "\n";
    {
      std::ofstream out(dir / "allowed");
      out << line;
    }
    const bool ours = kistore::find_signer(kistore::parse_allowed_signers(line, "allowed"), key, "git", &at) != nullptr;
    const bool theirs = sh("ssh-keygen -Y verify -f allowed -I alice -n git -s payload.sig "
                           "-Overify-time=20260115120000 < payload") == 0;
    CHECK(ours == theirs);
  }
  fs::remove_all(dir);
}

TEST_CASE("remove_principal: every line that lists one of the principal's keys goes, whatever its shape",
          "[trust]") {
  struct Case {
    const char* name;
    std::string file, principal;
    std::string after;                    // the file afterwards
    std::vector<std::size_t> removed;     // line numbers
    std::vector<std::string> why;         // part of each removed line's sentence
    std::size_t notes = 0;
  };
  const std::vector<Case> cases = {
      {"alone", "alice namespaces=\"git\" " + K1 + "\n", "alice", "", {1}, {"it named \"alice\" alone"}},
      {"twice: trust add, then a pasted multi-principal line",
       "alice namespaces=\"git\" " + K1 + "\nalice,bob " + K1 + " pasted\n", "alice", "", {1, 2},
       {"alone", "it named \"alice,bob\"; kistore trusts keys, not names"}},
      {"multi-principal line alone", "bob " + K2 + "\nalice,bob " + K1 + "\n", "alice", "bob " + K2 + "\n", {2},
       {"it named \"alice,bob\""}},
      {"quoted principals", "\"carol,alice\" " + K3 + "\n", "alice", "", {1}, {"it named \"carol,alice\""}},
      {"the same key for someone else", "alice " + K1 + "\ndave " + K1 + "\nbob " + K2 + "\n", "alice",
       "bob " + K2 + "\n", {1, 2}, {"alone", "it lists \"alice\"'s key SHA256:"}},
      {"options of any kind", "alice valid-after=\"20200101\",valid-before=\"20300101Z\" " + K1 +
       "\nalice cert-authority " + K2 + "\n", "alice", "", {1, 2}, {"alone", "alone"}},
      {"comments, blank lines, CRLF and a last line without a newline kept byte for byte",
       "# team\r\n\r\nbob " + K2 + "\r\nalice " + K1 + "\r\n  # end\nbob,carol " + K3, "alice",
       "# team\r\n\r\nbob " + K2 + "\r\n  # end\nbob,carol " + K3, {4}, {"alone"}},
      {"last line without a newline removed", "bob " + K2 + "\nalice " + K1, "alice", "bob " + K2 + "\n", {2},
       {"alone"}},
      {"not named: nothing removed", "bob " + K2 + "\n", "alice", "bob " + K2 + "\n", {}, {}},
      {"a principal is matched whole, never as a pattern", "alice@example.com " + K1 + "\n", "alice",
       "alice@example.com " + K1 + "\n", {}, {}},
      {"a pattern matching the principal is a note, not a removal",
       "*@example.com " + K2 + "\nalice@example.com " + K1 + "\n", "alice@example.com", "*@example.com " + K2 + "\n",
       {2}, {"alone"}, 1},
      {"the pattern itself can be removed", "*@example.com " + K2 + "\n", "*@example.com", "", {1}, {"alone"}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    kistore::TrustRemoval r = kistore::remove_principal(c.file, c.principal, "f");
    CHECK(r.text == c.after);
    REQUIRE(r.removed.size() == c.removed.size());
    for (std::size_t i = 0; i < c.removed.size(); ++i) {
      CHECK(r.removed[i].line == c.removed[i]);
      CHECK(r.removed[i].why.find("line " + std::to_string(c.removed[i]) + " removed: ") == 0);
      CHECK(r.removed[i].why.find(c.why[i]) != std::string::npos);
      CHECK(r.removed[i].text.find('\n') == std::string::npos);
    }
    CHECK(r.notes.size() == c.notes);
    // Afterwards no key of the principal is trusted by any line.
    for (const std::string& k : {K1, K2, K3}) {
      bool was_theirs = false;
      for (const AllowedSigner& s : kistore::parse_allowed_signers(c.file, "f"))
        for (const std::string& p : s.principals) was_theirs |= p == c.principal && s.key.to_text() == k;
      if (was_theirs)
        CHECK(kistore::find_signer(kistore::parse_allowed_signers(r.text, "f"), kistore::parse_public_key(k, "k"),
                                   "git") == nullptr);
    }
  }

  SECTION("a file that does not parse is refused, naming the line") {
    CHECK(error_of([] { kistore::remove_principal("alice " + K1 + "\nbob bogus " + K2 + "\n", "alice", "f"); })
              .find("f:2: ") == 0);
  }
}
