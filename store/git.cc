#include "store/git.h"

#include <atomic>
#include <mutex>

namespace kistore::git {

void ensure_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    // Reads trust the local object store, as git's own commands do: libgit2
    // re-hashing every object read costs queries more than the rest of
    // their work (the index's flat folders are large trees). verify and
    // pull turn the check on (HashCheck), or hash what they read themselves.
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
    // kistore names every object it puts in a tree itself, so libgit2's
    // existence check before each tree entry is a lookup per entry for nothing.
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
  });
}

namespace {
std::atomic<bool> strict_hashes{false};
}

HashCheck::HashCheck(bool on) : previous_(strict_hashes.exchange(on)) {
  git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, on ? 1 : 0);
}
HashCheck::~HashCheck() {
  strict_hashes = previous_;
  git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, previous_ ? 1 : 0);
}

Odb open_odb(git_repository* repo) {
  git_odb* odb = nullptr;
  check(git_repository_odb(&odb, repo), "opening the object database");
  return Odb(odb);
}

std::string last_error() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown error";
}

}  // namespace kistore::git
