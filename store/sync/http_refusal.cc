#include "store/sync/http_refusal.h"

#include <fcntl.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "objects/shown_text.h"
#include "objects/ssh_wire.h"
#include "store/sync/url.h"

namespace kistore {
namespace {

using Clock = std::chrono::steady_clock;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// RFC 9110 token characters (a header's name).
bool token_char(unsigned char c) {
  return std::isalnum(c) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}
// A control byte other than tab: never in a status line or a header.
bool control(unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; }

HttpParse invalid(std::string why) {
  HttpParse p;
  p.state = ParseState::kInvalid;
  p.error = std::move(why);
  return p;
}

// Reads a chunked body from `data`; kIncomplete when it stops before the
// last chunk (the body so far in `out`).
ParseState read_chunked(std::string_view data, std::string& out, std::string& error) {
  std::size_t i = 0;
  for (;;) {
    std::size_t eol = data.find("\r\n", i);
    if (eol == std::string_view::npos) {
      // A size line longer than any real one is no chunk.
      if (data.size() - i > 1024) {
        error = "chunk size line too long";
        return ParseState::kInvalid;
      }
      return ParseState::kIncomplete;
    }
    std::string_view line = data.substr(i, eol - i);
    line = line.substr(0, line.find(';'));  // chunk extensions are ignored
    line = trim(line);
    std::size_t size = 0;
    if (line.empty() || line.size() > 8) {
      error = "chunk size is not 1 to 8 hex digits";
      return ParseState::kInvalid;
    }
    auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), size, 16);
    if (ec != std::errc() || end != line.data() + line.size()) {
      error = "chunk size is not hex";
      return ParseState::kInvalid;
    }
    i = eol + 2;
    if (size == 0) return ParseState::kComplete;  // trailers are not read
    if (data.size() - i < size) {
      out += data.substr(i);
      return ParseState::kIncomplete;
    }
    out += data.substr(i, size);
    i += size;
    if (data.size() - i < 2) return ParseState::kIncomplete;
    if (data.substr(i, 2) != "\r\n") {
      error = "chunk not followed by CRLF";
      return ParseState::kInvalid;
    }
    i += 2;
  }
}

}  // namespace

