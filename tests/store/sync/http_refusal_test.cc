// The words of an http refusal (store/sync/http_refusal.h): the answer's
// parser, the lines a message quotes, and the URL asked. The request itself
// is attacked end to end in tests/e2e/test_http_refusal.sh.
#include "store/sync/http_refusal.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace kistore {
namespace {

HttpParse whole(const std::string& data) { return parse_http_response(data, true); }

TEST_CASE("parse_http_response: status line, headers and a body by Content-Length", "[http_refusal]") {
  const std::string answer =
      "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 44\r\n\r\n"
      "Permission to org/evidence denied to alice.\n";
  HttpParse p = parse_http_response(answer, false);
  REQUIRE(p.state == ParseState::kComplete);
  CHECK(p.response.status == 403);
  CHECK(p.response.reason == "Forbidden");
  CHECK(p.response.content_type == "text/plain");
  CHECK(p.response.body == "Permission to org/evidence denied to alice.\n");
  CHECK_FALSE(p.response.cut);
  // Every prefix is incomplete while more may come, never invalid.
  for (std::size_t n = 0; n < answer.size(); ++n) {
    INFO(n);
    CHECK(parse_http_response(answer.substr(0, n), false).state == ParseState::kIncomplete);
  }
  // Cut short: complete once nothing more comes, marked cut.
  HttpParse cut = whole(answer.substr(0, answer.size() - 10));
  REQUIRE(cut.state == ParseState::kComplete);
  CHECK(cut.response.cut);
  CHECK(cut.response.body == "Permission to org/evidence denied ");
  // Bytes after the declared length are not the body.
  CHECK(whole(answer + "EXTRA").response.body == "Permission to org/evidence denied to alice.\n");
}

TEST_CASE("parse_http_response: chunked bodies, whole, cut and malformed", "[http_refusal]") {
  const std::string head = "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n";
  HttpParse p = parse_http_response(head + "5\r\nno re\r\n9;ext=1\r\npository\n\r\n0\r\n\r\n", false);
  REQUIRE(p.state == ParseState::kComplete);
  CHECK(p.response.body == "no repository\n");
  CHECK_FALSE(p.response.cut);

  CHECK(parse_http_response(head + "5\r\nno re\r\n", false).state == ParseState::kIncomplete);
  HttpParse cut = whole(head + "5\r\nno re\r\n4\r\npo");
  REQUIRE(cut.state == ParseState::kComplete);
  CHECK(cut.response.body == "no repo");
  CHECK(cut.response.cut);

  for (const char* bad : {"zz\r\nab\r\n0\r\n\r\n", "5\r\nno rexx0\r\n\r\n", "123456789\r\n", "\r\n"}) {
    INFO(bad);
    CHECK(whole(head + bad).state == ParseState::kInvalid);
  }
}

TEST_CASE("parse_http_response: a body until the close, and none", "[http_refusal]") {
  const std::string answer = "HTTP/1.0 500 Internal Server Error\r\nServer: x\r\n\r\nboom\n";
  CHECK(parse_http_response(answer, false).state == ParseState::kIncomplete);
  HttpParse p = whole(answer);
  REQUIRE(p.state == ParseState::kComplete);
  CHECK(p.response.status == 500);
  CHECK(p.response.body == "boom\n");
  CHECK_FALSE(p.response.cut);

  HttpParse none = parse_http_response("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n", false);
  REQUIRE(none.state == ParseState::kComplete);
  CHECK(none.response.body.empty());
  CHECK(shown_body_lines(none.response).empty());

  HttpParse no_reason = parse_http_response("HTTP/1.1 418\r\nContent-Length: 0\r\n\r\n", false);
  REQUIRE(no_reason.state == ParseState::kComplete);
  CHECK(no_reason.response.status == 418);
  CHECK(no_reason.response.reason.empty());
}

TEST_CASE("parse_http_response: what is refused, one line per case", "[http_refusal]") {
  const std::vector<std::string> bad = {
      "HTTP/2 403 Forbidden\r\n\r\n",                                        // not HTTP/1.x
      "HTTP/1.1 40 Forbidden\r\n\r\n",                                       // two digits
      "HTTP/1.1 4x3 Forbidden\r\n\r\n",                                      // not digits
      "HTTP/1.1 999 What\r\n\r\n",                                           // out of range
      "HTTP/1.1 403Forbidden\r\n\r\n",                                       // no space
      "HTTP/1.1 403 For\x1b[31mbidden\r\n\r\n",                              // control byte in the reason
      "HTTP/1.1 403 Forbidden\r\nNo colon here\r\n\r\n",                     // header without a colon
      "HTTP/1.1 403 Forbidden\r\n: empty name\r\n\r\n",                      // empty name
      "HTTP/1.1 403 Forbidden\r\nBad Name: x\r\n\r\n",                       // space in the name
      "HTTP/1.1 403 Forbidden\r\nX: a\r\n folded\r\n\r\n",                   // obsolete folding
      "HTTP/1.1 403 Forbidden\r\nX: a\x01" "b\r\n\r\n",                         // control byte in a value
      "HTTP/1.1 403 Forbidden\r\nContent-Length: -1\r\n\r\n",                // not a number
      "HTTP/1.1 403 Forbidden\r\nContent-Length: 12abc\r\n\r\n",             // not a number
      "HTTP/1.1 403 Forbidden\r\nContent-Length: 99999999999999999999\r\n\r\n",  // too long
      "HTTP/1.1 403 Forbidden\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",  // two lengths
      "HTTP/1.1 403 Forbidden\r\nTransfer-Encoding: gzip\r\n\r\n",           // not chunked
      "HTTP/1.1 403 Forbidden\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",  // both
      "HTTP/1.1 403 Forbidden\r\nContent-Length: 3\r\n",                     // ends in the headers
      "",                                                                     // nothing at all
      "\x16\x03\x01 a TLS record, not HTTP",                                   // https spoken to plain http
  };
  for (const std::string& b : bad) {
    INFO(b);
    CHECK(whole(b).state == ParseState::kInvalid);
  }
}

TEST_CASE("parse_http_response: headers that never end are refused at the bound", "[http_refusal]") {
  std::string endless = "HTTP/1.1 403 Forbidden\r\n";
  while (endless.size() < kMaxResponseBytes) endless += "X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
  CHECK(parse_http_response(endless, false).state == ParseState::kInvalid);
}

TEST_CASE("parse_http_response: a body delimited by the close is cut at the bound", "[http_refusal]") {
  std::string big = "HTTP/1.1 403 Forbidden\r\n\r\n";
  big.resize(kMaxResponseBytes, 'a');
  HttpParse p = whole(big);
  REQUIRE(p.state == ParseState::kComplete);
  CHECK(p.response.cut);
}

TEST_CASE("shown_body_lines: lines trimmed, blanks and repeats left out, bounded", "[http_refusal]") {
  HttpResponse r;
  r.status = 403;
  r.body = "\r\n  Permission denied.  \r\n\r\nPermission denied.\r\nAsk an owner.\n";
  CHECK(shown_body_lines(r) == std::vector<std::string>{"Permission denied.", "Ask an owner."});

  // Escape bytes are kept raw (the command line escapes them); a control
  // byte is no line break.
  r.body = "red \x1b[31mtext\x07 and \xff\xfe bytes\n";
  CHECK(shown_body_lines(r) == std::vector<std::string>{"red \x1b[31mtext\x07 and \xff\xfe bytes"});

  // At most kMaxShownLines lines, then "…".
  r.body.clear();
  for (int i = 0; i < 50; ++i) r.body += "line " + std::to_string(i) + "\n";
  std::vector<std::string> lines = shown_body_lines(r);
  REQUIRE(lines.size() == kMaxShownLines + 1);
  CHECK(lines.front() == "line 0");
  CHECK(lines[kMaxShownLines - 1] == "line 9");
  CHECK(lines.back() == "…");

  // At most kMaxShownChars characters in all: one long line is cut.
  r.body = std::string(1 << 20, 'x');
  lines = shown_body_lines(r);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].size() == kMaxShownChars + std::string("…").size());
  CHECK(lines[0].ends_with("…"));

  // A body that was cut says so.
  r.body = "the start of it";
  r.cut = true;
  CHECK(shown_body_lines(r) == std::vector<std::string>{"the start of it", "…"});
}

