// Reading CSV tables (RFC 4180), record by record, for the importers.
//
// An importer (store/import_liger.h) turns a published table into documents;
// this reader gives it the records with the line each starts on, so that
// every message can name "<source>:<line>". It accepts LF or CRLF line ends,
// fields quoted with "" escapes (which may span lines), an optional UTF-8
// byte order mark, and a final line end or none. It reads from bytes held by
// the caller: no files.
//
// Thread-safety: a CsvReader belongs to one thread; distinct readers are
// independent.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kistore {

struct CsvRecord {
  std::size_t line = 0;             // 1-based line on which the record starts
  std::vector<std::string> fields;  // unquoted
};

enum class CsvStatus {
  kRecord,  // a record was read
  kEnd,     // no more records
  kError,   // a malformed record: skipped to the next line, reading may go on
  kFatal,   // an unterminated quoted field: nothing more can be read
};

class CsvReader {
 public:
  // Reads `text`, which must outlive the reader; `source` names it in messages.
  CsvReader(std::string_view text, std::string_view source);

  // Reads the next record into `record`. Never throws for malformed input:
  // on kError and kFatal, `error` holds "<source>:<line>: expected …, found …"
  // and record.line says where the record began.
  CsvStatus next(CsvRecord& record, std::string& error);

 private:
  CsvStatus read_quoted(CsvRecord& record, std::string& error);
  std::string where(std::size_t line) const;
  void skip_line();
  bool at_line_end() const;

  std::string_view text_;
  std::string_view source_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
};

}  // namespace kistore
