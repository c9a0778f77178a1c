// The Store's door to libgit2 (store/git/store_repo.h, commit_author.h)
// against repositories made on disk: a new bare repository and its HEAD,
// references read and moved by compare-and-swap (moved, raced, locked),
// a commit's tree, kistore's settings in git's config, and the identities a
// commit is made with.
#include "store/git/store_repo.h"

#include <catch2/catch.hpp>
#include <string>

#include "objects/error.h"
#include "store/git/commit_author.h"
#include "store/git/git.h"
#include "store/git/repo_objects.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

const std::string kGit = kGitIdentity + "git ";

// A new bare repository, and commits A (empty tree) and B (A's child) in it,
// no reference naming either.
struct NewRepo {
  TempDir tmp;
  std::string dir = tmp.path + "/store";
  std::shared_ptr<git::RepoObjects> objects;
  git_oid tree{}, a{}, b{};
  NewRepo() {
    git::ensure_init();
    objects = git::create_bare_repository(dir, "main", "a test store");
    std::string git = kGit + "--git-dir=" + quote(dir) + " ";
    std::string empty = trim(must(git + "hash-object -t tree -w /dev/null"));
    std::string first = trim(must(git + "commit-tree " + empty + " -m a"));
    std::string second = trim(must(git + "commit-tree " + empty + " -p " + first + " -m b"));
    tree = git::parse_oid(empty);
    a = git::parse_oid(first);
    b = git::parse_oid(second);
  }
  git_repository* repo() { return objects->repo(); }
};

TEST_CASE("a new bare repository: HEAD names main, which has no commits yet", "[store_repo]") {
  NewRepo r;
  CHECK(git::repository_exists(r.dir));
  CHECK_FALSE(git::repository_exists(r.tmp.path));
  CHECK(must("git --git-dir=" + quote(r.dir) + " rev-parse --is-bare-repository") == "true\n");
  CHECK(git::head_target(r.repo(), "reading HEAD") == "refs/heads/main");
  CHECK_FALSE(git::ref_id(r.repo(), "refs/heads/main", "reading main"));
  CHECK_FALSE(git::first_ref_matching(r.repo(), "refs/heads/*"));
  REQUIRE_THROWS_WITH(git::create_bare_repository(r.dir, "main", "again"),
                      Catch::StartsWith(r.dir + ": creating the store: "));
}

TEST_CASE("move_branch moves a branch only from where the caller saw it", "[store_repo]") {
  NewRepo r;
  const std::string main = "refs/heads/main";
  auto move = [&](const git_oid& to, const git_oid* from) {
    return git::move_branch(r.repo(), main, to, from, "test", "moving main");
  };
  CHECK(move(r.a, nullptr) == git::BranchMove::kMoved);
  CHECK(git::same_id(git::ref_id(r.repo(), main, "reading main").value(), r.a));
  CHECK(move(r.b, nullptr) == git::BranchMove::kRaced);  // it exists now
  CHECK(move(r.b, &r.b) == git::BranchMove::kRaced);     // it is not at b
  CHECK(move(r.b, &r.a) == git::BranchMove::kMoved);
  CHECK(git::same_id(git::ref_id(r.repo(), main, "reading main").value(), r.b));
  CHECK(git::first_ref_matching(r.repo(), "refs/heads/*") == main);
  CHECK_FALSE(git::first_ref_matching(r.repo(), "refs/tags/*"));

  write_file(r.dir + "/refs/heads/main.lock", "");
  CHECK(move(r.a, &r.b) == git::BranchMove::kLocked);
  CHECK(git::same_id(git::ref_id(r.repo(), main, "reading main").value(), r.b));
}

TEST_CASE("a commit's tree, and a commit that is not there", "[store_repo]") {
  NewRepo r;
  CHECK(git::same_id(git::commit_tree(r.repo(), r.b, "reading b"), r.tree));
  git_oid missing{};
  REQUIRE(git::oid_from_hex(std::string(40, 'a'), missing));
  REQUIRE_THROWS_WITH(git::commit_tree(r.repo(), missing, "<dir>: reading the head commit"),
                      Catch::StartsWith("<dir>: reading the head commit: "));
  git_oid id{};
  CHECK(git::oid_from_hex(git::oid_str(r.a), id));
  CHECK(git::same_id(id, r.a));
  CHECK_FALSE(git::oid_from_hex("not an id", id));
}

