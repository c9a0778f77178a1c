// The quarantine (store/git/quarantine_odb.h) on repositories stock git makes: what
// it creates, what its readers see, what migrate() moves, that dropping it
// leaves the store's git directory byte for byte as it was, that stale
// quarantines of dead processes go, and that packs written into its object
// database (as libgit2's fetch writes them) go through IncomingPack, thin
// packs included.
#include "store/git/quarantine_odb.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "objects/error.h"
#include "store/git/git.h"
#include "store/git/objwrite.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;
namespace fs = std::filesystem;

// Every file and folder below `dir`, with each file's bytes: equal maps mean
// the folder is byte for byte the same.
std::map<std::string, std::string> fingerprint(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string rel = fs::relative(e.path(), dir).string();
    out[rel] = e.is_directory() ? std::string("<dir>") : read_file(e.path().string());
  }
  return out;
}

// A bare "store" (any bare repository will do here) holding a history of
// `commits` commits that change a file a little each time (so git deltas
// them), packed; and a scratch work tree that made it.
struct Repos {
  TempDir tmp;
  std::string work = tmp.path + "/work";
  std::string store = tmp.path + "/store.git";
  std::string git = git_env(tmp) + "git -C " + quote(work) + " ";
  git::Repository repo;
  explicit Repos(int commits = 3) {
    must(git_env(tmp) + "git init -q " + quote(work));
    for (int i = 1; i <= commits; ++i) {
      must("cd " + quote(work) + " && seq 1 3000 | sed '1," + std::to_string(i * 100) + "s/$/ v/' > a.txt");
      must(git + "add -A && " + git + "commit -q -m c" + std::to_string(i));
    }
    must(git_env(tmp) + "git clone -q --bare " + quote(work) + " " + quote(store));
    must(git_env(tmp) + "git --git-dir=" + quote(store) + " repack -q -a -d");
    open();
  }
  void open() {
    git::ensure_init();
    git_repository* raw = nullptr;
    REQUIRE(git_repository_open_bare(&raw, store.c_str()) == 0);
    repo.reset(raw);
  }
  git_oid rev(const std::string& what) const {
    git_oid id;
    REQUIRE(git_oid_fromstr(&id, trim(must(git + "rev-parse " + what)).c_str()) == 0);
    return id;
  }
  // A pack of what `include` brings that `exclude` does not, from the work
  // tree (with --thin, its deltas may name bases in `exclude`).
  std::string pack(const std::string& include, const std::string& exclude, const std::string& options = "") const {
    std::string path = tmp.path + "/out.pack";
    must("printf '%s\\n^%s\\n' " + include + " " + exclude + " | " + git + "pack-objects --revs -q --stdout " +
         options + " > " + quote(path));
    return read_file(path);
  }
};

bool has(git_repository* repo, const git_oid& id) {
  git_odb* odb = nullptr;
  REQUIRE(git_repository_odb(&odb, repo) == 0);
  git::Odb owned(odb);
  git_odb_refresh(odb);
  return git_odb_exists(odb, &id) == 1;
}

// Writes `pack` into the odb of `repo` as libgit2's fetch does
// (git_odb_write_pack, then append and commit); returns the first libgit2
// code that failed, or 0.
int write_pack_as_fetch(git_repository* repo, const std::string& pack, std::size_t piece = 4096) {
  git_odb* odb = nullptr;
  REQUIRE(git_repository_odb(&odb, repo) == 0);
  git::Odb owned(odb);
  git_odb_writepack* w = nullptr;
  REQUIRE(git_odb_write_pack(&w, odb, nullptr, nullptr) == 0);
  git_indexer_progress stats{};
  int rc = 0;
  for (std::size_t at = 0; at < pack.size() && rc == 0; at += piece)
    rc = w->append(w, pack.data() + at, std::min(piece, pack.size() - at), &stats);
  if (rc == 0) rc = w->commit(w, &stats);
  w->free(w);
  return rc;
}

std::vector<std::string> quarantines_in(const std::string& store) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(store + "/objects"))
    if (e.path().filename().string().rfind("incoming-", 0) == 0) out.push_back(e.path().string());
  return out;
}

