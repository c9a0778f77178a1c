#include "store/sync.h"

#include <fnmatch.h>
#include <git2/sys/repository.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "objects/blob.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "store/audit.h"
#include "store/git.h"
#include "store/incoming_walk.h"
#include "store/objwrite.h"
#include "store/packread.h"
#include "store/quarantine.h"
#include "store/receive_pack.h"

namespace kistore {
namespace fs = std::filesystem;

namespace {

// How many rounds of pull-then-push before push gives up on a busy remote.
constexpr int kPushRounds = 3;
// How many times the credential callback may be asked before giving up
// (libgit2 asks again after every refused credential).
constexpr int kMaxCredentialRequests = 3;
// A refused pull lists at most this many problems.
constexpr std::size_t kMaxProblems = 50;

std::string incoming_ref(const std::string& remote) { return "refs/kistore/incoming/" + remote; }
std::string synced_ref(const std::string& remote) { return "refs/kistore/synced/" + remote; }

std::string short_id(const std::string& id) { return id.substr(0, 12); }

git_oid parse_oid(const std::string& text) {
  git_oid id;
  git_oid_fromstr(&id, text.c_str());
  return id;
}

// ---- URLs -----------------------------------------------------------------

bool has_scheme(std::string_view url) { return url.find("://") != std::string_view::npos; }

// scp-like ssh address "[user@]host:path" (no scheme, a colon before any slash).
bool is_scp_like(std::string_view url) {
  if (has_scheme(url)) return false;
  std::size_t colon = url.find(':');
  std::size_t slash = url.find('/');
  return colon != std::string_view::npos && colon > 0 && (slash == std::string_view::npos || colon < slash);
}

bool is_local(std::string_view url) { return !has_scheme(url) && !is_scp_like(url); }
// A repository on this machine: a path or a file:// URL.
bool on_this_machine(std::string_view url) { return is_local(url) || url.starts_with("file://"); }

struct UrlParts {
  std::string scheme, user, password, host, port;
};

// Splits scheme://[user[:password]@]host[:port]/... (only what sync needs).
UrlParts split_url(std::string_view url) {
  UrlParts p;
  if (is_scp_like(url)) {
    p.scheme = "ssh";
    std::string_view authority = url.substr(0, url.find(':'));
    std::size_t at = authority.rfind('@');
    if (at != std::string_view::npos) {
      p.user = authority.substr(0, at);
      authority.remove_prefix(at + 1);
    }
    p.host = authority;
    return p;
  }
  std::size_t sep = url.find("://");
  if (sep == std::string_view::npos) return p;
  p.scheme = url.substr(0, sep);
  std::string_view rest = url.substr(sep + 3);
  std::string_view authority = rest.substr(0, rest.find('/'));
  std::size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    std::size_t colon = userinfo.find(':');
    p.user = userinfo.substr(0, colon);
    if (colon != std::string_view::npos) p.password = userinfo.substr(colon + 1);
    authority.remove_prefix(at + 1);
  }
  if (!authority.empty() && authority.front() == '[') {
    std::size_t close = authority.find(']');
    p.host = authority.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1);
    if (close != std::string_view::npos && close + 1 < authority.size() && authority[close + 1] == ':')
      p.port = authority.substr(close + 2);
  } else {
    std::size_t colon = authority.rfind(':');
    p.host = authority.substr(0, colon);
    if (colon != std::string_view::npos) p.port = authority.substr(colon + 1);
  }
  return p;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

void replace_all(std::string& text, std::string_view what, std::string_view with) {
  if (what.empty()) return;
  for (std::size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + with.size()))
    text.replace(pos, what.size(), with);
}

// libgit2's messages may quote the URL it was given; never let a secret through.
std::string scrub(std::string message, const std::string& url) {
  replace_all(message, url, redact_url(url));
  UrlParts p = split_url(url);
  if (p.password.size() >= 3) {
    replace_all(message, p.password, "***");
    replace_all(message, percent_decode(p.password), "***");
  }
  if (const char* token = std::getenv("KISTORE_TOKEN"); token && std::strlen(token) >= 3)
    replace_all(message, token, "***");
  return message;
}

