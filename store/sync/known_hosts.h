// Checking an ssh server's host key against OpenSSH known_hosts files, as
// `ssh` does with StrictHostKeyChecking=yes: for the sync code's ssh
// connections (store/sync/connection.cc), which decide on every server's key here
// (libgit2's own verdict, libssh2's, is not OpenSSH's: it lets a port-less
// entry name another port and ignores @revoked).
//
// What is read: one entry a line, "[@revoked] patterns keytype base64key
// [comment]"; patterns are comma-separated host names, wildcards ("*", "?";
// "!" negates) or hashed names ("|1|salt|HMAC-SHA1(salt, name)", as
// ssh-keygen -H writes them), "[host]:port" for a port other than 22 (a
// port-less entry never names another port). @cert-authority lines are
// skipped (kistore takes no host certificates). A @revoked entry for the key,
// in any of the files, refuses it whatever else is listed; another key of
// the same type for the host is a changed key: an attack until the user says
// otherwise.
//
// Thread-safety: reentrant (reads the files on each call).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kistore::ssh {

// A server's host key, as the connection received it.
struct HostKey {
  std::string host;         // as the URL names it
  std::string port;         // "" or "22" for ssh's default
  std::string type;         // "ssh-ed25519", "ecdsa-sha2-nistp256", ...
  std::string blob;         // the key in ssh's wire form (what known_hosts holds in base64)
  std::string fingerprint;  // "SHA256:<base64>", or "" when not known
};

// "" when one of `files` (missing ones skipped) lists `key` for its host and
// none revokes it; else the message to refuse the connection with: the key
// is REVOKED (naming the entry), not known (with its fingerprint and an
// ssh-keyscan line to add it) or has CHANGED (naming the file:line of the
// entry it contradicts).
std::string host_key_refusal(const HostKey& key, const std::vector<std::string>& files);

// The name known_hosts uses for `host` at `port`: "host", or "[host]:port"
// for a port other than 22.
std::string known_hosts_name(const std::string& host, const std::string& port);

enum class HostKeyMatch { kUnknown, kMatch, kChanged, kRevoked };
struct HostKeyVerdict {
  HostKeyMatch match = HostKeyMatch::kUnknown;
  std::string where;  // file:line of the deciding entry
};
// What the known_hosts `file` says of a key of `type` with `blob` for
// `host_name` (known_hosts_name). An unreadable file knows nothing.
HostKeyVerdict check_known_hosts(const std::string& file, const std::string& host_name, const std::string& type,
                                 std::string_view blob);

// Base64 (RFC 4648, standard alphabet); encode pads with "=" when `pad`.
// decode stops at the first "=" and returns nullopt for a character outside
// the alphabet.
std::string base64_encode(const unsigned char* data, std::size_t n, bool pad);
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace kistore::ssh
