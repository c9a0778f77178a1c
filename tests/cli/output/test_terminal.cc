// cli::shown: what text from data or a remote looks like on a terminal.
#include <catch2/catch.hpp>

#include <string>

#include "cli/output/terminal.h"

using kistore::cli::kMaxFieldChars;
using kistore::cli::shown;

namespace {

struct Case {
  const char* name;
  std::string input;
  std::string expected;
};

}  // namespace

TEST_CASE("shown escapes what a terminal would act on", "[cli][terminal]") {
  using namespace std::string_literals;
  const Case cases[] = {
      {"plain ASCII", "liger_tiled 1.2 ms", "liger_tiled 1.2 ms"},
      {"empty", "", ""},
      {"ESC of a clear-screen sequence", "\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"},
      {"OSC that sets the window title", "\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"},
      {"newline that fakes a table line", "impl\nlevel reproduced", "impl\\nlevel reproduced"},
      {"tab and carriage return", "a\tb\rc", "a\\tb\\rc"},
      {"NUL inside", "a\0b"s, "a\\x00b"},
      {"every other C0", "\x01\x08\x0b\x0c\x1f", "\\x01\\x08\\x0b\\x0c\\x1f"},
      {"DEL", "x\x7fy", "x\\x7fy"},
      {"C1 CSI (U+009B) as UTF-8", "\xc2\x9b" "31m", "\\u{009b}31m"},
      {"C1 NEL (U+0085)", "a\xc2\x85z", "a\\u{0085}z"},
      {"raw 8-bit CSI byte (invalid UTF-8)", "\x9b" "2J", "\\x9b2J"},
      {"RIGHT-TO-LEFT OVERRIDE U+202E", "abc\xe2\x80\xae" "txt.exe", "abc\\u{202e}txt.exe"},
      {"LEFT-TO-RIGHT EMBEDDING U+202A", "\xe2\x80\xaa", "\\u{202a}"},
      {"isolates U+2066 and U+2069", "\xe2\x81\xa6x\xe2\x81\xa9", "\\u{2066}x\\u{2069}"},
      {"LINE and PARAGRAPH SEPARATOR U+2028, U+2029", "a\xe2\x80\xa8" "b\xe2\x80\xa9" "c", "a\\u{2028}b\\u{2029}c"},
      {"U+2027 (HYPHENATION POINT) is no line break", "\xe2\x80\xa7", "\xe2\x80\xa7"},
      {"U+2065 and U+202F are not controls", "\xe2\x81\xa5\xe2\x80\xaf", "\xe2\x81\xa5\xe2\x80\xaf"},
      {"valid UTF-8 kept", "H100 \xc3\xa9t\xc3\xa9 \xe2\x80\x93 \xf0\x9f\x9a\x80", "H100 \xc3\xa9t\xc3\xa9 \xe2\x80\x93 \xf0\x9f\x9a\x80"},
      {"lone continuation byte", "a\x80z", "a\\x80z"},
      {"truncated sequence at the end", "a\xe2\x80", "a\\xe2\\x80"},
      {"overlong slash", "\xc0\xaf", "\\xc0\\xaf"},
      {"overlong 3-byte NUL", "\xe0\x80\x80", "\\xe0\\x80\\x80"},
      {"UTF-16 surrogate encoded", "\xed\xa0\x80", "\\xed\\xa0\\x80"},
      {"above U+10FFFF", "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},
      {"0xff byte", "\xff", "\\xff"},
      {"backslash kept", "C:\\path", "C:\\path"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(shown(c.input) == c.expected);
  }
}

TEST_CASE("shown cuts long fields with an ellipsis", "[cli][terminal]") {
  SECTION("a megabyte of text is cut to the field bound") {
    std::string mb(1 << 20, 'A');
    std::string out = shown(mb);
    CHECK(out == std::string(kMaxFieldChars, 'A') + "…");
  }
  SECTION("a megabyte of escapes stays bounded and holds no raw control") {
    std::string mb(1 << 20, '\x1b');
    std::string out = shown(mb);
    CHECK(out.size() <= kMaxFieldChars + 8);
    CHECK(out.find('\x1b') == std::string::npos);
    CHECK(out.ends_with("…"));
  }
  SECTION("exactly the bound is not cut") {
    std::string text(kMaxFieldChars, 'b');
    CHECK(shown(text) == text);
  }
  SECTION("multi-byte characters count as one each and are never split") {
    std::string text;
    for (int i = 0; i < 10; ++i) text += "\xc3\xa9";
    CHECK(shown(text, 4) == "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9…");
  }
  SECTION("an escape is never split by the cut") {
    CHECK(shown("ab\x1b" "cd", 4) == "ab…");
    CHECK(shown("ab\x1b" "cd", 6) == "ab\\x1b…");
  }
  SECTION("the message bound is larger") {
    std::string text(kistore::cli::kMaxMessageChars + 5, 'm');
    CHECK(kistore::cli::shown_message(text) == std::string(kistore::cli::kMaxMessageChars, 'm') + "…");
  }
}
