// Long strings as the readers show them: cut after a bounded number of
// characters, marked with "…", so that what a reader prints or writes grows
// with the store's size and never with (runs sharing a document) × (the
// document's size): a 15 MiB implementation name named by 20 runs is shown
// as 200 characters in each of their rows.
//
// For the readers' display forms (tables, HTML, CSV, export rows, the rank
// documents); the exact forms (`show --canonical`, `cat`, the site's
// documents/ and runs/ JSON) never go through here. Pure functions of their
// arguments: safe from any thread; never fail (allocation aside).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "objects/json.h"

namespace kistore {

// The longest string a display form shows, in characters (code points).
inline constexpr std::size_t kShownChars = 200;
// The most characters cut_json keeps of one value's strings, all together.
inline constexpr std::size_t kShownJsonChars = 4096;
// What ends a string that was cut.
inline constexpr std::string_view kCutMark = "…";

// `text` when it has at most `max_chars` characters; otherwise its first
// `max_chars` characters followed by "…". Characters are UTF-8 code points
// (a byte that is not valid UTF-8 counts as one); a cut never splits one.
std::string cut_text(std::string_view text, std::size_t max_chars = kShownChars);

// `value` with each string (member names too) through cut_text(max_chars),
// and, once `budget` characters of strings and scalars were kept, the rest of
// each array replaced by one element "…" and the rest of each object by one
// member "…": "…". The result's canonical form is at most about
// budget + max_chars bytes plus its punctuation. Arrays and objects within
// arrays and objects count as they are walked; nothing is dropped while the
// budget lasts.
Json cut_json(const Json& value, std::size_t max_chars = kShownChars, std::size_t budget = kShownJsonChars);

// Whether code point `cp` is one a terminal, an editor or a log acts on
// rather than shows: the C1 controls (U+0080-U+009F), the line and paragraph
// separators (U+2028, U+2029), the bidirectional overrides and isolates
// (U+202A-U+202E, U+2066-U+2069). Every escaping of text for people
// (cli/output/terminal.h, cli/output/html.h, input_name) escapes these.
constexpr bool acts_on_display(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

// True when cut_json(value, max_chars, budget) differs from value.
bool json_needs_cut(const Json& value, std::size_t max_chars = kShownChars, std::size_t budget = kShownJsonChars);

}  // namespace kistore
