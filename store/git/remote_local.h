// A repository on this machine as a remote (a path or file:// URL), for
// store/sync/'s local transport (local_transport.cc): opened directly and
// its objects read by kistore's own code (a push goes through its own git
// receive-pack). What to copy and what to refuse is sync's; this is the
// libgit2 side of it.
//
// Thread-safety: one thread.
#pragma once

#include <memory>
#include <string>

#include "store/git/git.h"

namespace kistore::git {

class LocalRemote {
 public:
  // Opens the repository at `path` (no search upwards). Error(kRemote)
  // "cannot open remote <where>: <libgit2's message>" when it cannot.
  LocalRemote(const std::string& path, const std::string& where);
  ~LocalRemote();
  LocalRemote(const LocalRemote&) = delete;
  LocalRemote& operator=(const LocalRemote&) = delete;

  git_repository* repo() const { return repo_; }
  // Its git directory, ending in '/'.
  std::string gitdir() const;
  // Where a new pack of it goes: <gitdir>/objects/pack.
  std::string pack_dir() const;
  // Whether its work tree has `branch` checked out (never in a bare
  // repository). Never fails.
  bool checks_out(const std::string& branch) const;
  // A HEAD that names a branch that does not exist (`git init --bare` names
  // refs/heads/master) is made to name `branch`, so that a stock `git clone`
  // checks it out; a HEAD naming a branch that exists is the owner's choice
  // and stays. For after a push created `branch`. In a repository shared
  // with a group (core.sharedRepository) the HEAD it writes gets the group's
  // bits, as git's own write would. Never fails.
  void adopt_head(const std::string& branch);

 private:
  git_repository* repo_ = nullptr;
};

}  // namespace kistore::git
