// What a stock `git clone` of a remote will check out, told to the person
// who can change it.
//
// A bare repository made with `git init --bare` has a HEAD that names
// refs/heads/master. Once kistore has pushed main there, a stock `git clone`
// finds main but no HEAD to follow, and checks out nothing ("remote HEAD
// refers to nonexistent ref"). A push to a path points that HEAD at main
// itself (local_transport.h); over git://, ssh:// and http(s):// no
// transport can, so `kistore clone` reads the remote's refs and says how to
// point it.
//
// Thread-safety: one thread, as a Connection.
#pragma once

#include <string>

#include "store/core/store.h"
#include "store/sync/sync.h"

namespace kistore {

// "" when the remote `remote` of `store` (a name or a URL) advertises a HEAD,
// or has no `branch` ("refs/heads/main"); otherwise one line, without
// "note: ", saying that a stock git clone of it checks out nothing and the
// command that points its HEAD at `branch` (on the server, or for a path
// remote, the path itself), and `git clone -b` for a clone made meanwhile.
// Connects once (fetch direction, refs only: nothing is downloaded).
// Error(kRemote) when the remote cannot be reached, as a pull.
std::string remote_head_advice(Store& store, const std::string& remote, const std::string& branch,
                               const SyncOptions& options);

}  // namespace kistore
