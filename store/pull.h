// Pulling through a connection already made, private to store/: the one
// pull that pull() and clone() (pull.cc) run, and that push (push.cc) runs
// when the remote's branch moved. See sync.h for what a pull does.
//
// Thread-safety: as Store.
#pragma once

#include <string>

#include "store/connection.h"
#include "store/sync.h"

namespace kistore {

// Fetches `branch` through `conn` (connected; disconnected here once the
// objects are in) into the quarantine ref, checks what is new
// (incoming.h), and fast-forwards or merges (merge.h), with conn.options().
// Errors as pull().
PullReport pull_from(Store& store, Connection& conn, const std::string& branch);

}  // namespace kistore
