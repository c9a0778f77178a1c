// Who a commit says made it: the author and committer lines of a commit
// kistore writes (store/core/store.h, Store::commit_text), made as libgit2
// makes them (git_signature_now, git_signature_default, git_signature_new),
// so that what libgit2 refuses in a name or an email, and how, stays
// libgit2's. Private to store/.
//
// Thread-safety: reentrant; configured_identity reads `repo` as libgit2 does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/git/git.h"

namespace kistore::git {

// An author or committer: a name, an email, and when (seconds since the
// epoch, and its time zone as an offset in minutes with its sign).
struct Identity {
  std::string name, email;
  std::int64_t time = 0;
  int offset_minutes = 0;
  char sign = '+';
};

// `name` <`email`> now, in the local time zone; at `time` (UTC) when given.
// Error(kIO) "author: <why>" when libgit2 refuses the name or the email.
Identity identity(const std::string& name, const std::string& email, std::optional<std::int64_t> time);

// git's user.name and user.email for `repo` (its config, then the user's and
// the system's), now, or at `time` (UTC) when given; nullopt when git knows
// none. Error(kIO) "author: <why>" when libgit2 refuses them at `time`.
std::optional<Identity> configured_identity(git_repository* repo, std::optional<std::int64_t> time);

// The text of a commit of `tree` on `parents` (commit_text, objwrite.h)
// with `author` and `committer`.
std::string commit_text(const git_oid& tree, const std::vector<git_oid>& parents, const Identity& author,
                        const Identity& committer, std::string_view message, std::string_view signature = {});

}  // namespace kistore::git
