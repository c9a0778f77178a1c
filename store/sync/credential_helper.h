// git's own credential helpers (gitcredentials(7)) for an https remote:
// `git credential fill` asks them what they hold for the remote's origin,
// `approve` tells them a credential worked, `reject` that the server refused
// it (so that a stored one that went stale is dropped), as git's https
// transport does. Private to store/sync (CredentialOffer).
//
// git runs through the process gate (store/edge/process.h): found on the
// search path the command gives (never the current folder), in a fresh
// working folder, with the command's allow-listed environment plus
// GIT_TERMINAL_PROMPT=0 (git never asks on the terminal: kistore's own
// --help says how to set credentials), its input a 0600 file in that folder
// (removed with it), a time limit, and its output bounded. Only the fields
// of the protocol are sent: protocol=https, host (host:port), path, and the
// username the URL names; a value holding a newline or NUL is never sent.
//
// Thread-safety: const methods, safe from any thread.
#pragma once

#include <optional>
#include <string>

#include "store/edge/process.h"

namespace kistore {

struct HelperCredential {
  std::string username, password;
};

class GitCredentialHelpers {
 public:
  explicit GitCredentialHelpers(const ProcessContext& process) : process_(process) {}

  // What git's helpers hold for the https URL `url` (the username `user`
  // when the URL names one, "" for any), or nullopt: no git, no helper, none
  // stored, git failing or too slow (what went wrong is in `why` when given).
  std::optional<HelperCredential> fill(const std::string& url, const std::string& user, std::string* why = nullptr) const;
  // Tells the helpers that `credential` worked (approve) or was refused
  // (reject) for `url`. Failures are ignored, as git ignores them.
  void approve(const std::string& url, const HelperCredential& credential) const;
  void reject(const std::string& url, const HelperCredential& credential) const;

  // The protocol's description of an https URL ("protocol=https\nhost=…\n
  // path=…\n"), without a username or password; "" for a URL that is not
  // https or holds a newline or NUL.
  static std::string describe(const std::string& url);

 private:
  std::optional<std::string> run(const char* action, const std::string& input, std::string* why) const;
  const ProcessContext& process_;
};

}  // namespace kistore
