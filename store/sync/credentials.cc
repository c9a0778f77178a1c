#include "store/sync/credentials.h"

#include <filesystem>

#include "store/sync/url.h"

namespace kistore {
namespace {

// How many times the credential callback may be asked before giving up
// (libgit2 asks again after every refused credential).
constexpr int kMaxCredentialRequests = 3;

}  // namespace

CredentialOffer::CredentialOffer(std::string url, const Credentials& credentials)
    : url_(std::move(url)), credentials_(credentials) {}

int CredentialOffer::give_up(const std::string& why) {
  failure_ = "authentication failed for " + redact_url(url_) + ": " + why;
  git_error_set_str(GIT_ERROR_NET, "authentication failed");
  return GIT_EUSER;
}

int CredentialOffer::offer(git_credential** out, const char* asked_url, const char* user_from_url,
                           unsigned int allowed) {
  // libgit2 follows an http redirect itself, then asks for credentials for
  // the URL it landed on: a token or password meant for the configured
  // origin never goes to another one.
  std::string configured = http_origin(url_);
  if (!configured.empty() && asked_url && http_origin(asked_url) != configured)
    return give_up("refusing to send credentials to " + http_origin(asked_url) + ": the remote redirected from " +
                   configured + " to " + http_origin(asked_url) +
                   ", another host, scheme or port than the one configured");
  if (++requests_ > kMaxCredentialRequests) return give_up("the remote refused every credential offered");
  std::string user = user_from_url && *user_from_url ? user_from_url : "";
  const std::string local_user = credentials_.user.empty() ? "git" : credentials_.user;
  if (allowed & GIT_CREDENTIAL_USERNAME)
    return git_credential_username_new(out, user.empty() ? local_user.c_str() : user.c_str());
  if (allowed & GIT_CREDENTIAL_SSH_KEY) return offer_ssh(out, user.empty() ? local_user : user);
  if (allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) return offer_password(out, asked_url ? asked_url : url_, user);
  return give_up("the server asks for a kind of credential kistore does not offer");
}

int CredentialOffer::offer_ssh(git_credential** out, const std::string& user) {
  namespace fs = std::filesystem;
  if (!tried_agent_ && !credentials_.ssh_agent.empty()) {
    tried_agent_ = true;
    return git_credential_ssh_key_from_agent(out, user.c_str());
  }
  if (!tried_key_ && !credentials_.ssh_key.empty()) {
    tried_key_ = true;
    const std::string& key = credentials_.ssh_key;
    if (fs::exists(key)) {
      std::string pub = key + ".pub";
      offered_ = true;
      return git_credential_ssh_key_new(out, user.c_str(), fs::exists(pub) ? pub.c_str() : nullptr, key.c_str(),
                                        nullptr);
    }
    if (credentials_.ssh_key_named) return give_up("KISTORE_SSH_KEY names " + key + ", which does not exist");
  }
  return give_up(offered_ || tried_agent_
                     ? "the server refused the ssh key"
                     : "no ssh key (start ssh-agent, set KISTORE_SSH_KEY, or create ~/.ssh/id_ed25519)");
}

int CredentialOffer::offer_password(git_credential** out, const std::string& asked_url, const std::string& user) {
  if (!split_url(url_).password.empty()) offered_ = true;  // libgit2 presented them first
  if (!tried_url_password_ && !credentials_.url_password.empty()) {
    // What the user wrote in the URL (clone), as libgit2 presents a URL's own.
    tried_url_password_ = true;
    offered_ = true;
    return git_credential_userpass_plaintext_new(out, user.empty() ? "kistore" : user.c_str(),
                                                 credentials_.url_password.c_str());
  }
  std::string withheld;
  if (!tried_token_ && !credentials_.token.empty()) {
    tried_token_ = true;
    // Bound to its server: the URL configured must be within the token's
    // (the URL asked is of the same origin: checked in offer()).
    withheld = token_refusal(url_, credentials_.token_url);
    if (withheld.empty() && http_origin(asked_url) != http_origin(url_))
      withheld = "KISTORE_TOKEN is for " + http_origin(url_) + ", not " + http_origin(asked_url);
    if (withheld.empty()) {
      offered_ = true;
      return git_credential_userpass_plaintext_new(out, user.empty() ? "kistore" : user.c_str(),
                                                   credentials_.token.c_str());
    }
  }
  if (!withheld.empty())
    return give_up(offered_ ? "the server refused the URL's credentials, and KISTORE_TOKEN was not offered to " +
                                  http_origin(asked_url) + ": " + withheld
                            : "the server asks for credentials, and no credentials were offered to " +
                                  http_origin(asked_url) + ": " + withheld);
  return give_up(offered_ ? "the server refused the credentials"
                          : "the server asks for credentials: set KISTORE_TOKEN to the password (of the URL's "
                            "user, else \"kistore\") and KISTORE_TOKEN_URL to the https://host[:port][/path] it is for");
}

}  // namespace kistore