// ---- base64 (known_hosts keys, fingerprints) -------------------------------

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64_encode(const unsigned char* data, std::size_t n, bool pad) {
  std::string out;
  for (std::size_t i = 0; i < n; i += 3) {
    unsigned v = data[i] << 16 | (i + 1 < n ? data[i + 1] << 8 : 0) | (i + 2 < n ? data[i + 2] : 0);
    out += kBase64[(v >> 18) & 63];
    out += kBase64[(v >> 12) & 63];
    if (i + 1 < n) out += kBase64[(v >> 6) & 63]; else if (pad) out += '=';
    if (i + 2 < n) out += kBase64[v & 63]; else if (pad) out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    const char* at = std::strchr(kBase64, c);
    if (!at || c == '\0') return std::nullopt;
    buffer = buffer << 6 | static_cast<unsigned>(at - kBase64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  return out;
}

// ---- ssh host keys ----------------------------------------------------------

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

enum class HostKeyMatch { kUnknown, kMatch, kChanged };

struct HostKeyVerdict {
  HostKeyMatch match = HostKeyMatch::kUnknown;
  std::string where;  // file:line of the deciding entry
};

// An OpenSSH host pattern: "*" and "?" are wildcards, "[" and "]" are literal
// (they bracket a host with a port).
bool host_matches(const std::string& pattern, const std::string& host_name) {
  if (pattern.find_first_of("*?") == std::string::npos) return pattern == host_name;
  std::string escaped;
  for (char c : pattern) {
    if (c == '[' || c == ']' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return fnmatch(escaped.c_str(), host_name.c_str(), 0) == 0;
}

// Looks `host_name` ("host" for port 22, else "[host]:port") up in an
// OpenSSH known_hosts file: plain names and wildcard patterns; hashed
// entries (|1|...) and @cert-authority lines are skipped.
HostKeyVerdict check_known_hosts(const std::string& file, const std::string& host_name, const std::string& type,
                                 std::string_view blob) {
  HostKeyVerdict verdict;
  std::ifstream in(file);
  if (!in) return verdict;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream fields(line);
    std::string hosts, key_type, key;
    if (!(fields >> hosts) || hosts.starts_with('#')) continue;
    bool revoked = false;
    if (hosts.starts_with('@')) {
      if (hosts != "@revoked") continue;
      revoked = true;
      if (!(fields >> hosts)) continue;
    }
    if (!(fields >> key_type >> key)) continue;
    bool matched = false, negated = false;
    std::string_view list = hosts;
    while (!list.empty()) {
      std::size_t comma = list.find(',');
      std::string pattern(list.substr(0, comma));
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      bool negate = !pattern.empty() && pattern.front() == '!';
      if (negate) pattern.erase(0, 1);
      if (pattern.empty() || pattern.front() == '|') continue;
      if (host_matches(pattern, host_name)) (negate ? negated : matched) = true;
    }
    if (!matched || negated) continue;
    auto decoded = base64_decode(key);
    bool same = key_type == type && decoded && *decoded == blob;
    std::string where = file + ":" + std::to_string(number);
    if (revoked && same) return {HostKeyMatch::kChanged, where + " (revoked)"};
    if (revoked || key_type != type) continue;
    if (same) verdict = {HostKeyMatch::kMatch, where};
    else if (verdict.match != HostKeyMatch::kMatch) verdict = {HostKeyMatch::kChanged, where};
  }
  return verdict;
}

std::string home_dir() {
  if (const char* home = std::getenv("HOME"); home && *home) return home;
  if (const passwd* pw = getpwuid(getuid())) return pw->pw_dir;
  return "";
}

std::string local_user() {
  if (const char* user = std::getenv("USER"); user && *user) return user;
  if (const passwd* pw = getpwuid(getuid())) return pw->pw_name;
  return "git";
}

// ---- a connection to one remote ----------------------------------------------

// What the callbacks of one connection know and remember. Lives as long as
// the connection (libgit2 keeps a pointer to it).
struct Session {
  std::string remote;  // name, for messages
  std::string url;     // as configured (may hold a password)
  const SyncOptions* options = nullptr;
  int credential_requests = 0;
  bool tried_agent = false, tried_key = false, tried_token = false;
  bool offered_credentials = false;  // from the URL or KISTORE_TOKEN, for the message
  std::string auth_failure;          // set when the credential callback gave up
  std::string host_key_failure;      // set when the host key was refused
  std::string push_rejection;        // set when the remote rejected a ref update
  std::size_t pushed_objects = 0;
  std::uint64_t pushed_bytes = 0;
  git::ReceivePack* receive_pack = nullptr;  // pushes over the network speak receive-pack through it
};

int on_credentials(git_credential** out, const char* url, const char* user_from_url, unsigned int allowed,
                   void* payload) {
  auto* s = static_cast<Session*>(payload);
  (void)url;
  std::string where = redact_url(s->url);
  auto give_up = [&](std::string why) {
    s->auth_failure = std::move(why);
    git_error_set_str(GIT_ERROR_NET, "authentication failed");
    return GIT_EUSER;
  };
  if (++s->credential_requests > kMaxCredentialRequests)
    return give_up("authentication failed for " + where + ": the remote refused every credential offered");
  std::string user = user_from_url && *user_from_url ? user_from_url : "";
  if (allowed & GIT_CREDENTIAL_USERNAME)
    return git_credential_username_new(out, user.empty() ? local_user().c_str() : user.c_str());
  if (allowed & GIT_CREDENTIAL_SSH_KEY) {
    if (user.empty()) user = local_user();
    const char* agent = std::getenv("SSH_AUTH_SOCK");
    if (!s->tried_agent && agent && *agent) {
      s->tried_agent = true;
      return git_credential_ssh_key_from_agent(out, user.c_str());
    }
    if (!s->tried_key) {
      s->tried_key = true;
      std::string key;
      if (const char* env = std::getenv("KISTORE_SSH_KEY"); env && *env) key = env;
      else key = home_dir() + "/.ssh/id_ed25519";
      if (fs::exists(key)) {
        std::string pub = key + ".pub";
        s->offered_credentials = true;
        return git_credential_ssh_key_new(out, user.c_str(), fs::exists(pub) ? pub.c_str() : nullptr, key.c_str(),
                                          nullptr);
      }
      if (std::getenv("KISTORE_SSH_KEY"))
        return give_up("authentication failed for " + where + ": KISTORE_SSH_KEY names " + key +
                       ", which does not exist");
    }
    return give_up("authentication failed for " + where +
                   (s->offered_credentials || s->tried_agent
                        ? std::string(": the server refused the ssh key")
                        : std::string(": no ssh key (start ssh-agent, set KISTORE_SSH_KEY, or create ~/.ssh/id_ed25519)")));
  }
  if (allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) {
    UrlParts parts = split_url(s->url);
    if (!parts.password.empty()) s->offered_credentials = true;  // libgit2 presented them first
    const char* token = std::getenv("KISTORE_TOKEN");
    if (!s->tried_token && token && *token) {
      s->tried_token = true;
      s->offered_credentials = true;
      return git_credential_userpass_plaintext_new(out, user.empty() ? "kistore" : user.c_str(), token);
    }
    return give_up("authentication failed for " + where +
                   (s->offered_credentials ? std::string(": the server refused the credentials")
                                           : std::string(": the server asks for credentials: set KISTORE_TOKEN, or "
                                                         "put user:password in the remote's URL")));
  }
  return give_up("authentication failed for " + where + ": the server asks for a kind of credential kistore does not offer");
}

int on_certificate(git_cert* cert, int valid, const char* host, void* payload) {
  auto* s = static_cast<Session*>(payload);
  if (cert->cert_type != GIT_CERT_HOSTKEY_LIBSSH2) {
    if (valid) return 0;
    s->host_key_failure = "the TLS certificate of " + std::string(host) + " is not valid (" +
                          redact_url(s->url) + ")";
    return GIT_ECERTIFICATE;
  }
  // libgit2 has checked ~/.ssh/known_hosts (hashed names included) already.
  if (valid) return 0;
  auto* key = reinterpret_cast<git_cert_hostkey*>(cert);
  UrlParts parts = split_url(s->url);
  std::string port = parts.port.empty() || parts.port == "22" ? "" : parts.port;
  std::string host_name = port.empty() ? std::string(host) : "[" + std::string(host) + "]:" + port;
  std::string fingerprint;
  if (key->type & GIT_CERT_SSH_SHA256)
    fingerprint = "SHA256:" + base64_encode(key->hash_sha256, 32, false);
  if (!(key->type & GIT_CERT_SSH_RAW)) {
    s->host_key_failure = "cannot check the ssh host key of " + host_name + ": libgit2 did not pass the raw key";
    return GIT_ECERTIFICATE;
  }
  std::string type = ssh_key_type(key->raw_type);
  std::string_view blob(key->hostkey, key->hostkey_len);
  std::vector<std::string> files;
  if (const char* env = std::getenv("KISTORE_SSH_KNOWN_HOSTS"); env && *env) files.push_back(env);
  files.push_back(home_dir() + "/.ssh/known_hosts");
  for (const std::string& file : files) {
    HostKeyVerdict v = check_known_hosts(file, host_name, type, blob);
    if (v.match == HostKeyMatch::kMatch) return 0;
    if (v.match == HostKeyMatch::kChanged) {
      s->host_key_failure = "the ssh host key of " + host_name + " has CHANGED: the server offers " + type + " " +
                            fingerprint + ", which is not the key recorded at " + v.where +
                            "; someone may be intercepting the connection. If the server's key really changed, "
                            "remove the old entry and add the new one";
      return GIT_ECERTIFICATE;
    }
  }
  std::string keyscan = "ssh-keyscan " + (port.empty() ? "" : "-p " + port + " ") + std::string(host);
  s->host_key_failure = "the ssh host key of " + host_name + " is not known (" + type + " " + fingerprint +
                        "). kistore connects only to hosts listed in ~/.ssh/known_hosts or in the file "
                        "KISTORE_SSH_KNOWN_HOSTS names. Check the fingerprint with the server's owner, then add it, "
                        "e.g. `" + keyscan + " >> ~/.ssh/known_hosts` (or connect once with ssh)";
  return GIT_ECERTIFICATE;
}

int on_transfer(const git_indexer_progress* stats, void* payload) {
  auto* s = static_cast<Session*>(payload);
  if (s->options && s->options->progress) s->options->progress("receiving", stats->received_objects, stats->total_objects, stats->received_bytes);
  return 0;
}

int on_pack(int stage, uint32_t current, uint32_t total, void* payload) {
  auto* s = static_cast<Session*>(payload);
  if (s->options && s->options->progress && stage == GIT_PACKBUILDER_DELTAFICATION)
    s->options->progress("packing", current, total, 0);
  return 0;
}

int on_push_transfer(unsigned int current, unsigned int total, size_t bytes, void* payload) {
  auto* s = static_cast<Session*>(payload);
  s->pushed_objects = total;
  s->pushed_bytes = bytes;
  if (s->options && s->options->progress) s->options->progress("sending", current, total, bytes);
  return 0;
}

int on_push_update(const char* refname, const char* status, void* payload) {
  auto* s = static_cast<Session*>(payload);
  if (status) {
    if (!s->push_rejection.empty()) s->push_rejection += "; ";
    s->push_rejection += std::string(refname) + ": " + status;
  }
  return 0;
}

// For a push, the transport that lets kistore send its own pack (receive_pack.h).
int on_transport(git_transport** out, git_remote* owner, void* payload) {
  auto* s = static_cast<Session*>(payload);
  *out = nullptr;
  if (!s->receive_pack) return 0;
  const char* url = git_remote_pushurl(owner) ? git_remote_pushurl(owner) : git_remote_url(owner);
  return s->receive_pack->make_transport(out, owner, url ? url : "");
}

// One connection to a remote, for fetching or pushing. Not movable: libgit2
// holds a pointer to its session.
class Connection {
 public:
  // `repo` (default: the store's) is the handle the transfer runs on; push
  // passes one with packing settings of its own (packing_handle).
  Connection(Store& store, const std::string& remote, git_direction direction, git_repository* repo = nullptr)
      : store_(store), direction_(direction) {
    git_remote* named = nullptr;
    int rc = git_remote_lookup(&named, store.repo(), remote.c_str());
    if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC)
      throw InvalidInput("no remote named \"" + remote + "\" (add one with `kistore remote add " + remote + " URL`)");
    git::check(rc, "reading remote " + remote);
    git::Remote owned(named);
    const char* url = direction == GIT_DIRECTION_PUSH && git_remote_pushurl(named) ? git_remote_pushurl(named)
                                                                                  : git_remote_url(named);
    if (!url || !*url) throw InvalidInput("remote \"" + remote + "\" has no URL");
    session_.remote = remote;
    session_.url = url;
    // An anonymous remote: only the refspecs kistore passes apply, so a fetch
    // never moves refs/remotes/* or anything but the quarantine ref.
    git_remote* anonymous = nullptr;
    git::check(git_remote_create_anonymous(&anonymous, repo ? repo : store.repo(), url), "opening remote " + remote);
    remote_.reset(anonymous);
    git_remote_init_callbacks(&callbacks_, GIT_REMOTE_CALLBACKS_VERSION);
    callbacks_.credentials = on_credentials;
    callbacks_.certificate_check = on_certificate;
    callbacks_.transfer_progress = on_transfer;
    callbacks_.pack_progress = on_pack;
    callbacks_.push_transfer_progress = on_push_transfer;
    callbacks_.push_update_reference = on_push_update;
    callbacks_.payload = &session_;
    if (direction == GIT_DIRECTION_PUSH) {
      session_.receive_pack = &receive_pack_;
      callbacks_.transport = on_transport;
    }
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() {
    if (remote_ && git_remote_connected(remote_.get())) git_remote_disconnect(remote_.get());
  }

  void set_options(const SyncOptions& options) { session_.options = &options; }
  const std::string& remote() const { return session_.remote; }
  const std::string& url() const { return session_.url; }
  Session& session() { return session_; }
  git::ReceivePack& receive_pack() { return receive_pack_; }

  void connect() {
    check(git_remote_connect(remote_.get(), direction_, &callbacks_, nullptr, nullptr), "cannot connect to");
    const git_remote_head** heads = nullptr;
    std::size_t n = 0;
    check(git_remote_ls(&heads, &n, remote_.get()), "cannot list the branches of");
    for (std::size_t i = 0; i < n; ++i) {
      heads_[heads[i]->name] = *heads_id(heads[i]);
      if (std::string_view(heads[i]->name) == "HEAD" && heads[i]->symref_target)
        head_target_ = heads[i]->symref_target;
    }
  }

  // The remote's value of `ref`, from the advertisement at connect().
  std::optional<git_oid> head(const std::string& ref) const {
    auto it = heads_.find(ref);
    if (it == heads_.end()) return std::nullopt;
    return it->second;
  }
  // The branch the remote's HEAD names, if it says (or "" ).
  std::string default_branch() {
    if (!head_target_.empty()) return head_target_;
    git_buf buf = GIT_BUF_INIT;
    std::string out;
    if (git_remote_default_branch(&buf, remote_.get()) == 0) out.assign(buf.ptr, buf.size);
    git_buf_dispose(&buf);
    git_error_clear();
    return out;
  }

  void download(const std::string& refspec) {
    git_fetch_options opts = GIT_FETCH_OPTIONS_INIT;
    opts.callbacks = callbacks_;
    opts.update_fetchhead = 0;
    opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
    opts.prune = GIT_FETCH_NO_PRUNE;
    char* specs[] = {const_cast<char*>(refspec.c_str())};
    git_strarray array{specs, 1};
    check(git_remote_download(remote_.get(), &array, &opts), "cannot fetch from");
  }

  std::size_t received_objects() const {
    const git_indexer_progress* stats = git_remote_stats(remote_.get());
    return stats ? stats->received_objects : 0;
  }

  // Uploads `refspec`; returns GIT_ENONFASTFORWARD when libgit2 sees that the
  // remote's branch is not an ancestor of ours, else 0 (throws on failure).
  int upload(const std::string& refspec) {
    git_push_options opts = GIT_PUSH_OPTIONS_INIT;
    opts.callbacks = callbacks_;
    opts.pb_parallelism = 2;
    char* specs[] = {const_cast<char*>(refspec.c_str())};
    git_strarray array{specs, 1};
    int rc = git_remote_upload(remote_.get(), &array, &opts);
    if (rc == GIT_ENONFASTFORWARD) return rc;
    check(rc, "cannot push to");
    return 0;
  }

  void disconnect() {
    if (git_remote_connected(remote_.get())) git_remote_disconnect(remote_.get());
  }

  // Throws Error(kRemote) for a failed libgit2 call, explaining it as well as
  // the callbacks allow, and with no secret in it.
  void check(int rc, std::string_view what) {
    if (rc >= 0) return;
    std::string where = session_.remote + " (" + redact_url(session_.url) + ")";
    if (!session_.host_key_failure.empty()) throw RemoteError(session_.host_key_failure);
    if (!session_.auth_failure.empty()) throw RemoteError(session_.auth_failure);
    std::string detail = scrub(git::last_error(), session_.url);
    if (rc == GIT_EAUTH || detail.find("authentication") != std::string::npos ||
        detail.find("401") != std::string::npos)
      throw RemoteError("authentication failed for " + redact_url(session_.url) + ": " + detail);
    throw RemoteError(std::string(what) + " remote " + where + ": " + detail);
  }

 private:
  static const git_oid* heads_id(const git_remote_head* h) { return &h->oid; }

  Store& store_;
  git_direction direction_;
  git::ReceivePack receive_pack_;  // before remote_: its transport refers to it
  git::Remote remote_;
  Session session_;
  git_remote_callbacks callbacks_{};
  std::map<std::string, git_oid> heads_;
  std::string head_target_;
};

// ---- small git helpers ------------------------------------------------------

std::optional<git_oid> ref_target(git_repository* repo, const std::string& name) {
  git_reference* ref = nullptr;
  int rc = git_reference_lookup(&ref, repo, name.c_str());
  if (rc == GIT_ENOTFOUND) return std::nullopt;
  git::check(rc, "reading " + name);
  git::Reference owned(ref);
  git_reference* resolved = nullptr;
  git::check(git_reference_resolve(&resolved, ref), "resolving " + name);
  git::Reference owned_resolved(resolved);
  return *git_reference_target(resolved);
}

void set_ref(git_repository* repo, const std::string& name, const git_oid& id, const std::string& log) {
  git_reference* ref = nullptr;
  git::check(git_reference_create(&ref, repo, name.c_str(), &id, 1, log.c_str()), "writing " + name);
  git_reference_free(ref);
}

void delete_ref(git_repository* repo, const std::string& name) {
  git_reference* ref = nullptr;
  if (git_reference_lookup(&ref, repo, name.c_str()) == 0) {
    git_reference_delete(ref);
    git_reference_free(ref);
  }
  git_error_clear();
}

// True when `commit` is `ancestor` or descends from it.
bool contains(git_repository* repo, const git_oid& commit, const git_oid& ancestor) {
  if (git_oid_equal(&commit, &ancestor)) return true;
  int rc = git_graph_descendant_of(repo, &commit, &ancestor);
  git_error_clear();
  return rc == 1;
}

git::Tree commit_tree(git_repository* repo, const git_oid& id) {
  git_commit* c = nullptr;
  git::check(git_commit_lookup(&c, repo, &id), "reading commit " + git::oid_str(id));
  git::Commit owned(c);
  git_tree* t = nullptr;
  git::check(git_commit_tree(&t, c), "reading the tree of " + git::oid_str(id));
  return git::Tree(t);
}

std::string blob_bytes(git_repository* repo, const git_oid& id) {
  git_blob* blob = nullptr;
  git::check(git_blob_lookup(&blob, repo, &id), "reading blob " + git::oid_str(id));
  git::Blob owned(blob);
  return std::string(static_cast<const char*>(git_blob_rawcontent(blob)), git_blob_rawsize(blob));
}

constexpr Level kLevels[] = {Level::kDisputed, Level::kReported, Level::kSourceNative, Level::kReproduced};

struct LevelState {
  Level level;
  git_oid id;
  friend bool operator==(const LevelState& a, const LevelState& b) {
    return a.level == b.level && git_oid_equal(&a.id, &b.id);
  }
};

// One path that differs between two trees. `leaf_ok` is false for an entry
// that is neither a blob nor a tree (a submodule link), which no store holds.
struct Delta {
  git_delta_t status;  // GIT_DELTA_ADDED, GIT_DELTA_DELETED or GIT_DELTA_MODIFIED
  std::string path;
  git_oid old_id, new_id;
  bool leaf_ok = true;
};

// Path lookups and diffs in many trees of one repository. Parsed trees are kept by id:
// libgit2's own cache skips trees over 4 KiB, and a store's big directories
// (refs/levels/<level>, a source's ids) would otherwise be read and parsed
// again for every lookup. Must not outlive the repository.
class Trees {
 public:
  explicit Trees(git_repository* repo) : repo_(repo) {}

  // The blob id at `path` below `root` (null: the empty tree), if any.
  std::optional<git_oid> entry(git_tree* root, const std::string& path) {
    git_tree* t = root;
    std::size_t start = 0;
    while (t) {
      std::size_t slash = path.find('/', start);
      std::string name = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
      const git_tree_entry* e = git_tree_entry_byname(t, name.c_str());
      if (!e) return std::nullopt;
      if (slash == std::string::npos) {
        if (git_tree_entry_type(e) != GIT_OBJECT_BLOB) return std::nullopt;
        return *git_tree_entry_id(e);
      }
      if (git_tree_entry_type(e) != GIT_OBJECT_TREE) return std::nullopt;
      t = tree(*git_tree_entry_id(e));
      start = slash + 1;
    }
    return std::nullopt;
  }

  std::optional<std::string> read(git_tree* root, const std::string& path) {
    auto id = entry(root, path);
    if (!id) return std::nullopt;
    return blob_bytes(repo_, *id);
  }

  std::optional<LevelState> level_of(git_tree* root, const Digest& run) {
    for (Level l : kLevels)
      if (auto id = entry(root, level_path(l, run))) return LevelState{l, *id};
    return std::nullopt;
  }

  // Whether `path` is a folder below `root`.
  bool is_folder(git_tree* root, const std::string& path) {
    std::size_t slash = path.rfind('/');
    git_tree* parent = slash == std::string::npos ? root : folder(root, path.substr(0, slash));
    if (!parent) return false;
    const git_tree_entry* e = git_tree_entry_byname(parent, path.substr(slash + 1).c_str());
    return e && git_tree_entry_type(e) == GIT_OBJECT_TREE;
  }

  // Whether the source id `path` (refs/sources/...) cannot be an entry of its
  // own below `root`: a folder of other ids is there, or a shorter id is a
  // prefix of it. add then keeps the first claim and indexes nothing (verify
  // warns).
  bool source_blocked(git_tree* root, const std::string& path) {
    if (is_folder(root, path)) return true;
    for (std::size_t slash = path.find('/', 13); slash != std::string::npos; slash = path.find('/', slash + 1))
      if (entry(root, path.substr(0, slash))) return true;
    return false;
  }

  int level_count(git_tree* root, const Digest& run) {
    int n = 0;
    for (Level l : kLevels) n += entry(root, level_path(l, run)).has_value();
    return n;
  }

  // The blobs that differ between `from` and `to` (either may be null: the
  // empty tree), below the folder `dir` ("" for all). Subtrees with equal ids
  // are skipped, so the cost follows the change, not the size of the trees
  // (git_diff_tree_to_tree in libgit2 1.5 walks every entry).
  std::vector<Delta> diff(git_tree* from, git_tree* to, const std::string& dir = "") {
    std::vector<Delta> out;
    if (!dir.empty()) {
      from = subtree(from, dir);
      to = subtree(to, dir);
    }
    diff_into(from, to, dir.empty() ? "" : dir + "/", out);
    return out;
  }

 private:
  // The folder at `dir` (a/b/c) below `root`, or null.
  git_tree* folder(git_tree* root, const std::string& dir) {
    git_tree* t = root;
    std::size_t start = 0;
    while (t) {
      std::size_t slash = dir.find('/', start);
      t = subtree(t, dir.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
      if (slash == std::string::npos) return t;
      start = slash + 1;
    }
    return nullptr;
  }

  git_tree* subtree(git_tree* root, const std::string& dir) {
    if (!root) return nullptr;
    const git_tree_entry* e = git_tree_entry_byname(root, dir.c_str());
    if (!e || git_tree_entry_type(e) != GIT_OBJECT_TREE) return nullptr;
    return tree(*git_tree_entry_id(e));
  }

  static bool is_tree(const git_tree_entry* e) { return git_tree_entry_type(e) == GIT_OBJECT_TREE; }

  // git's order of tree entries: by name, a tree's name compared as if it
  // ended in "/".
  static int order(const git_tree_entry* a, const git_tree_entry* b) {
    std::string_view na = git_tree_entry_name(a), nb = git_tree_entry_name(b);
    std::size_t n = std::min(na.size(), nb.size());
    if (int c = n ? std::memcmp(na.data(), nb.data(), n) : 0) return c;
    unsigned char ca = na.size() > n ? na[n] : is_tree(a) ? '/' : '\0';
    unsigned char cb = nb.size() > n ? nb[n] : is_tree(b) ? '/' : '\0';
    return ca < cb ? -1 : ca > cb ? 1 : 0;
  }

  void side(const git_tree_entry* e, bool added, const std::string& prefix, std::vector<Delta>& out) {
    std::string path = prefix + git_tree_entry_name(e);
    if (is_tree(e)) {
      git_tree* t = tree(*git_tree_entry_id(e));
      diff_into(added ? nullptr : t, added ? t : nullptr, path + "/", out);
      return;
    }
    Delta d{added ? GIT_DELTA_ADDED : GIT_DELTA_DELETED, path, {}, {}};
    (added ? d.new_id : d.old_id) = *git_tree_entry_id(e);
    d.leaf_ok = git_tree_entry_type(e) == GIT_OBJECT_BLOB;
    out.push_back(std::move(d));
  }

  void diff_into(git_tree* from, git_tree* to, const std::string& prefix, std::vector<Delta>& out) {
    std::size_t nf = from ? git_tree_entrycount(from) : 0, nt = to ? git_tree_entrycount(to) : 0;
    std::size_t i = 0, j = 0;
    while (i < nf || j < nt) {
      const git_tree_entry* a = i < nf ? git_tree_entry_byindex(from, i) : nullptr;
      const git_tree_entry* b = j < nt ? git_tree_entry_byindex(to, j) : nullptr;
      int c = !a ? 1 : !b ? -1 : order(a, b);
      if (c < 0) {
        side(a, false, prefix, out);
        ++i;
      } else if (c > 0) {
        side(b, true, prefix, out);
        ++j;
      } else {
        ++i, ++j;
        if (git_oid_equal(git_tree_entry_id(a), git_tree_entry_id(b)) && git_tree_entry_filemode(a) == git_tree_entry_filemode(b))
          continue;
        if (is_tree(a)) {
          diff_into(tree(*git_tree_entry_id(a)), tree(*git_tree_entry_id(b)), prefix + git_tree_entry_name(a) + "/", out);
          continue;
        }
        Delta d{GIT_DELTA_MODIFIED, prefix + git_tree_entry_name(b), *git_tree_entry_id(a), *git_tree_entry_id(b)};
        d.leaf_ok = git_tree_entry_type(b) == GIT_OBJECT_BLOB;
        out.push_back(std::move(d));
      }
    }
  }

  git_tree* tree(const git_oid& id) {
    std::string key(reinterpret_cast<const char*>(id.id), GIT_OID_RAWSZ);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second.get();
    git_tree* t = nullptr;
    git::check(git_tree_lookup(&t, repo_, &id), "reading tree " + git::oid_str(id));
    return cache_.emplace(key, git::Tree(t)).first->second.get();
  }

  git_repository* repo_;
  std::unordered_map<std::string, git::Tree> cache_;
};

// ---- checking what comes in ---------------------------------------------------

// What a (new) object implies for the index, computed once per blob.
struct ObjectFacts {
  std::string error;  // why the blob is not a valid object at its path; "" if it is
  Kind kind = Kind::kRun;
  std::string group_path, group_bytes;
  Level default_level = Level::kReported;
  std::optional<std::string> source_path;
  std::optional<Digest> subject;
  std::string attestation_bytes;
};

// Checks the commits new to this store, each against its first parent, and
// collects every problem (up to kMaxProblems).
class IncomingChecker {
 public:
  IncomingChecker(git_repository* repo, Trees& trees, const std::vector<AllowedSigner>& trust)
      : repo_(repo), trees_(trees), trust_(trust) {}

  std::vector<Problem> problems;
  std::size_t new_objects = 0;
  // Called with (paths checked, paths changed) while a commit is checked.
  std::function<void(std::size_t, std::size_t)> progress;
  bool full() const { return problems.size() >= kMaxProblems; }

  void check_commit(const git_oid& id) {
    git_commit* raw = nullptr;
    git::check(git_commit_lookup(&raw, repo_, &id), "reading commit " + git::oid_str(id));
    git::Commit commit(raw);
    commit_ = raw;
    commit_id_ = git::oid_str(id);
    justification_.reset();
    level_runs_.clear();
    git_tree* t = nullptr;
    git::check(git_commit_tree(&t, raw), "reading the tree of " + commit_id_);
    git::Tree tree(t);
    tree_ = t;
    git::Tree first;
    std::vector<git::Tree> others;
    for (unsigned i = 0; i < git_commit_parentcount(raw); ++i) {
      git::Tree pt = commit_tree(repo_, *git_commit_parent_id(raw, i));
      if (i == 0) first = std::move(pt);
      else others.push_back(std::move(pt));
    }
    parent_ = first.get();
    others_.clear();
    for (auto& o : others) others_.push_back(o.get());

    std::vector<Delta> deltas = trees_.diff(parent_, tree_);
    for (std::size_t i = 0; i < deltas.size(); ++i) {
      if (full()) return;
      check_delta(deltas[i]);
      if (progress && (i % 256 == 255 || i + 1 == deltas.size())) progress(i + 1, deltas.size());
    }
    // A merge must keep every object of every parent, not only the first's.
    for (git_tree* other : others_)
      for (const Delta& d : trees_.diff(other, tree_, "objects"))
        if (d.status == GIT_DELTA_DELETED)
          problem("object-removed", d.path, "removes an object its parent has; objects are never removed");
  }

 private:
  void problem(std::string kind, std::string path, const std::string& detail) {
    if (full()) return;
    problems.push_back({std::move(kind), std::move(path), "commit " + short_id(commit_id_) + ": " + detail});
  }

  // Whether a merge took this change from one of its other parents (whose
  // side is checked on its own, or is already part of this store).
  bool inherited(const Delta& d) const {
    for (git_tree* other : others_) {
      auto id = trees_.entry(other, d.path);
      if (d.status == GIT_DELTA_DELETED ? !id : id && git_oid_equal(&*id, &d.new_id)) return true;
    }
    return false;
  }

  void check_delta(const Delta& d) {
    bool removed = d.status == GIT_DELTA_DELETED;
    if (!removed && !d.leaf_ok) return problem("layout", d.path, "adds an entry that is not a file (a submodule link)");
    bool changed = d.status != GIT_DELTA_ADDED && !removed;
    if (d.path.starts_with("objects/")) {
      if (removed) return problem("object-removed", d.path, "removes an object its parent has; objects are never removed");
      if (inherited(d)) return;
      if (changed) return problem("object-changed", d.path, "changes an object its parent has; objects are immutable");
      return check_new_object(d);
    }
    if (d.path.starts_with("refs/")) {
      if (removed) {
        // Only a level moves (the run keeps exactly one); every other entry stays.
        if (d.path.starts_with("refs/levels/")) return check_level_removal(d);
        return problem("index-removed", d.path, "removes an index entry; entries are only added");
      }
      if (inherited(d)) return;
      return check_ref(d);
    }
    if (!removed)
      problem("layout", d.path,
              "adds a path outside the store layout (objects/sha256/…, refs/{metadata,groups,levels,attestations,sources}/…)");
  }

  const ObjectFacts& facts_of(const git_oid& blob, const std::string& path, const Digest& digest) {
    std::string key(reinterpret_cast<const char*>(blob.id), GIT_OID_RAWSZ);
    auto it = facts_.find(key);
    if (it != facts_.end()) return it->second;
    ObjectFacts f;
    try {
      std::string bytes = decode_object(blob_bytes(repo_, blob), path);
      Digest actual = Digest::of(bytes);
      if (actual != digest) {
        f.error = "the object's bytes hash to " + actual.str() + ", not to " + digest.str() + " as its path says";
      } else {
        Document doc = Document::from_canonical(bytes, std::nullopt, Location{path, ""});
        if (doc.canonical() != bytes) {
          f.error = "the object is not in RFC 8785 canonical form";
        } else {
          f.kind = doc.kind();
          const Json& spec = doc.spec();
          if (f.kind == Kind::kRun) {
            f.group_path = group_path(comparison_key(spec), digest);
            f.group_bytes = group_entry(spec);
            f.default_level = default_level(spec);
            f.source_path = source_path(spec, path);
          } else if (f.kind == Kind::kAttestation) {
            f.subject = Digest::parse(spec.find("subject")->as_string());
            f.attestation_bytes = attestation_entry(spec);
          }
        }
      }
    } catch (const Error& e) {
      f.error = e.what();
    }
    return facts_.emplace(key, std::move(f)).first->second;
  }

  // Facts of the object `d` as the commit's tree has it; null when absent.
  const ObjectFacts* object_in_tree(const Digest& d) {
    std::string path = object_path(d);
    auto id = trees_.entry(tree_, path);
    if (!id) return nullptr;
    return &facts_of(*id, path, d);
  }

  void expect_entry(const std::string& path, const std::string& bytes, const std::string& what) {
    auto found = trees_.read(tree_, path);
    if (!found) problem("index-missing", path, "adds " + what + " without this index entry");
    else if (*found != bytes) problem("index-mismatch", path, "expected " + bytes + " for " + what + ", found " + *found);
  }

  void check_new_object(const Delta& d) {
    auto digest = parse_object_path(d.path);
    if (!digest) return problem("layout", d.path, "not an object path objects/sha256/<2 hex>/<2 hex>/<60 hex>");
    ++new_objects;
    const ObjectFacts& f = facts_of(d.new_id, d.path, *digest);
    if (!f.error.empty()) return problem(f.error.find("hash to") != std::string::npos ? "object-hash-mismatch" : "object-invalid",
                                         d.path, f.error);
    if (f.kind == Kind::kRun) {
      std::string what = "run " + digest->str();
      expect_entry(f.group_path, f.group_bytes, what);
      // The first claim of a source id stays (add, verify): another run's
      // entry there, or an id that blocks this one, is no problem.
      if (f.source_path && !trees_.entry(tree_, *f.source_path) && !trees_.source_blocked(tree_, *f.source_path))
        problem("index-missing", *f.source_path, "adds " + what + " without this index entry");
      int levels = trees_.level_count(tree_, *digest);
      if (levels == 0) problem("index-missing", level_path(f.default_level, *digest), "adds " + what + " without a level");
      else if (levels > 1) problem("level-mismatch", "refs/levels", what + " has " + std::to_string(levels) + " levels");
    } else if (f.kind == Kind::kAttestation && f.subject) {
      expect_entry(attestation_path(*f.subject, *digest), f.attestation_bytes, "attestation " + digest->str());
      if (!trees_.entry(tree_, object_path(*f.subject)))
        problem("dangling-ref", d.path, "attests run " + f.subject->str() + ", which is not in the store");
    }
  }

  // The run at `run`, or a problem about `path` and null.
  const ObjectFacts* run_for(const Digest& run, const std::string& path) {
    const ObjectFacts* f = object_in_tree(run);
    if (!f) problem("dangling-ref", path, "names run " + run.str() + ", which is not in the store");
    else if (!f->error.empty()) return nullptr;  // reported where the object came in
    else if (f->kind != Kind::kRun) problem("index-mismatch", path, "names " + run.str() + ", which is not a run");
    else return f;
    return nullptr;
  }

  void check_ref(const Delta& d) {
    const std::string& path = d.path;
    std::string_view rest = path;
    auto take = [&](std::string_view prefix) {
      if (!rest.starts_with(prefix)) return false;
      rest.remove_prefix(prefix.size());
      return true;
    };
    auto split2 = [&]() -> std::optional<std::pair<Digest, Digest>> {
      std::size_t slash = rest.find('/');
      if (slash == std::string_view::npos) return std::nullopt;
      auto a = Digest::parse_hex(rest.substr(0, slash)), b = Digest::parse_hex(rest.substr(slash + 1));
      if (!a || !b) return std::nullopt;
      return std::make_pair(*a, *b);
    };
    std::string bytes = blob_bytes(repo_, d.new_id);
    if (take("refs/metadata/")) {
      auto digest = Digest::parse_hex(rest);
      if (!digest) return problem("layout", path, "expected refs/metadata/<64 hex>");
      if (!trees_.entry(tree_, object_path(*digest)))
        return problem("dangling-ref", path, "metadata for " + digest->str() + ", which is not in the store");
      try {
        Json meta = parse_json(bytes, path);
        if (!meta.is_object() || canonical(meta) != bytes)
          problem("metadata-invalid", path, "expected the RFC 8785 form of a JSON object");
      } catch (const Error& e) {
        problem("metadata-invalid", path, e.what());
      }
      return;
    }
    if (take("refs/groups/")) {
      auto pair = split2();
      if (!pair) return problem("layout", path, "expected refs/groups/<64 hex>/<64 hex>");
      const ObjectFacts* run = run_for(pair->second, path);
      if (!run) return;
      if (run->group_path != path) return problem("index-mismatch", path, "the run's comparison key puts it at " + run->group_path);
      if (run->group_bytes != bytes)
        problem("index-mismatch", path, "expected the run's primary measurement " + run->group_bytes + ", found " + bytes);
      return;
    }
    if (take("refs/attestations/")) {
      auto pair = split2();
      if (!pair) return problem("layout", path, "expected refs/attestations/<64 hex>/<64 hex>");
      const ObjectFacts* att = object_in_tree(pair->second);
      if (!att) return problem("dangling-ref", path, "names attestation " + pair->second.str() + ", which is not in the store");
      if (!att->error.empty()) return;
      if (att->kind != Kind::kAttestation || !att->subject || *att->subject != pair->first)
        return problem("index-mismatch", path, "names " + pair->second.str() + ", which is not an attestation of " + pair->first.str());
      if (att->attestation_bytes != bytes)
        problem("index-mismatch", path, "expected " + att->attestation_bytes + ", found " + bytes);
      return;
    }
    if (take("refs/sources/")) {
      auto run_digest = Digest::parse(bytes);
      if (!run_digest) return problem("index-mismatch", path, "expected a run digest, found " + bytes.substr(0, 80));
      const ObjectFacts* run = run_for(*run_digest, path);
      if (!run) return;
      if (!run->source_path || *run->source_path != path)
        problem("index-mismatch", path, "the run " + run_digest->str() + " does not have this source id");
      return;
    }
    if (take("refs/levels/")) {
      std::size_t slash = rest.find('/');
      auto level = parse_level(rest.substr(0, slash));
      auto run_digest = slash == std::string_view::npos ? std::nullopt : Digest::parse_hex(rest.substr(slash + 1));
      if (!level || !run_digest)
        return problem("layout", path, "expected refs/levels/<" + std::string(level_names()) + ">/<64 hex>");
      const ObjectFacts* run = run_for(*run_digest, path);
      if (!run) return;
      int levels = trees_.level_count(tree_, *run_digest);
      if (levels != 1)
        problem("level-mismatch", path, "run " + run_digest->str() + " has " + std::to_string(levels) + " levels");
      if (!valid_level_bytes(bytes)) problem("level-mismatch", path, "expected {\"evidence\":<digest or null>}, found " + bytes.substr(0, 80));
      else if (*level == run->default_level && bytes != level_entry(std::nullopt))
        problem("level-mismatch", path, "expected {\"evidence\":null} for a default level, found " + bytes);
      bool existing_run = trees_.entry(parent_, object_path(*run_digest)).has_value();
      if (*level != run->default_level || existing_run) require_justified(*run_digest, path);
      return;
    }
    problem("layout", path, "adds a path outside the store layout (refs/{metadata,groups,levels,attestations,sources}/…)");
  }

  static bool valid_level_bytes(const std::string& bytes) {
    try {
      Json j = parse_json(bytes, "level");
      if (!j.is_object() || j.as_object().size() != 1 || canonical(j) != bytes) return false;
      const Json* e = j.find("evidence");
      return e && (e->is_null() || (e->is_string() && Digest::parse(e->as_string())));
    } catch (const Error&) {
      return false;
    }
  }

  void check_level_removal(const Delta& d) {
    std::string_view rest = std::string_view(d.path).substr(std::strlen("refs/levels/"));
    std::size_t slash = rest.find('/');
    auto run_digest = slash == std::string_view::npos ? std::nullopt : Digest::parse_hex(rest.substr(slash + 1));
    if (!run_digest) return;  // a path outside the layout leaving is no harm
    if (trees_.level_count(tree_, *run_digest) == 0)
      return problem("index-removed", d.path, "removes the only level of run " + run_digest->str());
    if (!inherited(d)) require_justified(*run_digest, d.path);
  }

  // A level change is taken only from a rerun commit signed by a controller.
  void require_justified(const Digest& run, const std::string& path) {
    if (!justification_) {
      LogEntry e;
      e.id = commit_id_;
      const char* message = git_commit_message(commit_);
      e.message = message ? message : "";
      e.op = commit_op(e.message);
      git_buf sig = GIT_BUF_INIT, data = GIT_BUF_INIT;
      git_oid id = *git_commit_id(commit_);
      if (git_commit_extract_signature(&sig, &data, repo_, &id, nullptr) == 0) {
        e.signature.assign(sig.ptr, sig.size);
        e.signed_payload.assign(data.ptr, data.size);
      }
      git_buf_dispose(&sig);
      git_buf_dispose(&data);
      git_error_clear();
      justification_ = justify_level_commit(e, trust_);
    }
    if (justification_->empty() || !level_runs_.insert(run).second) return;
    problem("level-unjustified", path,
            "changes the level of run " + run.str() + ", but only a rerun commit signed by a trusted controller may (" +
                *justification_ + ")");
  }

  git_repository* repo_;
  Trees& trees_;
  const std::vector<AllowedSigner>& trust_;
  std::unordered_map<std::string, ObjectFacts> facts_;
  // The commit being checked.
  git_commit* commit_ = nullptr;
  std::string commit_id_;
  git_tree* tree_ = nullptr;
  git_tree* parent_ = nullptr;
  std::vector<git_tree*> others_;
  std::optional<std::string> justification_;
  std::set<Digest> level_runs_;
};

// ---- merging ------------------------------------------------------------------

// The time of the oldest commit reachable from `head` that introduced each of
// `paths` with the blob the tree at `head` has. One walk for all paths.
std::map<std::string, git_time_t> introduced_times(git_repository* repo, Trees& trees, const git_oid& head,
                                                   const std::map<std::string, git_oid>& paths) {
  std::map<std::string, git_time_t> out;
  if (paths.empty()) return out;
  git_revwalk* raw = nullptr;
  git::check(git_revwalk_new(&raw, repo), "walking history");
  git::Revwalk walk(raw);
  git_revwalk_sorting(raw, GIT_SORT_TIME);
  git::check(git_revwalk_push(raw, &head), "walking history");
  git_oid id;
  while (git_revwalk_next(&id, raw) == 0) {
    git::Tree tree = commit_tree(repo, id);
    git_commit* c = nullptr;
    git::check(git_commit_lookup(&c, repo, &id), "reading commit");
    git::Commit owned(c);
    git::Tree parent;
    if (git_commit_parentcount(c) > 0) parent = commit_tree(repo, *git_commit_parent_id(c, 0));
    for (const auto& [path, blob] : paths) {
      auto now = trees.entry(tree.get(), path);
      if (!now || !git_oid_equal(&*now, &blob)) continue;
      auto before = trees.entry(parent.get(), path);
      if (before && git_oid_equal(&*before, &blob)) continue;
      git_time_t t = git_commit_time(c);
      auto [it, fresh] = out.emplace(path, t);
      if (!fresh) it->second = std::min(it->second, t);
    }
  }
  return out;
}

// The merge of `incoming` into `head` (SPEC §2 sync), as a change to head's
// tree. Pure on its inputs: Store::commit may call it again on a newer head.
std::optional<ChangeSet> build_merge(git_repository* repo, Trees& trees, const Snapshot& head, const git_oid& incoming,
                                     const std::string& remote, std::vector<std::string>& notes,
                                     std::size_t& new_documents) {
  notes.clear();
  new_documents = 0;
  git_oid local = parse_oid(head.commit_id());
  if (contains(repo, local, incoming)) return std::nullopt;  // someone merged it already
  git_oid base_id;
  bool has_base = git_merge_base(&base_id, repo, &local, &incoming) == 0;
  git_error_clear();
  git::Tree base_tree = has_base ? commit_tree(repo, base_id) : git::Tree();
  git::Tree in_tree = commit_tree(repo, incoming);
  git::Tree local_tree = commit_tree(repo, local);

  ChangeSet change;
  std::set<Digest> level_runs;
  // Metadata and source ids both sides have, differently: the first claim stays.
  std::map<std::string, git_oid> claims_local, claims_incoming;
  for (const Delta& d : trees.diff(base_tree.get(), in_tree.get())) {
    if (d.status == GIT_DELTA_DELETED) {
      if (d.path.starts_with("refs/levels/"))
        if (auto run = Digest::parse_hex(d.path.substr(d.path.rfind('/') + 1))) level_runs.insert(*run);
      continue;  // a union: what one side dropped, the other keeps
    }
    if (d.path.starts_with("refs/levels/")) {
      if (auto run = Digest::parse_hex(d.path.substr(d.path.rfind('/') + 1))) level_runs.insert(*run);
      continue;
    }
    auto mine = trees.entry(local_tree.get(), d.path);
    if (!mine && d.path.starts_with("refs/sources/") && trees.source_blocked(local_tree.get(), d.path)) {
      notes.push_back(d.path + ": the store already holds other source ids in its way; kept the local ones");
      continue;
    }
    if (!mine) {
      change.upserts.emplace(d.path, blob_bytes(repo, d.new_id));
      if (d.path.starts_with("objects/")) ++new_documents;
      continue;
    }
    if (git_oid_equal(&*mine, &d.new_id)) continue;
    if (d.path.starts_with("refs/metadata/") || d.path.starts_with("refs/sources/")) {
      claims_local.emplace(d.path, *mine);
      claims_incoming.emplace(d.path, d.new_id);
    } else if (!d.path.starts_with("objects/")) {
      notes.push_back(d.path + ": the two sides differ; kept the local entry");
    }
    // objects/: both sides hold the same document (its bytes hash to the
    // path on both sides, checked); keep the local frame.
  }

  // Metadata and source ids: the earliest stays (by the commit that
  // introduced it; a tie keeps the local one).
  if (!claims_local.empty()) {
    auto t_local = introduced_times(repo, trees, local, claims_local);
    auto t_in = introduced_times(repo, trees, incoming, claims_incoming);
    for (const auto& [path, blob] : claims_incoming) {
      auto l = t_local.find(path), i = t_in.find(path);
      bool theirs = l != t_local.end() && i != t_in.end() && i->second < l->second;
      const char* what = path.starts_with("refs/sources/") ? "source id claim" : "metadata";
      if (theirs) change.upserts.emplace(path, blob_bytes(repo, blob));
      notes.push_back(path + ": the two sides differ; " +
                      (theirs ? "the remote's " + std::string(what) + " is older and replaces the local one"
                              : "kept the local " + std::string(what) + ", which is as old or older"));
    }
  }

  // Levels: follow the side that changed since the merge base.
  for (const Digest& run : level_runs) {
    auto in_level = trees.level_of(in_tree.get(), run);
    auto my_level = trees.level_of(local_tree.get(), run);
    auto base_level = trees.level_of(base_tree.get(), run);
    if (in_level == my_level || !in_level) continue;
    bool take = !my_level || my_level == base_level;
    if (!take) {
      if (in_level != base_level)
        notes.push_back("run " + run.str() + ": both sides changed its level; kept the local " +
                        std::string(level_name(my_level->level)) + " (the remote has " +
                        std::string(level_name(in_level->level)) + ")");
      continue;
    }
    if (my_level) change.removals.push_back(level_path(my_level->level, run));
    change.upserts.emplace(level_path(in_level->level, run), blob_bytes(repo, in_level->id));
  }

  change.op = "merge";
  change.summary = "merge: " + std::to_string(new_documents) + " document" + (new_documents == 1 ? "" : "s") +
                   " from " + remote;
  change.body = "Merged " + git::oid_str(incoming) + " from remote " + remote + ".";
  for (const std::string& n : notes) change.body += "\n" + n;
  change.extra_parents.push_back(git::oid_str(incoming));
  return change;
}

// Receives what `incoming` brings into the quarantine `q` and checks its
// shape there (incoming_walk.h): a repository on this machine is copied
// object by object, each rehashed; a network remote's pack goes through
// IncomingPack. Returns the objects received; `problems` gets what was
// refused (nothing is in the store either way).
std::size_t receive_incoming(Store& store, const SyncOptions& options, Connection& conn, const std::string& branch,
                             git::Quarantine& q, const git_oid& incoming, std::vector<Problem>& problems);

// The quarantine's refs that tell a server what the store has (fetch
// negotiation walks the refs of the repository it fetches into).
void set_negotiation_refs(git::Quarantine& q, git_repository* repo, const std::optional<git_oid>& local,
                          const std::optional<git_oid>& synced) {
  git_odb* odb = nullptr;
  git::check(git_repository_odb(&odb, repo), "opening the object database");
  git::Odb owned(odb);
  if (local) q.set_ref("refs/kistore/have/local", *local);
  if (synced && git_odb_exists(odb, &*synced)) q.set_ref("refs/kistore/have/synced", *synced);
}

// The commits of the quarantine that the store's branch lacks, oldest first.
std::vector<git_oid> new_commits(git_repository* quarantine, const git_oid& incoming, const std::optional<git_oid>& local) {
  std::vector<git_oid> fresh;
  git_revwalk* raw = nullptr;
  git::check(git_revwalk_new(&raw, quarantine), "walking history");
  git::Revwalk walk(raw);
  git_revwalk_sorting(raw, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
  git::check(git_revwalk_push(raw, &incoming), "walking the incoming history");
  if (local) git::check(git_revwalk_hide(raw, &*local), "walking history");
  git_oid id;
  while (git_revwalk_next(&id, raw) == 0) fresh.push_back(id);
  return fresh;
}

// Moves the branch to the checked `incoming` (fast-forward) or merges it;
// its objects are in the store already.
void take_incoming(Store& store, const SyncOptions& options, const std::string& remote, const std::string& branch,
                   const git_oid& incoming, std::size_t new_objects, PullReport& report) {
  git_repository* repo = store.repo();
  auto synced_now = [&] { set_ref(repo, synced_ref(remote), incoming, "kistore: pull " + remote); };
  for (int attempt = 0; attempt < 16; ++attempt) {
    Snapshot now = store.snapshot();
    int rc;
    std::string log = "kistore: pull " + remote + " (fast-forward)";
    if (now.empty()) {
      rc = git::move_ref(repo, branch, incoming, nullptr, log);
    } else {
      git_oid head = parse_oid(now.commit_id());
      if (contains(repo, head, incoming)) {
        report.result = "up-to-date";
        report.commit = now.commit_id();
        return synced_now();
      }
      if (!contains(repo, incoming, head)) break;  // diverged: merge
      rc = git::move_ref(repo, branch, incoming, &head, log);
    }
    if (rc == 0) {
      report.result = "fast-forward";
      report.commit = report.incoming;
      report.new_documents = new_objects;
      return synced_now();
    }
    if (rc != GIT_EMODIFIED && rc != GIT_EEXISTS && rc != GIT_ELOCKED) git::check(rc, "moving " + branch);
    git_error_clear();
  }
  Trees trees(repo);
  std::vector<std::string> notes;
  std::size_t new_documents = 0;
  std::optional<std::string> merged = store.commit(
      [&](const Snapshot& head) { return build_merge(repo, trees, head, incoming, remote, notes, new_documents); },
      options.commit);
  report.notes.insert(report.notes.end(), notes.begin(), notes.end());
  synced_now();
  if (!merged) {
    report.result = "up-to-date";
    report.commit = store.snapshot().commit_id();
    return;
  }
  report.result = "merge";
  report.commit = *merged;
  report.new_documents = new_documents;
}

// The pull of `branch` through `conn`, whose remote was made on the
// quarantine `q`'s repository: received and checked in `q`, moved into the
// store only when everything holds. A refusal writes nothing in the store.
PullReport pull_with(Store& store, const SyncOptions& options, Connection& conn, const std::string& branch,
                     git::Quarantine& q) {
  git_repository* repo = store.repo();
  PullReport report;
  report.remote = conn.remote();
  report.url = redact_url(conn.url());
  auto refuse = [&](std::vector<Problem> problems) {
    report.result = "refused";
    report.problems = std::move(problems);
    return report;
  };

  auto remote_head = conn.head(branch);
  Snapshot snap = store.snapshot();
  if (!snap.empty()) report.commit = snap.commit_id();
  if (!remote_head) {
    report.result = "up-to-date";
    report.notes.push_back("the remote has no " + branch + " yet");
    return report;
  }
  git_oid incoming = *remote_head;
  report.incoming = git::oid_str(incoming);
  std::optional<git_oid> local;
  if (!snap.empty()) local = parse_oid(snap.commit_id());
  auto synced = ref_target(repo, synced_ref(conn.remote()));
  if (!on_this_machine(conn.url())) set_negotiation_refs(q, repo, local, synced);
  std::vector<Problem> problems;
  report.fetched_objects = receive_incoming(store, options, conn, branch, q, incoming, problems);
  conn.disconnect();
  if (!problems.empty()) return refuse(std::move(problems));
  git_repository* quarantine = q.repo();

  // (a) The remote must still contain what was synced with it before.
  if (synced && !contains(quarantine, incoming, *synced))
    return refuse({{"history-rewritten", branch,
                    "the remote's " + branch + " at " + short_id(report.incoming) + " does not contain commit " +
                        short_id(git::oid_str(*synced)) + ", which was synced with " + conn.remote() +
                        " before: its history was rewritten (force-pushed). If the remote is meant to be another "
                        "store now, remove and add the remote again (`kistore remote remove " + conn.remote() + "`)"}});
  if (local && contains(quarantine, *local, incoming)) {
    report.result = "up-to-date";
    set_ref(repo, synced_ref(conn.remote()), incoming, "kistore: pull " + conn.remote());
    return report;
  }

  // Check every commit new to this store, oldest first, in the quarantine.
  std::vector<git_oid> fresh = new_commits(quarantine, incoming, local);
  report.new_commits = fresh.size();
  Trees trees(quarantine);
  git::HashCheck hashes(true);  // what came in is read against its ids
  IncomingChecker checker(quarantine, trees, options.trust);
  // One big commit (a first clone, a bulk import): show progress through its
  // paths; many commits: through the commits.
  if (options.progress && fresh.size() == 1)
    checker.progress = [&](std::size_t done, std::size_t total) { options.progress("checking", done, total, 0); };
  for (std::size_t i = 0; i < fresh.size() && !checker.full(); ++i) {
    checker.check_commit(fresh[i]);
    if (options.progress && fresh.size() > 1) options.progress("checking", i + 1, fresh.size(), 0);
  }
  if (!checker.problems.empty()) return refuse(std::move(checker.problems));

  q.migrate();
  take_incoming(store, options, conn.remote(), branch, incoming, checker.new_objects, report);
  return report;
}

// A second handle on the store's repository for packing what push sends.
// kistore's objects are zstd frames: deflate gains nothing on them and a delta
// search between them costs a third of a big push for ~3 % of pack size, so
// the handle turns delta search off. libgit2 1.5 takes the size above which
// it skips delta search from the key pack.deltaCacheSize (a libgit2 bug:
// core.bigFileThreshold is never read); both are set. The settings live in a
// file of the store's local folder, given to this handle only: git's own
// commands on the store keep their defaults.
git::Repository packing_handle(Store& store) {
  git_repository* raw = nullptr;
  git::check(git_repository_open_ext(&raw, git_repository_path(store.repo()), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr),
             store.dir() + ": opening for push");
  git::Repository repo(raw);
  std::string settings = store.local_dir() + "/push-pack.config";
  if (!fs::exists(settings)) {
    fs::create_directories(store.local_dir());
    std::string tmp = settings + ".tmp." + std::to_string(getpid());
    {
      std::ofstream out(tmp);
      out << "[core]\n\tbigFileThreshold = 1\n[pack]\n\tdeltaCacheSize = 1\n";
      if (!out) throw IOError(tmp + ": cannot write");
    }
    fs::rename(tmp, settings);
  }
  git_config* cfg = nullptr;
  git::check(git_config_new(&cfg), "config");
  git::Config owned(cfg);
  std::string base = git_repository_path(raw);
  git::check(git_config_add_file_ondisk(cfg, (base + "config").c_str(), GIT_CONFIG_LEVEL_LOCAL, raw, 0),
             store.dir() + ": reading config");
  git::check(git_config_add_file_ondisk(cfg, settings.c_str(), GIT_CONFIG_LEVEL_APP, raw, 0),
             store.dir() + ": reading " + settings);
  git::check(git_repository_set_config(raw, cfg), "config");
  return repo;
}

// The repository of `remote` at `url`, a path or file:// URL on this machine.
git::Repository open_on_this_machine(const std::string& remote, const std::string& url) {
  std::string path = url.starts_with("file://") ? url.substr(7) : url;
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) < 0)
    throw RemoteError("cannot open remote " + remote + " (" + redact_url(url) + "): " + git::last_error());
  return git::Repository(raw);
}

struct NewObject {
  git_oid id;
  git_object_t type;
};

// Every object reachable from `head` in `from` that the commits `hide`
// (those of them `from` has) do not already bring, each once: each new
// commit, its tree and what its tree has that its first parent's lacks
// (git::added_or_changed, on the raw trees). Cost follows what is new, not
// the size of the trees (libgit2 1.5's packbuilder walks the whole tree of
// every commit it hides).
std::vector<NewObject> new_objects(git_repository* from, const git::PackReader& packs, const git_oid& head,
                                   const std::vector<git_oid>& hide) {
  git_odb* raw_odb = nullptr;
  git::check(git_repository_odb(&raw_odb, from), "opening the object database");
  git::Odb odb(raw_odb);
  git_revwalk* raw_walk = nullptr;
  git::check(git_revwalk_new(&raw_walk, from), "walking history");
  git::Revwalk walk(raw_walk);
  git::check(git_revwalk_push(raw_walk, &head), "walking history");
  for (const git_oid& h : hide)
    if (git_odb_exists(raw_odb, &h)) git::check(git_revwalk_hide(raw_walk, &h), "walking history");
  git_error_clear();
  std::vector<NewObject> out;
  std::unordered_set<git_oid, git::OidHash, git::OidEq> seen;
  auto add = [&](const git_oid& id, git_object_t type) {
    if (seen.insert(id).second) out.push_back({id, type});
  };
  git_oid id;
  while (git_revwalk_next(&id, raw_walk) == 0) {
    add(id, GIT_OBJECT_COMMIT);
    git_commit* c = nullptr;
    git::check(git_commit_lookup(&c, from, &id), "reading commit " + git::oid_str(id));
    git::Commit commit(c);
    const git_oid* tree = git_commit_tree_id(c);
    add(*tree, GIT_OBJECT_TREE);
    std::optional<git_oid> parent_tree;
    if (git_commit_parentcount(c) > 0) {
      git_commit* p = nullptr;
      git::check(git_commit_parent(&p, c, 0), "reading the parent of commit " + git::oid_str(id));
      git::Commit parent(p);
      parent_tree = *git_commit_tree_id(p);
    }
    git::added_or_changed(raw_odb, &packs, parent_tree ? &*parent_tree : nullptr, *tree, add);
  }
  return out;
}

// Calls write(object, bytes, level) for each of `objects`, read from `from`
// (through `packs` first), at the level kistore stores them (objwrite.h:
// commits deflated, the rest stored as they are), and progress(done, total)
// every 1,024 objects and at the end.
void read_objects(git_repository* from, const git::PackReader& packs, const std::vector<NewObject>& objects,
                  const std::function<void(const NewObject&, std::string_view, int)>& write,
                  const std::function<void(std::size_t, std::size_t)>& progress) {
  git_odb* raw_odb = nullptr;
  git::check(git_repository_odb(&raw_odb, from), "opening the object database");
  git::Odb odb(raw_odb);
  std::size_t done = 0;
  std::string stored;
  for (const NewObject& object : objects) {
    git_object_t type = GIT_OBJECT_INVALID;
    int level = object.type == GIT_OBJECT_COMMIT ? 1 : 0;
    if (packs.read(object.id, type, stored) && type == object.type) {
      write(object, stored, level);
    } else {
      git_odb_object* o = nullptr;
      git::check(git_odb_read(&o, raw_odb, &object.id), "reading object " + git::oid_str(object.id));
      git::OdbObject owned(o);
      if (git_odb_object_type(o) != object.type)
        throw Corruption("object " + git::oid_str(object.id) + " is a " + git_object_type2string(git_odb_object_type(o)) +
                              ", where its tree says " + git_object_type2string(object.type));
      write(object, {static_cast<const char*>(git_odb_object_data(o)), git_odb_object_size(o)}, level);
    }
    if ((++done % 1024 == 0 || done == objects.size()) && progress) progress(done, objects.size());
  }
}

// Writes into `pack` what new_objects(from, head, hide) lists; returns how many.
std::size_t copy_new_objects(git_repository* from, const git_oid& head, const std::vector<git_oid>& hide,
                             git::PackWriter& pack, const std::function<void(std::size_t, std::size_t)>& progress) {
  git::PackReader packs(git_repository_path(from));
  std::vector<NewObject> objects = new_objects(from, packs, head, hide);
  read_objects(
      from, packs, objects,
      [&](const NewObject& o, std::string_view data, int level) { pack.write(o.id, o.type, data, level); }, progress);
  return objects.size();
}

std::vector<Problem> walk_problems(std::vector<git::WalkProblem>&& found) {
  std::vector<Problem> out;
  for (git::WalkProblem& p : found) out.push_back({std::move(p.kind), std::move(p.path), std::move(p.detail)});
  return out;
}

// Copies what `head` brings from a repository on this machine (a path or
// file:// URL) into a pack in the quarantine, object by object, each
// bounded and rehashed as the walk reads it (incoming_walk.h's
// CopyingSource): nothing is taken under the id the remote claims.
std::size_t fetch_local(git_repository* store, git::Quarantine& q, const std::string& remote, const std::string& url,
                        const git_oid& head, const SyncOptions& options, std::vector<Problem>& problems) {
  git::Repository remote_repo = open_on_this_machine(remote, url);
  git::PackWriter pack(q.pack_dir());
  git::CopyingSource source(remote_repo.get(), store, pack);
  git::WalkResult walked = git::walk_incoming(source, head, kMaxProblems, [&](std::size_t got) {
    if (options.progress) options.progress("receiving", got, 0, pack.bytes());
  });
  if (!walked.problems.empty()) {
    problems = walk_problems(std::move(walked.problems));
    return 0;  // the pack is dropped with its writer
  }
  std::size_t n = pack.count();
  if (options.progress) options.progress("receiving", n, n, pack.bytes());
  pack.finish();
  return n;
}

// Downloads what `branch` brings from a network remote into the
// quarantine (its pack read by IncomingPack), then checks its shape there.
std::size_t fetch_network(git_repository* store, Connection& conn, const std::string& branch, git::Quarantine& q,
                          const git_oid& head, const SyncOptions& options, std::vector<Problem>& problems) {
  q.receive_packs();
  try {
    conn.download("+" + branch + ":" + incoming_ref(conn.remote()));
  } catch (const Error&) {
    if (std::exception_ptr why = q.pack_failure()) std::rethrow_exception(why);
    throw;
  }
  git::QuarantineSource source(q.repo(), store);
  git::WalkResult walked = git::walk_incoming(source, head, kMaxProblems, [&](std::size_t done) {
    if (options.progress) options.progress("checking", done, 0, 0);
  });
  problems = walk_problems(std::move(walked.problems));
  return q.received_objects();
}

std::size_t receive_incoming(Store& store, const SyncOptions& options, Connection& conn, const std::string& branch,
                             git::Quarantine& q, const git_oid& incoming, std::vector<Problem>& problems) {
  try {
    if (on_this_machine(conn.url()))
      return fetch_local(store.repo(), q, conn.remote(), conn.url(), incoming, options, problems);
    return fetch_network(store.repo(), conn, branch, q, incoming, options, problems);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kRefused) throw;
    problems.push_back({"pack-invalid", branch, std::string("the remote's pack: ") + e.what()});
    return 0;
  }
}

// Pushes to a repository on this machine (a path or file:// URL) and moves
// its branch by compare-and-swap from `theirs`: libgit2's local transport
// moves it unconditionally, so two concurrent pushes could lose one. Only the
// objects the new commits bring are packed (libgit2's push walks the remote
// head's whole tree). Returns GIT_EMODIFIED when the branch moved meanwhile.
int push_local(git_repository* repo, const std::string& url, const std::string& branch, const git_oid& local,
               const std::optional<git_oid>& theirs, Session& session) {
  git::Repository remote_repo = open_on_this_machine(session.remote, url);
  git_repository* raw = remote_repo.get();
  if (!git_repository_is_bare(raw)) {
    git_reference* head = nullptr;
    bool checked_out = git_reference_lookup(&head, raw, "HEAD") == 0 &&
                       git_reference_type(head) == GIT_REFERENCE_SYMBOLIC &&
                       branch == git_reference_symbolic_target(head);
    git_reference_free(head);
    git_error_clear();
    if (checked_out)
      throw RemoteError("the remote " + session.remote + " (" + redact_url(url) + ") rejected the push: " + branch +
                        " is checked out in its working tree (push to a bare repository)");
  }

  // The objects the new commits bring, in one pack written straight into
  // the remote's objects/pack (kistore's own writer: no delta search, no
  // re-indexing).
  git::PackWriter pack(std::string(git_repository_path(raw)) + "objects/pack");
  std::vector<git_oid> hide;
  if (theirs) hide.push_back(*theirs);
  copy_new_objects(repo, local, hide, pack, [&](std::size_t sent, std::size_t total) {
    if (session.options && session.options->progress) session.options->progress("sending", sent, total, pack.bytes());
  });
  session.pushed_objects = pack.count();
  session.pushed_bytes = pack.bytes();
  pack.finish();
  git_odb* odb = nullptr;
  git::check(git_repository_odb(&odb, raw), "opening the remote's object database");
  git::Odb owned_odb(odb);
  git_odb_refresh(odb);
  int rc = git::move_ref(raw, branch, local, theirs ? &*theirs : nullptr, "push from kistore");
  if (rc == GIT_EMODIFIED || rc == GIT_EEXISTS || rc == GIT_ELOCKED) {
    git_error_clear();
    return GIT_EMODIFIED;
  }
  if (rc < 0)
    throw RemoteError("the remote " + session.remote + " (" + redact_url(url) + ") rejected the push: " + git::last_error());
  return 0;
}

// Pushes over the network with kistore's own pack (receive_pack.h): the
// objects the new commits bring, as they are stored, and an update of
// `branch` from `theirs` (none: it must not exist), which the server applies
// only if the branch did not move meanwhile. A ref the server refuses is left
// in the session's push_rejection, as libgit2's callback would.
void push_smart(git_repository* repo, Connection& conn, const std::string& branch, const git_oid& local,
                const std::optional<git_oid>& theirs) {
  Session& session = conn.session();
  std::vector<git_oid> hide;
  if (theirs) hide.push_back(*theirs);
  git::PackReader packs(git_repository_path(repo));
  std::vector<NewObject> objects = new_objects(repo, packs, local, hide);
  std::uint64_t bytes = 0;
  auto progress = [&](std::size_t sent, std::size_t total) {
    if (session.options && session.options->progress) session.options->progress("sending", sent, total, bytes);
  };
  std::string where = "the remote " + session.remote + " (" + redact_url(session.url) + ")";
  git::ReceivePack::Result result;
  try {
    result = conn.receive_pack().send(
        branch, theirs ? &*theirs : nullptr, local, static_cast<std::uint32_t>(objects.size()),
        [&](git::PackStream& pack) {
          read_objects(
              repo, packs, objects,
              [&](const NewObject& o, std::string_view data, int level) { pack.write(o.type, data, level); }, progress);
        },
        [&](std::uint64_t sent) { bytes = sent; });
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kRemote) throw;
    throw RemoteError("pushing to " + where + ": " + scrub(e.what(), session.url));
  }
  progress(objects.size(), objects.size());
  if (result.unpack != "ok")
    throw RemoteError(where + " could not store the pushed objects: " + scrub(result.unpack, session.url));
  session.pushed_objects = objects.size();
  session.pushed_bytes = bytes;
  if (!result.rejection.empty()) session.push_rejection = branch + ": " + result.rejection;
}

bool valid_remote_name(const std::string& name) {
  int valid = 0;
  return git_remote_name_is_valid(&valid, name.c_str()) == 0 && valid && name.find('/') == std::string::npos;
}

}  // namespace

