// What a connection offers when a server asks who it is, private to store/
// (the credential event of store/sync/connection.cc's git::RemoteConnection).
//
// For ssh: the agent once (when a socket is given), then the key file once
// (with <key>.pub beside it when present). For http(s): libgit2 first
// presents the URL's user:password itself; then the token once, as the
// password (user from the URL, else "kistore"), when the URL asked is https
// and within Credentials::token_url (url.h token_refusal), else nothing,
// and the failure says why no credentials went to that origin; then
// ~/.netrc's entry for the host (netrc.h), over https to the configured URL's
// origin only (its login must be the URL's user when the URL names one);
// then what git's own credential helpers hold for that origin
// (credential_helper.h: `git credential fill`, over https to the configured
// origin only; a refused one is reported back with `reject`, one that worked
// with `approve`, as git does). Nothing is offered twice,
// and after three requests (libgit2 asks again after every refusal) the
// offer gives up. Giving up records why, in words a user can act on, naming
// the remote's URL without its password and never a secret.
//
// Thread-safety: one per connection, used from the thread that runs it.
#pragma once

#include <optional>
#include <string>

#include "store/git/remote_connection.h"

#include "store/sync/credential_helper.h"
#include "store/sync/sync.h"

namespace kistore {

class CredentialOffer {
 public:
  // For the remote at `url` (as configured: may hold a password), offering
  // `credentials`, which must outlive the offer; git's credential helpers are
  // asked through `process` (null: never).
  CredentialOffer(std::string url, const Credentials& credentials, const ProcessContext* process = nullptr);
  ~CredentialOffer();

  // The connection authenticated (its first request was answered): a
  // credential from git's helpers is approved.
  void succeeded();

  // The credential to offer for `request`, or nullopt having recorded
  // failure() when there is nothing (more) to offer. `request.url` is the URL
  // libgit2 authenticates (after any redirect it followed; may be null):
  // nothing is offered to an http(s) origin other than the configured URL's,
  // and the refusal names both.
  std::optional<git::CredentialAnswer> offer(const git::CredentialRequest& request);

  // Why authentication failed; "" while it has not.
  const std::string& failure() const { return failure_; }

 private:
  std::optional<git::CredentialAnswer> offer_ssh(const std::string& user);
  std::optional<git::CredentialAnswer> offer_password(const std::string& asked_url, const std::string& user);
  std::optional<git::CredentialAnswer> offer_netrc(const std::string& asked_url, const std::string& user);
  std::optional<git::CredentialAnswer> offer_helper(const std::string& asked_url, const std::string& user);
  std::nullopt_t give_up(const std::string& why);

  std::string url_;
  const Credentials& credentials_;
  int requests_ = 0;
  bool tried_agent_ = false, tried_key_ = false, tried_token_ = false, tried_url_password_ = false, tried_netrc_ = false;
  std::string netrc_withheld_;  // why ~/.netrc's entry for the host asked was not offered
  const ProcessContext* process_ = nullptr;
  bool tried_helper_ = false, helper_judged_ = false;
  std::optional<HelperCredential> helper_offered_;  // what git's helpers gave, and for which URL
  std::string helper_url_;
  bool offered_ = false;  // something was offered (the URL's password, a key, the token): for the message
  std::string failure_;
};

}  // namespace kistore
