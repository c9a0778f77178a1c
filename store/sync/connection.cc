#include "store/sync/connection.h"

#include <cstring>
#include <filesystem>

#include "store/sync/credentials.h"
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
  std::size_t sent_objects = 0;
  std::uint64_t sent_bytes = 0;
  git::ReceivePack* receive_pack = nullptr;  // pushes over the network speak receive-pack through it

  State(std::string remote_name, std::string remote_url, const SyncOptions& opts)
      : remote(std::move(remote_name)),
        url(std::move(remote_url)),
        options(&opts),
        credentials(url, opts.credentials) {}
  void progress(const char* stage, std::size_t done, std::size_t total, std::uint64_t bytes) const {
    if (options->progress) options->progress(stage, done, total, bytes);
  }
};

namespace {

using State = Connection::State;

// An http(s) remote that redirects to another host is refused by libgit2
// before anything is sent there. A redirect to another port or scheme of the
// same host is followed, and the credential callback (CredentialOffer) then
// refuses to offer anything to the origin it landed on: a libgit2 that hands
// the callback the configured URL instead (before Debian's
// 1.5.1+ds-1+deb12u2, CVE-2026-53586) cannot make it send a password or
// token to another host.
constexpr git_remote_redirect_t kRedirects = GIT_REMOTE_REDIRECT_NONE;

const char* ssh_key_type(git_cert_ssh_raw_type_t t) {
  switch (t) {
    case GIT_CERT_SSH_RAW_TYPE_RSA: return "ssh-rsa";
    case GIT_CERT_SSH_RAW_TYPE_DSS: return "ssh-dss";
    case GIT_CERT_SSH_RAW_TYPE_KEY_ECDSA_256: return "ecdsa-sha2-nistp256";
    case GIT_CERT_SSH_RAW_TYPE_KEY_ECDSA_384: return "ecdsa-sha2-nistp384";
    case GIT_CERT_SSH_RAW_TYPE_KEY_ECDSA_521: return "ecdsa-sha2-nistp521";
    case GIT_CERT_SSH_RAW_TYPE_KEY_ED25519: return "ssh-ed25519";
    default: return "";
  }
}

int on_credentials(git_credential** out, const char* url, const char* user_from_url, unsigned int allowed,
                   void* payload) {
  return static_cast<State*>(payload)->credentials.offer(out, url, user_from_url, allowed);
}

// A TLS certificate libgit2 found invalid is refused. An ssh host key is
// looked up in the credentials' known_hosts files by kistore alone: libgit2's
// verdict (`valid`, libssh2's) lets a port-less entry name a server on another
// port and ignores @revoked.
int on_certificate(git_cert* cert, int valid, const char* host, void* payload) {
  auto* s = static_cast<State*>(payload);
  if (valid && cert->cert_type != GIT_CERT_HOSTKEY_LIBSSH2) return 0;
  if (cert->cert_type != GIT_CERT_HOSTKEY_LIBSSH2) {
    s->host_key_failure = "the TLS certificate of " + std::string(host) + " is not valid (" + redact_url(s->url) + ")";
    return GIT_ECERTIFICATE;
  }
  auto* key = reinterpret_cast<git_cert_hostkey*>(cert);
  ssh::HostKey offered;
  offered.host = host;
  offered.port = split_url(s->url).port;
  if (!(key->type & GIT_CERT_SSH_RAW)) {
    s->host_key_failure = "cannot check the ssh host key of " + ssh::known_hosts_name(offered.host, offered.port) +
                          ": libgit2 did not pass the raw key";
    return GIT_ECERTIFICATE;
  }
  if (key->type & GIT_CERT_SSH_SHA256)
    offered.fingerprint = "SHA256:" + ssh::base64_encode(key->hash_sha256, 32, false);
  offered.type = ssh_key_type(key->raw_type);
  offered.blob.assign(key->hostkey, key->hostkey_len);
  s->host_key_failure = ssh::host_key_refusal(offered, s->options->credentials.known_hosts);
  return s->host_key_failure.empty() ? 0 : GIT_ECERTIFICATE;
}

int on_transfer(const git_indexer_progress* stats, void* payload) {
  static_cast<State*>(payload)->progress("receiving", stats->received_objects, stats->total_objects,
                                         stats->received_bytes);
  return 0;
}

int on_pack(int stage, uint32_t current, uint32_t total, void* payload) {
  if (stage == GIT_PACKBUILDER_DELTAFICATION) static_cast<State*>(payload)->progress("packing", current, total, 0);
  return 0;
}

int on_push_transfer(unsigned int current, unsigned int total, size_t bytes, void* payload) {
  auto* s = static_cast<State*>(payload);
  s->sent_objects = total;
  s->sent_bytes = bytes;
  s->progress("sending", current, total, bytes);
  return 0;
}

int on_push_update(const char* refname, const char* status, void* payload) {
  auto* s = static_cast<State*>(payload);
  if (status) {
    if (!s->rejection.empty()) s->rejection += "; ";
    s->rejection += std::string(refname) + ": " + status;
  }
  return 0;
}

// For a push, the transport that lets kistore send its own pack (receive_pack.h).
int on_transport(git_transport** out, git_remote* owner, void* payload) {
  auto* s = static_cast<State*>(payload);
  *out = nullptr;
  if (!s->receive_pack) return 0;
  const char* url = git_remote_pushurl(owner) ? git_remote_pushurl(owner) : git_remote_url(owner);
  return s->receive_pack->make_transport(out, owner, url ? url : "");
}

}  // namespace

