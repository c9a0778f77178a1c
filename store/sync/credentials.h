// What a connection offers when a server asks who it is, private to store/
// (the libgit2 credential callback of store/sync/connection.cc).
//
// For ssh: the agent once (when a socket is given), then the key file once
// (with <key>.pub beside it when present). For http(s): libgit2 first
// presents the URL's user:password itself; then the token once, as the
// password (user from the URL, else "kistore"), when the URL asked is https
// and within Credentials::token_url (url.h token_refusal), else nothing,
// and the failure says why no credentials went to that origin. Nothing is offered twice,
// and after three requests (libgit2 asks again after every refusal) the
// offer gives up. Giving up records why, in words a user can act on, naming
// the remote's URL without its password and never a secret.
//
// Thread-safety: one per connection, used from the thread that runs it.
#pragma once

#include <git2.h>

#include <string>

#include "store/sync/sync.h"

namespace kistore {

class CredentialOffer {
 public:
  // For the remote at `url` (as configured: may hold a password), offering
  // `credentials`, which must outlive the offer.
  CredentialOffer(std::string url, const Credentials& credentials);

  // libgit2's credential callback: sets *out and returns 0, or returns
  // GIT_EUSER having recorded failure() when there is nothing (more) to offer.
  // `allowed` is libgit2's GIT_CREDENTIAL_* mask; `user_from_url` may be null.
  // `asked_url` is the URL libgit2 authenticates (after any redirect it
  // followed; may be null): nothing is offered to an http(s) origin other
  // than the configured URL's, and the refusal names both.
  int offer(git_credential** out, const char* asked_url, const char* user_from_url, unsigned int allowed);

  // Why authentication failed; "" while it has not.
  const std::string& failure() const { return failure_; }

 private:
  int offer_ssh(git_credential** out, const std::string& user);
  int offer_password(git_credential** out, const std::string& asked_url, const std::string& user);
  int give_up(const std::string& why);

  std::string url_;
  const Credentials& credentials_;
  int requests_ = 0;
  bool tried_agent_ = false, tried_key_ = false, tried_token_ = false, tried_url_password_ = false;
  bool offered_ = false;  // something was offered (the URL's password, a key, the token): for the message
  std::string failure_;
};

}  // namespace kistore
