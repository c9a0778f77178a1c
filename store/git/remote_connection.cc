#include "store/git/remote_connection.h"

#include <cstring>
#include <string_view>

#include "store/git/remote_receive_pack.h"

namespace kistore::git {

// libgit2's callbacks and what they answer through (libgit2 keeps a pointer
// to it while connected).
struct RemoteConnection::Callbacks {
  git_remote_callbacks table{};
  RemoteConnection* owner = nullptr;

  static const RemoteEvents& events(void* payload) { return static_cast<Callbacks*>(payload)->owner->events_; }
  // For a push, the transport that lets kistore send its own pack.
  static int transport(git_transport** out, git_remote* remote, void* payload) {
    RemoteConnection* self = static_cast<Callbacks*>(payload)->owner;
    *out = nullptr;
    if (!self->receive_pack_) return 0;
    const char* url = git_remote_pushurl(remote) ? git_remote_pushurl(remote) : git_remote_url(remote);
    return self->receive_pack_->make_transport(out, remote, url ? url : "", self->protocol_);
  }
};

namespace {

using Callbacks = RemoteConnection::Callbacks;

// An http(s) remote that redirects to another host is refused by libgit2
// before anything is sent there. A redirect to another port or scheme of the
// same host is followed, and the credential callback (store/sync's
// CredentialOffer) then refuses to offer anything to the origin it landed
// on: a libgit2 that hands the callback the configured URL instead (before
// Debian's 1.5.1+ds-1+deb12u2, CVE-2026-53586) cannot make it send a
// password or token to another host.
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

const RemoteEvents& events_of(void* payload) { return Callbacks::events(payload); }

int on_credentials(git_credential** out, const char* url, const char* user_from_url, unsigned int allowed,
                   void* payload) {
  CredentialRequest request;
  request.url = url;
  request.user_from_url = user_from_url;
  request.username = allowed & GIT_CREDENTIAL_USERNAME;
  request.ssh_key = allowed & GIT_CREDENTIAL_SSH_KEY;
  request.user_password = allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT;
  std::optional<CredentialAnswer> answer = events_of(payload).credential(request);
  if (!answer) {
    git_error_set_str(GIT_ERROR_NET, "authentication failed");
    return GIT_EUSER;
  }
  const char* user = answer->user.c_str();
  switch (answer->kind) {
    case CredentialAnswer::kUsername: return git_credential_username_new(out, user);
    case CredentialAnswer::kSshAgent: return git_credential_ssh_key_from_agent(out, user);
    case CredentialAnswer::kSshKey:
      return git_credential_ssh_key_new(out, user, answer->public_key.empty() ? nullptr : answer->public_key.c_str(),
                                        answer->private_key.c_str(), nullptr);
    case CredentialAnswer::kUserPassword:
      return git_credential_userpass_plaintext_new(out, user, answer->password.c_str());
  }
  return GIT_EUSER;
}

int on_certificate(git_cert* cert, int valid, const char* host, void* payload) {
  ServerIdentity id;
  id.host = host;
  id.valid = valid;
  id.ssh = cert->cert_type == GIT_CERT_HOSTKEY_LIBSSH2;
  if (id.ssh) {
    auto* key = reinterpret_cast<git_cert_hostkey*>(cert);
    id.raw = key->type & GIT_CERT_SSH_RAW;
    if (id.raw) {
      id.key_type = ssh_key_type(key->raw_type);
      id.key.assign(key->hostkey, key->hostkey_len);
    }
    if (key->type & GIT_CERT_SSH_SHA256) id.sha256.assign(reinterpret_cast<const char*>(key->hash_sha256), 32);
  }
  return events_of(payload).identity(id) ? 0 : GIT_ECERTIFICATE;
}

int on_transfer(const git_indexer_progress* stats, void* payload) {
  events_of(payload).progress("receiving", stats->received_objects, stats->total_objects, stats->received_bytes);
  return 0;
}

int on_pack(int stage, uint32_t current, uint32_t total, void* payload) {
  if (stage == GIT_PACKBUILDER_DELTAFICATION) events_of(payload).progress("packing", current, total, 0);
  return 0;
}

int on_push_transfer(unsigned int current, unsigned int total, size_t bytes, void* payload) {
  const RemoteEvents& e = events_of(payload);
  e.sent(total, bytes);
  e.progress("sending", current, total, bytes);
  return 0;
}

int on_push_update(const char* refname, const char* status, void* payload) {
  if (status) events_of(payload).rejected(refname, status);
  return 0;
}

}  // namespace

RemoteConnection::RemoteConnection(git_repository* repo, const std::string& url, const std::string& label,
                                   Direction direction, RemoteEvents events, ReceivePack* receive_pack,
                                   SmartProtocol protocol)
    : events_(std::move(events)),
      receive_pack_(direction == Direction::kPush ? receive_pack : nullptr),
      protocol_(protocol),
      direction_(direction),
      callbacks_(std::make_unique<Callbacks>()) {
  git_remote* anonymous = nullptr;
  check(git_remote_create_anonymous(&anonymous, repo, url.c_str()), "opening remote " + label);
  remote_.reset(anonymous);
  git_remote_callbacks& table = callbacks_->table;
  git_remote_init_callbacks(&table, GIT_REMOTE_CALLBACKS_VERSION);
  table.credentials = on_credentials;
  table.certificate_check = on_certificate;
  table.transfer_progress = on_transfer;
  table.pack_progress = on_pack;
  table.push_transfer_progress = on_push_transfer;
  table.push_update_reference = on_push_update;
  table.payload = callbacks_.get();
  callbacks_->owner = this;
  if (direction == Direction::kPush) table.transport = Callbacks::transport;
}

RemoteConnection::~RemoteConnection() { disconnect(); }

int RemoteConnection::connect() {
  git_remote_connect_options opts = GIT_REMOTE_CONNECT_OPTIONS_INIT;
  opts.callbacks = callbacks_->table;
  opts.follow_redirects = kRedirects;
  return git_remote_connect_ext(remote_.get(), direction_ == Direction::kPush ? GIT_DIRECTION_PUSH : GIT_DIRECTION_FETCH,
                                &opts);
}

int RemoteConnection::list(std::map<std::string, git_oid>& heads, std::string& head_target) const {
  const git_remote_head** listed = nullptr;
  std::size_t n = 0;
  int rc = git_remote_ls(&listed, &n, remote_.get());
  if (rc < 0) return rc;
  for (std::size_t i = 0; i < n; ++i) {
    heads[listed[i]->name] = listed[i]->oid;
    if (std::string_view(listed[i]->name) == "HEAD" && listed[i]->symref_target) head_target = listed[i]->symref_target;
  }
  return 0;
}

std::string RemoteConnection::default_branch() const {
  git_buf buf = GIT_BUF_INIT;
  std::string out;
  if (git_remote_default_branch(&buf, remote_.get()) == 0) out.assign(buf.ptr, buf.size);
  git_buf_dispose(&buf);
  git_error_clear();
  return out;
}

int RemoteConnection::download(const std::string& refspec) {
  git_fetch_options opts = GIT_FETCH_OPTIONS_INIT;
  opts.callbacks = callbacks_->table;
  opts.update_fetchhead = 0;
  opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
  opts.prune = GIT_FETCH_NO_PRUNE;
  opts.follow_redirects = kRedirects;
  char* specs[] = {const_cast<char*>(refspec.c_str())};
  git_strarray array{specs, 1};
  return git_remote_download(remote_.get(), &array, &opts);
}

bool RemoteConnection::failed_on_pack() const {
  const git_error* e = git_error_last();
  if (!e) return false;
  if (e->klass == GIT_ERROR_INDEXER || e->klass == GIT_ERROR_ZLIB || e->klass == GIT_ERROR_ODB) return true;
  // Cut short once the pack had started to arrive.
  const git_indexer_progress* stats = git_remote_stats(remote_.get());
  return stats && stats->received_bytes > 0 && e->message && std::strstr(e->message, "EOF");
}

std::size_t RemoteConnection::received_objects() const {
  const git_indexer_progress* stats = git_remote_stats(remote_.get());
  return stats ? stats->received_objects : 0;
}

int RemoteConnection::upload(const std::string& refspec) {
  git_push_options opts = GIT_PUSH_OPTIONS_INIT;
  opts.callbacks = callbacks_->table;
  opts.pb_parallelism = 2;
  opts.follow_redirects = kRedirects;
  char* specs[] = {const_cast<char*>(refspec.c_str())};
  git_strarray array{specs, 1};
  return git_remote_upload(remote_.get(), &array, &opts);
}

void RemoteConnection::disconnect() {
  if (remote_ && git_remote_connected(remote_.get())) git_remote_disconnect(remote_.get());
}

bool use_certificate_authorities(const std::string& file) {
  return git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, file.c_str(), nullptr) >= 0;
}

bool last_error_is_refused_redirect() {
  const git_error* e = git_error_last();
  return e && e->klass == GIT_ERROR_NET && e->message && std::string_view(e->message).starts_with("cannot redirect from");
}

void clear_error() { git_error_clear(); }

}  // namespace kistore::git
