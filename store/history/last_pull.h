// What the last pull brought: the branch head just before the last pull that
// moved it, and just after (as git's ORIG_HEAD records the first), kept as
// two of kistore's local references:
//
//   refs/kistore/last-pull/from   the branch head before that pull
//   refs/kistore/last-pull/to     the head it left: the remote's head (a
//                                 fast-forward) or the merge commit
//
// For `kistore check`, whose default is "the runs the last pull brought".
// Written by pull (store/sync) only after the branch moved; a pull into an
// empty store (a clone) removes them (everything came with it; check then
// looks at the last commit). They are local: never pushed or pulled.
//
// Thread-safety: as the repository's.
#pragma once

#include <optional>

#include "store/git/git.h"

namespace kistore {

inline constexpr const char* kLastPullFrom = "refs/kistore/last-pull/from";
inline constexpr const char* kLastPullTo = "refs/kistore/last-pull/to";

// Records a pull that moved the branch from `from` (null: the store was
// empty) to `to`. Error(kIO) when a reference cannot be written.
void record_last_pull(git_repository* repo, const git_oid* from, const git_oid& to);

struct LastPull {
  git_oid from, to;
};
// The last pull's record, when both references exist. Error(kIO) when one
// cannot be read.
std::optional<LastPull> last_pull(git_repository* repo);

}  // namespace kistore