HttpParse parse_http_response(std::string_view data, bool at_end) {
  std::size_t head_end = data.find("\r\n\r\n");
  if (head_end == std::string_view::npos) {
    if (data.size() >= kMaxResponseBytes) return invalid("headers longer than the bound");
    if (at_end) return invalid("the answer ended within its headers");
    return HttpParse{};
  }
  std::string_view head = data.substr(0, head_end + 2);  // each line ends with CRLF
  std::string_view rest = data.substr(head_end + 4);

  HttpResponse r;
  std::size_t eol = head.find("\r\n");
  std::string_view status_line = head.substr(0, eol);
  if (!(status_line.starts_with("HTTP/1.1 ") || status_line.starts_with("HTTP/1.0 ")) || status_line.size() < 12)
    return invalid("status line is not HTTP/1.x DDD");
  std::string_view code = status_line.substr(9, 3);
  if (!std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return invalid("status code is not three digits");
  r.status = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
  if (r.status < 100 || r.status > 599) return invalid("status code out of range");
  if (status_line.size() > 12) {
    if (status_line[12] != ' ') return invalid("no space after the status code");
    r.reason = status_line.substr(13);
  }
  for (unsigned char c : status_line)
    if (control(c)) return invalid("control byte in the status line");

  std::optional<std::size_t> length;
  bool chunked = false;
  for (std::size_t i = eol + 2; i < head.size();) {
    std::size_t end = head.find("\r\n", i);
    std::string_view line = head.substr(i, end - i);
    i = end + 2;
    if (line.empty() || line.front() == ' ' || line.front() == '\t') return invalid("folded or empty header line");
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return invalid("header line without a name and a colon");
    std::string_view name = line.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), [](char c) { return token_char(static_cast<unsigned char>(c)); }))
      return invalid("header name with a byte outside a token");
    std::string_view value = trim(line.substr(colon + 1));
    for (unsigned char c : value)
      if (control(c)) return invalid("control byte in a header");
    std::string key = lower(name);
    if (key == "content-length") {
      std::size_t n = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || value.size() > 15 || ec != std::errc() || p != value.data() + value.size())
        return invalid("Content-Length is not a number");
      if (length && *length != n) return invalid("two different Content-Length");
      length = n;
    } else if (key == "transfer-encoding") {
      if (lower(value) != "chunked") return invalid("Transfer-Encoding other than chunked");
      chunked = true;
    } else if (key == "content-type") {
      r.content_type = lower(trim(value.substr(0, value.find(';'))));
    }
  }
  if (chunked && length) return invalid("both Content-Length and Transfer-Encoding");

  HttpParse out;
  // No body: 1xx, 204, 304 (RFC 9112 §6.3).
  if (r.status < 200 || r.status == 204 || r.status == 304) {
    out.state = ParseState::kComplete;
    out.response = std::move(r);
    return out;
  }
  if (chunked) {
    std::string error;
    ParseState s = read_chunked(rest, r.body, error);
    if (s == ParseState::kInvalid) return invalid(error);
    if (s == ParseState::kIncomplete && !at_end) return HttpParse{};
    r.cut = s == ParseState::kIncomplete;
  } else if (length) {
    if (rest.size() < *length && !at_end) return HttpParse{};
    r.body = rest.substr(0, std::min(rest.size(), *length));
    r.cut = rest.size() < *length;
  } else {
    // Delimited by the close: complete only when nothing more comes.
    if (!at_end) return HttpParse{};
    r.body = rest;
    r.cut = data.size() >= kMaxResponseBytes;
  }
  out.state = ParseState::kComplete;
  out.response = std::move(r);
  return out;
}

namespace {

// `html` as text: tags out (those that break a line in a browser become a
// line break), the contents of head, script and style out, comments out,
// the few entities an error page uses read.
std::string html_text(std::string_view html) {
  static constexpr std::string_view kBreaking[] = {"br", "p", "/p", "div", "/div", "h1", "/h1", "h2", "/h2", "h3",
                                                   "/h3", "li", "tr", "hr", "pre", "/pre", "center", "/center",
                                                   "title", "/title", "table", "ul", "ol", "body", "/body"};
  static constexpr std::string_view kHidden[] = {"head", "script", "style"};
  static constexpr std::pair<std::string_view, std::string_view> kEntities[] = {
      {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&nbsp;", " "}};
  std::string out;
  std::size_t i = 0;
  while (i < html.size()) {
    char c = html[i];
    if (c == '&') {
      bool read = false;
      for (auto [entity, text] : kEntities)
        if (html.substr(i, entity.size()) == entity) {
          out += text;
          i += entity.size();
          read = true;
          break;
        }
      if (!read) out += html[i++];
      continue;
    }
    if (c != '<') {
      out += c;
      ++i;
      continue;
    }
    if (html.substr(i, 4) == "<!--") {
      std::size_t end = html.find("-->", i + 4);
      i = end == std::string_view::npos ? html.size() : end + 3;
      continue;
    }
    std::size_t close = html.find('>', i);
    if (close == std::string_view::npos) break;  // a tag cut short: nothing more to show
    std::string_view inside = html.substr(i + 1, close - i - 1);
    std::size_t name_end = 0;
    while (name_end < inside.size() && (std::isalnum(static_cast<unsigned char>(inside[name_end])) ||
                                        (name_end == 0 && inside[0] == '/')))
      ++name_end;
    std::string name = lower(inside.substr(0, name_end));
    i = close + 1;
    if (std::find(std::begin(kHidden), std::end(kHidden), name) != std::end(kHidden)) {
      // To the closing tag, whatever its case ("</SCRIPT>").
      const std::string closing = "</" + name;
      auto end = std::search(html.begin() + static_cast<std::ptrdiff_t>(i), html.end(), closing.begin(), closing.end(),
                             [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
      if (end == html.end()) break;
      std::size_t gt = html.find('>', static_cast<std::size_t>(end - html.begin()));
      if (gt == std::string_view::npos) break;
      i = gt + 1;
      continue;
    }
    if (std::find(std::begin(kBreaking), std::end(kBreaking), name) != std::end(kBreaking)) out += '\n';
  }
  return out;
}

std::size_t characters(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xc0) != 0x80; }));
}

}  // namespace

