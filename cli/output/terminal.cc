#include "cli/output/terminal.h"

#include <cstdint>

#include "objects/json.h"
#include "objects/shown_text.h"

namespace kistore::cli {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_byte_escape(unsigned char c, std::string& out) {
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xf];
}

}  // namespace

std::string shown(std::string_view text, std::size_t max) {
  std::string out;
  out.reserve(text.size() < max ? text.size() : max);
  std::size_t chars = 0;
  std::size_t i = 0;
  // Each step appends one character's form; a step that would go past `max`
  // characters ends the text with the ellipsis instead.
  auto room = [&](std::size_t n) { return chars + n <= max; };
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    std::string piece;
    std::size_t consumed = 1;
    if (c >= 0x20 && c < 0x7f) {
      piece = static_cast<char>(c);
    } else if (c == '\n') {
      piece = "\\n";
    } else if (c == '\t') {
      piece = "\\t";
    } else if (c == '\r') {
      piece = "\\r";
    } else if (c < 0x80) {
      append_byte_escape(c, piece);
    } else {
      std::uint32_t cp = 0;
      std::size_t len = utf8_char(text, i, cp);
      if (len == 0) {
        append_byte_escape(c, piece);
      } else if (acts_on_display(cp)) {
        piece = "\\u{";
        for (int shift = 12; shift >= 0; shift -= 4) piece += kHex[(cp >> shift) & 0xf];
        piece += "}";
        consumed = len;
      } else {
        piece.assign(text.substr(i, len));
        consumed = len;
      }
    }
    // A multi-byte UTF-8 character counts as one; an escape as what it prints.
    std::size_t width = (c >= 0x80 && piece.size() == consumed) ? 1 : piece.size();
    if (!room(width)) {
      out += "…";
      return out;
    }
    out += piece;
    chars += width;
    i += consumed;
  }
  return out;
}

std::string shown_lines(std::string_view text, std::size_t max) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) return out + shown(text.substr(start), max);
    out += shown(text.substr(start, end - start), max);
    out += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace kistore::cli
