// Turning input text into documents and bundles.
//
// `kistore add` and `kistore digest` accept, per input: one bundle, one
// document, a JSON array of bundles and documents, or JSON Lines (one bundle
// or document per line). This file decides which it is and validates each
// item; reading files and folders is the caller's business (objects/ does no
// I/O).
//
// Thread-safety: reentrant.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "objects/document.h"

namespace kistore {

enum class InputFormat {
  kAuto,       // one JSON text; if that fails and the text has several lines
               // that each start an object, JSON Lines
  kJson,       // one JSON text
  kJsonLines,  // one JSON text per non-blank line
};

// InputFormat for a file name: ".jsonl" -> kJsonLines, else kAuto.
InputFormat format_for_name(std::string_view name);

// What a commit says of an input it came from: the file's own name, never
// the folders above it (a store's history is published, and a local path
// tells who and where: "/home/ana/runs/a.json" -> "a.json"; "runs/" ->
// "runs"; "-" -> "-"; a path of no name at all, such as "/", -> "input"),
// on one line and safe to print: control characters, bidirectional
// overrides and bytes that are not UTF-8 as \xNN or \uNNNN, "\" as "\\".
std::string input_name(std::string_view path);

// Whether `text` looks like JSON Lines: two or more non-blank lines, each
// starting (after spaces) with '{' (what kAuto falls back to).
bool looks_like_json_lines(std::string_view text);

struct InputItem {
  Location where;  // "file" or "file:line", and the pointer within it
  std::variant<Bundle, Document> value;
};

struct InputError {
  std::string source;   // "file:line" (JSON Lines) or "file"
  std::string message;  // the full message, naming source, position, expected and found
};

struct ParsedInput {
  std::vector<InputItem> items;
  std::vector<InputError> errors;
};

// Parses and validates one input, appending to `out`. Never throws for bad
// input: each bad item (or the whole text, if it is not JSON) becomes one
// InputError, and parsing continues with the next line or element.
void parse_input(std::string_view text, std::string_view source, InputFormat format,
                 ParsedInput& out);

// One line of JSON Lines (without its "\n"), line `line_no` (1-based) of
// `source`, appended to `out` as parse_input would: a blank line is skipped,
// a bad one becomes one InputError "<source>:<line>". For readers that
// stream a file line by line, so that no more than one line is held.
void parse_input_line(std::string_view line, std::string_view source, std::size_t line_no, ParsedInput& out);

// One JSON value as a bundle (has "run") or a document (has "kind").
// Throws Error(kInvalidInput).
std::variant<Bundle, Document> parse_item(Json value, const Location& where);

}  // namespace kistore