std::string redact_url(std::string_view url) {
  if (!has_scheme(url)) return std::string(url);
  std::size_t start = url.find("://") + 3;
  std::size_t end = url.find('/', start);
  std::string_view authority = url.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
  std::size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  std::string_view userinfo = authority.substr(0, at);
  std::size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos) return std::string(url);
  std::string out(url.substr(0, start));
  out += userinfo.substr(0, colon);
  out += url.substr(start + at);
  return out;
}

void add_remote(Store& store, const std::string& name, const std::string& url) {
  git::ensure_init();
  if (!valid_remote_name(name))
    throw InvalidInput("remote name \"" + name + "\": expected a name git accepts for a remote (e.g. origin), without \"/\"");
  if (url.empty()) throw InvalidInput("remote \"" + name + "\": the URL is empty");
  std::string stored = url;
  if (is_local(url)) {
    stored = fs::absolute(url).lexically_normal().string();
    if (stored.size() > 1 && stored.back() == '/') stored.pop_back();
  }
  git_remote* remote = nullptr;
  int rc = git_remote_create(&remote, store.repo(), name.c_str(), stored.c_str());
  if (rc == GIT_EEXISTS) throw InvalidInput("remote \"" + name + "\" already exists (remove it first with `kistore remote remove " + name + "`)");
  if (rc == GIT_EINVALIDSPEC) throw InvalidInput("remote \"" + name + "\": " + scrub(git::last_error(), url));
  if (rc < 0) throw IOError(store.dir() + ": adding remote " + name + ": " + scrub(git::last_error(), url));
  git_remote_free(remote);
}