Connection::Connection(Store& store, const ResolvedRemote& remote, git_direction direction,
                       const SyncOptions& options, git_repository* repo)
    : options_(options), direction_(direction) {
  const std::string& name = remote.label;
  const std::string& url = direction == GIT_DIRECTION_PUSH ? remote.push_url : remote.url;
  if (!options.credentials.ca_file.empty()) {
    // For the whole process (libgit2 keeps one TLS configuration): the CAs
    // that https servers are checked against instead of the system's.
    if (!std::filesystem::is_regular_file(options.credentials.ca_file))
      throw InvalidInput("KISTORE_SSL_CAINFO names " + options.credentials.ca_file +
                         ", which is not a file (expected a PEM file of certificate authorities)");
    if (git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, options.credentials.ca_file.c_str(), nullptr) < 0)
      throw InvalidInput("KISTORE_SSL_CAINFO names " + options.credentials.ca_file +
                         ", which holds no certificate libgit2 can load (expected PEM): " + git::last_error());
  }
  state_ = std::make_unique<State>(name, url, options);
  git_remote* anonymous = nullptr;
  git::check(git_remote_create_anonymous(&anonymous, repo ? repo : store.repo(), url.c_str()),
             "opening remote " + name);
  remote_.reset(anonymous);
  git_remote_init_callbacks(&callbacks_, GIT_REMOTE_CALLBACKS_VERSION);
  callbacks_.credentials = on_credentials;
  callbacks_.certificate_check = on_certificate;
  callbacks_.transfer_progress = on_transfer;
  callbacks_.pack_progress = on_pack;
  callbacks_.push_transfer_progress = on_push_transfer;
  callbacks_.push_update_reference = on_push_update;
  callbacks_.payload = state_.get();
  if (direction == GIT_DIRECTION_PUSH) {
    state_->receive_pack = &receive_pack_;
    callbacks_.transport = on_transport;
  }
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
  git_remote_connect_options opts = GIT_REMOTE_CONNECT_OPTIONS_INIT;
  opts.callbacks = callbacks_;
  opts.follow_redirects = kRedirects;
  check(git_remote_connect_ext(remote_.get(), direction_, &opts), "cannot connect to");
  const git_remote_head** heads = nullptr;
  std::size_t n = 0;
  check(git_remote_ls(&heads, &n, remote_.get()), "cannot list the branches of");
  for (std::size_t i = 0; i < n; ++i) {
    heads_[heads[i]->name] = heads[i]->oid;
    if (std::string_view(heads[i]->name) == "HEAD" && heads[i]->symref_target) head_target_ = heads[i]->symref_target;
  }
}

