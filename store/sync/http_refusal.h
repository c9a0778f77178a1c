// What an http(s) server said when it refused a request, private to store/
// (Connection::check, store/sync/connection.cc).
//
// libgit2 1.5's http transport reads a refusal's status and drops its body:
// a pull from GitHub, Gitea, GitLab or git-http-backend behind a web server
// that answers 403 "Permission to org/evidence denied to alice." is reported
// as "unexpected http status code: 403". When a transfer over http(s) failed
// on such a status, the connection asks once more itself: one GET of the same
// smart discovery URL libgit2 asked (<url>/info/refs?service=git-upload-pack,
// or git-receive-pack for a push), over kistore's own minimal HTTP/1.1
// client, and shows the status line and the body of the answer.
//
// It is a way in (bytes from the server reach the terminal) and a way out
// (a connection, perhaps a credential), bounded at both ends:
//   - one request, no redirect followed, no proxy (libgit2 is given none in
//     this code path: GIT_PROXY_NONE, so it connects directly too), no
//     keep-alive; connect, TLS handshake and reading share one deadline;
//   - https through mbedTLS, the library libgit2 itself uses on Debian, with
//     its settings for certificates: the chain checked against the same CA
//     file (Credentials::ca_file, else libgit2's compiled-in default), the
//     server's name against the URL's host, REQUIRED: the same certificates
//     are accepted and refused as libgit2 accepts and refuses them;
//   - the Authorization sent is only the Basic user:password the failed
//     attempt itself sent to that URL's origin (the caller passes it), never
//     anything over plain http that the user did not write into the URL;
//   - at most kMaxResponseBytes read; the status line and headers parsed
//     strictly (any doubt: no answer); the body by Content-Length, chunked,
//     or until the server closes, cut at the bound;
//   - what is shown: at most kMaxShownLines lines and kMaxShownChars
//     characters of the body (HTML tags and the text of head, script and
//     style left out), raw: the command line escapes every error it prints
//     (cli/output/terminal.h), as it does an ssh server's words.
// Any failure (no connection, a refused certificate, a timeout, a malformed
// or 1xx-3xx answer) gives no answer, and the caller keeps libgit2's message.
//
// Thread-safety: pure functions, and fetch_refusal() uses only its own
// objects (its socket and TLS context): safe from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kistore {

// Most bytes read of one answer, headers included.
inline constexpr std::size_t kMaxResponseBytes = 64 * 1024;
// Most lines and characters of the body that a message quotes.
inline constexpr std::size_t kMaxShownLines = 10;
inline constexpr std::size_t kMaxShownChars = 1000;
// How long the whole request may take: connect, handshake, send and read.
inline constexpr std::chrono::seconds kRefusalDeadline{10};

// An answer as parse_http_response read it.
struct HttpResponse {
  int status = 0;             // 100-599
  std::string reason;         // the reason phrase, as sent (may be empty)
  std::string content_type;   // lowercased media type without parameters, "" when none
  std::string body;           // decoded from chunked; at most what arrived
  bool cut = false;           // the body was longer than what was read
};

enum class ParseState { kIncomplete, kComplete, kInvalid };

struct HttpParse {
  ParseState state = ParseState::kIncomplete;
  HttpResponse response;  // set when kComplete
  std::string error;      // why kInvalid (for tests)
};

// Parses `data`, the bytes of one HTTP/1.x answer so far. `at_end`: nothing
// more will come (the server closed, the deadline passed or the byte bound
// was reached), so a body delimited by the close, or cut short, is complete
// (`cut` set when a declared length or chunk was not all there). Invalid:
// a status line other than "HTTP/1.0|1.1 DDD[ reason]", a header line
// without a name and a colon, a control byte in a header, two or invalid
// Content-Length, a Transfer-Encoding other than chunked, malformed chunk
// sizes; headers beyond kMaxResponseBytes without an end.
HttpParse parse_http_response(std::string_view data, bool at_end);

// The body as lines a message may quote: HTML (by content type, or text
// that opens with '<') without its tags, the text of <head>, <script> and
// <style> left out, and &amp; &lt; &gt; &quot; &#39; &nbsp; read; lines
// blank once trimmed left out, as is a line equal to the one before; at
// most kMaxShownLines lines and kMaxShownChars characters in all (a line is
// cut with "…", and "…" ends the list when lines were left out). Raw bytes:
// escape before printing.
std::vector<std::string> shown_body_lines(const HttpResponse& response);

// The request to make.
struct RefusalRequest {
  std::string url;       // the remote's http(s) URL as configured (may hold user:password)
  bool push = false;     // git-receive-pack's discovery, else git-upload-pack's
  // The credential the failed attempt sent to this URL's origin (Basic),
  // or none.
  std::optional<std::pair<std::string, std::string>> basic;
  std::string ca_file;   // PEM file of the CAs for https; "" for libgit2's default
  std::chrono::milliseconds deadline = kRefusalDeadline;
};

// "<path>/info/refs?service=git-upload-pack" (or git-receive-pack) for an
// http(s) URL without query or fragment, with only printable ASCII in its
// authority and path; "" for any other URL.
std::string discovery_target(std::string_view url, bool push);

// Makes the request and returns the answer when it came whole or cut at the
// bound and its status is 4xx or 5xx; nullopt otherwise (see above).
std::optional<HttpResponse> fetch_refusal(const RefusalRequest& request);

}  // namespace kistore
