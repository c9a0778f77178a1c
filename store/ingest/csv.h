// Reading CSV tables (RFC 4180), record by record, for the importers.
//
// An importer (store/ingest/import_liger.h) turns a published table into documents;
// this reader gives it the records with the line each starts on, so that
// every message can name "<source>:<line>". It accepts LF or CRLF line ends,
// fields quoted with "" escapes (which may span lines), an optional UTF-8
// byte order mark, and a final line end or none. It reads from bytes held by
// the caller, or from a function that hands it the next bytes as it needs
// them (a file read a block at a time): no files of its own. The separator
// is ',' unless the caller names another (tritonbench writes ';').
//
// Every cell is UTF-8 text (RFC 3629, as parse_json has it): a record with a
// cell that is not is a kError naming "<source>:<line>:<column>" where the
// cell starts and the bytes found, and reading goes on at the next record.
//
// Whatever the input, a record holds at most kMaxCsvFields fields of at most
// kMaxCsvCellBytes each: a longer cell is a kError naming
// "<source>:<line>:<column>" where it starts, and what it would have held is
// never kept. An importer bounds its fields further where a value becomes a
// path segment (255 bytes: store/ingest/import_liger.h).
//
// Thread-safety: a CsvReader belongs to one thread; distinct readers are
// independent.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kistore {

// A cell is a value of one document member at most; documents are bounded by
// 16 MiB, and no published table has a cell near 1 MiB.
inline constexpr std::size_t kMaxCsvCellBytes = std::size_t{1} << 20;
inline constexpr std::size_t kMaxCsvFields = 1024;

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
  CsvReader(std::string_view text, std::string_view source, char separator = ',');

  // Reads what `fill` hands over: it writes up to `size` bytes at `buffer`
  // and returns how many, 0 at the end (it may throw; the throw passes
  // through next()). Memory stays bounded whatever the input's length: the
  // reader keeps only the bytes of the record it is reading (each cell cut at
  // kMaxCsvCellBytes) and one block.
  using Fill = std::function<std::size_t(char* buffer, std::size_t size)>;
  CsvReader(Fill fill, std::string_view source, char separator = ',');

  // Reads the next record into `record`. Never throws for malformed input:
  // on kError and kFatal, `error` holds "<source>:<line>: expected …, found …"
  // (with ":<column>" for an oversize cell) and record.line says where the
  // record began.
  CsvStatus next(CsvRecord& record, std::string& error);

 private:
  CsvStatus read_quoted(CsvRecord& record, std::string& error);
  std::string where(std::size_t line) const;
  void skip_line();
  bool at_line_end();
  void start_field(CsvRecord& record);
  void append(CsvRecord& record, char c);
  CsvStatus finish(const CsvRecord& record, std::string& error);
  // True when the byte at offset `at` exists (reading more from fill_ if
  // needed); char_at(at) is then that byte.
  bool have(std::size_t at);
  char char_at(std::size_t at) const { return text_[at - base_]; }

  std::string_view text_;  // the bytes from offset base_ on that are held
  std::string_view source_;
  char separator_ = ',';
  Fill fill_;              // empty: text_ is the whole input
  std::string buffer_;     // with fill_: its first filled_ bytes are what text_ views
  std::size_t filled_ = 0;
  std::size_t base_ = 0;   // offset of text_[0] in the input
  bool bom_checked_ = false;
  bool filled_all_ = false;
  // Offsets below are in the whole input (after a byte order mark).
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
  std::size_t line_start_ = 0;  // offset of the current line's first byte
  std::size_t field_line_ = 1, field_column_ = 1;  // where the current field starts
  std::vector<std::pair<std::size_t, std::size_t>> starts_;  // line and column of each field kept
  std::string oversize_;  // the first bound the current record broke, or ""
};

}  // namespace kistore
