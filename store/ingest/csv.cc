#include "store/ingest/csv.h"

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
    if (q == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
    append(record, q);
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

void CsvReader::start_field(CsvRecord& record) {
  if (record.fields.size() >= kMaxCsvFields && oversize_.empty())
    oversize_ = where(line_) + "expected at most " + std::to_string(kMaxCsvFields) + " fields in a record, found more";
  if (record.fields.size() < kMaxCsvFields) record.fields.emplace_back();
  field_line_ = line_;
  field_column_ = pos_ - line_start_ + 1;
}

void CsvReader::append(CsvRecord& record, char c) {
  std::string& field = record.fields.back();
  if (field.size() < kMaxCsvCellBytes) {
    field += c;
    return;
  }
  // Past the bound, the rest of the cell is read but not kept, so that the
  // error names the cell and reading goes on at the next record.
  if (oversize_.empty())
    oversize_ = std::string(source_) + ":" + std::to_string(field_line_) + ":" + std::to_string(field_column_) +
                ": field " + std::to_string(record.fields.size()) + ": expected a cell of at most " +
                std::to_string(kMaxCsvCellBytes) + " bytes, found a longer one";
}

CsvStatus CsvReader::finish(std::string& error) {
  if (oversize_.empty()) return CsvStatus::kRecord;
  error = std::move(oversize_);
  oversize_.clear();
  return CsvStatus::kError;
}

CsvStatus CsvReader::next(CsvRecord& record, std::string& error) {
  record.fields.clear();
  record.line = line_;
  if (pos_ >= text_.size()) return CsvStatus::kEnd;
  oversize_.clear();
  start_field(record);
  bool at_field_start = true;
  while (true) {
    if (pos_ >= text_.size()) return finish(error);
    char c = text_[pos_];
    if (at_field_start && c == '"') {
      if (CsvStatus s = read_quoted(record, error); s != CsvStatus::kRecord) return s;
      at_field_start = false;
      continue;
    }
    if (c == ',') {
      ++pos_;
      start_field(record);
      at_field_start = true;
      continue;
    }
    if (at_line_end()) {
      pos_ += (c == '\r') ? 2 : 1;
      ++line_;
      line_start_ = pos_;
      return finish(error);
    }
    if (c == '"') {
      error = where(line_) + "expected a field quoted from its first character, found a quote " +
              "inside unquoted field " + quoted_excerpt(record.fields.back() + '"');
      skip_line();
      return CsvStatus::kError;
    }
    append(record, c);
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
    line_start_ = pos_;
  }
}

}  // namespace kistore