std::vector<std::string> shown_body_lines(const HttpResponse& response) {
  std::string_view body = response.body;
  std::string_view opening = trim(body.substr(0, std::min<std::size_t>(body.size(), 64)));
  while (!opening.empty() && (opening.front() == '\r' || opening.front() == '\n')) opening.remove_prefix(1);
  const bool html = response.content_type == "text/html" || response.content_type == "application/xhtml+xml" ||
                    opening.starts_with('<');
  const std::string text = html ? html_text(body) : std::string(body);
  std::vector<std::string> lines;
  std::size_t used = 0;
  bool more = false;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line = std::string_view(text).substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line = trim(line);
    if (line.empty() || (!lines.empty() && lines.back() == line)) continue;
    if (lines.size() == kMaxShownLines || used >= kMaxShownChars) {
      more = true;
      break;
    }
    std::string kept = cut_text(line, kMaxShownChars - used);
    used += characters(kept);
    lines.push_back(std::move(kept));
  }
  if ((more || response.cut) && !lines.empty() && !lines.back().ends_with(kCutMark)) lines.push_back(std::string(kCutMark));
  return lines;
}

std::string discovery_target(std::string_view url, bool push) {
  if (url_kind(url) != UrlKind::kHttp) return "";
  std::string_view rest = url.substr(url.find("://") + 3);
  for (unsigned char c : rest)
    if (c <= 0x20 || c >= 0x7f || c == '?' || c == '#' || c == '\\') return "";
  std::size_t slash = rest.find('/');
  std::string path(slash == std::string_view::npos ? std::string_view() : rest.substr(slash));
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path + "/info/refs?service=git-" + (push ? "receive-pack" : "upload-pack");
}

namespace {

// A TCP connection whose every wait ends at one deadline.
class Wire {
 public:
  explicit Wire(Clock::time_point deadline) : deadline_(deadline) {}
  ~Wire() {
    if (fd_ >= 0) ::close(fd_);
  }
  Wire(const Wire&) = delete;
  Wire& operator=(const Wire&) = delete;

  bool connect(const std::string& host, const std::string& port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    // The name was resolved a moment ago for libgit2's own request, so the
    // resolver answers from what it just learnt; getaddrinfo has no timeout.
    if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return false;
    for (addrinfo* a = found; a && fd_ < 0; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
      if (rc != 0 && errno == EINPROGRESS && wait(fd, POLLOUT)) {
        int err = 0;
        socklen_t len = sizeof err;
        rc = ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0 ? 0 : -1;
      }
      if (rc == 0)
        fd_ = fd;
      else
        ::close(fd);
    }
    ::freeaddrinfo(found);
    return fd_ >= 0;
  }

  // Bytes sent (all of `data`), or -1 when the deadline passed or the
  // connection failed.
  long send(const unsigned char* data, std::size_t size) {
    std::size_t sent = 0;
    while (sent < size) {
      if (!wait(fd_, POLLOUT)) return -1;
      ssize_t n = ::send(fd_, data + sent, size - sent, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) return -1;
      sent += static_cast<std::size_t>(n);
    }
    return static_cast<long>(sent);
  }
  // Bytes read (0: the server closed), or -1 when the deadline passed or
  // the connection failed.
  long recv(unsigned char* data, std::size_t size) {
    for (;;) {
      if (!wait(fd_, POLLIN)) return -1;
      ssize_t n = ::recv(fd_, data, size, 0);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      return n < 0 ? -1 : static_cast<long>(n);
    }
  }

