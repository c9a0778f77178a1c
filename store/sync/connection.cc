#include "store/sync/connection.h"

#include <filesystem>

#include "objects/shown_text.h"
#include "objects/ssh_wire.h"
#include "store/sync/credentials.h"
#include "store/sync/http_refusal.h"
#include "store/sync/known_hosts.h"
#include "store/sync/remote.h"
#include "store/sync/url.h"

namespace kistore {

// What the callbacks of one connection know and remember. Lives as long as
// the connection (libgit2 keeps a pointer to it while connected).
struct Connection::State {
  std::string remote;  // the name, for messages
  std::string url;     // as configured (may hold a password)
  const SyncOptions* options;
  CredentialOffer credentials;
  std::string host_key_failure;  // set when the certificate or host key was refused
  std::string rejection;         // set when the remote rejected a ref update
  std::vector<std::string> messages;  // the server's own words on the last push, scrubbed
  bool push = false;                  // the connection pushes (its http discovery is receive-pack's)
  // The user and password last offered to the configured URL's own http(s)
  // origin: what the failed attempt sent there, and all that the request for
  // a refusal's words may send (http_refusal.h).
  std::optional<std::pair<std::string, std::string>> sent_basic;
  std::size_t sent_objects = 0;
  std::uint64_t sent_bytes = 0;

