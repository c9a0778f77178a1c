// The RFC 4180 reader the importers share (store/ingest/csv.h), table-driven.
#include "store/ingest/csv.h"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace kistore {
namespace {

struct Read {
  std::vector<CsvRecord> records;
  std::vector<std::string> errors;
  CsvStatus last;
};

// Reads `text` whole (block 0), or handed over `block` bytes at a time, as
// `kistore import` reads a large or zstd-compressed file.
Read read_with(std::string_view text, std::size_t block, char separator = ',') {
  std::size_t pos = 0;
  CsvReader reader = block == 0 ? CsvReader(text, "t.csv", separator)
                                : CsvReader(
                                      [&](char* buffer, std::size_t size) {
                                        std::size_t n = std::min({size, block, text.size() - pos});
                                        std::memcpy(buffer, text.data() + pos, n);
                                        pos += n;
                                        return n;
                                      },
                                      "t.csv", separator);
  Read out;
  CsvRecord rec;
  std::string error;
  while (true) {
    out.last = reader.next(rec, error);
    if (out.last == CsvStatus::kEnd || out.last == CsvStatus::kFatal) {
      if (out.last == CsvStatus::kFatal) out.errors.push_back(error);
      return out;
    }
    if (out.last == CsvStatus::kError) out.errors.push_back(error);
    else out.records.push_back(rec);
  }
}

// What the whole text gives; and every case checks that reading it a block
// at a time, of any size, gives exactly the same records, lines and errors.
Read read_all(std::string_view text, char separator = ',') {
  Read whole = read_with(text, 0, separator);
  for (std::size_t block : {1, 2, 3, 7, 4096, 1 << 16, 1 << 21}) {
    INFO("read " << block << " bytes at a time");
    Read part = read_with(text, block, separator);
    CHECK(part.last == whole.last);
    CHECK(part.errors == whole.errors);
    REQUIRE(part.records.size() == whole.records.size());
    for (std::size_t i = 0; i < whole.records.size(); ++i) {
      CHECK(part.records[i].line == whole.records[i].line);
      CHECK(part.records[i].fields == whole.records[i].fields);
    }
  }
  return whole;
}

using Fields = std::vector<std::string>;

TEST_CASE("csv: records, fields and the line each starts on", "[csv]") {
  struct Case {
    const char* name;
    std::string text;
    std::vector<Fields> fields;
    std::vector<std::size_t> lines;
  };
  const std::vector<Case> cases = {
      {"empty text", "", {}, {}},
      {"one field", "a", {{"a"}}, {1}},
      {"LF", "a,b\nc,d\n", {{"a", "b"}, {"c", "d"}}, {1, 2}},
      {"CRLF", "a,b\r\nc,d\r\n", {{"a", "b"}, {"c", "d"}}, {1, 2}},
      {"no final line end", "a,b\nc,d", {{"a", "b"}, {"c", "d"}}, {1, 2}},
      {"byte order mark", "\xEF\xBB\xBF" "a,b\n", {{"a", "b"}}, {1}},
      {"empty fields", ",,\n", {{"", "", ""}}, {1}},
      {"quoted comma and quote", "\"a,\"\"b\"\"\",c\n", {{"a,\"b\"", "c"}}, {1}},
      {"quoted line break", "\"x\ny\",z\nnext\n", {{"x\ny", "z"}, {"next"}}, {1, 3}},
      {"a lone CR is data", "a\rb\n", {{"a\rb"}}, {1}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Read r = read_all(c.text);
    CHECK(r.errors.empty());
    REQUIRE(r.records.size() == c.fields.size());
    for (std::size_t i = 0; i < c.fields.size(); ++i) {
      CHECK(r.records[i].fields == c.fields[i]);
      CHECK(r.records[i].line == c.lines[i]);
    }
  }
}

TEST_CASE("csv: a malformed record is skipped with a message; reading goes on", "[csv][errors]") {
  struct Case {
    const char* name;
    std::string text;
    std::string error;
    std::vector<Fields> fields;  // the records read around it
  };
  const std::vector<Case> cases = {
      {"text after a closing quote", "a\n\"b\"x,c\nd\n",
       "t.csv:2: expected ',' or end of line after a closing quote, found \"x\"", {{"a"}, {"d"}}},
      {"a quote inside an unquoted field", "a\nb\"c\nd\n",
       "t.csv:2: expected a field quoted from its first character, found a quote inside unquoted field \"b\\\"\"",
       {{"a"}, {"d"}}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Read r = read_all(c.text);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0] == c.error);
    REQUIRE(r.records.size() == c.fields.size());
    for (std::size_t i = 0; i < c.fields.size(); ++i) CHECK(r.records[i].fields == c.fields[i]);
    CHECK(r.records.back().line == 3);
  }
}

TEST_CASE("csv: a cell that is not UTF-8 is an error naming line:column and the bytes; reading goes on",
          "[csv][errors]") {
  struct Case {
    const char* name;
    std::string text;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"an overlong '/' (0xC0 0xAF)", "a,b\n1,21\xC0\xAF\n3,4\n",
       "t.csv:2:3: field 2: expected UTF-8 text, found invalid UTF-8 byte 0xc0 at byte 3 of the cell"},
      {"a lone continuation byte", "a,b\n\x80,2\n3,4\n",
       "t.csv:2:1: field 1: expected UTF-8 text, found invalid UTF-8 byte 0x80 at byte 1 of the cell"},
      {"a surrogate encoded (0xED 0xA0 0x80)", "a,b\n1,x\xED\xA0\x80\n3,4\n",
       "t.csv:2:3: field 2: expected UTF-8 text, found invalid UTF-8 sequence 0xed 0xa0 at byte 2 of the cell"},
      {"cut short at a quoted cell's end, the cell spanning lines", "a,b\n1,\"x\ny\xE2\x82\"\n3,4\n",
       "t.csv:2:3: field 2: expected UTF-8 text, found truncated UTF-8 sequence 0xe2 0x82 at byte 4 of the cell"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Read r = read_all(c.text);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0] == c.error);
    REQUIRE(r.records.size() == 2);  // the header and the record after it
    CHECK(r.records[1].fields == Fields{"3", "4"});
  }
  // UTF-8 of every length is a cell like any other.
  Read ok = read_all("a,b\n\xC3\xA9,\xE2\x82\xAC\xF0\x9F\x98\x80\n");
  CHECK(ok.errors.empty());
  REQUIRE(ok.records.size() == 2);
  CHECK(ok.records[1].fields == Fields{"\xC3\xA9", "\xE2\x82\xAC\xF0\x9F\x98\x80"});
}