TEST_CASE("shown_body_lines: an HTML page as its text", "[http_refusal]") {
  HttpResponse r;
  r.status = 403;
  r.content_type = "text/html";
  r.body =
      "<html>\r\n<head><title>403 Forbidden</title><style>body{color:red}</style></head>\r\n<body>\r\n"
      "<script>alert('x')</script><center><h1>403 Forbidden</h1></center><p>You &amp; your key &lt;k&gt;"
      "</p><!-- a comment -->\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
  CHECK(shown_body_lines(r) == std::vector<std::string>{"403 Forbidden", "You & your key <k>", "nginx"});
  // Told by its first byte when the type is not given.
  r.content_type.clear();
  CHECK(shown_body_lines(r).front() == "403 Forbidden");
  // Plain text that merely mentions a tag is shown as it is.
  r.content_type = "text/plain";
  r.body = "use git@<host> instead\n";
  CHECK(shown_body_lines(r) == std::vector<std::string>{"use git@<host> instead"});
}

TEST_CASE("discovery_target: the URL libgit2 asks first, for http(s) only", "[http_refusal]") {
  CHECK(discovery_target("https://h/org/evidence.git", false) == "/org/evidence.git/info/refs?service=git-upload-pack");
  CHECK(discovery_target("https://h:8443/org/evidence.git/", true) ==
        "/org/evidence.git/info/refs?service=git-receive-pack");
  CHECK(discovery_target("http://u:pw@h", false) == "/info/refs?service=git-upload-pack");
  for (const char* other : {"ssh://h/e.git", "git://h/e.git", "/srv/e.git", "h:e.git", "https://h/e.git?x=1",
                            "https://h/e.git#f", "https://h/e .git", "https://h/e\r\nX: y", "https://h/\xc3\xa9.git"}) {
    INFO(other);
    CHECK(discovery_target(other, false).empty());
  }
}

}  // namespace
}  // namespace kistore
