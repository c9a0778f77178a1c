// Cells of the CSV that `kistore export` writes, for spreadsheets and pandas.
//
// RFC 4180 quoting, and the spreadsheet-injection rule: a text cell that a
// spreadsheet would read as a formula (starting with = + - @, or a tab or
// carriage return that some strip before looking) is written with a leading
// apostrophe, so that it shows as the text it is. Numbers that kistore formats
// itself are written as numbers. Pure functions; never fail.
#pragma once

#include <string>
#include <string_view>

namespace kistore::cli {

// `text` as one CSV cell: neutralised as above, then quoted ("…", quotes
// doubled) when it holds a comma, a quote, a newline or a carriage return.
std::string csv_text_cell(std::string_view text);

}  // namespace kistore::cli
