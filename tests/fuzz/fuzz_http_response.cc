// libFuzzer target for the reading of an http server's refusal
// (store/sync/http_refusal.h): any bytes, whole or cut anywhere, must give
// an answer, "incomplete" or "invalid" — never a crash or a sanitizer
// report — and an answer's quoted lines stay within their bounds.
//
// Input: the bytes of an HTTP/1.x answer as a server might send them.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "store/sync/http_refusal.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

void check(std::string_view data, bool at_end) {
  const kistore::HttpParse parsed = kistore::parse_http_response(data, at_end);
  if (parsed.state != kistore::ParseState::kComplete) return;
  const kistore::HttpResponse& r = parsed.response;
  if (r.status < 100 || r.status > 599) fail("a status outside 100-599");
  if (r.body.size() > data.size()) fail("a body longer than the answer");
  std::size_t chars = 0;
  const auto lines = kistore::shown_body_lines(r);
  if (lines.size() > kistore::kMaxShownLines + 1) fail("more lines than the bound");
  for (const std::string& line : lines) chars += line.size();
  // The bound counts characters; "…" (3 bytes) may end a line and the list.
  if (chars > 4 * kistore::kMaxShownChars + 3 * (kistore::kMaxShownLines + 2)) fail("more text than the bound");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check(text, false);
  check(text, true);
  // The same answer cut where a read might have stopped.
  if (size > 1) check(text.substr(0, size / 2), true);
  return 0;
}
