// Pulling through a connection already made, private to store/: the one
// pull that pull() and clone() (pull.cc) run, and that push (push.cc) runs
// when the remote's branch moved. See sync.h for what a pull does.
//
// Thread-safety: as Store.
#pragma once

#include <string>

#include "store/git/quarantine_odb.h"
#include "store/sync/connection.h"
#include "store/sync/sync.h"

namespace kistore {

// Fetches `branch` through `conn` (connected; disconnected here once the
// objects are in) into `quarantine`, on whose repository `conn` was made,
// checks there what is new (incoming_walk.h, incoming.h), moves it into the
// store only when all of it holds, and fast-forwards or merges (merge.h),
// with conn.options(). A refusal writes nothing in the store. Errors as pull().
PullReport pull_from(Store& store, Connection& conn, const std::string& branch, git::Quarantine& quarantine);
// pull() (sync.h) of a remote this command has resolved already (a push
// that pulls on the way).
PullReport pull(Store& store, const ResolvedRemote& remote, const SyncOptions& options);

}  // namespace kistore
