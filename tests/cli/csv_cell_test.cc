// cli::csv_text_cell: text cells of `kistore export --format csv`.
#include <catch2/catch.hpp>

#include <string>

#include "cli/csv_cell.h"

TEST_CASE("csv_text_cell quotes as RFC 4180 and neutralises formulas", "[cli][csv]") {
  struct Case {
    const char* name;
    std::string input, expected;
  };
  const Case cases[] = {
      {"plain", "liger_tiled", "liger_tiled"},
      {"empty", "", ""},
      {"comma", "a,b", "\"a,b\""},
      {"quote", "say \"hi\"", "\"say \"\"hi\"\"\""},
      {"newline", "two\nlines", "\"two\nlines\""},
      {"carriage return inside", "a\rb", "\"a\rb\""},
      {"formula", "=HYPERLINK(\"http://x\",\"y\")", "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""},
      {"plus", "+1+2", "'+1+2"},
      {"minus", "-2+3", "'-2+3"},
      {"at", "@SUM(A1)", "'@SUM(A1)"},
      {"leading tab", "\t=1", "'\t=1"},
      {"leading carriage return", "\r=1", "\"'\r=1\""},
      {"equals later is text", "a=b", "a=b"},
      {"UTF-8 kept", "H100 \xc2\xb7 SXM", "H100 \xc2\xb7 SXM"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(kistore::cli::csv_text_cell(c.input) == c.expected);
  }
}
