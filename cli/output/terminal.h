// What reaches a person's terminal: text that came from data or from a remote
// (titles, names, notes, authors, paths, file names in errors, server
// messages), made harmless and bounded before it is printed.
//
// For every command that prints such text in words; --json output stays
// exact and never goes through here. Pure functions of their arguments:
// safe from any thread. They never fail (allocation aside).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kistore::cli {

// The longest field shown, in characters (code points, an escape counting as
// the characters it prints): a 1 MB title is cut to this with an ellipsis.
inline constexpr std::size_t kMaxFieldChars = 200;
// The bound for a whole message (an error line, a server's reply), which
// quotes several fields.
inline constexpr std::size_t kMaxMessageChars = 2000;

// `text` as a terminal may show it. Kept as is: printable ASCII and valid
// UTF-8 of printable characters. Escaped: C0 controls and DEL as \n, \t, \r
// or \xNN (ESC is \x1b), C1 controls (U+0080-U+009F), the line and paragraph
// separators (U+2028, U+2029) and the bidirectional overrides and isolates
// (U+202A-U+202E, U+2066-U+2069) as \u{NNNN}, and each
// byte of invalid UTF-8 (overlong forms, surrogates, > U+10FFFF included) as
// \xNN. Cut after `max` characters with "…" appended when longer. A backslash
// is kept as is, so the escapes are for the eye, not for parsing.
std::string shown(std::string_view text, std::size_t max = kMaxFieldChars);

// shown() with the message bound: for whole lines such as error messages.
inline std::string shown_message(std::string_view text) { return shown(text, kMaxMessageChars); }

// Text of several lines (show's pretty-printed document): each line through
// shown() with bound `max`, the newlines between them kept.
std::string shown_lines(std::string_view text, std::size_t max = kMaxMessageChars);

}  // namespace kistore::cli
