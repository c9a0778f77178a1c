// cli::Table, tsv_field, parameters_text and natural_less: the text and TSV
// forms of the listing commands, and the short line that tells groups apart.
#include <catch2/catch.hpp>

#include <string>

#include "cli/table.h"
#include "cli/output/workload_text.h"
#include "objects/json.h"

using kistore::Json;
using kistore::parse_json;
using namespace kistore::cli;

TEST_CASE("tsv_field keeps a field on one line and in one column", "[cli][listing]") {
  using namespace std::string_literals;
  struct Case {
    const char* name;
    std::string input, expected;
  };
  const Case cases[] = {
      {"plain", "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090"},
      {"empty", "", ""},
      {"tab", "a\tb", "a\\tb"},
      {"newline and carriage return", "a\nb\rc", "a\\nb\\rc"},
      {"backslash doubled, so escapes read back", "C:\\t", "C:\\\\t"},
      {"ESC", "\x1b[2J", "\\x1b[2J"},
      {"NUL", "a\0b"s, "a\\x00" "b"},
      {"UTF-8 kept", "harness · pass", "harness · pass"},
      {"invalid UTF-8", "\xff", "\\xff"},
      {"not cut at 200 characters", std::string(300, 'x'), std::string(300, 'x')},
      {"formula", "=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK(\"http://x\",\"y\")"},
      {"plus", "+1+2", "'+1+2"},
      {"minus formula", "-2+3", "'-2+3"},
      {"at", "@SUM(A1)", "'@SUM(A1)"},
      {"leading tab, escaped", "\t=1", "'\\t=1"},
      {"leading carriage return, escaped", "\r=1", "'\\r=1"},
      {"space before equals", " =1", "' =1"},
      {"full-width equals U+FF1D", "\xef\xbc\x9d" "1+1", "'\xef\xbc\x9d" "1+1"},
      {"full-width plus U+FF0B", "\xef\xbc\x8b" "1", "'\xef\xbc\x8b" "1"},
      {"full-width minus U+FF0D", "\xef\xbc\x8d" "1", "'\xef\xbc\x8d" "1"},
      {"full-width at U+FF20", "\xef\xbc\xa0" "A1", "'\xef\xbc\xa0" "A1"},
      {"ideographic space before full-width equals", "\xe3\x80\x80\xef\xbc\x9d" "1", "'\xe3\x80\x80\xef\xbc\x9d" "1"},
      {"after a semicolon", "a;=1+1", "a;'=1+1"},
      {"after a comma and a space", "a, @SUM(A1)", "a,' @SUM(A1)"},
      {"after a comma, plain text", "bsz=8, T=1024", "bsz=8, T=1024"},
      {"a negative number stays a number", "-1.5", "-1.5"},
      {"an exponent stays a number", "-2e-07", "-2e-07"},
      {"a date stays", "2026-01-01", "2026-01-01"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(tsv_field(c.input) == c.expected);
  }
}

TEST_CASE("Table: TSV has a header and exact fields; text aligns by characters", "[cli][listing]") {
  Table t({"group", "gpu", "runs"}, {"runs"});
  t.add({"aa", "NVIDIA · B200", "5"});
  t.add({"b", "H100\tPCIe", "12"}, {"rerun reproduced"});
  t.add({"c"});  // missing cells are empty
  CHECK(t.tsv() == "group\tgpu\truns\naa\tNVIDIA · B200\t5\nb\tH100\\tPCIe\t12\nc\t\t\n");
  // "·" is one character: the columns line up on a terminal, not by bytes.
  CHECK(t.text() ==
        "aa  NVIDIA · B200   5\n"
        "b   H100\\tPCIe     12\n"
        "    rerun reproduced\n"
        "c\n");
  CHECK(t.text(true) ==
        "group  gpu            runs\n"
        "aa     NVIDIA · B200     5\n"
        "b      H100\\tPCIe       12\n"
        "    rerun reproduced\n"
        "c\n");
}

TEST_CASE("parameters_text: numbers, the strings that vary, the dtype last", "[cli][listing]") {
  struct Case {
    const char* name;
    const char* parameters;
    std::set<std::string> varying;
    const char* expected;
  };
  const Case cases[] = {
      {"Liger's tiled GeGLU",
       R"({"T":1024,"activation_type":"geglu","bsz":2,"dtype":"torch.bfloat16","hidden_size":2048,"intermediate_size":4096})",
       {},
       "T=1024 bsz=2 hidden=2048 inter=4096 bf16"},
      {"a string that tells groups apart",
       R"({"bsz":1,"model_config":"llama_2_7b","seq_len":2048})",
       {"model_config"},
       "bsz=1 seq=2048 model_config=llama_2_7b"},
      {"booleans that vary", R"({"bias":false,"H":4096})", {"bias"}, "H=4096 bias=false"},
      {"fractions and negative numbers as JSON writes them",
       R"({"eps":0.000001,"shift":-3})",
       {},
       "eps=0.000001 shift=-3"},
      {"fp32 and an unknown dtype", R"({"dtype":"torch.float32","acc":"torch.int8"})", {}, "acc=int8 fp32"},
      {"arrays and objects left out", R"({"dims":[1,2],"cfg":{"a":1},"M":4})", {"dims", "cfg"}, "M=4"},
      {"nothing to say", R"({})", {}, ""},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(parameters_text(parse_json(c.parameters, "test"), c.varying) == c.expected);
  }
  CHECK(parameters_text(Json()) == "");
}

TEST_CASE("natural_less compares runs of digits as numbers", "[cli][listing]") {
  CHECK(natural_less("T=1024 bsz=2", "T=2048 bsz=2"));
  CHECK(natural_less("T=2048", "T=16384"));
  CHECK_FALSE(natural_less("T=16384", "T=2048"));
  CHECK(natural_less("x9", "x10"));
  CHECK(natural_less("x007", "x8"));
  CHECK(natural_less("qwen2.5_7b", "qwen2.5_14b"));
  CHECK(natural_less("a", "ab"));
  CHECK_FALSE(natural_less("same", "same"));
  CHECK(natural_less("", "a"));
}
