// kistore's own references for a named remote, private to store/ (pull.cc,
// push.cc, remote.cc; the remotes themselves are git config, managed by
// add_remote/remove_remote/list_remotes in sync.h):
//
//   refs/kistore/incoming/<remote>  the quarantine: the remote's branch head
//                                   while a pull checks it; removed however
//                                   the pull ends
//   refs/kistore/synced/<remote>    the last commit synced with the remote; a
//                                   remote whose branch no longer contains it
//                                   rewrote its history
//
// Thread-safety: pure functions.
#pragma once

#include <string>

namespace kistore {

std::string incoming_ref(const std::string& remote);
std::string synced_ref(const std::string& remote);

}  // namespace kistore