void remove_remote(Store& store, const std::string& name) {
  git::ensure_init();
  git_remote* remote = nullptr;
  int rc = git_remote_lookup(&remote, store.repo(), name.c_str());
  if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) {
    git_error_clear();
    throw InvalidInput("no remote named \"" + name + "\"");
  }
  git::check(rc, "reading remote " + name);
  git_remote_free(remote);
  git::check(git_remote_delete(store.repo(), name.c_str()), store.dir() + ": removing remote " + name);
  delete_ref(store.repo(), synced_ref(name));
  delete_ref(store.repo(), incoming_ref(name));
}

std::vector<RemoteInfo> list_remotes(const Store& store) {
  git::ensure_init();
  git_strarray names{};
  git::check(git_remote_list(&names, store.repo()), store.dir() + ": listing remotes");
  std::vector<RemoteInfo> out;
  for (std::size_t i = 0; i < names.count; ++i) {
    git_remote* remote = nullptr;
    if (git_remote_lookup(&remote, store.repo(), names.strings[i]) < 0) continue;
    out.push_back({names.strings[i], git_remote_url(remote) ? git_remote_url(remote) : ""});
    git_remote_free(remote);
  }
  git_strarray_dispose(&names);
  std::sort(out.begin(), out.end(), [](const RemoteInfo& a, const RemoteInfo& b) { return a.name < b.name; });
  return out;
}

