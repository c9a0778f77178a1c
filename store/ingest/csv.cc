#include "store/ingest/csv.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "objects/json.h"

namespace kistore {
namespace {

// How much a streaming reader asks its fill function for at a time.
constexpr std::size_t kBlockBytes = std::size_t{1} << 16;

}  // namespace

CsvReader::CsvReader(std::string_view text, std::string_view source, char separator)
    : text_(text), source_(source), separator_(separator) {
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);
  bom_checked_ = filled_all_ = true;
}

CsvReader::CsvReader(Fill fill, std::string_view source, char separator)
    : source_(source), separator_(separator), fill_(std::move(fill)) {}

bool CsvReader::have(std::size_t at) {
  while (at >= base_ + text_.size() || !bom_checked_) {
    if (filled_all_) {
      bom_checked_ = true;
      return at < base_ + text_.size();
    }
    // Nothing before pos_ is read again: keep only the bytes from there
    // (a byte or two of lookahead), so the buffer stays one block long.
    std::size_t keep_from = pos_ > base_ ? std::min(pos_ - base_, filled_) : 0;
    if (keep_from) {
      std::memmove(buffer_.data(), buffer_.data() + keep_from, filled_ - keep_from);
      filled_ -= keep_from;
      base_ += keep_from;
    }
    if (buffer_.size() - filled_ < kBlockBytes / 2) buffer_.resize(filled_ + kBlockBytes);
    std::size_t n = fill_(buffer_.data() + filled_, buffer_.size() - filled_);
    filled_ += n;
    if (n == 0) filled_all_ = true;
    if (!bom_checked_ && (filled_ >= 3 || filled_all_)) {
      if (std::string_view(buffer_.data(), filled_).substr(0, 3) == "\xEF\xBB\xBF") {
        std::memmove(buffer_.data(), buffer_.data() + 3, filled_ - 3);
        filled_ -= 3;
      }
      bom_checked_ = true;
    }
    text_ = std::string_view(buffer_.data(), filled_);
  }
  return true;
}

bool CsvReader::at_line_end() {
  char c = char_at(pos_);
  return c == '\n' || (c == '\r' && have(pos_ + 1) && char_at(pos_ + 1) == '\n');
}

// A field that starts with a quote, from that quote up to the separator or
// line end after its closing quote.
CsvStatus CsvReader::read_quoted(CsvRecord& record, std::string& error) {
  std::size_t quote_line = line_;
  ++pos_;
  while (true) {
    if (!have(pos_)) {
      error = where(quote_line) + "expected a closing quote for the field opened here, found end of file";
      return CsvStatus::kFatal;
    }
    char q = char_at(pos_);
    if (q == '"') {
      if (have(pos_ + 1) && char_at(pos_ + 1) == '"') {
        append(record, '"');
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
  if (have(pos_) && char_at(pos_) != separator_ && !at_line_end()) {
    error = where(line_) + "expected '" + std::string(1, separator_) +
            "' or end of line after a closing quote, found " + quoted_excerpt(std::string(1, char_at(pos_)));
    skip_line();
    return CsvStatus::kError;
  }
  return CsvStatus::kRecord;
}

void CsvReader::start_field(CsvRecord& record) {
  if (record.fields.size() >= kMaxCsvFields && oversize_.empty())
    oversize_ = where(line_) + "expected at most " + std::to_string(kMaxCsvFields) + " fields in a record, found more";
  field_line_ = line_;
  field_column_ = pos_ - line_start_ + 1;
  if (record.fields.size() < kMaxCsvFields) {
    record.fields.emplace_back();
    starts_.emplace_back(field_line_, field_column_);
  }
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

CsvStatus CsvReader::finish(const CsvRecord& record, std::string& error) {
  if (oversize_.empty()) {
    for (std::size_t i = 0; i < record.fields.size(); ++i) {
      const std::string& cell = record.fields[i];
      const std::size_t bad = first_invalid_utf8(cell);
      if (bad == std::string_view::npos) continue;
      error = std::string(source_) + ":" + std::to_string(starts_[i].first) + ":" + std::to_string(starts_[i].second) +
              ": field " + std::to_string(i + 1) + ": expected UTF-8 text, found " + describe_utf8_fault(cell, bad) +
              " at byte " + std::to_string(bad + 1) + " of the cell";
      return CsvStatus::kError;
    }
    return CsvStatus::kRecord;
  }
  error = std::move(oversize_);
  oversize_.clear();
  return CsvStatus::kError;
}

CsvStatus CsvReader::next(CsvRecord& record, std::string& error) {
  record.fields.clear();
  starts_.clear();
  record.line = line_;
  if (!have(pos_)) return CsvStatus::kEnd;
  oversize_.clear();
  start_field(record);
  bool at_field_start = true;
  while (true) {
    if (!have(pos_)) return finish(record, error);
    char c = char_at(pos_);
    if (at_field_start && c == '"') {
      if (CsvStatus s = read_quoted(record, error); s != CsvStatus::kRecord) return s;
      at_field_start = false;
      continue;
    }
    if (c == separator_) {
      ++pos_;
      start_field(record);
      at_field_start = true;
      continue;
    }
    if (at_line_end()) {
      pos_ += (c == '\r') ? 2 : 1;
      ++line_;
      line_start_ = pos_;
      return finish(record, error);
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
  while (have(pos_) && char_at(pos_) != '\n') ++pos_;
  if (have(pos_)) {
    ++pos_;
    ++line_;
    line_start_ = pos_;
  }
}

}  // namespace kistore
