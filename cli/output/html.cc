#include "cli/output/html.h"

#include <cstdint>
#include <cstdio>

#include "objects/json.h"
#include "objects/shown_text.h"

namespace kistore::cli {
namespace {

void append_escape(std::string& out, const char* format, unsigned value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, format, value);
  out += buf;
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
    std::size_t n = utf8_char(text, i, cp);
    if (n == 0) {
      append_escape(out, "\\x%02x", c);
      ++i;
      continue;
    }
    if (acts_on_display(cp))
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
