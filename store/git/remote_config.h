// The remotes a repository's config names (git's [remote "NAME"] sections),
// read and written through libgit2, for store/sync/remote.cc: which names
// git accepts, what a remote's URLs are, adding, removing and listing them.
//
// Errors: each call returns libgit2's code (0; GIT_ENOTFOUND for no such
// remote, GIT_EINVALIDSPEC for a name git refuses, GIT_EEXISTS for one
// that exists; other codes < 0 with the message in git::last_error()), and
// the caller says what it means to the person.
//
// Thread-safety: as the repository's.
#pragma once

#include <string>
#include <vector>

#include "store/git/git.h"

namespace kistore::git {

// A configured remote's URLs; "" for one not set.
struct ConfiguredRemote {
  std::string url;
  std::string push_url;
};

// Whether git accepts `name` as a remote's name.
bool remote_name_is_valid(const std::string& name);
// Reads the remote `name` into *out (may be null: only whether it exists).
int lookup_remote(git_repository* repo, const std::string& name, ConfiguredRemote* out);
// The names of the configured remotes, in the config's order.
int remote_names(git_repository* repo, std::vector<std::string>& out);
// Adds the remote `name` with `url` and git's default fetch refspec.
int create_remote(git_repository* repo, const std::string& name, const std::string& url);
// Removes the remote `name` and what git keeps for it.
int delete_remote(git_repository* repo, const std::string& name);

}  // namespace kistore::git
