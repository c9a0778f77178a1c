// The quick way through a bundle line (objects/bundle_line.h): the same
// bundle as the whole parse, from the first line and from repeats; nothing
// (so that the whole parse words the error) for every line that is not
// plainly a valid bundle.
#include "objects/bundle_line.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "objects/input.h"
#include "objects/json.h"

namespace kistore {
namespace {

const std::string kFixture = KISTORE_SOURCE_DIR "/tests/data/refs/seed-run-tiled-geglu-backward.json";

// The fixture bundle as one line (its JCS form: no whitespace at all).
std::string fixture_line() {
  std::ifstream in(kFixture, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return canonical(parse_json(text.str(), "fixture"));
}

void require_same(const Bundle& quick, const Bundle& whole) {
  REQUIRE(quick.documents().size() == whole.documents().size());
  for (std::size_t i = 0; i < whole.documents().size(); ++i) {
    const Document &a = quick.documents()[i], &b = whole.documents()[i];
    CHECK(a.kind() == b.kind());
    CHECK(a.digest() == b.digest());
    CHECK(a.canonical() == b.canonical());
    CHECK(a.metadata_canonical() == b.metadata_canonical());
    CHECK(a.body() == b.body());
  }
  CHECK(quick.external_roles() == whole.external_roles());
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  std::size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

TEST_CASE("parse_bundle_line gives the bundle that the whole parse gives, first and repeated") {
  const std::string line = fixture_line();
  Bundle whole = Bundle::from_json(parse_json(line, "f"), Location{"f:1", ""});
  // Spaces between members, and the roles in another order, change nothing.
  std::string spaced = " " + replace(line, ",\"protocol\":", " ,\t\"protocol\" :  ") + " \r";
  // Quotes, backslashes and brackets inside strings do not end a document's
  // text early (metadata is outside the digest, so the run still matches).
  std::string quoted = replace(line, "\"name\":\"liger-bench-do-bench-backward\"",
                               R"("name":"a \"}\" and \\","note":"\\\"]}","x":"\\")");
  Bundle whole_quoted = Bundle::from_json(parse_json(quoted, "f"), Location{"f:1", ""});
  CHECK(whole_quoted.documents()[1].metadata_canonical() != whole.documents()[1].metadata_canonical());
  for (const std::string& text : {quoted, quoted}) {
    std::optional<Bundle> quick = parse_bundle_line(text);
    REQUIRE(quick);
    require_same(*quick, whole_quoted);
  }
  for (const std::string& text : {line, line, spaced, spaced}) {
    std::optional<Bundle> quick = parse_bundle_line(text);
    REQUIRE(quick);
    require_same(*quick, whole);
  }
  CHECK(whole.external_roles() == std::vector<std::string>{"workload", "implementation"});
}

TEST_CASE("parse_bundle_line leaves every line that is not plainly a valid bundle to the whole parse") {
  const std::string line = fixture_line();
  REQUIRE(parse_bundle_line(line));  // and its documents are now kept
  const std::string protocol_at = "\"protocol\":{";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bad JSON inside a kept document's text", replace(line, protocol_at, protocol_at + "\"x\":tru,")},
      {"a duplicate member inside a document", replace(line, protocol_at, protocol_at + "\"kind\":1,")},
      {"text after the bundle", line + " x"},
      {"a second bundle on the line", line + line},
      {"a duplicate role", replace(line, "{\"environment\":", "{\"protocol\":{},\"environment\":")},
      {"an unknown member", replace(line, "\"protocol\":", "\"protocols\":")},
      {"a role's name written with an escape", replace(line, "\"protocol\":", "\"pr\\u006ftocol\":")},
      {"a role that is not an object", replace(line, "{\"environment\":", "{\"workload\":[],\"environment\":")},
      {"a document of the wrong kind", replace(line, "\"BenchmarkProtocol\"", "\"Workload\"")},
      {"a carried document that the run names by another digest", replace(line, "\"harness\":", "\"extra\":1,\"harness\":")},
      {"a missing required role", "{\"run\":" + line.substr(line.find("\"run\":") + 6, line.size() - line.find("\"run\":") - 7) + "}"},
      {"a NUL between members", replace(line, ",\"protocol\":", std::string(",\0\"protocol\":", 13))},
      {"a truncated line", line.substr(0, line.size() - 2)},
      {"an empty object", "{}"},
      {"not an object", "[]"},
      {"a document rather than a bundle", "{\"kind\":\"Workload\"}"},
      {"nesting deeper than the scan takes", replace(line, protocol_at, protocol_at + "\"x\":" + std::string(60, '[') + std::string(60, ']') + ",")},
  };
  for (const auto& [what, text] : cases) {
    INFO(what);
    CHECK_FALSE(parse_bundle_line(text));
  }
}

TEST_CASE("a bad line after good ones is still worded by the whole parse, with the line's own column") {
  const std::string line = fixture_line();
  ParsedInput out;
  parse_input_line(line, "in.jsonl", 1, out);
  std::string bad = replace(line, "\"protocol\":{", "\"protocol\":{\"x\":tru,");
  parse_input_line(bad, "in.jsonl", 2, out);
  REQUIRE(out.items.size() == 1);
  REQUIRE(out.errors.size() == 1);
  ParsedInput alone;
  parse_input(bad, "in.jsonl", InputFormat::kJson, alone);  // the whole parse, no quick way
  REQUIRE(alone.errors.size() == 1);
  std::string expected = alone.errors[0].message;
  CHECK(expected.starts_with("in.jsonl:1:"));
  CHECK(out.errors[0].message == "in.jsonl:2:" + expected.substr(std::string("in.jsonl:1:").size()));
  CHECK(out.errors[0].source == "in.jsonl:2");
}

TEST_CASE("input_name: a commit names an input by its file name, never its folders", "[input]") {
  CHECK(input_name("/home/ana/runs/a.json") == "a.json");
  CHECK(input_name("runs/b.jsonl") == "b.jsonl");
  CHECK(input_name("c.json") == "c.json");
  CHECK(input_name("/srv/exports/runs/") == "runs");
  CHECK(input_name("runs//") == "runs");
  CHECK(input_name("-") == "-");
  CHECK(input_name("/") == "input");
  CHECK(input_name("../..") == "input");
  CHECK(input_name("") == "input");
}

TEST_CASE("input_name: nothing of a file's name can add a line to a commit message or reach a terminal", "[input]") {
  // A name with a line break once added paragraphs (a trailer) of its choosing
  // to the commit body, and escape sequences reached `git log`'s terminal.
  CHECK(input_name("/x/a\n\nKistore-Op: rerun.json") == "a\\x0a\\x0aKistore-Op: rerun.json");
  CHECK(input_name("\x1b]0;PWNED\x07\x1b[2J.csv") == "\\x1b]0;PWNED\\x07\\x1b[2J.csv");
  CHECK(input_name("del\x7f\r.json") == "del\\x7f\\x0d.json");
  CHECK(input_name("c1\xc2\x9b.json") == "c1\\u009b.json");             // CSI as a C1 control
  CHECK(input_name("bidi\xe2\x80\xae.json") == "bidi\\u202e.json");     // right-to-left override
  CHECK(input_name("ls\xe2\x80\xa8.json") == "ls\\u2028.json");         // line separator
  CHECK(input_name("bad\xff\xc0\xaf.json") == "bad\\xff\\xc0\\xaf.json");  // not UTF-8
  CHECK(input_name("cut\xe2\x82") == "cut\\xe2\\x82");                 // a sequence cut short
  CHECK(input_name("back\\slash.json") == "back\\\\slash.json");
  // UTF-8 names are kept as they are.
  CHECK(input_name("r\xc3\xa9sultats-\xe2\x82\xac-\xf0\x9f\x98\x80.json") ==
        "r\xc3\xa9sultats-\xe2\x82\xac-\xf0\x9f\x98\x80.json");
}

}  // namespace
}  // namespace kistore
