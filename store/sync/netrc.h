// ~/.netrc, as git's https transport (curl) reads it, for the credentials a
// connection offers (store/sync/credentials.h).
//
// The file is a list of tokens separated by white space: `machine <host>`
// starts an entry, `login <name>` and `password <secret>` fill it, `default`
// starts an entry for any host, `macdef <name>` a macro that runs to the next
// blank line; `account` and its value are read and ignored. A token may be
// written in double quotes, with \" \\ \n \r \t inside (as curl reads it).
// Entries for `default` are kept (machine "") but never offered: a secret
// goes only to the host its line names.
//
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kistore {

struct NetrcEntry {
  std::string machine;  // the host, as written; "" for `default`
  std::string login;
  std::string password;
};

// The entries of `text`, in order. Never fails: what it cannot read ends the
// entry it is in (a token missing its value is left out).
std::vector<NetrcEntry> parse_netrc(std::string_view text);

// The first entry for `host` (compared without case) whose login is `user`
// when `user` is not empty; nullptr when there is none.
const NetrcEntry* find_netrc(const std::vector<NetrcEntry>& entries, std::string_view host, std::string_view user);

}  // namespace kistore