 private:
  bool wait(int fd, short events) const {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd, events, 0};
      int n = ::poll(&p, 1, static_cast<int>(left));
      if (n < 0 && errno == EINTR) continue;
      return n > 0;
    }
  }

  Clock::time_point deadline_;
  int fd_ = -1;
};

// libgit2's default CA file on Debian (its build's CERT_LOCATION), used when
// KISTORE_SSL_CAINFO names none: the same anchors libgit2 checked against.
constexpr const char* kLibgit2CaLocation = "/etc/ssl/certs/ca-certificates.crt";

// One TLS session over a Wire, configured as libgit2 1.5's mbedTLS stream
// configures its own (streams/mbedtls.c): client defaults, TLS 1.2 or
// later, the CA chain from one file (or folder), the server's name checked
// against the URL's host. Verification is REQUIRED: the handshake fails on
// any certificate libgit2 would report as invalid.
class Tls {
 public:
  Tls() {
    mbedtls_ssl_init(&ssl_);
    mbedtls_ssl_config_init(&config_);
    mbedtls_x509_crt_init(&anchors_);
    mbedtls_ctr_drbg_init(&random_);
    mbedtls_entropy_init(&entropy_);
  }
  ~Tls() {
    mbedtls_ssl_free(&ssl_);
    mbedtls_ssl_config_free(&config_);
    mbedtls_x509_crt_free(&anchors_);
    mbedtls_ctr_drbg_free(&random_);
    mbedtls_entropy_free(&entropy_);
  }
  Tls(const Tls&) = delete;
  Tls& operator=(const Tls&) = delete;

  bool start(Wire& wire, const std::string& host, const std::string& ca_file) {
    const std::string anchors = ca_file.empty() ? kLibgit2CaLocation : ca_file;
    struct stat st {};
    if (::stat(anchors.c_str(), &st) != 0) return false;
    int loaded = S_ISDIR(st.st_mode) ? mbedtls_x509_crt_parse_path(&anchors_, anchors.c_str())
                                     : mbedtls_x509_crt_parse_file(&anchors_, anchors.c_str());
    if (loaded < 0 || anchors_.version == 0) return false;  // no certificate: nothing could verify
    static constexpr unsigned char kPersonal[] = "kistore http refusal";
    if (mbedtls_ctr_drbg_seed(&random_, mbedtls_entropy_func, &entropy_, kPersonal, sizeof kPersonal - 1) != 0 ||
        mbedtls_ssl_config_defaults(&config_, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                    MBEDTLS_SSL_PRESET_DEFAULT) != 0)
      return false;
    mbedtls_ssl_conf_min_version(&config_, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
    mbedtls_ssl_conf_authmode(&config_, MBEDTLS_SSL_VERIFY_REQUIRED);
    mbedtls_ssl_conf_ca_chain(&config_, &anchors_, nullptr);
    mbedtls_ssl_conf_rng(&config_, mbedtls_ctr_drbg_random, &random_);
    if (mbedtls_ssl_setup(&ssl_, &config_) != 0 || mbedtls_ssl_set_hostname(&ssl_, host.c_str()) != 0) return false;
    mbedtls_ssl_set_bio(&ssl_, &wire, send_to, recv_from, nullptr);
    int rc;
    while ((rc = mbedtls_ssl_handshake(&ssl_)) != 0)
      if (rc != MBEDTLS_ERR_SSL_WANT_READ && rc != MBEDTLS_ERR_SSL_WANT_WRITE) return false;
    return mbedtls_ssl_get_verify_result(&ssl_) == 0;
  }
  long send(const unsigned char* data, std::size_t size) {
    std::size_t sent = 0;
    while (sent < size) {
      int n = mbedtls_ssl_write(&ssl_, data + sent, size - sent);
      if (n == MBEDTLS_ERR_SSL_WANT_READ || n == MBEDTLS_ERR_SSL_WANT_WRITE) continue;
      if (n <= 0) return -1;
      sent += static_cast<std::size_t>(n);
    }
    return static_cast<long>(sent);
  }
  long recv(unsigned char* data, std::size_t size) {
    for (;;) {
      int n = mbedtls_ssl_read(&ssl_, data, size);
      if (n == MBEDTLS_ERR_SSL_WANT_READ || n == MBEDTLS_ERR_SSL_WANT_WRITE) continue;
      if (n == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) return 0;
      return n < 0 ? -1 : n;
    }
  }

 private:
  static int send_to(void* wire, const unsigned char* data, std::size_t size) {
    long n = static_cast<Wire*>(wire)->send(data, size);
    return n < 0 ? MBEDTLS_ERR_NET_SEND_FAILED : static_cast<int>(n);
  }
  static int recv_from(void* wire, unsigned char* data, std::size_t size) {
    long n = static_cast<Wire*>(wire)->recv(data, size);
    return n < 0 ? MBEDTLS_ERR_NET_RECV_FAILED : static_cast<int>(n);
  }

  mbedtls_ssl_context ssl_;
  mbedtls_ssl_config config_;
  mbedtls_x509_crt anchors_;
  mbedtls_ctr_drbg_context random_;
  mbedtls_entropy_context entropy_;
};

}  // namespace

