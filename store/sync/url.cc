#include "store/sync/url.h"

#include <algorithm>
#include <cctype>

namespace kistore {
namespace {

bool has_scheme(std::string_view url) { return url.find("://") != std::string_view::npos; }

// "[user@]host:path": no scheme, a colon (not the first character) before any slash.
bool is_scp_like(std::string_view url) {
  if (has_scheme(url)) return false;
  std::size_t colon = url.find(':');
  std::size_t slash = url.find('/');
  return colon != std::string_view::npos && colon > 0 && (slash == std::string_view::npos || colon < slash);
}

std::string percent_decode(std::string_view s) {
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) && hex(s[i + 2])) {
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

// Splits "[user[:password]@]host[:port]" into `p`.
void split_authority(std::string_view authority, UrlParts& p) {
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
    return;
  }
  std::size_t colon = authority.rfind(':');
  p.host = authority.substr(0, colon);
  if (colon != std::string_view::npos) p.port = authority.substr(colon + 1);
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

UrlKind url_kind(std::string_view url) {
  if (!has_scheme(url)) return is_scp_like(url) ? UrlKind::kSsh : UrlKind::kPath;
  std::string scheme(url.substr(0, url.find("://")));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return std::tolower(c); });
  if (scheme == "file") return UrlKind::kFile;
  if (scheme == "git") return UrlKind::kGit;
  if (scheme == "ssh" || scheme == "ssh+git" || scheme == "git+ssh") return UrlKind::kSsh;
  if (scheme == "http" || scheme == "https") return UrlKind::kHttp;
  return UrlKind::kOther;
}

UrlParts split_url(std::string_view url) {
  UrlParts p;
  if (is_scp_like(url)) {
    p.scheme = "ssh";
    split_authority(url.substr(0, url.find(':')), p);  // "[user@]host": no password, no port
    return p;
  }
  std::size_t sep = url.find("://");
  if (sep == std::string_view::npos) return p;
  p.scheme = url.substr(0, sep);
  std::string_view rest = url.substr(sep + 3);
  split_authority(rest.substr(0, rest.find('/')), p);
  return p;
}

std::string url_user(std::string_view url) { return percent_decode(split_url(url).user); }
std::string url_password(std::string_view url) { return percent_decode(split_url(url).password); }

std::string http_origin(std::string_view url) {
  UrlParts p = split_url(url);
  auto lower = [](std::string v) {
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return v;
  };
  std::string scheme = lower(p.scheme);
  if (scheme != "http" && scheme != "https") return "";
  std::string port = !p.port.empty() ? p.port : scheme == "https" ? "443" : "80";
  std::string host = lower(p.host);
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return scheme + "://" + host + ":" + port;
}

namespace {

// The path of a scheme://authority/path URL, without query or fragment and
// without a trailing slash ("" for the root).
std::string url_path(std::string_view url) {
  std::size_t sep = url.find("://");
  if (sep == std::string_view::npos) return "";
  std::string_view rest = url.substr(sep + 3);
  std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return "";
  std::string_view path = rest.substr(slash);
  path = path.substr(0, path.find_first_of("?#"));
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  return std::string(path);
}

bool is_https(std::string_view url) { return http_origin(url).starts_with("https://"); }

}  // namespace

std::string token_refusal(std::string_view url, std::string_view bound) {
  if (bound.empty())
    return "KISTORE_TOKEN is bound to no server: set KISTORE_TOKEN_URL to the https://host[:port][/path] it is for";
  UrlParts b = split_url(bound);
  if (!is_https(bound) || b.host.empty() || !b.user.empty() || !b.password.empty())
    return "KISTORE_TOKEN_URL is " + redact_url(bound) +
           ", expected an https://host[:port][/path] prefix without a user or password";
  if (!is_https(url))
    return "KISTORE_TOKEN is never sent over " +
           (http_origin(url).empty() ? std::string("this kind of URL") : "plain http (" + http_origin(url) + ")");
  if (http_origin(url) != http_origin(bound))
    return "KISTORE_TOKEN is for " + http_origin(bound) + " (KISTORE_TOKEN_URL), not " + http_origin(url);
  const std::string prefix = url_path(bound), path = url_path(url);
  if (!(path == prefix || (path.starts_with(prefix) && path[prefix.size()] == '/')))
    return "KISTORE_TOKEN is for " + http_origin(bound) + (prefix.empty() ? "/" : prefix) +
           " (KISTORE_TOKEN_URL), and " + (path.empty() ? "/" : path) + " is not below it";
  return "";
}

std::string scrub_secrets(std::string message, const std::string& url, const std::string& token) {
  replace_all(message, url, redact_url(url));
  UrlParts p = split_url(url);
  if (p.password.size() >= 3) {
    replace_all(message, p.password, "***");
    replace_all(message, percent_decode(p.password), "***");
  }
  if (token.size() >= 3) replace_all(message, token, "***");
  return message;
}

}  // namespace kistore