TEST_CASE("csv: an unterminated quoted field ends the reading, naming where it opened", "[csv][errors]") {
  Read r = read_all("a\nb,\"open\nmore\nstill\n");
  CHECK(r.last == CsvStatus::kFatal);
  REQUIRE(r.records.size() == 1);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0] == "t.csv:2: expected a closing quote for the field opened here, found end of file");
}

TEST_CASE("csv: a cell over 1 MiB is an error naming line:column, and reading goes on", "[csv][errors][limits]") {
  const std::string big(kMaxCsvCellBytes + 1, 'x');
  const std::string exact(kMaxCsvCellBytes, 'y');
  struct Case {
    const char* name;
    std::string text;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"unquoted, first field", "a,b\n" + big + ",c\nd,e\n",
       "t.csv:2:1: field 1: expected a cell of at most 1048576 bytes, found a longer one"},
      {"unquoted, third field", "a,b\nc,d," + big + "\nd,e\n",
       "t.csv:2:5: field 3: expected a cell of at most 1048576 bytes, found a longer one"},
      {"quoted, spanning lines", "a,b\nc,\"x\n" + big + "\"\nd,e\n",
       "t.csv:2:3: field 2: expected a cell of at most 1048576 bytes, found a longer one"},
      {"after a quoted field that spans lines", "a,b\n\"p\nq\",r," + big + "\nd,e\n",
       "t.csv:3:6: field 3: expected a cell of at most 1048576 bytes, found a longer one"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Read r = read_all(c.text);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0] == c.error);
    REQUIRE(r.records.size() == 2);
    CHECK(r.records[0].fields == Fields{"a", "b"});
    CHECK(r.records[1].fields == Fields{"d", "e"});
  }
  Read ok = read_all("a," + exact + "\n");
  CHECK(ok.errors.empty());
  REQUIRE(ok.records.size() == 1);
  CHECK(ok.records[0].fields[1].size() == kMaxCsvCellBytes);
}

TEST_CASE("csv: a record of more than 1024 fields is an error", "[csv][errors][limits]") {
  std::string wide(kMaxCsvFields, ',');  // 1025 fields
  Read r = read_all("a\n" + wide + "\nb\n");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0] == "t.csv:2: expected at most 1024 fields in a record, found more");
  REQUIRE(r.records.size() == 2);
  Read ok = read_all(std::string(kMaxCsvFields - 1, ',') + "\n");
  CHECK(ok.errors.empty());
  CHECK(ok.records.at(0).fields.size() == kMaxCsvFields);
}

}  // namespace
}  // namespace kistore

namespace kistore {
namespace {

TEST_CASE("csv: another separator (tritonbench writes ';')", "[csv]") {
  Read r = read_all("x_val;a-latency;a-gbps\r\n4096;0.5;(1.0, 2.0, 3.0)\r\n\"q;x\";;\r\n", ';');
  CHECK(r.errors.empty());
  REQUIRE(r.records.size() == 3);
  CHECK(r.records[1].fields == Fields{"4096", "0.5", "(1.0, 2.0, 3.0)"});
  CHECK(r.records[2].fields == Fields{"q;x", "", ""});
  Read bad = read_all("\"a\",b\n", ';');
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0] == "t.csv:1: expected ';' or end of line after a closing quote, found \",\"");
}

}  // namespace
}  // namespace kistore
