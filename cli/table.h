// A listing's rows as a person or a script reads them: the text and TSV forms
// of the listing commands (groups, ls, rank, log), chosen with --format.
//
// Text: one line per row, the columns aligned by the characters a terminal
// shows (not bytes), two spaces between them, every field through shown()
// (escaped, cut at kMaxFieldChars); padding only ever follows a field, so a
// field holds no spaces it did not have. TSV (--format tsv, for cut, awk,
// sort -t$'\t', spreadsheets): a header line naming the columns, then one line
// per row, fields separated by one tab, exact and never cut, with a backslash
// written as \\ and tab, newline, carriage return as \t, \n, \r (other control
// characters, bidirectional controls and invalid UTF-8 as shown() escapes
// them), so that each line is one row and each row splits into its columns;
// a field that a spreadsheet could read as a formula, or a part of one after
// a `,` or `;` that a spreadsheet splitting there would, gets a ' before it
// (cli/output/csv_cell.h: OWASP's rule), unless the field is a plain number.
// JSON (--json, or --format json) is each command's own document.
//
// Thread-safety: a Table belongs to one thread; tsv_field is pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/common.h"

namespace kistore::cli {

enum class ListFormat { kText, kTsv, kJson };

// Declares `--format FORMAT` (text, tsv or json) on a listing command,
// filling g.format. The help names the TSV columns: `columns`.
void add_format_option(CommandSpec* app, Globals& g, const std::string& columns);
// The form asked for: --json or --format json is kJson, --format tsv kTsv,
// else kText.
ListFormat list_format(const Globals& g);

// One field of a TSV line, as described above.
std::string tsv_field(std::string_view text);

class Table {
 public:
  // The columns' names: the TSV header. Text right-aligns the columns whose
  // name is in `right_aligned` (counts).
  explicit Table(std::vector<std::string> columns, std::vector<std::string> right_aligned = {});

  // A row of exactly one cell per column (missing cells are empty, extra ones
  // dropped); `below` are lines printed under the row in text only, indented
  // (rank's reruns).
  void add(std::vector<std::string> cells, std::vector<std::string> below = {});
  bool empty() const { return rows_.empty(); }

  // The rows as text (with the column names as a first line when `header`)
  // or as TSV (always with it), each line ending in "\n".
  std::string text(bool header = false) const;
  std::string tsv() const;
  std::string render(ListFormat format) const { return format == ListFormat::kTsv ? tsv() : text(); }

 private:
  struct Row {
    std::vector<std::string> cells;
    std::vector<std::string> below;
  };
  std::vector<std::string> columns_;
  std::vector<bool> right_;
  std::vector<Row> rows_;
};

}  // namespace kistore::cli