PullReport pull(Store& store, const std::string& remote, const SyncOptions& options) {
  git::Quarantine q(store.repo());
  Connection conn(store, remote, GIT_DIRECTION_FETCH, q.repo());
  conn.set_options(options);
  conn.connect();
  return pull_with(store, options, conn, store.branch(), q);
}

PushReport push(Store& store, const std::string& remote, const SyncOptions& options) {
  git_repository* repo = store.repo();
  PushReport report;
  report.remote = remote;
  const std::string& branch = store.branch();
  for (int round = 0; round < kPushRounds; ++round) {
    Snapshot snap = store.snapshot();
    if (snap.empty()) throw InvalidInput(store.dir() + ": the store is empty; nothing to push");
    git_oid local = parse_oid(snap.commit_id());
    report.commit = snap.commit_id();
    git::Repository packer = packing_handle(store);
    Connection conn(store, remote, GIT_DIRECTION_PUSH, packer.get());
    conn.set_options(options);
    report.url = redact_url(conn.url());
    conn.connect();
    auto theirs = conn.head(branch);
    if (theirs && git_oid_equal(&*theirs, &local)) {
      report.result = "up-to-date";
      set_ref(repo, synced_ref(remote), local, "kistore: push " + remote);
      return report;
    }
    bool behind = false;
    if (theirs) {
      git_odb* odb = nullptr;
      git::check(git_repository_odb(&odb, repo), "opening the object database");
      git::Odb owned(odb);
      behind = !git_odb_exists(odb, &*theirs) || !contains(repo, local, *theirs);
      git_error_clear();
    }
    int rc = GIT_ENONFASTFORWARD;
    if (!behind)
      rc = on_this_machine(conn.url())        ? push_local(packer.get(), conn.url(), branch, local, theirs, conn.session())
           : conn.receive_pack().usable() ? (push_smart(packer.get(), conn, branch, local, theirs), 0)
                                          : conn.upload(branch + ":" + branch);
    if (rc == GIT_ENONFASTFORWARD || rc == GIT_EMODIFIED) {
      conn.disconnect();
      PullReport pulled = pull(store, remote, options);
      bool refused = pulled.refused();
      report.pulls.push_back(std::move(pulled));
      if (refused) {
        report.result = "refused";
        return report;
      }
      continue;
    }
    if (!conn.session().push_rejection.empty()) {
      // Someone else may have pushed between our look and our push: then
      // pull and try again; any other rejection is the remote's answer.
      std::string rejection = scrub(conn.session().push_rejection, conn.url());
      conn.disconnect();
      if (round + 1 < kPushRounds) {
        git::Quarantine q(store.repo());
        Connection again(store, remote, GIT_DIRECTION_FETCH, q.repo());
        again.set_options(options);
        again.connect();
        auto now = again.head(branch);
        bool moved = now.has_value() != theirs.has_value() || (now && !git_oid_equal(&*now, &*theirs));
        if (moved && !(now && git_oid_equal(&*now, &local))) {
          PullReport pulled = pull_with(store, options, again, branch, q);
          bool refused = pulled.refused();
          report.pulls.push_back(std::move(pulled));
          if (refused) {
            report.result = "refused";
            return report;
          }
          continue;
        }
      }
      throw RemoteError("the remote " + remote + " (" + report.url + ") rejected the push: " + rejection);
    }
    report.pushed_objects = conn.session().pushed_objects;
    report.pushed_bytes = conn.session().pushed_bytes;
    report.result = "pushed";
    set_ref(repo, synced_ref(remote), local, "kistore: push " + remote);
    return report;
  }
  throw RemoteError("gave up pushing to " + remote + " (" + report.url + ") after " + std::to_string(kPushRounds) +
                    " rounds: its " + branch + " kept moving while kistore merged it");
}

