// cli::html_text: what text from data looks like inside a page of the site.
#include <catch2/catch.hpp>

#include <string>

#include "cli/output/html.h"

using kistore::cli::append_html_text;
using kistore::cli::html_text;

namespace {

struct Case {
  const char* name;
  std::string input;
  std::string expected;
};

}  // namespace

TEST_CASE("html_text escapes markup and what would hide text", "[cli][html]") {
  using namespace std::string_literals;
  const Case cases[] = {
      {"plain ASCII", "liger_tiled 1.2 ms", "liger_tiled 1.2 ms"},
      {"empty", "", ""},
      {"a script element", "<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
      {"an attribute break-out", "\"><img src=x onerror=alert(1)>",
       "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"},
      {"single quotes (an attribute in ' quotes)", "' onmouseover='x", "&#39; onmouseover=&#39;x"},
      {"ampersand, so that no reference is forged", "&lt;b&gt; &amp; &#60;", "&amp;lt;b&amp;gt; &amp;amp; &amp;#60;"},
      {"a comment opener", "<!-- x", "&lt;!-- x"},
      {"CDATA end", "]]>", "]]&gt;"},
      {"tab, newline and carriage return kept", "a\tb\nc\rd", "a\tb\nc\rd"},
      {"NUL", "a\0b"s, "a\\x00b"},
      {"ESC and BEL", "\x1b]0;t\x07", "\\x1b]0;t\\x07"},
      {"DEL", "x\x7fy", "x\\x7fy"},
      {"C1 NEL (U+0085)", "a\xc2\x85z", "a\\u{0085}z"},
      {"RIGHT-TO-LEFT OVERRIDE U+202E", "abc\xe2\x80\xae" "exe.txt", "abc\\u{202e}exe.txt"},
      {"isolates U+2066 and U+2069", "\xe2\x81\xa6x\xe2\x81\xa9", "\\u{2066}x\\u{2069}"},
      {"LINE and PARAGRAPH SEPARATOR U+2028, U+2029", "a\xe2\x80\xa8" "b\xe2\x80\xa9", "a\\u{2028}b\\u{2029}"},
      {"U+202F (narrow space) is not a control", "\xe2\x80\xaf", "\xe2\x80\xaf"},
      {"valid UTF-8 kept", "\xc3\xa9t\xc3\xa9 \xe2\x80\x93 \xf0\x9f\x9a\x80 \xc2\xb7", "\xc3\xa9t\xc3\xa9 \xe2\x80\x93 \xf0\x9f\x9a\x80 \xc2\xb7"},
      {"a raw 8-bit byte", "\xff" "x", "\\xffx"},
      {"overlong '<' (C0 BC)", "\xc0\xbc", "\\xc0\\xbc"},
      {"overlong three-byte NUL", "\xe0\x80\x80", "\\xe0\\x80\\x80"},
      {"UTF-16 surrogate D800 as UTF-8", "\xed\xa0\x80", "\\xed\\xa0\\x80"},
      {"above U+10FFFF", "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},
      {"cut sequence at the end", "ok\xe2\x80", "ok\\xe2\\x80"},
      {"lead byte then '<'", "\xc3<", "\\xc3&lt;"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(html_text(c.input) == c.expected);
  }
}

TEST_CASE("html_text's output holds no markup character whatever the bytes", "[cli][html]") {
  // Every single byte and every pair of bytes: no '<', '>', '"', '\'' in
  // the output, and '&' only as the start of one of the references written.
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; b += 7) {
      std::string in{static_cast<char>(a), static_cast<char>(b)};
      std::string out = html_text(in);
      INFO(a << " " << b);
      REQUIRE(out.find_first_of("<>\"'") == std::string::npos);
      for (std::size_t at = out.find('&'); at != std::string::npos; at = out.find('&', at + 1)) {
        std::string tail = out.substr(at, 6);
        REQUIRE((tail.rfind("&amp;", 0) == 0 || tail.rfind("&lt;", 0) == 0 || tail.rfind("&gt;", 0) == 0 ||
                 tail.rfind("&quot;", 0) == 0 || tail.rfind("&#39;", 0) == 0));
      }
    }
}

TEST_CASE("append_html_text appends what html_text returns", "[cli][html]") {
  std::string page = "<td>";
  append_html_text(page, "a<b");
  CHECK(page == "<td>a&lt;b");
}
