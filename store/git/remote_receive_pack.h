// Pushing over git's smart protocol with kistore's own pack, private to store/.
//
// libgit2 1.5 pushes through its packbuilder: it walks every tree of the
// remote's head, reads every object again and deflates it again at a level
// it does not let callers choose. kistore knows which objects a push brings
// (new_objects.h walks only what the new commits add) and writes them as
// they are stored (objwrite.h's PackStream), so it speaks receive-pack's exchange
// itself, over libgit2's own transports:
//
//   - make_transport() (for git_remote_callbacks.transport) builds libgit2's
//     smart transport for a git://, ssh:// or scp-like, http:// or https://
//     URL around libgit2's own subtransport for it, recording the ref
//     advertisement the server sends first (its capabilities). libgit2 still
//     connects, authenticates, checks host keys and certificates and lists
//     the refs (git_remote_connect, git_remote_ls).
//   - send() asks that subtransport for the receive-pack stream (the same
//     connection for git:// and ssh, a POST for http) and writes the update
//     command and the pack, then reads the server's report (report-status,
//     inside side-band-64k when the server offers it, asking for `quiet`
//     where offered, so that band 2 carries only what the server means to
//     say: its hooks' output).
//
// The update carries the remote's old id, so the server moves the ref only
// if nobody moved it since it was listed (git's receive-pack checks that
// under the ref's lock). Used by push (store/sync/push.cc) through a
// Connection (store/sync/connection.h), which owns one and hands it to its
// RemoteConnection (remote_connection.h) as the push transport.
//
// Thread-safety: one per connection, on the connection's thread; it must
// outlive the libgit2 remote whose transport it made.
#pragma once

#include <git2.h>
#include <git2/sys/transport.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "store/git/objwrite.h"

namespace kistore::git {

// Which of libgit2's smart subtransports a URL takes (the caller classifies
// it: store/sync/url.h); kNone for paths, file:// and schemes kistore does
// not know, which libgit2 transports itself.
enum class SmartProtocol { kNone, kGit, kSsh, kHttp };

class ReceivePack {
 public:
  ReceivePack() = default;
  ReceivePack(const ReceivePack&) = delete;
  ReceivePack& operator=(const ReceivePack&) = delete;

  // The transport for `url`, of kind `protocol`: libgit2's smart transport
  // around a recording copy of its subtransport, or *out = null (libgit2
  // then chooses) for kNone. Must outlive the remote that uses it.
  int make_transport(git_transport** out, git_remote* owner, const std::string& url, SmartProtocol protocol);

  // Whether the remote was connected through make_transport and offers what
  // send() needs (report-status). Else push through libgit2. Reads the
  // capabilities from the recorded advertisement.
  bool usable();
  // The capabilities the server advertised (e.g. "report-status").
  const std::vector<std::string>& capabilities() const { return capabilities_; }

  struct Result {
    std::string unpack;     // "ok", or the server's reason for not storing the pack
    std::string rejection;  // "" when the ref moved, else the server's reason
    // The server's own words (side band 2: its hooks' output, a host's
    // notices), a line each as a terminal would end up showing it (the text
    // after a line's last carriage return), blank lines left out: at most
    // kMaxMessages lines of at most kMaxMessageBytes, then a line saying how
    // many more. Raw bytes: the caller escapes them for a terminal.
    std::vector<std::string> messages;
  };
  static constexpr std::size_t kMaxMessages = 100;
  static constexpr std::size_t kMaxMessageBytes = 1000;
  // Asks the server to move `ref` from `old` (null: it must not exist yet)
  // to `next`, sending a pack of the `count` objects `fill` writes. `sent`
  // (may be empty) is told the bytes handed over so far. Error(kRemote) when
  // the connection fails or the answer does not follow the protocol.
  Result send(const std::string& ref, const git_oid* old, const git_oid& next, std::uint32_t count,
              const std::function<void(PackStream&)>& fill, const std::function<void(std::uint64_t)>& sent = {});

 private:
  struct Sub;
  struct Stream;
  static int make_sub(git_smart_subtransport** out, git_transport* owner, void* param);
  void parse_capabilities();

  git_smart_subtransport_definition definition_{};
  git_smart_subtransport_cb inner_factory_ = nullptr;
  git_smart_subtransport* inner_ = nullptr;  // libgit2's; freed with the smart transport
  std::string url_;                          // as the smart transport gave it to the subtransport
  std::string advertisement_;                // the start of what the server sent first
  std::vector<std::string> capabilities_;
};

// A push to a repository on this machine goes through that repository's
// own `git receive-pack`, as git push's does, so that its hooks and settings
// (receive.fsckObjects, core.sharedRepository, receive.denyCurrentBranch)
// apply; the caller runs it (store/edge/process.h) with the request as its
// input and hands over what it printed.
//
// write_push_request hands `sink` the request: the update command of `ref`
// from `old` (null: it must not exist yet) to `next`, asking for
// report-status and quiet (no side band: the program's stderr carries its
// hooks' words), then the pack of the `count` objects `fill` writes.
void write_push_request(const std::string& ref, const git_oid* old, const git_oid& next, std::uint32_t count,
                        const std::function<void(PackStream&)>& fill, const PackStream::Sink& sink);
// A server's words (a receive-pack's stderr, or band 2) as lines, as
// ReceivePack::Result's `messages` holds them.
std::vector<std::string> server_lines(std::string_view text);
// The report in what receive-pack printed (`out`: its ref advertisement,
// then its report; `messages` stays empty). Error(kRemote) when `out` does
// not follow the protocol or ends before the report.
ReceivePack::Result read_push_answer(std::string_view out, const std::string& ref);

}  // namespace kistore::git
