#include "cli/table.h"

#include <algorithm>

#include "cli/output/csv_cell.h"
#include "cli/output/terminal.h"

namespace kistore::cli {
namespace {

// The characters a terminal shows for `text` (UTF-8 code points): what the
// text columns align by. shown() output holds valid UTF-8 only.
std::size_t display_width(std::string_view text) {
  std::size_t n = 0;
  for (char c : text)
    if ((static_cast<unsigned char>(c) & 0xc0) != 0x80) ++n;
  return n;
}

}  // namespace

void add_format_option(CommandSpec* app, Globals& g, const std::string& columns) {
  app->add_option("--format", g.format,
                  "text (the default), tsv (for scripts: a header line, then one line per row, its fields "
                  "separated by tabs: " +
                      columns + "; a field a spreadsheet could run as a formula, = + - @ first, gets a ' first) or json "
                                "(as --json)")
      ->type_name("FORMAT")
      ->choices({"text", "tsv", "json"});
}

ListFormat list_format(const Globals& g) {
  if (g.json || g.format == "json") return ListFormat::kJson;
  return g.format == "tsv" ? ListFormat::kTsv : ListFormat::kText;
}

std::string tsv_field(std::string_view text) {
  // Not split at tabs or line breaks, which are escaped below; a spreadsheet
  // that splits at `,` or `;` would start a cell after them.
  const std::string safe = plain_number(text) ? std::string(text) : neutralised(text, ",;");
  std::string doubled;
  doubled.reserve(safe.size());
  for (char c : safe) {
    if (c == '\\') doubled += '\\';
    doubled += c;
  }
  return shown(doubled, std::string::npos);
}

Table::Table(std::vector<std::string> columns, std::vector<std::string> right_aligned)
    : columns_(std::move(columns)), right_(columns_.size(), false) {
  for (std::size_t i = 0; i < columns_.size(); ++i)
    right_[i] = std::find(right_aligned.begin(), right_aligned.end(), columns_[i]) != right_aligned.end();
}

void Table::add(std::vector<std::string> cells, std::vector<std::string> below) {
  cells.resize(columns_.size());
  rows_.push_back(Row{std::move(cells), std::move(below)});
}

std::string Table::text(bool header) const {
  std::vector<std::vector<std::string>> shown_rows;
  std::vector<std::size_t> width(columns_.size(), 0);
  if (header)
    for (std::size_t i = 0; i < columns_.size(); ++i) width[i] = display_width(columns_[i]);
  for (const Row& row : rows_) {
    std::vector<std::string>& cells = shown_rows.emplace_back();
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      cells.push_back(shown(row.cells[i]));
      width[i] = std::max(width[i], display_width(cells.back()));
    }
  }
  auto line_of = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      const std::string& cell = cells[i];
      std::string pad(width[i] - display_width(cell), ' ');
      if (i) line += "  ";
      line += right_[i] ? pad + cell : cell + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::string out = header ? line_of(columns_) : "";
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    out += line_of(shown_rows[r]);
    for (const std::string& extra : rows_[r].below) out += "    " + shown_message(extra) + "\n";
  }
  return out;
}

std::string Table::tsv() const {
  std::string out;
  for (std::size_t i = 0; i < columns_.size(); ++i) out.append(i ? "\t" : "").append(columns_[i]);
  out += "\n";
  for (const Row& row : rows_) {
    for (std::size_t i = 0; i < columns_.size(); ++i) out.append(i ? "\t" : "").append(tsv_field(row.cells[i]));
    out += "\n";
  }
  return out;
}

}  // namespace kistore::cli