PullReport clone(const std::string& url, const std::string& dir, const SyncOptions& options) {
  std::error_code ec;
  bool existed = fs::exists(dir, ec);
  if (existed && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec)))
    throw InvalidInput(dir + ": already exists and is not an empty folder");
  auto cleanup = [&] {
    std::error_code ignored;
    if (!existed) {
      fs::remove_all(dir, ignored);
    } else {
      for (const auto& entry : fs::directory_iterator(dir, ignored)) fs::remove_all(entry.path(), ignored);
    }
  };
  PullReport result;
  try {
    Store store = Store::init(dir);
    add_remote(store, "origin", url);
    git::Quarantine q(store.repo());
    Connection conn(store, "origin", GIT_DIRECTION_FETCH, q.repo());
    conn.set_options(options);
    conn.connect();
    std::string branch = store.branch();
    if (!conn.head(branch)) {
      // Follow the remote's HEAD when it names another branch (a store made
      // with stock git whose default branch is not main).
      std::string other = conn.default_branch();
      if (!other.empty() && other != branch && conn.head(other)) {
        git::check(git_repository_set_head(store.repo(), other.c_str()), dir + ": setting HEAD");
        branch = other;
      }
    }
    result = pull_with(store, options, conn, branch, q);
  } catch (...) {
    cleanup();
    throw;
  }
  if (result.refused()) cleanup();
  return result;
}

}  // namespace kistore