std::optional<git_oid> Connection::head(const std::string& ref) const {
  auto it = heads_.find(ref);
  if (it == heads_.end()) return std::nullopt;
  return it->second;
}

std::string Connection::default_branch() {
  if (!head_target_.empty()) return head_target_;
  git_buf buf = GIT_BUF_INIT;
  std::string out;
  if (git_remote_default_branch(&buf, remote_.get()) == 0) out.assign(buf.ptr, buf.size);
  git_buf_dispose(&buf);
  git_error_clear();
  return out;
}

void Connection::download(const std::string& refspec) {
  git_fetch_options opts = GIT_FETCH_OPTIONS_INIT;
  opts.callbacks = callbacks_;
  opts.update_fetchhead = 0;
  opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
  opts.prune = GIT_FETCH_NO_PRUNE;
  opts.follow_redirects = kRedirects;
  char* specs[] = {const_cast<char*>(refspec.c_str())};
  git_strarray array{specs, 1};
  int rc = git_remote_download(remote_.get(), &array, &opts);
  if (rc < 0 && state_->host_key_failure.empty() && state_->credentials.failure().empty() && bad_pack())
    throw Refused("refused the pack from remote " + where() + ": " + scrub(git::last_error()) +
                  "; nothing was taken in");
  check(rc, "cannot fetch from");
}

bool Connection::bad_pack() const {
  const git_error* e = git_error_last();
  if (!e) return false;
  if (e->klass == GIT_ERROR_INDEXER || e->klass == GIT_ERROR_ZLIB || e->klass == GIT_ERROR_ODB) return true;
  // Cut short once the pack had started to arrive.
  const git_indexer_progress* stats = git_remote_stats(remote_.get());
  return stats && stats->received_bytes > 0 && e->message && std::strstr(e->message, "EOF");
}

std::size_t Connection::received_objects() const {
  const git_indexer_progress* stats = git_remote_stats(remote_.get());
  return stats ? stats->received_objects : 0;
}

int Connection::upload(const std::string& refspec) {
  git_push_options opts = GIT_PUSH_OPTIONS_INIT;
  opts.callbacks = callbacks_;
  opts.pb_parallelism = 2;
  opts.follow_redirects = kRedirects;
  char* specs[] = {const_cast<char*>(refspec.c_str())};
  git_strarray array{specs, 1};
  int rc = git_remote_upload(remote_.get(), &array, &opts);
  if (rc == GIT_ENONFASTFORWARD) return rc;
  check(rc, "cannot push to");
  return 0;
}

void Connection::disconnect() {
  if (remote_ && git_remote_connected(remote_.get())) git_remote_disconnect(remote_.get());
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

void Connection::progress(const char* stage, std::size_t done, std::size_t total, std::uint64_t bytes) const {
  state_->progress(stage, done, total, bytes);
}

std::string Connection::scrub(std::string message) const {
  return scrub_secrets(scrub_secrets(std::move(message), state_->url, options_.credentials.token), "",
                       options_.credentials.url_password);
}

void Connection::check(int rc, std::string_view what) const {
  if (rc >= 0) return;
  if (!state_->host_key_failure.empty()) throw RemoteError(state_->host_key_failure);
  if (!state_->credentials.failure().empty()) throw RemoteError(state_->credentials.failure());
  const git_error* e = git_error_last();
  if (e && e->klass == GIT_ERROR_NET && e->message && std::string_view(e->message).starts_with("cannot redirect from"))
    throw RemoteError("refused to follow remote " + where() + ": it redirected to another host (" +
                      scrub(git::last_error()) + "); kistore talks only to the host configured, and sent nothing there");
  std::string detail = scrub(git::last_error());
  if (rc == GIT_EAUTH || detail.find("authentication") != std::string::npos || detail.find("401") != std::string::npos)
    throw RemoteError("authentication failed for " + redact_url(state_->url) + ": " + detail);
  throw RemoteError(std::string(what) + " remote " + where() + ": " + detail);
}

}  // namespace kistore
