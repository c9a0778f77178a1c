// One connection to a named remote, for a fetch or a push, private to store/
// (pull.cc, push.cc).
//
// A Connection talks to the remote through the git door's
// git::RemoteConnection (store/git/remote_connection.h: an anonymous remote,
// so that only the refspecs kistore passes apply and no config is written: a
// fetch moves no ref at all) and decides what it asks: credentials
// (credentials.h), the server's certificate or ssh host key
// (known_hosts.h), transfer progress (SyncOptions::progress, stages
// "receiving", "packing", "sending"), the remote's answer to a ref update,
// and, for a push, the transport through which kistore sends its own pack
// (store/git/remote_receive_pack.h). It remembers why an authentication or a
// host key was refused, so that a failed call is explained in those words.
//
// Errors: the constructor throws Error(kInvalidInput) for an unknown remote
// or one without a URL; every call that talks to the remote throws
// Error(kRemote), naming the remote and its URL without password and with
// no secret in the message (check()).
//
// Thread-safety: one thread. Not movable: libgit2 keeps a pointer to the
// connection's state while it is connected.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "store/git/git.h"
#include "store/git/remote_connection.h"
#include "store/git/remote_receive_pack.h"
#include "store/sync/http_refusal.h"
#include "store/sync/remote.h"
#include "store/sync/sync.h"

namespace kistore {

class Connection {
 public:
  // Opens `remote` (resolved once per command: remote.h) for `direction`
  // (a push uses its push URL), with `options` (credentials, progress),
  // which must outlive the connection. `repo` (default: the store's) is the
  // handle the transfer runs on: push passes one with packing settings of
  // its own. Does not connect yet.
  Connection(Store& store, const ResolvedRemote& remote, git::Direction direction, const SyncOptions& options,
             git_repository* repo = nullptr);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const std::string& remote() const;
  const std::string& url() const;  // as configured: may hold a password; print redact_url(url())
  // "<remote> (<url without password>)", for messages.
  std::string where() const;
  const SyncOptions& options() const { return options_; }

  // Connects and reads the remote's refs. Error(kRemote) when it cannot.
  void connect();
  // The remote's value of `ref` as connect() read it.
  std::optional<git_oid> head(const std::string& ref) const;
  // The branch the remote's HEAD names, or "" when it does not say.
  std::string default_branch();

  // Fetches what `refspec` names into the objects of the repository the
  // connection runs on (a pull's quarantine); moves no ref, writes no
  // FETCH_HEAD. Error(kRefused) when the pack that came is corrupt or cut
  // short (refused remote data); Error(kRemote) when the transfer fails
  // otherwise.
  void download(const std::string& refspec);
  // How many objects the last download received.
  std::size_t received_objects() const;
  // Pushes `refspec` through libgit2; GIT_ENONFASTFORWARD when libgit2 sees
  // that the remote's branch is not an ancestor of ours, else 0.
  // Error(kRemote) on any other failure. The remote's rejection of the ref
  // update is not an error here: see rejection().
  int upload(const std::string& refspec);
  void disconnect();

  // kistore's own receive-pack exchange for this connection (pushes only).
  git::ReceivePack& receive_pack() { return receive_pack_; }

  // What the last push sent (objects, pack bytes), as the push or libgit2 reported it.
  void record_sent(std::size_t objects, std::uint64_t bytes);
  std::size_t sent_objects() const;
  std::uint64_t sent_bytes() const;
  // The remote's refusal of a ref update ("<ref>: <reason>", several joined by
  // "; "); "" when it took every update.
  void record_rejection(const std::string& ref, const std::string& reason);
  const std::string& rejection() const;
  // What the server said on the last push in its own words (its hooks'
  // output: git shows it as "remote: ..."), a line each, scrubbed of the
  // URL's password and the token; raw otherwise (escape before showing).
  void record_messages(const std::vector<std::string>& lines);
  const std::vector<std::string>& messages() const;

  // Reports transfer progress through the options, if they ask for it.
  void progress(const char* stage, std::size_t done, std::size_t total, std::uint64_t bytes) const;
  // `message` without the URL's password or the token.
  std::string scrub(std::string message) const;
  // Throws Error(kRemote) for a failed libgit2 call (rc < 0): the refused
  // host key or authentication if that was why, else "<what> remote <where>:
  // <libgit2's message>", scrubbed. An http(s) refusal (a 4xx or 5xx
  // status, a failed authentication) is explained in the server's own words
  // where kistore's one request of the same URL brings them (ask_refusal()):
  // "the remote <where> refused the request: HTTP 403 Forbidden (<what it
  // means>); the server said: <line> | <line>".
  void check(int rc, std::string_view what) const;

  struct State;  // what the connection's events see (connection.cc)

 private:
  // For an http(s) remote, the server's answer to kistore's own request of
  // the URL libgit2 asked when it refused it (http_refusal.h), sending only
  // the credential the failed attempt sent to that origin; nullopt for other
  // remotes or when no 4xx/5xx answer came.
  std::optional<HttpResponse> ask_refusal() const;
  // The answer in words: "HTTP 403 Forbidden (what it means)" when
  // `explain`, then "; the server said: <line> | <line>", scrubbed of the
  // credentials (the password and the Authorization header's base64 too, as
  // a hostile server may quote them); raw otherwise (the command line
  // escapes what it prints).
  std::string refusal_words(const HttpResponse& answer, bool explain) const;

  const SyncOptions& options_;
  git::ReceivePack receive_pack_;  // before remote_: its transport refers to it
  std::unique_ptr<State> state_;
  std::unique_ptr<git::RemoteConnection> remote_;
  std::map<std::string, git_oid> heads_;
  std::string head_target_;
};

}  // namespace kistore
