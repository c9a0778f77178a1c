#include "store/history/last_pull.h"

namespace kistore {

void record_last_pull(git_repository* repo, const git_oid* from, const git_oid& to) {
  if (!from) {
    git::delete_ref(repo, kLastPullFrom);
    git::delete_ref(repo, kLastPullTo);
    return;
  }
  git::set_ref(repo, kLastPullFrom, *from, "kistore: pull (the branch before)");
  git::set_ref(repo, kLastPullTo, to, "kistore: pull (the branch after)");
}

std::optional<LastPull> last_pull(git_repository* repo) {
  auto from = git::ref_target(repo, kLastPullFrom), to = git::ref_target(repo, kLastPullTo);
  if (!from || !to) return std::nullopt;
  return LastPull{*from, *to};
}

}  // namespace kistore
