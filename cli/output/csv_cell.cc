#include "cli/output/csv_cell.h"

namespace kistore::cli {
namespace {

// Leading characters some spreadsheets skip before looking for a formula.
constexpr std::string_view kSpaces[] = {" ", "\xc2\xa0" /* U+00A0 */, "\xe3\x80\x80" /* U+3000 */};
// What starts a formula: ASCII, then full-width (U+FF1D U+FF0B U+FF0D U+FF20),
// small (U+FE66 U+FE62 U+FE63 U+FE6B) and U+2212 MINUS SIGN.
constexpr std::string_view kStarts[] = {"=",
                                        "+",
                                        "-",
                                        "@",
                                        "\t",
                                        "\r",
                                        "\xef\xbc\x9d",
                                        "\xef\xbc\x8b",
                                        "\xef\xbc\x8d",
                                        "\xef\xbc\xa0",
                                        "\xef\xb9\xa6",
                                        "\xef\xb9\xa2",
                                        "\xef\xb9\xa3",
                                        "\xef\xb9\xab",
                                        "\xe2\x88\x92"};

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

bool looks_like_formula(std::string_view text) {
  for (bool skipped = true; skipped;) {
    skipped = false;
    for (std::string_view space : kSpaces)
      if (starts_with(text, space)) {
        text.remove_prefix(space.size());
        skipped = true;
      }
  }
  for (std::string_view start : kStarts)
    if (starts_with(text, start)) return true;
  return false;
}

bool plain_number(std::string_view text) {
  std::size_t i = 0;
  auto digits = [&] {
    std::size_t from = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i > from;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (!digits()) return false;
  if (i < text.size() && text[i] == '.' && (++i, !digits())) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == text.size();
}

std::string neutralised(std::string_view text, std::string_view separators) {
  std::string out;
  out.reserve(text.size() + 1);
  if (looks_like_formula(text)) out += '\'';
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (separators.find(text[i]) != std::string_view::npos && looks_like_formula(text.substr(i + 1))) out += '\'';
  }
  return out;
}

std::string csv_text_cell(std::string_view text) {
  std::string cell = neutralised(text, ",;\t\n\r");
  if (cell.find_first_of(",;\t\"\n\r") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char c : cell) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace kistore::cli
