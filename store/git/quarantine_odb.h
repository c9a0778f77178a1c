// A quarantine for what a pull or clone receives, private to store/.
//
// What a remote sends may be made by an attacker (SPEC §2 "Hostile input").
// As git's receive-pack does (tmp-objdir.c), kistore receives it into an
// object folder of its own and moves it into the store only once every check
// has passed. With libgit2 that folder is a temporary bare repository inside
// the store's object folder,
//
//   <gitdir>/objects/incoming-<pid>-XXXXXX/   HEAD, refs/, objects/pack/
//                                             objects/info/alternates -> <gitdir>/objects
//
// so that reading through the quarantine's repository sees the store's
// objects and the new ones together, while the new ones live apart (and on the
// same file system as the store's packs, so moving them in is a rename).
// Refs that fetch negotiation needs (the local head, the last synced commit)
// are written there, never in the store; remotes made on it are anonymous, so
// its config is never written either.
//
// A network fetch lands through receive_packs(): the quarantine's object
// database gets a backend whose only function is writepack, which libgit2's
// smart protocol uses for the pack it receives (git_odb_write_pack takes the
// backend of highest priority that has one). That pack goes through
// IncomingPack (pack_indexer.h), which rehashes every object and bounds every
// size; libgit2's own indexer never sees it.
//
// migrate() moves the quarantine's packs (each .pack before its .idx, each by
// rename) and loose objects into the store and syncs the folders; the
// destructor removes the quarantine's folder whatever happened. A refused pull
// therefore leaves the store's git directory as it was, byte for byte. A
// process killed meanwhile leaves its folder behind: the next Quarantine made
// in that store removes every quarantine whose process is no longer alive
// (remove_stale), so no file needs cleaning by hand.
//
// Thread-safety: a Quarantine is used by one thread at a time. Several
// processes may each hold a quarantine of one store at once.
#pragma once

#include <git2.h>

#include <cstdint>
#include <exception>
#include <string>

#include "store/git/pack_indexer.h"

namespace kistore::git {

struct PackReceiver;  // quarantine.cc: the odb backend of receive_packs()

class Quarantine {
 public:
  // A new, empty quarantine in the store whose repository is `store` (it must
  // outlive the quarantine). Removes stale quarantines first. Error(kIO)
  // naming the folder when it cannot be made ("permission denied" when this
  // process may not write the store: store/git/store_access.h).
  explicit Quarantine(git_repository* store);
  // Removes the quarantine's folder and everything in it that migrate() did
  // not move (errors are ignored: nothing in it is part of the store).
  ~Quarantine();
  Quarantine(const Quarantine&) = delete;
  Quarantine& operator=(const Quarantine&) = delete;

  // The quarantine's repository: the new objects, the store's (through the
  // alternates file) and the quarantine's own refs.
  git_repository* repo() const { return repo_; }
  // Its git directory (no trailing '/'), and the folder new packs go to.
  const std::string& path() const { return path_; }
  std::string pack_dir() const { return path_ + "/objects/pack"; }

  // Points the quarantine's ref `name` (refs/...) at `id` (an object the
  // store has). Error(kIO) on failure.
  void set_ref(const std::string& name, const git_oid& id);

  // From now on a pack that libgit2 writes into the quarantine's object
  // database (a fetch) is read by IncomingPack with `limits` into pack_dir().
  // A thin pack's bases outside it are read from the store, whose objects
  // are trusted (each still bounded by `limits` and rehashed). The transfer
  // progress callback libgit2 passes is told about each entry received.
  // Error(kIO) if the backend cannot be registered.
  void receive_packs(const PackLimits& limits = {});
  // Why the last pack received failed (an Error(kRefused) from IncomingPack,
  // say), or null. libgit2 only sees "-1" and a message: the caller rethrows
  // this to keep the code and the whole message.
  std::exception_ptr pack_failure() const;
  // Objects received in packs so far (IncomingPack's count of distinct
  // objects written).
  std::size_t received_objects() const;

  // Moves every pack (the .pack first, then its .idx) and loose object of
  // the quarantine into the store, each by rename, then syncs the store's
  // folders; an object the store already has is left out. Makes the store's
  // object database see them (git_odb_refresh). Returns the number of files
  // moved. Error(kIO) naming the file on failure; what was already moved
  // stays (only whole, checked objects are ever moved: a pack goes back to
  // the quarantine when its index cannot follow it, and a folder made for
  // loose objects none of which could be moved is removed again). Every
  // rename, mkdir and fsync goes through the file gate (store/edge/files.h).
  std::size_t migrate();

  // Removes every quarantine folder of the store at `gitdir` (its git
  // directory) whose process is no longer alive; returns how many. Safe
  // while other processes use theirs.
  static std::size_t remove_stale(const std::string& gitdir);

 private:
  git_repository* store_;
  std::string path_;
  git_repository* repo_ = nullptr;
  PackReceiver* receiver_ = nullptr;  // owned by the quarantine's odb once registered
};

}  // namespace kistore::git
