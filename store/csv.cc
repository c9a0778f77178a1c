#include "store/csv.h"

#include "objects/json.h"

namespace kistore {

CsvReader::CsvReader(std::string_view text, std::string_view source) : text_(text), source_(source) {
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);
}

bool CsvReader::at_line_end() const {
  char c = text_[pos_];
  return c == '\n' || (c == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n');
}

// A field that starts with a quote, from that quote up to the separator or
// line end after its closing quote.
CsvStatus CsvReader::read_quoted(CsvRecord& record, std::string& error) {
  std::size_t quote_line = line_;
  ++pos_;
  while (true) {
    if (pos_ >= text_.size()) {
      error = where(quote_line) + "expected a closing quote for the field opened here, found end of file";
      return CsvStatus::kFatal;
    }
    char q = text_[pos_];
    if (q == '"') {
      if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
        record.fields.back() += '"';
        pos_ += 2;
        continue;
      }
      ++pos_;
      break;
    }
    if (q == '\n') ++line_;
    record.fields.back() += q;
    ++pos_;
  }
  // After a closing quote: a separator or the end of the record.
  if (pos_ < text_.size() && text_[pos_] != ',' && !at_line_end()) {
    error = where(line_) + "expected ',' or end of line after a closing quote, found " +
            quoted_excerpt(std::string_view(&text_[pos_], 1));
    skip_line();
    return CsvStatus::kError;
  }
  return CsvStatus::kRecord;
}

CsvStatus CsvReader::next(CsvRecord& record, std::string& error) {
  record.fields.assign(1, std::string());
  record.line = line_;
  if (pos_ >= text_.size()) return CsvStatus::kEnd;
  bool at_field_start = true;
  while (true) {
    if (pos_ >= text_.size()) return CsvStatus::kRecord;
    char c = text_[pos_];
    if (at_field_start && c == '"') {
      if (CsvStatus s = read_quoted(record, error); s != CsvStatus::kRecord) return s;
      at_field_start = false;
      continue;
    }
    if (c == ',') {
      record.fields.emplace_back();
      ++pos_;
      at_field_start = true;
      continue;
    }
    if (at_line_end()) {
      pos_ += (c == '\r') ? 2 : 1;
      ++line_;
      return CsvStatus::kRecord;
    }
    if (c == '"') {
      error = where(line_) + "expected a field quoted from its first character, found a quote " +
              "inside unquoted field " + quoted_excerpt(record.fields.back() + '"');
      skip_line();
      return CsvStatus::kError;
    }
    record.fields.back() += c;
    ++pos_;
    at_field_start = false;
  }
}

std::string CsvReader::where(std::size_t line) const {
  return std::string(source_) + ":" + std::to_string(line) + ": ";
}

void CsvReader::skip_line() {
  while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
  if (pos_ < text_.size()) {
    ++pos_;
    ++line_;
  }
}

}  // namespace kistore