TEST_CASE("a quarantine is a bare repository inside the store's objects whose alternates name them", "[quarantine]") {
  Repos r;
  std::string path;
  {
    git::Quarantine q(r.repo.get());
    path = q.path();
    CHECK(fs::path(path).parent_path() == fs::path(r.store + "/objects"));
    CHECK(fs::path(path).filename().string().rfind("incoming-" + std::to_string(getpid()) + "-", 0) == 0);
    CHECK(fs::is_directory(q.pack_dir()));
    CHECK(trim(read_file(path + "/objects/info/alternates")) == fs::absolute(r.store + "/objects").lexically_normal().string());
    CHECK(git_repository_is_bare(q.repo()));
    // The store's objects are visible through it; its refs are its own.
    CHECK(has(q.repo(), r.rev("HEAD")));
    CHECK(has(q.repo(), r.rev("HEAD^{tree}")));
    q.set_ref("refs/kistore/have/0", r.rev("HEAD~1"));
    CHECK(fs::exists(path + "/refs/kistore/have/0"));
    CHECK_FALSE(fs::exists(r.store + "/refs/kistore"));
    // Stock git reads it too.
    CHECK(trim(must("GIT_CONFIG_NOSYSTEM=1 git --git-dir=" + quote(path) + " rev-parse refs/kistore/have/0")) ==
          git::oid_str(r.rev("HEAD~1")));
  }
  CHECK_FALSE(fs::exists(path));
  CHECK(quarantines_in(r.store).empty());
}

TEST_CASE("dropping a quarantine leaves the store byte for byte as it was", "[quarantine]") {
  Repos r;
  auto before = fingerprint(r.store);
  git_oid blob;
  {
    git::Quarantine q(r.repo.get());
    git::PackWriter pack(q.pack_dir());
    blob = pack.write(GIT_OBJECT_BLOB, "only in the quarantine\n", 0);
    pack.finish();
    q.set_ref("refs/heads/main", r.rev("HEAD"));
    CHECK(has(q.repo(), blob));
    CHECK_FALSE(has(r.repo.get(), blob));  // new objects live apart
  }
  CHECK_FALSE(has(r.repo.get(), blob));
  CHECK(fingerprint(r.store) == before);
}

TEST_CASE("migrate moves the quarantine's packs and loose objects into the store", "[quarantine]") {
  Repos r;
  auto before = fingerprint(r.store);
  git_oid packed, loose;
  std::string pack_name;
  {
    git::Quarantine q(r.repo.get());
    git::PackWriter pack(q.pack_dir());
    packed = pack.write(GIT_OBJECT_BLOB, "packed\n", 0);
    pack_name = pack.finish();
    // A loose object, as `git hash-object -w` writes it.
    loose = git::object_id(GIT_OBJECT_BLOB, "loose\n");
    must("printf 'loose\\n' | GIT_CONFIG_NOSYSTEM=1 git --git-dir=" + quote(q.path()) + " hash-object -w --stdin");
    CHECK(q.migrate() == 3);  // .pack, .idx, one loose object
    CHECK(has(r.repo.get(), packed));
    CHECK(has(r.repo.get(), loose));
  }
  CHECK(quarantines_in(r.store).empty());
  auto after = fingerprint(r.store);
  std::string hex = git::oid_str(loose);
  std::set<std::string> added;
  for (const auto& [path, bytes] : after)
    if (!before.contains(path)) added.insert(path);
  CHECK(added == std::set<std::string>{"objects/pack/" + pack_name + ".pack", "objects/pack/" + pack_name + ".idx",
                                       "objects/" + hex.substr(0, 2), "objects/" + hex.substr(0, 2) + "/" + hex.substr(2)});
  // Nothing that was there changed; the store is sound for stock git.
  for (const auto& [path, bytes] : before)
    if (fs::is_regular_file(r.store + "/" + path)) CHECK(after.at(path) == bytes);
  must("GIT_CONFIG_NOSYSTEM=1 git --git-dir=" + quote(r.store) + " fsck --strict --no-dangling 2>&1");
}