  State(std::string remote_name, std::string remote_url, const SyncOptions& opts)
      : remote(std::move(remote_name)),
        url(std::move(remote_url)),
        options(&opts),
        credentials(url, opts.credentials, &opts.process) {}
  void progress(const char* stage, std::size_t done, std::size_t total, std::uint64_t bytes) const {
    if (options->progress) options->progress(stage, done, total, bytes);
  }
};

namespace {

using State = Connection::State;

// A TLS certificate libgit2 found invalid is refused. An ssh host key is
// looked up in the credentials' known_hosts files by kistore alone: libgit2's
// verdict (`valid`, libssh2's) lets a port-less entry name a server on another
// port and ignores @revoked.
bool accept_identity(State& s, const git::ServerIdentity& key) {
  if (key.valid && !key.ssh) return true;
  if (!key.ssh) {
    s.host_key_failure = "the TLS certificate of " + key.host + " is not valid (" + redact_url(s.url) + ")";
    return false;
  }
  ssh::HostKey offered;
  offered.host = key.host;
  offered.port = split_url(s.url).port;
  if (!key.raw) {
    s.host_key_failure = "cannot check the ssh host key of " + ssh::known_hosts_name(offered.host, offered.port) +
                         ": libgit2 did not pass the raw key";
    return false;
  }
  if (!key.sha256.empty())
    offered.fingerprint =
        "SHA256:" + ssh::base64_encode(reinterpret_cast<const unsigned char*>(key.sha256.data()), 32, false);
  offered.type = key.key_type;
  offered.blob = key.key;
  s.host_key_failure = ssh::host_key_refusal(offered, s.options->credentials.known_hosts);
  return s.host_key_failure.empty();
}

git::SmartProtocol smart_protocol(const std::string& url) {
  switch (url_kind(url)) {
    case UrlKind::kGit: return git::SmartProtocol::kGit;
    case UrlKind::kSsh: return git::SmartProtocol::kSsh;
    case UrlKind::kHttp: return git::SmartProtocol::kHttp;
    case UrlKind::kPath: case UrlKind::kFile: case UrlKind::kOther: return git::SmartProtocol::kNone;
  }
  return git::SmartProtocol::kNone;
}

}  // namespace

Connection::Connection(Store& store, const ResolvedRemote& remote, git::Direction direction,
                       const SyncOptions& options, git_repository* repo)
    : options_(options) {
  const std::string& name = remote.label;
  const std::string& url = direction == git::Direction::kPush ? remote.push_url : remote.url;
  if (!options.credentials.ca_file.empty()) {
    // For the whole process (libgit2 keeps one TLS configuration): the CAs
    // that https servers are checked against instead of the system's.
    if (!std::filesystem::is_regular_file(options.credentials.ca_file))
      throw InvalidInput("KISTORE_SSL_CAINFO names " + options.credentials.ca_file +
                         ", which is not a file (expected a PEM file of certificate authorities)");
    if (!git::use_certificate_authorities(options.credentials.ca_file))
      throw InvalidInput("KISTORE_SSL_CAINFO names " + options.credentials.ca_file +
                         ", which holds no certificate libgit2 can load (expected PEM): " + git::last_error());
  }
  state_ = std::make_unique<State>(name, url, options);
  State* s = state_.get();
  git::RemoteEvents events;
  state_->push = direction == git::Direction::kPush;
  events.credential = [s](const git::CredentialRequest& request) {
    std::optional<git::CredentialAnswer> answer = s->credentials.offer(request);
    const std::string origin = http_origin(s->url);
    if (answer && answer->kind == git::CredentialAnswer::kUserPassword && !origin.empty() &&
        http_origin(request.url ? request.url : s->url) == origin)
      s->sent_basic = std::make_pair(answer->user, answer->password);
    return answer;
  };
  events.identity = [s](const git::ServerIdentity& key) { return accept_identity(*s, key); };
  events.progress = [s](const char* stage, std::size_t done, std::size_t total, std::uint64_t bytes) {
    s->progress(stage, done, total, bytes);
  };
  events.sent = [s](std::size_t objects, std::uint64_t bytes) {
    s->sent_objects = objects;
    s->sent_bytes = bytes;
  };
  events.rejected = [s](const std::string& ref, const std::string& reason) {
    if (!s->rejection.empty()) s->rejection += "; ";
    s->rejection += ref + ": " + reason;
  };
  remote_ = std::make_unique<git::RemoteConnection>(repo ? repo : store.repo(), url, name, direction, std::move(events),
                                                    &receive_pack_, smart_protocol(url));
}

Connection::~Connection() { disconnect(); }

const std::string& Connection::remote() const { return state_->remote; }
const std::string& Connection::url() const { return state_->url; }
std::string Connection::where() const { return state_->remote + " (" + redact_url(state_->url) + ")"; }

void Connection::connect() {
  // libgit2 calls a path that is not there an "unsupported URL protocol".
  if (url_kind(state_->url) == UrlKind::kPath && !std::filesystem::exists(state_->url))
    throw RemoteError("cannot connect to remote " + where() + ": no such folder " + state_->url +
                      " (a path remote names a store's folder, or a bare repository made by git init --bare)");
  check(remote_->connect(), "cannot connect to");
  check(remote_->list(heads_, head_target_), "cannot list the branches of");
  state_->credentials.succeeded();
}

std::optional<git_oid> Connection::head(const std::string& ref) const {
  auto it = heads_.find(ref);
  if (it == heads_.end()) return std::nullopt;
  return it->second;
}

std::string Connection::default_branch() {
  if (!head_target_.empty()) return head_target_;
  return remote_->default_branch();
}

void Connection::download(const std::string& refspec) {
  int rc = remote_->download(refspec);
  if (rc < 0 && state_->host_key_failure.empty() && state_->credentials.failure().empty() && remote_->failed_on_pack())
    throw Refused("refused the pack from remote " + where() + ": " + scrub(git::last_error()) +
                  "; nothing was taken in");
  check(rc, "cannot fetch from");
}

std::size_t Connection::received_objects() const { return remote_->received_objects(); }

int Connection::upload(const std::string& refspec) {
  int rc = remote_->upload(refspec);
  if (rc == GIT_ENONFASTFORWARD) return rc;
  check(rc, "cannot push to");
  return 0;
}

void Connection::disconnect() {
  if (remote_) remote_->disconnect();
}

void Connection::record_sent(std::size_t objects, std::uint64_t bytes) {
  state_->sent_objects = objects;
  state_->sent_bytes = bytes;
}
std::size_t Connection::sent_objects() const { return state_->sent_objects; }
std::uint64_t Connection::sent_bytes() const { return state_->sent_bytes; }

void Connection::record_rejection(const std::string& ref, const std::string& reason) {
  if (!state_->rejection.empty()) state_->rejection += "; ";
  state_->rejection += ref + ": " + reason;
}
const std::string& Connection::rejection() const { return state_->rejection; }

void Connection::record_messages(const std::vector<std::string>& lines) {
  state_->messages.clear();
  for (const std::string& l : lines) state_->messages.push_back(scrub(l));
}
const std::vector<std::string>& Connection::messages() const { return state_->messages; }

void Connection::progress(const char* stage, std::size_t done, std::size_t total, std::uint64_t bytes) const {
  state_->progress(stage, done, total, bytes);
}

std::string Connection::scrub(std::string message) const {
  return scrub_secrets(scrub_secrets(std::move(message), state_->url, options_.credentials.token), "",
                       options_.credentials.url_password);
}

std::optional<HttpResponse> Connection::ask_refusal() const {
  if (url_kind(state_->url) != UrlKind::kHttp) return std::nullopt;
  RefusalRequest request;
  request.url = state_->url;
  request.push = state_->push;
  request.ca_file = options_.credentials.ca_file;
  // What the failed attempt sent to this origin: the credential callback's
  // last answer, else a password the user wrote into the URL, which libgit2
  // presents itself without asking the callback and which goes to that URL's
  // origin only. A URL's user without a password is not sent: libgit2 sends
  // it only to a server that asks, and nothing says this one asked.
  request.basic = state_->sent_basic;
  if (!request.basic && !split_url(state_->url).password.empty())
    request.basic = std::make_pair(url_user(state_->url), url_password(state_->url));
  return fetch_refusal(request);
}

std::string Connection::refusal_words(const HttpResponse& answer, bool explain) const {
  // Appended piece by piece: GCC 12 at -O3 warns falsely (-Wrestrict) on
  // "literal" + a string made in the same expression.
  std::string status = "HTTP ";
  status += std::to_string(answer.status);
  if (!answer.reason.empty()) status.append(" ").append(cut_text(answer.reason, 100));
  std::string meaning;
  if (explain) {
    if (answer.status == 401)
      meaning = "the server wants credentials it was not given or did not accept";
    else if (answer.status == 403)
      meaning = state_->push ? "the server does not let this account push to it"
                             : "the server does not let this account read it";
    else if (answer.status == 404)
      meaning = "the server has no repository there, or none this account may see";
    else if (answer.status >= 500)
      meaning = "the server failed; try again later, or tell its operator";
  }
  std::string words = status;
  if (!meaning.empty()) words.append(" (").append(meaning).append(")");
  std::string said;
  for (const std::string& line : shown_body_lines(answer)) said.append(said.empty() ? "" : " | ").append(line);
  if (!said.empty()) {
    if (explain) words += "; the server said: ";
    else words.append("; the server said (").append(status).append("): ");
    words += said;
  } else if (!explain) {
    words = "the server answered ";
    words += status;
  }
  // A hostile server may quote what it was sent: the password, or the
  // header's base64 of user:password.
  words = scrub(std::move(words));
  if (const auto& basic = state_->sent_basic) {
    words = scrub_secrets(std::move(words), "", basic->second);
    words = scrub_secrets(std::move(words), "", ssh_wire::base64_encode(basic->first + ":" + basic->second, true));
  }
  if (std::string written = url_password(state_->url); !written.empty())
    words = scrub_secrets(std::move(words), "",
                          ssh_wire::base64_encode(url_user(state_->url) + ":" + written, true));
  return words;
}

void Connection::check(int rc, std::string_view what) const {
  if (rc >= 0) return;
  if (!state_->host_key_failure.empty()) throw RemoteError(state_->host_key_failure);
  if (!state_->credentials.failure().empty()) {
    std::string said;
    if (std::optional<HttpResponse> answer = ask_refusal()) {
      said = "; ";
      said += refusal_words(*answer, false);
    }
    throw RemoteError(state_->credentials.failure() + said);
  }
  if (git::last_error_is_refused_redirect())
    throw RemoteError("refused to follow remote " + where() + ": it redirected to another host (" +
                      scrub(git::last_error()) + "); kistore talks only to the host configured, and sent nothing there");
  std::string detail = scrub(git::last_error());
  if (detail.find('\n') != std::string::npos) {
    // Lines of text: what the server wrote before it hung up (libgit2 hands
    // on an ssh server's standard error, as gitolite's "W any evidence
    // reader DENIED"): the connection was made and the server turned it down.
    std::string said;
    std::size_t start = 0;
    while (start < detail.size()) {
      std::size_t end = detail.find('\n', start);
      if (end == std::string::npos) end = detail.size();
      std::string line = detail.substr(start, end - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) {
        start = end + 1;
        continue;
      }
      if (!said.empty()) said += " | ";
      said += line;
      start = end + 1;
    }
    throw RemoteError("the remote " + where() + " turned the connection down; the server said: " + said);
  }
  // libgit2 1.5 reads an http refusal's status and drops the body, where
  // the server says why: ask for it once more (http_refusal.h).
  if (detail.starts_with("unexpected http status code: ") || detail == "unexpected authentication failure" ||
      detail == "server requires authentication that we do not support") {
    if (std::optional<HttpResponse> answer = ask_refusal())
      throw RemoteError(std::string("the remote ").append(where()).append(" refused the request: ").append(refusal_words(*answer, true)));
  }
  if (rc == GIT_EAUTH || detail.find("authentication") != std::string::npos || detail.find("401") != std::string::npos)
    throw RemoteError("authentication failed for " + redact_url(state_->url) + ": " + detail);
  throw RemoteError(std::string(what) + " remote " + where() + ": " + detail);
}

}  // namespace kistore
