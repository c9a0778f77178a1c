// A remote resolved once per command (store/sync/remote.h): what a name, a
// URL and a path resolve to, and what is refused, with the message a user
// sees.
#include "store/sync/remote.h"

#include <git2.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "objects/error.h"
#include "store/core/store.h"
#include "store/sync/sync.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

TEST_CASE("resolve_remote: a configured name, its push URL, an address, and what is refused", "[remote]") {
  TempDir tmp;
  Store store = Store::init(tmp.path + "/s");
  add_remote(store, "origin", "https://alice:secret@example.org/e.git");
  add_remote(store, "mirror", "https://example.org/m.git");
  must("git --git-dir=" + quote(tmp.path + "/s") + " config remote.mirror.pushurl ssh://git@example.org/m.git");

  SECTION("a configured remote: its name, its URL as stored (no password), its push URL or the URL") {
    ResolvedRemote origin = resolve_remote(store.repo(), "origin");
    CHECK(origin.label == "origin");
    CHECK(origin.url == "https://alice@example.org/e.git");  // add_remote kept no password
    CHECK(origin.push_url == origin.url);
    ResolvedRemote mirror = resolve_remote(store.repo(), "mirror");
    CHECK(mirror.url == "https://example.org/m.git");
    CHECK(mirror.push_url == "ssh://git@example.org/m.git");
  }
  SECTION("a URL given for a name: used as given, labelled without its password") {
    ResolvedRemote r = resolve_remote(store.repo(), "https://bob:pw@example.org/x.git");
    CHECK(r.url == "https://bob:pw@example.org/x.git");
    CHECK(r.push_url == r.url);
    CHECK(r.label.find("pw") == std::string::npos);
  }
  SECTION("a path: made absolute, label and URL alike") {
    std::filesystem::create_directories(tmp.path + "/other.git");
    std::string cwd = std::filesystem::current_path();
    std::filesystem::current_path(tmp.path);
    ResolvedRemote r = resolve_remote(store.repo(), "./other.git");
    std::filesystem::current_path(cwd);
    CHECK(r.url == tmp.path + "/other.git");
    CHECK(r.label == r.url);
  }
  SECTION("a name that is no remote and no address: InvalidInput, saying how to add one") {
    try {
      resolve_remote(store.repo(), "upstream");
      FAIL("resolved a remote that is not there");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInvalidInput);
      CHECK_THAT(e.what(), Catch::Matchers::Contains("no remote named \"upstream\"") &&
                               Catch::Matchers::Contains("kistore remote add NAME URL"));
    }
  }
  SECTION("resolved once: the value does not follow a later change of the config") {
    ResolvedRemote before = resolve_remote(store.repo(), "mirror");
    must("git --git-dir=" + quote(tmp.path + "/s") + " config remote.mirror.url https://evil.example/m.git");
    CHECK(before.url == "https://example.org/m.git");
    CHECK(resolve_remote(store.repo(), "mirror").url == "https://evil.example/m.git");
  }
}

}  // namespace
}  // namespace kistore

TEST_CASE("remote_in_history: no local path reaches a commit message", "[remote]") {
  // Folders of this machine, as remote_label gives them: the last name only.
  CHECK(kistore::remote_in_history("/home/alice/stores/lab.git") == "lab.git");
  CHECK(kistore::remote_in_history("/home/alice/stores/lab/") == "lab");
  CHECK(kistore::remote_in_history("file:///home/alice/stores/lab.git") == "lab.git");
  CHECK(kistore::remote_in_history("FILE:///srv/x") == "x");
  CHECK(kistore::remote_in_history("/") == "a folder of this machine");
  CHECK(kistore::remote_in_history("file:///") == "a folder of this machine");
  // Names and network addresses (already without password) stay whole.
  CHECK(kistore::remote_in_history("origin") == "origin");
  CHECK(kistore::remote_in_history("team/lab") == "team/lab");
  CHECK(kistore::remote_in_history("https://alice@example.org/lab.git") == "https://alice@example.org/lab.git");
  CHECK(kistore::remote_in_history("git@example.org:lab.git") == "git@example.org:lab.git");
  CHECK(kistore::remote_in_history("git://127.0.0.1:9418/lab.git") == "git://127.0.0.1:9418/lab.git");
}