TEST_CASE("quarantines of processes that died are removed by the next one; live ones stay", "[quarantine]") {
  Repos r;
  // A process that has exited: its pid is free (and will not be reused by
  // the few processes this test starts in between).
  pid_t child = fork();
  if (child == 0) _exit(0);
  REQUIRE(child > 0);
  waitpid(child, nullptr, 0);
  std::string dead = r.store + "/objects/incoming-" + std::to_string(child) + "-abcdef";
  fs::create_directories(dead + "/objects/pack");
  write_file(dead + "/objects/pack/tmp_pack_incoming_123456", "half a pack");
  // One of a live process (our parent), and a folder that is no quarantine.
  std::string live = r.store + "/objects/incoming-" + std::to_string(getppid()) + "-abcdef";
  fs::create_directories(live);
  std::string other = r.store + "/objects/incoming-notapid";
  fs::create_directories(other);
  {
    git::Quarantine q(r.repo.get());
    CHECK_FALSE(fs::exists(dead));
    CHECK(fs::exists(live));
    CHECK(fs::exists(other));
  }
  CHECK(git::Quarantine::remove_stale(r.store) == 0);
  fs::remove_all(live);
  fs::remove_all(other);
}

TEST_CASE("a pack written as a fetch writes it goes through IncomingPack into the quarantine", "[quarantine]") {
  Repos r(4);
  // The store has the first three commits; the fourth arrives.
  must(git_env(r.tmp) + "git --git-dir=" + quote(r.store) + " update-ref refs/heads/master HEAD~1");
  must(git_env(r.tmp) + "git --git-dir=" + quote(r.store) + " reflog expire --expire=now --all");
  must(git_env(r.tmp) + "git --git-dir=" + quote(r.store) + " gc -q --prune=now");
  r.open();
  git_oid head = r.rev("HEAD");
  REQUIRE_FALSE(has(r.repo.get(), head));
  auto before = fingerprint(r.store);

  SECTION("a whole pack") {
    git::Quarantine q(r.repo.get());
    q.receive_packs();
    REQUIRE(write_pack_as_fetch(q.repo(), r.pack("HEAD", "HEAD~1")) == 0);
    CHECK(q.pack_failure() == nullptr);
    CHECK(q.received_objects() == 3);  // commit, tree, blob
    CHECK(has(q.repo(), head));
    CHECK_FALSE(has(r.repo.get(), head));
    q.migrate();
    CHECK(has(r.repo.get(), head));
  }
  SECTION("a thin pack, whose bases are the store's") {
    std::string thin = r.pack("HEAD", "HEAD~1", "--thin");
    git::Quarantine q(r.repo.get());
    q.receive_packs();
    REQUIRE(write_pack_as_fetch(q.repo(), thin) == 0);
    CHECK(has(q.repo(), r.rev("HEAD:a.txt")));
    // The new pack holds the new objects whole, not the store's bases.
    std::string idx;
    for (const auto& f : fs::directory_iterator(q.pack_dir()))
      if (f.path().extension() == ".idx") idx = f.path().string();
    REQUIRE(!idx.empty());
    std::string listed = must("GIT_CONFIG_NOSYSTEM=1 git verify-pack -v " + quote(idx));
    CHECK(listed.find(git::oid_str(r.rev("HEAD~1:a.txt"))) == std::string::npos);
    CHECK(listed.find(git::oid_str(r.rev("HEAD:a.txt"))) != std::string::npos);
  }
  SECTION("a corrupt pack is refused and leaves nothing") {
    std::string pack = r.pack("HEAD", "HEAD~1");
    pack[pack.size() / 2] ^= 0x55;
    {
      git::Quarantine q(r.repo.get());
      q.receive_packs();
      CHECK(write_pack_as_fetch(q.repo(), pack) < 0);
      REQUIRE(q.pack_failure() != nullptr);
      try {
        std::rethrow_exception(q.pack_failure());
      } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::kRefused);
      }
      CHECK(fs::is_empty(q.pack_dir()));
    }
    CHECK(fingerprint(r.store) == before);
  }
  SECTION("a thin pack whose base nobody has is refused") {
    std::string thin = r.pack("HEAD", "HEAD~1", "--thin");
    must(git_env(r.tmp) + "git --git-dir=" + quote(r.store) + " update-ref refs/heads/master HEAD~2");
    must(git_env(r.tmp) + "git --git-dir=" + quote(r.store) + " gc -q --prune=now");
    r.open();
    before = fingerprint(r.store);
    {
      git::Quarantine q(r.repo.get());
      q.receive_packs();
      CHECK(write_pack_as_fetch(q.repo(), thin) < 0);
      REQUIRE(q.pack_failure() != nullptr);
      try {
        std::rethrow_exception(q.pack_failure());
      } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::kRefused);
        CHECK(std::string(e.what()).find("neither the pack nor the store holds") != std::string::npos);
      }
    }
    CHECK(fingerprint(r.store) == before);
  }
}

}  // namespace
}  // namespace kistore
