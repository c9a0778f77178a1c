#include "store/sync/known_hosts.h"

#include "objects/sha1.h"

#include <fnmatch.h>


#include <cstring>
#include <fstream>
#include <sstream>

namespace kistore::ssh {
namespace {

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

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

// A hashed name, "|1|base64(salt)|base64(HMAC-SHA1(salt, name))", names
// `host_name` exactly.
bool hashed_host_matches(const std::string& pattern, const std::string& host_name) {
  std::size_t bar = pattern.find('|', 3);
  if (!pattern.starts_with("|1|") || bar == std::string::npos) return false;
  auto salt = base64_decode(pattern.substr(3, bar - 3));
  auto hash = base64_decode(pattern.substr(bar + 1));
  if (!salt || !hash || hash->size() != 20) return false;
  unsigned char mac[20];
  if (!hmac_sha1(*salt, host_name, mac)) return false;
  return std::memcmp(mac, hash->data(), 20) == 0;
}

// Whether the comma-separated `patterns` name `host_name`: some pattern
// matches and no negated one ("!pattern") does.
bool patterns_match(std::string_view patterns, const std::string& host_name) {
  bool matched = false, negated = false;
  while (!patterns.empty()) {
    std::size_t comma = patterns.find(',');
    std::string pattern(patterns.substr(0, comma));
    patterns = comma == std::string_view::npos ? std::string_view() : patterns.substr(comma + 1);
    bool negate = !pattern.empty() && pattern.front() == '!';
    if (negate) pattern.erase(0, 1);
    if (pattern.empty()) continue;
    bool hit = pattern.front() == '|' ? hashed_host_matches(pattern, host_name) : host_matches(pattern, host_name);
    if (hit) (negate ? negated : matched) = true;
  }
  return matched && !negated;
}

}  // namespace

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

std::string known_hosts_name(const std::string& host, const std::string& port) {
  if (port.empty() || port == "22") return host;
  return "[" + host + "]:" + port;
}

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
    if (!(fields >> key_type >> key) || !patterns_match(hosts, host_name)) continue;
    auto decoded = base64_decode(key);
    bool same = key_type == type && decoded && *decoded == blob;
    std::string where = file + ":" + std::to_string(number);
    if (revoked && same) return {HostKeyMatch::kRevoked, where};
    if (revoked || key_type != type) continue;
    if (same) verdict = {HostKeyMatch::kMatch, where};
    else if (verdict.match != HostKeyMatch::kMatch) verdict = {HostKeyMatch::kChanged, where};
  }
  return verdict;
}

std::string host_key_refusal(const HostKey& key, const std::vector<std::string>& files) {
  std::string host_name = known_hosts_name(key.host, key.port);
  std::vector<HostKeyVerdict> verdicts;
  for (const std::string& file : files) verdicts.push_back(check_known_hosts(file, host_name, key.type, key.blob));
  for (const HostKeyVerdict& v : verdicts)
    if (v.match == HostKeyMatch::kRevoked)
      return "the ssh host key of " + host_name + " (" + key.type + " " + key.fingerprint + ") is REVOKED at " +
             v.where + "; kistore does not connect to a server with a revoked key";
  for (const HostKeyVerdict& v : verdicts)
    if (v.match == HostKeyMatch::kMatch) return "";
  for (const HostKeyVerdict& v : verdicts) {
    if (v.match == HostKeyMatch::kChanged)
      return "the ssh host key of " + host_name + " has CHANGED: the server offers " + key.type + " " +
             key.fingerprint + ", which is not the key recorded at " + v.where +
             "; someone may be intercepting the connection. If the server's key really changed, "
             "remove the old entry and add the new one";
  }
  bool default_port = key.port.empty() || key.port == "22";
  std::string keyscan = "ssh-keyscan " + (default_port ? "" : "-p " + key.port + " ") + key.host;
  return "the ssh host key of " + host_name + " is not known (" + key.type + " " + key.fingerprint +
         "). kistore connects only to hosts listed in ~/.ssh/known_hosts or in the file "
         "KISTORE_SSH_KNOWN_HOSTS names. Check the fingerprint with the server's owner, then add it, "
         "e.g. `" + keyscan + " >> ~/.ssh/known_hosts` (or connect once with ssh)";
}

}  // namespace kistore::ssh