TEST_CASE("settings live in the repository's git config", "[store_repo]") {
  NewRepo r;
  CHECK_FALSE(git::config_value(r.repo(), "kistore.remote", "store"));
  git::set_config_value(r.repo(), "kistore.remote", "origin", "store");
  git::set_config_number(r.repo(), "kistore.formatversion", 2, "store");
  CHECK(git::config_value(r.repo(), "kistore.remote", "store") == "origin");
  CHECK(git::config_value(r.repo(), "kistore.formatversion", "store") == "2");
  CHECK(trim(must("git --git-dir=" + quote(r.dir) + " config kistore.remote")) == "origin");
}

TEST_CASE("identities as libgit2 makes them, and the commit text they sign", "[store_repo]") {
  NewRepo r;
  git::Identity who = git::identity("Ada", "ada@example.invalid", 1700000000);
  CHECK(who.name == "Ada");
  CHECK(who.email == "ada@example.invalid");
  CHECK(who.time == 1700000000);
  CHECK(who.offset_minutes == 0);
  std::string text = git::commit_text(r.tree, {r.a}, who, who, "m\n");
  CHECK(text == "tree " + git::oid_str(r.tree) + "\nparent " + git::oid_str(r.a) +
                    "\nauthor Ada <ada@example.invalid> 1700000000 +0000"
                    "\ncommitter Ada <ada@example.invalid> 1700000000 +0000\n\nm\n");
  REQUIRE_THROWS_WITH(git::identity("A <b>", "c@example.invalid", std::nullopt), Catch::StartsWith("author: "));
  git::set_config_value(r.repo(), "user.name", "Configured", "store");
  git::set_config_value(r.repo(), "user.email", "c@example.invalid", "store");
  std::optional<git::Identity> configured = git::configured_identity(r.repo(), 5);
  REQUIRE(configured);
  CHECK(configured->name == "Configured");
  CHECK(configured->time == 5);
}

TEST_CASE("RepoObjects::open names a folder with no repository", "[store_repo]") {
  TempDir tmp;
  try {
    git::RepoObjects::open(tmp.path);
    FAIL("opened");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kIO);
    CHECK(std::string(e.what()).find(tmp.path) != std::string::npos);
  }
}

TEST_CASE("StreamingReads maps packs in small windows while alive, and only the outermost puts libgit2 back",
          "[store_repo]") {
  git::ensure_init();
  auto window = [] {
    std::size_t n = 0;
    git_libgit2_opts(GIT_OPT_GET_MWINDOW_SIZE, &n);
    return n;
  };
  auto mapped = [] {
    std::size_t n = 0;
    git_libgit2_opts(GIT_OPT_GET_MWINDOW_MAPPED_LIMIT, &n);
    return n;
  };
  // Whether libgit2 keeps what it parsed: a cached commit is handed out
  // again, one read afresh is a new object.
  NewRepo r;
  auto cached = [&] {
    git_commit *first = nullptr, *second = nullptr;
    REQUIRE(git_commit_lookup(&first, r.repo(), &r.a) == 0);
    REQUIRE(git_commit_lookup(&second, r.repo(), &r.a) == 0);
    const bool same = first == second;
    git_commit_free(first);
    git_commit_free(second);
    return same;
  };
  const std::size_t window0 = window(), mapped0 = mapped();
  REQUIRE(window0 > git::StreamingReads::kStreamWindowBytes);
  REQUIRE(cached());
  {
    git::StreamingReads outer;
    CHECK(window() == git::StreamingReads::kStreamWindowBytes);
    CHECK(mapped() == git::StreamingReads::kStreamMappedBytes);
    CHECK_FALSE(cached());
    { git::StreamingReads inner; }
    CHECK(window() == git::StreamingReads::kStreamWindowBytes);  // the inner one left all as it found it
    CHECK(mapped() == git::StreamingReads::kStreamMappedBytes);
    CHECK_FALSE(cached());
  }
  CHECK(window() == window0);
  CHECK(mapped() == mapped0);
  CHECK(cached());
}

}  // namespace
}  // namespace kistore
