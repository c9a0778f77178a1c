#include "store/git.h"

#include <mutex>

namespace kistore::git {

void ensure_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    // Objects are re-hashed by kistore itself where it matters; libgit2's own
    // SHA-1 check on every read stays on as a second line.
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 1);
    // kistore names every object it puts in a tree itself, so libgit2's
    // existence check before each tree entry is a lookup per entry for nothing.
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
  });
}

std::string last_error() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown error";
}

}  // namespace kistore::git
