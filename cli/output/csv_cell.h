// Cells of the CSV that `kistore export` writes, and the rule that keeps the
// TSV listings' fields (cli/table.h) from running as spreadsheet formulas.
//
// RFC 4180 quoting, and the spreadsheet-injection rule of OWASP's CSV
// injection guidance: a text cell that a spreadsheet could read as a formula
// is written with a leading apostrophe, so that it shows as the text it is.
// "Could read as a formula": after any leading spaces (U+0020, U+00A0,
// U+3000, which some spreadsheets skip), it starts with = + - @, a tab or a
// carriage return, or with a full-width or small form of the four signs
// (＝ ＋ － ＠ U+FF1D U+FF0B U+FF0D U+FF20; ﹦ ﹢ ﹣ ﹫) or the minus sign
// U+2212, which spreadsheets may fold to the ASCII ones.
//
// A spreadsheet of another locale splits where this one does not: one that
// splits a comma-separated file at `;` or at tabs honours a quote only at
// the start of what it takes for a cell, so a quoted "a;=1+1" is two cells
// there, the second a formula. So the rule applies inside a cell too: after
// a `,` `;` tab or line break that a formula start follows, a ' is put. And a
// CSV cell holding a separator of any common locale (`,` `;` tab), a quote or
// a line break is quoted, so that a spreadsheet splitting at `,` or honouring
// quotes sees one cell.
//
// Numbers that kistore writes as numbers (JSON numbers in export's numeric
// columns, -1.5 and 2e-7 too) are written as they are: a spreadsheet reads
// them as numbers, never as formulas, and pandas reads them back exactly.
// Text is text: a name "-1.5" is written '-1.5 in a CSV text cell. Pure
// functions; never fail.
#pragma once

#include <string>
#include <string_view>

namespace kistore::cli {

// Whether a spreadsheet could read `text` as a formula (above).
bool looks_like_formula(std::string_view text);

// Whether `text` is a plain decimal number as kistore writes one
// (-?digits[.digits][e[+-]digits]): a spreadsheet reads it as that number.
bool plain_number(std::string_view text);

// `text` with "'" first when it looks like a formula, and after each
// character of `separators` that what follows it looks like one.
std::string neutralised(std::string_view text, std::string_view separators);

// `text` as one CSV cell: neutralised at `,` `;` tab, newline and carriage
// return, then quoted ("…", quotes doubled) when it holds `,` `;` a tab, a
// quote, a newline or a carriage return.
std::string csv_text_cell(std::string_view text);

}  // namespace kistore::cli
