// Whether this process may open and write a store's folder (or push into a
// repository on this machine), and when it may not, why, in one line that a
// user can act on.
//
// libgit2 1.5 says only "not found" for a repository that another user owns
// (it applies git's safe.directory rule to bare repositories too, where stock
// git reads them), and a write into a store whose folders are read-only fails
// deep in the object writer with whatever errno the first call met. The
// command line asks here instead: for the message when a store was not
// opened, and before the first byte of a commit is written.
//
// Thread-safety: reads the file system only (stat, faccessat); reentrant.
#pragma once

#include <string>

namespace kistore {

// The message for the folder `dir` when libgit2 found no repository there
// (GIT_ENOTFOUND): "no store here" with how to make or name one, unless the
// folder is a repository that another user owns (who owns it, who runs
// kistore, and the `git config --global --add safe.directory` line that
// lets it be read) or one this user may not read ("permission denied" and
// the path). Never fails.
std::string not_opened_message(const std::string& dir);

// Error(kIO) "<folder>: permission denied: …; nothing was written" (or
// "read-only file system") when this process cannot create files in one of
// the folders a commit writes to: the git directory `gitdir` itself (lock
// files), objects/, objects/pack/, refs/heads/ and, where they exist,
// logs/refs/heads/. Called before anything is written; returns when each is
// writable.
void check_write_access(const std::string& gitdir);

// Error(kRemote) "cannot push to <where>: <folder>: permission denied: …;
// nothing was sent or written" when this process may not create files in
// the folders a push into the repository `gitdir` on this machine writes:
// objects/ (git receive-pack's quarantine is made there), objects/pack/ and
// refs/heads/ (the ref's lock file), and logs/refs/heads/ where it exists.
// The message names the group that may write there, when one may (a
// repository shared with a group that this user is not in). Called before
// receive-pack starts, so that a push it could not take writes nothing and
// says why, where receive-pack says only "unable to create temporary object
// directory"; returns when each is writable.
void check_push_access(const std::string& gitdir, const std::string& where);

}  // namespace kistore
