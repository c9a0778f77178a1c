#include "cli/output/html.h"

#include <cstdint>
#include <cstdio>

namespace kistore::cli {
namespace {

void append_escape(std::string& out, const char* format, unsigned value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, format, value);
  out += buf;
}

// The length of the valid UTF-8 sequence at s[i] and its code point, or 0
// when the bytes there are not one (overlong, surrogate, > U+10FFFF, cut).
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char c = b(0);
  std::size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
  if (n == 0 || c > 0xf4 || i + n > s.size()) return 0;
  cp = c & (0x7f >> n);
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (b(k) & 0x3f);
  }
  static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

// Printable ASCII that is no markup character: copied as it is, a run at a time.
constexpr bool plain(unsigned char c) {
  return c >= 0x20 && c < 0x7f && c != '&' && c != '<' && c != '>' && c != '"' && c != '\'';
}

}  // namespace

void append_html_text(std::string& out, std::string_view text) {
  out.reserve(out.size() + text.size());
  for (std::size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (plain(c)) {
      std::size_t end = i + 1;
      while (end < text.size() && plain(static_cast<unsigned char>(text[end]))) ++end;
      out.append(text.data() + i, end - i);
      i = end;
      continue;
    }
    if (c < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        case '\t': case '\n': case '\r': out += static_cast<char>(c); break;
        default:
          if (c < 0x20 || c == 0x7f) append_escape(out, "\\x%02x", c);
          else out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    std::size_t n = utf8_sequence(text, i, cp);
    if (n == 0) {
      append_escape(out, "\\x%02x", c);
      ++i;
      continue;
    }
    if ((cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
      append_escape(out, "\\u{%04x}", cp);
    else
      out.append(text.substr(i, n));
    i += n;
  }
}

std::string html_text(std::string_view text) {
  std::string out;
  append_html_text(out, text);
  return out;
}

}  // namespace kistore::cli
