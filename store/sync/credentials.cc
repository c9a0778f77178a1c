#include "store/sync/credentials.h"

#include <cctype>
#include <filesystem>

#include "store/sync/url.h"

namespace kistore {
namespace {

// How many times the credential callback may be asked before giving up
// (libgit2 asks again after every refused credential).
constexpr int kMaxCredentialRequests = 3;

}  // namespace

CredentialOffer::CredentialOffer(std::string url, const Credentials& credentials, const ProcessContext* process)
    : url_(std::move(url)), credentials_(credentials), process_(process) {}

CredentialOffer::~CredentialOffer() = default;

void CredentialOffer::succeeded() {
  if (!helper_offered_ || helper_judged_) return;
  helper_judged_ = true;
  GitCredentialHelpers(*process_).approve(helper_url_, *helper_offered_);
}

std::nullopt_t CredentialOffer::give_up(const std::string& why) {
  failure_ = "authentication failed for " + redact_url(url_) + ": " + why;
  return std::nullopt;
}

std::optional<git::CredentialAnswer> CredentialOffer::offer(const git::CredentialRequest& request) {
  using Answer = git::CredentialAnswer;
  const char* asked_url = request.url;
  const char* user_from_url = request.user_from_url;
  // libgit2 follows an http redirect itself, then asks for credentials for
  // the URL it landed on: a token or password meant for the configured
  // origin never goes to another one.
  std::string configured = http_origin(url_);
  if (!configured.empty() && asked_url && http_origin(asked_url) != configured)
    return give_up("refusing to send credentials to " + http_origin(asked_url) + ": the remote redirected from " +
                   configured + " to " + http_origin(asked_url) +
                   ", another host, scheme or port than the one configured");
  // Asked again after git's helpers' credential was offered: the server
  // refused it, and the helpers hear so (a stored one that went stale is
  // dropped), as git's own https transport tells them.
  if (helper_offered_ && !helper_judged_) {
    helper_judged_ = true;
    GitCredentialHelpers(*process_).reject(helper_url_, *helper_offered_);
  }
  if (++requests_ > kMaxCredentialRequests) return give_up("the remote refused every credential offered");
  std::string user = user_from_url && *user_from_url ? user_from_url : "";
  const std::string local_user = credentials_.user.empty() ? "git" : credentials_.user;
  if (request.username) return Answer{Answer::kUsername, user.empty() ? local_user : user, {}, {}, {}};
  if (request.ssh_key) return offer_ssh(user.empty() ? local_user : user);
  if (request.user_password) return offer_password(asked_url ? asked_url : url_, user);
  return give_up("the server asks for a kind of credential kistore does not offer");
}

std::optional<git::CredentialAnswer> CredentialOffer::offer_ssh(const std::string& user) {
  namespace fs = std::filesystem;
  using Answer = git::CredentialAnswer;
  if (!tried_agent_ && !credentials_.ssh_agent.empty()) {
    tried_agent_ = true;
    return Answer{Answer::kSshAgent, user, {}, {}, {}};
  }
  if (!tried_key_ && !credentials_.ssh_key.empty()) {
    tried_key_ = true;
    const std::string& key = credentials_.ssh_key;
    if (fs::exists(key)) {
      std::string pub = key + ".pub";
      offered_ = true;
      return Answer{Answer::kSshKey, user, fs::exists(pub) ? pub : std::string(), key, {}};
    }
    if (credentials_.ssh_key_named) return give_up("KISTORE_SSH_KEY names " + key + ", which does not exist");
  }
  return give_up(offered_ || tried_agent_
                     ? "the server refused the ssh key"
                     : "no ssh key (start ssh-agent, set KISTORE_SSH_KEY, or create ~/.ssh/id_ed25519)");
}

std::optional<git::CredentialAnswer> CredentialOffer::offer_password(const std::string& asked_url,
                                                                     const std::string& user) {
  using Answer = git::CredentialAnswer;
  if (!split_url(url_).password.empty()) offered_ = true;  // libgit2 presented them first
  if (!tried_url_password_ && !credentials_.url_password.empty()) {
    // What the user wrote in the URL (clone), as libgit2 presents a URL's own.
    tried_url_password_ = true;
    offered_ = true;
    return Answer{Answer::kUserPassword, user.empty() ? "kistore" : user, {}, {}, credentials_.url_password};
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
      return Answer{Answer::kUserPassword, user.empty() ? "kistore" : user, {}, {}, credentials_.token};
    }
  }
  if (!tried_netrc_) {
    tried_netrc_ = true;
    if (std::optional<Answer> netrc = offer_netrc(asked_url, user)) return netrc;
  }
  if (!tried_helper_) {
    tried_helper_ = true;
    if (std::optional<Answer> helper = offer_helper(asked_url, user)) return helper;
  }
  if (!netrc_withheld_.empty())
    return give_up((offered_ ? "the server refused the credentials offered, and " : "no credentials were offered: ") +
                   netrc_withheld_);
  if (!withheld.empty())
    return give_up(offered_ ? "the server refused the URL's credentials, and KISTORE_TOKEN was not offered to " +
                                  http_origin(asked_url) + ": " + withheld
                            : "the server asks for credentials, and no credentials were offered to " +
                                  http_origin(asked_url) + ": " + withheld);
  return give_up(offered_ ? "the server refused the credentials"
                          : "the server asks for credentials: set KISTORE_TOKEN to the password (of the URL's "
                            "user, else \"kistore\") and KISTORE_TOKEN_URL to the https://host[:port][/path] it is for, "
                            "give the host a line in ~/.netrc, or store it with a git credential helper "
                            "(git config --global credential.helper store, then git credential approve)");
}

std::optional<git::CredentialAnswer> CredentialOffer::offer_netrc(const std::string& asked_url, const std::string& user) {
  using Answer = git::CredentialAnswer;
  const UrlParts asked = split_url(asked_url);
  const NetrcEntry* entry = find_netrc(credentials_.netrc, asked.host, user);
  if (!entry) return std::nullopt;
  std::string scheme = asked.scheme;
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "https") {
    netrc_withheld_ = "~/.netrc's entry for " + asked.host + " goes over https only, and " + http_origin(asked_url) +
                      " is plain http";
    return std::nullopt;
  }
  if (http_origin(asked_url) != http_origin(url_)) {
    netrc_withheld_ = "~/.netrc's entry for " + asked.host + " goes to the remote's own origin " + http_origin(url_) +
                      " only, not to " + http_origin(asked_url);
    return std::nullopt;
  }
  offered_ = true;
  return Answer{Answer::kUserPassword, entry->login.empty() ? (user.empty() ? "kistore" : user) : entry->login, {}, {},
                entry->password};
}

std::optional<git::CredentialAnswer> CredentialOffer::offer_helper(const std::string& asked_url, const std::string& user) {
  using Answer = git::CredentialAnswer;
  // Over https, to the configured URL's own origin only (offer() refused
  // any other before asking), as the token and ~/.netrc go.
  if (!process_ || split_url(asked_url).scheme.empty() || GitCredentialHelpers::describe(asked_url).empty() ||
      http_origin(asked_url) != http_origin(url_))
    return std::nullopt;
  std::optional<HelperCredential> c = GitCredentialHelpers(*process_).fill(asked_url, user);
  if (!c) return std::nullopt;
  if (c->username.empty()) c->username = user.empty() ? "kistore" : user;
  helper_offered_ = *c;
  helper_url_ = asked_url;
  offered_ = true;
  return Answer{Answer::kUserPassword, c->username, {}, {}, c->password};
}

}  // namespace kistore
