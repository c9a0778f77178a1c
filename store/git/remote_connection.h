// A connection to a remote repository through libgit2, for store/sync/'s
// Connection: the transport machinery, with none of the policy.
//
// A RemoteConnection opens an anonymous libgit2 remote on a URL (only the
// refspecs passed apply; no config is written, a fetch moves no ref and
// writes no FETCH_HEAD), connects it, lists its refs, fetches into the
// object database of the repository it runs on, and pushes a refspec, with
// redirects to another host refused. What libgit2 asks during a transfer
// goes to RemoteEvents, which the caller fills: which credential to offer,
// whether to accept the server's certificate or ssh host key, progress,
// what a push sent and the remote's refusal of a ref update. For a push,
// the transport can be kistore's own receive-pack exchange
// (remote_receive_pack.h).
//
// Errors: the constructor throws Error(kIO) "opening remote <label>: …";
// every other call returns libgit2's code (0, or < 0 with its message in
// git::last_error()), for the caller to explain (store/sync/connection.cc).
//
// Thread-safety: one thread. Not movable: libgit2 keeps a pointer to the
// connection while it is connected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "store/git/git.h"

namespace kistore::git {

class ReceivePack;
enum class SmartProtocol;

// What a server asks for when it asks who the client is.
struct CredentialRequest {
  const char* url = nullptr;            // the URL authenticated (after any redirect); may be null
  const char* user_from_url = nullptr;  // may be null
  bool username = false;                // the kinds of credential the server takes
  bool ssh_key = false;
  bool user_password = false;
};

// A credential to offer.
struct CredentialAnswer {
  enum Kind { kUsername, kSshAgent, kSshKey, kUserPassword };
  Kind kind = kUsername;
  std::string user;
  std::string public_key;  // kSshKey: the .pub file, "" for none
  std::string private_key;  // kSshKey: the key file
  std::string password;     // kUserPassword
};

// The TLS certificate or ssh host key a server presented.
struct ServerIdentity {
  std::string host;
  bool ssh = false;      // an ssh host key (else a TLS certificate)
  bool valid = false;    // libgit2's verdict
  bool raw = false;      // ssh: libgit2 passed the raw key
  std::string key_type;  // ssh: "ssh-ed25519", "ecdsa-sha2-nistp256", …; "" when unknown
  std::string key;       // ssh: the raw key blob
  std::string sha256;    // ssh: the key's SHA-256 (32 bytes), "" when not given
};

// What a connection asks of its caller while it talks to the remote. Every
// member must be set.
struct RemoteEvents {
  // The credential to offer, or nullopt to give up (the call then fails
  // with libgit2's "authentication failed").
  std::function<std::optional<CredentialAnswer>(const CredentialRequest&)> credential;
  // Whether to go on with the server that presented `identity`.
  std::function<bool(const ServerIdentity&)> identity;
  // Transfer progress: stages "receiving", "packing", "sending".
  std::function<void(const char*, std::size_t, std::size_t, std::uint64_t)> progress;
  // What libgit2's push sent so far (objects, bytes).
  std::function<void(std::size_t, std::uint64_t)> sent;
  // The remote refused to update `ref` for `reason`.
  std::function<void(const std::string&, const std::string&)> rejected;
};

enum class Direction { kFetch, kPush };

class RemoteConnection {
 public:
  // An anonymous remote on `url` in `repo` (which must outlive it), for
  // `direction`; `label` names it in the constructor's error. With
  // `receive_pack` (pushes), libgit2 asks it for the transport of `protocol`
  // (SmartProtocol{} is kNone: libgit2's own).
  // Does not connect yet.
  RemoteConnection(git_repository* repo, const std::string& url, const std::string& label, Direction direction,
                   RemoteEvents events, ReceivePack* receive_pack = nullptr, SmartProtocol protocol = SmartProtocol{});
  ~RemoteConnection();
  RemoteConnection(const RemoteConnection&) = delete;
  RemoteConnection& operator=(const RemoteConnection&) = delete;

  // Connects (libgit2's code).
  int connect();
  // The remote's refs (name → id) and the target of its symbolic HEAD
  // ("" when it names none), as the server listed them.
  int list(std::map<std::string, git_oid>& heads, std::string& head_target) const;
  // The branch the remote's HEAD names as libgit2 guesses it, or "".
  std::string default_branch() const;
  // Fetches what `refspec` names into the repository's objects: no ref
  // moved, no FETCH_HEAD, no tags, no pruning.
  int download(const std::string& refspec);
  // Whether the last failed download failed on the data that came in (a
  // corrupt entry or checksum, or a pack cut short once it had started).
  bool failed_on_pack() const;
  // How many objects the last download received.
  std::size_t received_objects() const;
  // Pushes `refspec` (GIT_ENONFASTFORWARD when libgit2 sees the remote's
  // branch is not an ancestor of ours). The remote's refusal of the update
  // is no error: it goes to RemoteEvents::rejected.
  int upload(const std::string& refspec);
  void disconnect();

  struct Callbacks;  // libgit2's callbacks (remote_connection.cc)

 private:
  RemoteEvents events_;
  ReceivePack* receive_pack_;
  SmartProtocol protocol_;
  Direction direction_;
  Remote remote_;
  std::unique_ptr<Callbacks> callbacks_;
};

// Makes libgit2 check https servers against the certificate authorities in
// `file` instead of the system's, for the whole process. False when libgit2
// cannot load it (its message in last_error()).
bool use_certificate_authorities(const std::string& file);

// Whether libgit2's last error is its refusal to follow an http redirect to
// another host.
bool last_error_is_refused_redirect();

// Forgets libgit2's last error (after a failure that was expected and dealt
// with, so that a later message is not taken from it).
void clear_error();

}  // namespace kistore::git
