// Allowed-signers files (git's gpg.ssh.allowedSignersFile, ssh-keygen(1)
// "ALLOWED SIGNERS"): parsing, rendering and finding a signer, as declared in
// objects/ssh_signature.h.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <utility>

#include "objects/error.h"
#include "objects/json.h"
#include "objects/ssh_signature.h"
#include "objects/ssh_wire.h"

namespace kistore {
namespace {

using namespace ssh_wire;

// Days from 1970-01-01 to year-month-day of the proleptic Gregorian calendar
// (Howard Hinnant's days_from_civil); a day past the month's end runs on into
// the next, as mktime normalises it.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// ssh-keygen's parse_absolute_time: YYYYMMDD, YYYYMMDDHHMM or
// YYYYMMDDHHMMSS, then an optional 'Z'/'z' for UTC; fields in strptime's
// ranges; the epoch itself is refused.
std::optional<KeyValidityTime> parse_validity_time(std::string_view text) {
  KeyValidityTime t;
  t.text = std::string(text);
  if (!text.empty() && (text.back() == 'Z' || text.back() == 'z')) {
    t.utc = true;
    text.remove_suffix(1);
  }
  if (text.size() != 8 && text.size() != 12 && text.size() != 14) return std::nullopt;
  for (char c : text)
    if (c < '0' || c > '9') return std::nullopt;
  auto field = [&](std::size_t at, std::size_t n) {
    unsigned v = 0;
    for (std::size_t i = at; i < at + n && i < text.size(); ++i) v = v * 10 + static_cast<unsigned>(text[i] - '0');
    return v;
  };
  const unsigned year = field(0, 4), month = field(4, 2), day = field(6, 2);
  const unsigned hour = field(8, 2), minute = field(10, 2), second = field(12, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  t.civil = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  if (t.utc && t.civil == 0) return std::nullopt;
  return t;
}

// "2030-01-01T00:00:00" (with "Z" when `utc`), from seconds counted as UTC.
std::string civil_text(std::int64_t seconds, bool utc) {
  std::int64_t days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400;
  std::int64_t rest = seconds - days * 86400;
  // Hinnant's civil_from_days.
  days += 719468;
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld%s", static_cast<long long>(y), m, d,
                static_cast<long long>(rest / 3600), static_cast<long long>(rest / 60 % 60),
                static_cast<long long>(rest % 60), utc ? "Z" : "");
  return buf;
}

// The options field, checked as ssh-keygen checks it. Returns an error text
// (empty when the options are fine), phrased to follow "<source>:<line>: ".
std::string check_options(std::string_view options, SignerOptions& out) {
  out = SignerOptions{};
  std::size_t i = 0;
  while (true) {
    std::size_t k = i;
    while (k < options.size() && options[k] != ',' && options[k] != '=') ++k;
    const std::string keyword = lower(options.substr(i, k - i));
    const bool has_value = k < options.size() && options[k] == '=';
    if (keyword == "cert-authority" && !has_value) {
      out.cert_authority = true;  // ssh-keygen takes it twice too
      i = k;
    } else if (has_value && (keyword == "namespaces" || keyword == "valid-after" || keyword == "valid-before")) {
      const bool is_namespaces = keyword == "namespaces";
      const bool given = is_namespaces ? out.namespaces.has_value()
                         : keyword == "valid-after" ? out.valid_after.has_value()
                                                    : out.valid_before.has_value();
      if (given) return "expected one " + keyword + " option, found several";
      i = k + 1;
      if (i >= options.size() || options[i] != '"')
        return std::string("expected a double-quoted ") + (is_namespaces ? "list" : "time") + " after " + keyword +
               "=, found " + quoted(options.substr(i));
      std::size_t close = options.find('"', i + 1);
      if (close == std::string_view::npos) return "the " + keyword + " value has no closing '\"'";
      std::string_view value = options.substr(i + 1, close - i - 1);
      if (is_namespaces) {
        out.namespaces = std::string(value);
      } else {
        std::optional<KeyValidityTime> t = parse_validity_time(value);
        if (!t)
          return "expected " + keyword + "=\"YYYYMMDD[HHMM[SS]][Z]\" (a date, a time, Z for UTC), found " +
                 quoted(value);
        (keyword == "valid-after" ? out.valid_after : out.valid_before) = std::move(*t);
      }
      i = close + 1;
    } else {
      return "expected an option namespaces=\"...\", valid-after=\"...\", valid-before=\"...\" or cert-authority, "
             "found " + quoted(options.substr(i));
    }
    if (i == options.size()) {
      // ssh-keygen refuses an empty window; with one zone on both sides it
      // shows here, else when the times are judged (lookup_signer).
      if (out.valid_after && out.valid_before && out.valid_after->utc == out.valid_before->utc &&
          out.valid_before->civil <= out.valid_after->civil)
        return "expected valid-before later than valid-after, found valid-after=\"" + out.valid_after->text +
               "\" and valid-before=\"" + out.valid_before->text + "\"";
      return {};
    }
    if (options[i] != ',')
      return "expected ',' or the end of the options after " + keyword + ", found " + quoted(options.substr(i));
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

// One line of a file: its bytes with the line end, and the signer it holds
// (none for a blank or comment line).
struct FileLine {
  std::size_t number = 0;
  std::string_view bytes;
  std::optional<AllowedSigner> signer;
};

std::vector<FileLine> parse_lines(std::string_view text, std::string_view source) {
  std::vector<FileLine> lines;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    lines.push_back(FileLine{line_no, text.substr(0, nl == std::string_view::npos ? text.size() : nl + 1), {}});
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
    signer.line = line_no;
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
      SignerOptions parsed;
      if (std::string problem = check_options(field, parsed); !problem.empty()) throw bad(problem);
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
    lines.back().signer = std::move(signer);
  }
  return lines;
}

std::string principals_text(const AllowedSigner& signer) {
  std::string out;
  for (const std::string& p : signer.principals) out += (out.empty() ? "" : ",") + p;
  return out;
}

// "line 3 (alice,bob)"
std::string line_name(const AllowedSigner& signer) {
  return (signer.line ? "line " + std::to_string(signer.line) : std::string("a line")) + " (" +
         quoted(principals_text(signer), 64) + ")";
}

}  // namespace

SignerOptions parse_signer_options(std::string_view options, std::string_view where) {
  SignerOptions out;
  if (options.empty()) return out;
  if (std::string problem = check_options(options, out); !problem.empty())
    throw InvalidInput(std::string(where) + ": " + problem);
  return out;
}

std::vector<AllowedSigner> parse_allowed_signers(std::string_view text, std::string_view source) {
  std::vector<AllowedSigner> signers;
  for (FileLine& line : parse_lines(text, source))
    if (line.signer) signers.push_back(std::move(*line.signer));
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
      SignerOptions parsed;
      if (std::string problem = check_options(signer.options, parsed); !problem.empty())
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
    // The file is read by people (cat, an editor) and by ssh-keygen: a NUL,
    // an escape sequence or bytes that are not UTF-8 have no place in it.
    const bool control = std::any_of(signer.key.comment.begin(), signer.key.comment.end(), [](char c) {
      const auto u = static_cast<unsigned char>(c);
      return (u < 0x20 && u != '\t') || u == 0x7F;
    });
    if (control || first_invalid_utf8(signer.key.comment) != std::string_view::npos)
      throw InvalidInput(who + ": a key comment cannot hold a control character or bytes that are not UTF-8: " +
                         quoted(signer.key.comment));
    out += ' ';
    out += signer.key.to_text();
    out += '\n';
  }
  return out;
}

SignerLookup lookup_signer(const std::vector<AllowedSigner>& signers, const SshPublicKey& key, std::string_view ns,
                           const SigningTime* when) {
  SignerLookup out;
  auto refuse = [&](const AllowedSigner& signer, const std::string& why) {
    out.refused += (out.refused.empty() ? "" : "; ") + line_name(signer) + ": " + why;
  };
  for (const AllowedSigner& signer : signers) {
    if (signer.key.blob != key.blob) continue;
    SignerOptions o;
    // Options that do not check out (a hand-built signer) never grant trust.
    if (std::string problem = check_options(signer.options, o); !signer.options.empty() && !problem.empty()) {
      refuse(signer, problem);
      continue;
    }
    if (o.cert_authority) {
      refuse(signer, "cert-authority: the key is trusted to sign certificates only, which kistore does not verify");
      continue;
    }
    if (o.namespaces && !match_pattern_list(ns, *o.namespaces)) {
      refuse(signer, "namespaces=\"" + *o.namespaces + "\" does not let in namespace \"" + std::string(ns) + "\"");
      continue;
    }
    if (o.valid_after || o.valid_before) {
      if (!when) {
        refuse(signer, "the key has a validity window and no signing time was given");
        continue;
      }
      auto utc = [&](const KeyValidityTime& t) {
        return t.utc || !when->local_to_utc ? t.civil : when->local_to_utc(t.civil);
      };
      const std::string signed_at = "; the commit was signed at " + civil_text(when->seconds, true);
      if (o.valid_after && o.valid_before && utc(*o.valid_before) <= utc(*o.valid_after)) {
        refuse(signer, "valid-before is not later than valid-after: the window is empty, as ssh-keygen reads it");
        continue;
      }
      if (o.valid_after && when->seconds < utc(*o.valid_after)) {
        refuse(signer, "the key is not valid before " + civil_text(o.valid_after->civil, o.valid_after->utc) +
                           " (valid-after=\"" + o.valid_after->text + "\")" + signed_at);
        continue;
      }
      if (o.valid_before && when->seconds > utc(*o.valid_before)) {
        refuse(signer, "the key is not valid after " + civil_text(o.valid_before->civil, o.valid_before->utc) +
                           " (valid-before=\"" + o.valid_before->text + "\")" + signed_at);
        continue;
      }
    }
    out.signer = &signer;
    out.refused.clear();
    return out;
  }
  return out;
}

const AllowedSigner* find_signer(const std::vector<AllowedSigner>& signers, const SshPublicKey& key,
                                 std::string_view ns, const SigningTime* when) {
  return lookup_signer(signers, key, ns, when).signer;
}

TrustRemoval remove_principal(std::string_view text, std::string_view principal, std::string_view source) {
  std::vector<FileLine> lines = parse_lines(text, source);
  std::set<std::string> keys;  // blobs listed for `principal`
  for (const FileLine& l : lines)
    if (l.signer)
      for (const std::string& p : l.signer->principals)
        if (p == principal) keys.insert(l.signer->key.blob);
  TrustRemoval out;
  for (const FileLine& l : lines) {
    std::string_view shown = l.bytes;
    while (shown.ends_with('\n') || shown.ends_with('\r')) shown.remove_suffix(1);
    if (!l.signer || !keys.count(l.signer->key.blob)) {
      out.text += l.bytes;
      if (l.signer && l.signer->principals.size() > 0)
        for (const std::string& p : l.signer->principals)
          if (p != principal && p.find_first_of("*?!") != std::string::npos && match_pattern_list(principal, p)) {
            out.notes.push_back(TrustLineChange{
                l.number, std::string(shown),
                "line " + std::to_string(l.number) + " stays: its pattern " + quoted(p, 64) + " matches " +
                    quoted(principal, 64) + ", and its key " + l.signer->key.fingerprint() +
                    " is not listed for " + quoted(principal, 64) + " by name; remove it with `kistore trust remove " +
                    p + "` if that key is " + std::string(principal) + "'s"});
            break;
          }
      continue;
    }
    const AllowedSigner& s = *l.signer;
    const bool names = std::find(s.principals.begin(), s.principals.end(), principal) != s.principals.end();
    std::string why = "line " + std::to_string(l.number) + " removed: ";
    if (names && s.principals.size() == 1)
      why += "it named " + quoted(principal, 64) + " alone";
    else if (names)
      why += "it named " + quoted(principals_text(s), 64) + "; kistore trusts keys, not names, so keeping it for the "
             "others would keep " + quoted(principal, 64) + "'s key " + s.key.fingerprint() +
             " trusted (trust the others' own keys with `kistore trust add`)";
    else
      why += "it lists " + quoted(principal, 64) + "'s key " + s.key.fingerprint() + " for " +
             quoted(principals_text(s), 64);
    out.removed.push_back(TrustLineChange{l.number, std::string(shown), std::move(why)});
  }
  return out;
}

}  // namespace kistore
