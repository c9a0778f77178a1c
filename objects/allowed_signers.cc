// Allowed-signers files (git's gpg.ssh.allowedSignersFile, ssh-keygen(1)
// "ALLOWED SIGNERS"): parsing, rendering and finding a signer, as declared in
// objects/ssh_signature.h.
#include <optional>
#include <utility>

#include "objects/error.h"
#include "objects/ssh_signature.h"
#include "objects/ssh_wire.h"

namespace kistore {
namespace {

using namespace ssh_wire;

// The options field, checked as ssh-keygen checks it. `namespaces` gets the
// namespaces="…" list when there is one. Returns an error text (empty when
// the options are fine), phrased to follow "<source>:<line>: ".
std::string check_options(std::string_view options, std::optional<std::string>& namespaces) {
  namespaces.reset();
  std::size_t i = 0;
  while (true) {
    std::size_t k = i;
    while (k < options.size() && options[k] != ',' && options[k] != '=') ++k;
    const std::string keyword = lower(options.substr(i, k - i));
    const bool has_value = k < options.size() && options[k] == '=';
    if (keyword == "cert-authority" && !has_value)
      return "option cert-authority is not supported: kistore verifies plain keys, not certificates; "
             "list the signers' own keys instead";
    if ((keyword == "valid-after" || keyword == "valid-before") && has_value)
      return "option " + keyword +
             " is not supported: kistore does not check key validity times, and ignoring the option "
             "would accept keys git rejects; remove it or leave this key out";
    if (keyword != "namespaces" || !has_value)
      return "expected an option namespaces=\"...\", found " + quoted(options.substr(i));
    if (namespaces) return "expected one namespaces option, found several";
    i = k + 1;
    if (i >= options.size() || options[i] != '"')
      return "expected a double-quoted list after namespaces=, found " + quoted(options.substr(i));
    std::size_t close = options.find('"', i + 1);
    if (close == std::string_view::npos) return "the namespaces list has no closing '\"'";
    namespaces = std::string(options.substr(i + 1, close - i - 1));
    i = close + 1;
    if (i == options.size()) return {};
    if (options[i] != ',')
      return "expected ',' or the end of the options after the namespaces list, found " +
             quoted(options.substr(i));
    ++i;
    if (i == options.size()) return "expected another option after the last ',', found nothing";
  }
}

// ssh_config(5) PATTERNS: '*' matches any run of characters, '?' any one.
bool match_pattern(std::string_view s, std::string_view p) {
  std::size_t si = 0, pi = 0, star = std::string_view::npos, resume = 0;
  while (si < s.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == s[si])) {
      ++si, ++pi;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      resume = si;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      si = ++resume;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

// A comma-separated pattern list: any match of a '!' pattern refuses, else
// any match of a plain pattern accepts.
bool match_pattern_list(std::string_view s, std::string_view list) {
  bool matched = false;
  while (true) {
    std::size_t comma = list.find(',');
    std::string_view p = list.substr(0, comma);
    bool negated = p.starts_with('!');
    if (negated) p.remove_prefix(1);
    if (match_pattern(s, p)) {
      if (negated) return false;
      matched = true;
    }
    if (comma == std::string_view::npos) return matched;
    list.remove_prefix(comma + 1);
  }
}

// Option keywords never start so; key types always do (ssh-ed25519,
// ssh-rsa, ecdsa-sha2-nistp256, sk-ssh-ed25519@openssh.com, certificates).
bool looks_like_key_type(std::string_view field) {
  return field.starts_with("ssh-") || field.starts_with("ecdsa-") || field.starts_with("sk-");
}

}  // namespace

std::vector<AllowedSigner> parse_allowed_signers(std::string_view text, std::string_view source) {
  std::vector<AllowedSigner> signers;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    while (!line.empty() && is_space(line.front())) line.remove_prefix(1);
    if (line.empty() || line.front() == '#') continue;

    const std::string where = std::string(source) + ":" + std::to_string(line_no);
    auto bad = [&](const std::string& what) { return InvalidInput(where + ": " + what); };

    // Principals: one field, or a double-quoted run that may hold spaces.
    std::string_view principals_field;
    if (line.front() == '"') {
      std::size_t close = line.find('"', 1);
      if (close == std::string_view::npos)
        throw bad("the quoted principals have no closing '\"': " + quoted(line));
      principals_field = line.substr(1, close - 1);
      line.remove_prefix(close + 1);
      if (!line.empty() && !is_space(line.front()))
        throw bad("expected a space after the quoted principals, found " + quoted(line));
    } else {
      auto [field, rest] = next_token(line);
      if (field.find('"') != std::string_view::npos)
        throw bad("expected principals without '\"' (or quoted as a whole), found " + quoted(field));
      principals_field = field;
      line = rest;
    }
    while (!line.empty() && is_space(line.front())) line.remove_prefix(1);

    AllowedSigner signer;
    for (std::string_view rest = principals_field;;) {
      std::size_t comma = rest.find(',');
      std::string_view principal = rest.substr(0, comma);
      if (principal.empty())
        throw bad("expected comma-separated principals, found an empty one in " + quoted(principals_field));
      signer.principals.emplace_back(principal);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }

    // Options, if any: up to the first space outside double quotes.
    std::size_t end = 0;
    for (bool in_quotes = false; end < line.size() && (in_quotes || !is_space(line[end])); ++end)
      if (line[end] == '"') in_quotes = !in_quotes;
    std::string_view field = line.substr(0, end);
    if (field.empty()) throw bad("expected a key after the principals, found nothing");
    if (!looks_like_key_type(field)) {
      std::optional<std::string> namespaces;
      if (std::string problem = check_options(field, namespaces); !problem.empty()) throw bad(problem);
      signer.options = std::string(field);
      line.remove_prefix(end);
      while (!line.empty() && is_space(line.front())) line.remove_prefix(1);
    }
    auto [type, after_type] = next_token(line);
    if (type.empty()) throw bad("expected a key type (such as ssh-ed25519) after the options, found nothing");
    if (!looks_like_key_type(type))
      throw bad("expected a key type (such as ssh-ed25519), found " + quoted(type));
    auto [b64, comment] = next_token(after_type);
    signer.key = key_from_fields(type, b64, trim(comment), where, /*ed25519_only=*/false);
    signers.push_back(std::move(signer));
  }
  return signers;
}

std::string render_allowed_signers(const std::vector<AllowedSigner>& signers) {
  std::string out;
  for (const AllowedSigner& signer : signers) {
    const std::string who = "allowed signer for key " + signer.key.fingerprint();
    if (signer.principals.empty()) throw InvalidInput(who + ": expected at least one principal, found none");
    std::string principals;
    for (const std::string& p : signer.principals) {
      if (p.empty() || p.find_first_of(",\"\n\r") != std::string::npos)
        throw InvalidInput(who + ": a principal cannot hold ',', '\"' or a line break, and cannot be "
                                 "empty; found " + quoted(p));
      if (!principals.empty()) principals += ',';
      principals += p;
    }
    // A line starting with '#' would read back as a comment, and a space
    // would end the field: quoting keeps both as principals.
    if (principals.front() == '#' || principals.find_first_of(" \t") != std::string::npos)
      principals = "\"" + principals + "\"";
    out += principals;
    if (!signer.options.empty()) {
      std::optional<std::string> namespaces;
      if (std::string problem = check_options(signer.options, namespaces); !problem.empty())
        throw InvalidInput(who + ": " + problem);
      if (signer.options.find_first_of("\n\r") != std::string::npos ||
          looks_like_key_type(signer.options))
        throw InvalidInput(who + ": options cannot be written as " + quoted(signer.options));
      // A space inside the quotes is fine; outside them it would split the field.
      bool in_quotes = false;
      for (char c : signer.options) {
        if (c == '"') in_quotes = !in_quotes;
        if (!in_quotes && is_space(c))
          throw InvalidInput(who + ": options cannot hold a space outside quotes: " + quoted(signer.options));
      }
      out += ' ';
      out += signer.options;
    }
    if (signer.key.type.empty() || !looks_like_key_type(signer.key.type) ||
        signer.key.type.find_first_of(" \t\n\r") != std::string::npos)
      throw InvalidInput(who + ": expected a key type such as ssh-ed25519, found " + quoted(signer.key.type));
    if (signer.key.comment.find_first_of("\n\r") != std::string::npos)
      throw InvalidInput(who + ": a key comment cannot hold a line break: " + quoted(signer.key.comment));
    out += ' ';
    out += signer.key.to_text();
    out += '\n';
  }
  return out;
}

const AllowedSigner* find_signer(const std::vector<AllowedSigner>& signers, const SshPublicKey& key,
                                 std::string_view ns) {
  for (const AllowedSigner& signer : signers) {
    if (signer.key.blob != key.blob) continue;
    std::optional<std::string> namespaces;
    // Options that do not check out (a hand-built signer) never grant trust.
    if (!signer.options.empty() && !check_options(signer.options, namespaces).empty()) continue;
    if (namespaces && !match_pattern_list(ns, *namespaces)) continue;
    return &signer;
  }
  return nullptr;
}

}  // namespace kistore
