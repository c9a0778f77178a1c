#include "objects/input.h"

#include <cstdint>
#include <cstdio>

#include "objects/bundle_line.h"
#include "objects/error.h"
#include "objects/shown_text.h"

namespace kistore {
namespace {

bool is_blank(std::string_view line) {
  for (char c : line)
    if (c != ' ' && c != '\t' && c != '\r') return false;
  return true;
}


void add_value(Json value, const Location& where, ParsedInput& out) {
  try {
    out.items.push_back(InputItem{where, parse_item(std::move(value), where)});
  } catch (const Error& e) {
    out.errors.push_back(InputError{where.source, e.what()});
  }
}

void parse_json_lines(std::string_view text, std::string_view source, ParsedInput& out) {
  std::size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    parse_input_line(text.substr(pos, end - pos), source, ++line_no, out);
    pos = end + 1;
  }
}

}  // namespace

std::string input_name(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (std::size_t slash = path.rfind('/'); slash != std::string_view::npos) path.remove_prefix(slash + 1);
  if (path.empty() || path == "." || path == "..") return "input";
  // Written into a commit message, which `git log` prints as it is: a line
  // break would add lines of the file's choosing (a trailer), an escape
  // sequence would reach a terminal. Control characters (C0, DEL), what a
  // display acts on (acts_on_display: C1, line separators, bidirectional
  // overrides) and bytes that are not UTF-8 are written as \xNN or \uNNNN,
  // and a backslash as two.
  std::string out;
  for (std::size_t i = 0; i < path.size();) {
    const auto c = static_cast<unsigned char>(path[i]);
    char hex[12];
    if (c == '\\') {
      out += "\\\\";
      ++i;
    } else if (c < 0x20 || c == 0x7F) {
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else if (std::uint32_t cp = 0; const std::size_t n = utf8_char(path, i, cp)) {
      if (acts_on_display(cp)) {
        std::snprintf(hex, sizeof hex, "\\u%04x", static_cast<unsigned>(cp));
        out += hex;
      } else {
        out.append(path.substr(i, n));
      }
      i += n;
    } else {  // not UTF-8
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
      ++i;
    }
  }
  return out;
}

// Whether `text` looks like JSON Lines: two or more non-blank lines, each
// starting (after spaces) with '{'.
bool looks_like_json_lines(std::string_view text) {
  std::size_t objects = 0, pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (is_blank(line)) continue;
    std::size_t first = line.find_first_not_of(" \t");
    if (line[first] != '{') return false;
    ++objects;
  }
  return objects >= 2;
}

void parse_input_line(std::string_view line, std::string_view source, std::size_t line_no, ParsedInput& out) {
  if (is_blank(line)) return;
  std::string where = std::string(source) + ":" + std::to_string(line_no);
  // Most lines are bundles that repeat earlier lines' documents; anything
  // else, bad lines included, takes the whole parse below.
  if (std::optional<Bundle> bundle = parse_bundle_line(line)) {
    out.items.push_back(InputItem{Location{std::move(where), ""}, std::move(*bundle)});
    return;
  }
  try {
    Json value = parse_json(line, source, line_no);
    add_value(std::move(value), Location{where, ""}, out);
  } catch (const Error& e) {
    out.errors.push_back(InputError{where, e.what()});
  }
}

InputFormat format_for_name(std::string_view name) {
  return name.ends_with(".jsonl") ? InputFormat::kJsonLines : InputFormat::kAuto;
}

std::variant<Bundle, Document> parse_item(Json value, const Location& where) {
  if (value.is_object() && value.find("kind")) return Document::from_json(std::move(value), where);
  if (value.is_object() && value.find("run")) return Bundle::from_json(std::move(value), where);
  std::string found = value.is_object() ? "an object with neither" : "a non-object value";
  throw InvalidInput(where.format("expected a document (with \"kind\") or a bundle (with \"run\"), found " + found));
}

void parse_input(std::string_view text, std::string_view source, InputFormat format,
                 ParsedInput& out) {
  if (format == InputFormat::kJsonLines) return parse_json_lines(text, source, out);
  Json value;
  try {
    value = parse_json(text, source);
  } catch (const Error& e) {
    if (format == InputFormat::kAuto && looks_like_json_lines(text))
      return parse_json_lines(text, source, out);
    out.errors.push_back(InputError{std::string(source), e.what()});
    return;
  }
  Location root{std::string(source), ""};
  if (value.is_array()) {
    Json::Array& items = value.as_array();
    for (std::size_t i = 0; i < items.size(); ++i) add_value(std::move(items[i]), root.child(i), out);
    return;
  }
  add_value(std::move(value), root, out);
}

}  // namespace kistore
