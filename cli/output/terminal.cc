#include "cli/output/terminal.h"

#include <cstdint>

namespace kistore::cli {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_byte_escape(unsigned char c, std::string& out) {
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xf];
}

// The length of the valid UTF-8 sequence at text[i] and its code point, or 0
// when the bytes there are not one (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF).
std::size_t utf8_sequence(std::string_view text, std::size_t i, std::uint32_t& cp) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  std::size_t len;
  std::uint32_t min;
  if (lead >= 0xc2 && lead <= 0xdf) len = 2, cp = lead & 0x1f, min = 0x80;
  else if (lead >= 0xe0 && lead <= 0xef) len = 3, cp = lead & 0x0f, min = 0x800;
  else if (lead >= 0xf0 && lead <= 0xf4) len = 4, cp = lead & 0x07, min = 0x10000;
  else return 0;
  if (i + len > text.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

bool needs_escape(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
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
      std::size_t len = utf8_sequence(text, i, cp);
      if (len == 0) {
        append_byte_escape(c, piece);
      } else if (needs_escape(cp)) {
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
