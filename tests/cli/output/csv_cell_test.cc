// cli::csv_text_cell: text cells of `kistore export --format csv`.
#include <catch2/catch.hpp>

#include <string>

#include "cli/output/csv_cell.h"

TEST_CASE("csv_text_cell quotes as RFC 4180 and neutralises formulas", "[cli][csv]") {
  struct Case {
    const char* name;
    std::string input, expected;
  };
  const Case cases[] = {
      {"plain", "liger_tiled", "liger_tiled"},
      {"empty", "", ""},
      {"comma", "a,b", "\"a,b\""},
      {"semicolon (a ;-locale separator)", "a;b", "\"a;b\""},
      {"semicolon before a formula", "a;=1+1", "\"a;'=1+1\""},
      {"comma and space before a formula", "b, @SUM(A1)", "\"b,' @SUM(A1)\""},
      {"tab before a formula", "c\t+1", "\"c\t'+1\""},
      {"line break before a formula", "d\n-1+1", "\"d\n'-1+1\""},
      {"comma before a line break before a formula", "e,\n=1", "\"e,\n'=1\""},
      {"semicolon before full-width equals", "f;\xef\xbc\x9d" "1", "\"f;'\xef\xbc\x9d" "1\""},
      {"comma before a number", "g,-1", "\"g,'-1\""},
      {"comma before text", "bsz=8, T=1024", "\"bsz=8, T=1024\""},
      {"tab inside", "a\tb", "\"a\tb\""},
      {"quote", "say \"hi\"", "\"say \"\"hi\"\"\""},
      {"newline", "two\nlines", "\"two\nlines\""},
      {"carriage return inside", "a\rb", "\"a\rb\""},
      {"formula", "=HYPERLINK(\"http://x\",\"y\")", "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""},
      {"formula, comma, line break, quote", "=HYPERLINK(\"http://x\",\"y\"),\n\"q\"",
       "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\"),\n\"\"q\"\"\""},
      {"plus", "+1+2", "'+1+2"},
      {"minus", "-2+3", "'-2+3"},
      {"a negative number as text", "-1.5", "'-1.5"},
      {"at", "@SUM(A1)", "'@SUM(A1)"},
      {"leading tab", "\t=1", "\"'\t'=1\""},
      {"leading carriage return", "\r=1", "\"'\r'=1\""},
      {"leading newline (not a formula start), then one", "\n=1", "\"\n'=1\""},
      {"space before equals", " =1+1", "' =1+1"},
      {"spaces before at", "   @SUM(A1)", "'   @SUM(A1)"},
      {"no-break space before minus", "\xc2\xa0-1+1", "'\xc2\xa0-1+1"},
      {"ideographic space before plus", "\xe3\x80\x80+1", "'\xe3\x80\x80+1"},
      {"full-width equals U+FF1D", "\xef\xbc\x9d" "1+1", "'\xef\xbc\x9d" "1+1"},
      {"full-width plus U+FF0B", "\xef\xbc\x8b" "1", "'\xef\xbc\x8b" "1"},
      {"full-width minus U+FF0D", "\xef\xbc\x8d" "1", "'\xef\xbc\x8d" "1"},
      {"full-width at U+FF20", "\xef\xbc\xa0SUM(A1)", "'\xef\xbc\xa0SUM(A1)"},
      {"space before full-width equals", " \xef\xbc\x9d" "1", "' \xef\xbc\x9d" "1"},
      {"small equals U+FE66", "\xef\xb9\xa6" "1", "'\xef\xb9\xa6" "1"},
      {"minus sign U+2212", "\xe2\x88\x92" "1", "'\xe2\x88\x92" "1"},
      {"spaces alone", "  ", "  "},
      {"space then text", " a=b", " a=b"},
      {"equals later is text", "a=b", "a=b"},
      {"apostrophe first stays", "'=1", "'=1"},
      {"UTF-8 kept", "H100 \xc2\xb7 SXM", "H100 \xc2\xb7 SXM"},
      {"other full-width text kept", "\xef\xbc\xa1" "100", "\xef\xbc\xa1" "100"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(kistore::cli::csv_text_cell(c.input) == c.expected);
  }
}

TEST_CASE("plain_number: the numbers kistore writes, and nothing else", "[cli][csv]") {
  struct Case {
    const char* text;
    bool number;
  };
  const Case cases[] = {
      {"0", true},      {"12", true},        {"-1.5", true},   {"2e-7", true},  {"1.25E+21", true},
      {"-0.001", true}, {"", false},         {"-", false},     {"1.", false},   {".5", false},
      {"1e", false},    {"1+1", false},      {"-1+1", false},  {"--1", false},  {" 1", false},
      {"1 ", false},    {"=1", false},       {"0x10", false},  {"-1e+5", true}, {"1,5", false},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    CHECK(kistore::cli::plain_number(c.text) == c.number);
  }
}