std::optional<HttpResponse> fetch_refusal(const RefusalRequest& request) {
  const std::string target = discovery_target(request.url, request.push);
  if (target.empty()) return std::nullopt;
  const UrlParts parts = split_url(request.url);
  const bool https = lower(parts.scheme) == "https";
  if (parts.host.empty()) return std::nullopt;
  const std::string port = parts.port.empty() ? (https ? "443" : "80") : parts.port;
  std::string host_header = parts.host.find(':') != std::string::npos ? "[" + parts.host + "]" : parts.host;
  if (!parts.port.empty()) host_header += ":" + parts.port;

  std::string ask = "GET " + target + " HTTP/1.1\r\nHost: " + host_header +
                    "\r\nUser-Agent: git/2.0 (kistore)\r\nAccept: */*\r\nConnection: close\r\n";
  if (request.basic) {
    const auto& [user, password] = *request.basic;
    // A value that could end the header line is never sent.
    if ((user + password).find_first_of("\r\n") != std::string::npos) return std::nullopt;
    ask += "Authorization: Basic " + ssh_wire::base64_encode(user + ":" + password, true) + "\r\n";
  }
  ask += "\r\n";

  Wire wire(Clock::now() + request.deadline);
  if (!wire.connect(parts.host, port)) return std::nullopt;
  Tls tls;
  if (https && !tls.start(wire, parts.host, request.ca_file)) return std::nullopt;
  auto send = [&](const std::string& s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    return https ? tls.send(p, s.size()) : wire.send(p, s.size());
  };
  auto recv = [&](unsigned char* p, std::size_t n) { return https ? tls.recv(p, n) : wire.recv(p, n); };
  if (send(ask) < 0) return std::nullopt;

  std::string data;
  HttpParse parsed;
  unsigned char buffer[16 * 1024];
  for (;;) {
    std::size_t room = kMaxResponseBytes - data.size();
    long n = room == 0 ? 0 : recv(buffer, std::min(room, sizeof buffer));
    const bool at_end = n <= 0;  // closed, failed, out of time, or the bound reached
    if (n > 0) data.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n));
    parsed = parse_http_response(data, at_end || data.size() >= kMaxResponseBytes);
    if (parsed.state != ParseState::kIncomplete) break;
  }
  if (parsed.state != ParseState::kComplete || parsed.response.status < 400) return std::nullopt;
  return std::move(parsed.response);
}

}  // namespace kistore
