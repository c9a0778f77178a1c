#include "objects/json.h"
#include "objects/json_large.h"

#include <bit>
#include <catch2/catch.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "objects/digest.h"
#include "objects/error.h"

namespace Catch {
template <>
struct StringMaker<kistore::Json> {
  static std::string convert(const kistore::Json& j) { return kistore::canonical(j); }
};
}  // namespace Catch

namespace kistore {
namespace {

std::string golden(const std::string& name) {
  const std::string path = std::string(KISTORE_SOURCE_DIR) + "/tests/data/jcs/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open golden file " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string canon(std::string_view text) { return canonical(parse_json(text, "test")); }

// The message parse_json throws for `text`, or "" when it parses.
std::string parse_error(std::string_view text, std::size_t first_line = 1) {
  try {
    parse_json(text, "in.json", first_line);
  } catch (const Error& e) {
    REQUIRE(e.code() == ErrorCode::kInvalidInput);
    return e.what();
  }
  return "";
}

// ---------------------------------------------------------------------------
// Golden files: RFC 8785's own examples and KernelIndex's published digests.

TEST_CASE("RFC 8785 3.2.2 example canonicalizes to the bytes of 3.2.4", "[json][jcs]") {
  const Json doc = parse_json(golden("rfc8785-3.2.2.input.json"), "rfc8785-3.2.2.input.json");
  CHECK(canonical(doc) == golden("rfc8785-3.2.2.canonical"));
}

TEST_CASE("RFC 8785 3.2.3 sorts member names by UTF-16 code units", "[json][jcs]") {
  const Json doc = parse_json(golden("rfc8785-3.2.3.input.json"), "rfc8785-3.2.3.input.json");
  CHECK(canonical(doc) == golden("rfc8785-3.2.3.canonical"));
}

TEST_CASE("pretty form of the RFC 8785 3.2.2 example", "[json][pretty]") {
  const Json doc = parse_json(golden("rfc8785-3.2.2.input.json"), "rfc8785-3.2.2.input.json");
  CHECK(pretty(doc) == golden("rfc8785-3.2.2.pretty"));
}

TEST_CASE("KernelIndex seed bundle: documents hash to their published digests", "[json][jcs]") {
  const Json bundle = parse_json(golden("kernelindex-seed-bundle.json"), "seed");
  const auto digest_of = [&](const char* role) {
    Json doc = *bundle.find(role);
    doc.erase("metadata");
    return Digest::of(canonical(doc)).str();
  };
  CHECK(digest_of("run") ==
        "sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0");
  const Json& spec = *bundle.find("run")->find("spec");
  CHECK(digest_of("protocol") == spec.find("protocolDigest")->as_string());
  CHECK(digest_of("environment") == spec.find("environmentDigest")->as_string());
}

// ---------------------------------------------------------------------------
// Numbers

TEST_CASE("format_number: RFC 8785 Appendix B", "[json][number]") {
  struct Row {
    std::uint64_t ieee;
    const char* text;
  };
  const Row rows[] = {
      {0x0000000000000000, "0"},
      {0x8000000000000000, "0"},
      {0x0000000000000001, "5e-324"},
      {0x8000000000000001, "-5e-324"},
      {0x7fefffffffffffff, "1.7976931348623157e+308"},
      {0xffefffffffffffff, "-1.7976931348623157e+308"},
      {0x4340000000000000, "9007199254740992"},
      {0xc340000000000000, "-9007199254740992"},
      {0x4430000000000000, "295147905179352830000"},
      {0x44b52d02c7e14af5, "9.999999999999997e+22"},
      {0x44b52d02c7e14af6, "1e+23"},
      {0x44b52d02c7e14af7, "1.0000000000000001e+23"},
      {0x444b1ae4d6e2ef4e, "999999999999999700000"},
      {0x444b1ae4d6e2ef4f, "999999999999999900000"},
      {0x444b1ae4d6e2ef50, "1e+21"},
      {0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
      {0x3eb0c6f7a0b5ed8d, "0.000001"},
      {0x41b3de4355555553, "333333333.3333332"},
      {0x41b3de4355555554, "333333333.33333325"},
      {0x41b3de4355555555, "333333333.3333333"},
      {0x41b3de4355555556, "333333333.3333334"},
      {0x41b3de4355555557, "333333333.33333343"},
      {0xbecbf647612f3696, "-0.0000033333333333333333"},
      {0x43143ff3c1cb0959, "1424953923781206.2"},
  };
  for (const Row& row : rows) {
    const double value = std::bit_cast<double>(row.ieee);
    CAPTURE(row.ieee, row.text);
    CHECK(format_number(value) == row.text);
    // And back: the parser reads the text as the same double (zero loses its sign).
    const Json parsed = parse_json(row.text, "appendix-b");
    CHECK(std::bit_cast<std::uint64_t>(parsed.as_number()) ==
          (value == 0 ? 0 : row.ieee));
  }
}

TEST_CASE("format_number lays out ECMAScript Number::toString", "[json][number]") {
  struct Row {
    double value;
    const char* text;
  };
  const Row rows[] = {
      {1, "1"},
      {-1, "-1"},
      {0.1, "0.1"},
      {1.25, "1.25"},
      {-1.5, "-1.5"},
      {4739072, "4739072"},
      {1e20, "100000000000000000000"},
      {1e21, "1e+21"},
      {1.5e21, "1.5e+21"},
      {123456789012345678901234.0, "1.2345678901234569e+23"},
      {1e-6, "0.000001"},
      {1.234e-6, "0.000001234"},
      {1e-7, "1e-7"},
      {1.5e-7, "1.5e-7"},
      {-1.5e300, "-1.5e+300"},
      {4094.1111111111113, "4094.1111111111113"},
      {0.30000000000000004, "0.30000000000000004"},
      {123.456, "123.456"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.text);
    CHECK(format_number(row.value) == row.text);
  }
}

TEST_CASE("format_number rejects NaN and infinities", "[json][number]") {
  CHECK_THROWS_AS(format_number(std::numeric_limits<double>::quiet_NaN()), std::logic_error);
  CHECK_THROWS_AS(format_number(std::numeric_limits<double>::infinity()), std::logic_error);
  CHECK_THROWS_AS(format_number(-std::numeric_limits<double>::infinity()), std::logic_error);
  CHECK_THROWS_AS(canonical(Json(Json::Array{Json(std::nan(""))})), std::logic_error);
}

TEST_CASE("format_number round-trips every double it is given", "[json][number]") {
  std::mt19937_64 rng(8785);
  for (int i = 0; i < 200000; ++i) {
    const double value = std::bit_cast<double>(rng());
    if (!std::isfinite(value)) continue;
    const std::string text = format_number(value);
    double back = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), back);
    CAPTURE(text);
    REQUIRE(r.ec == std::errc());
    REQUIRE(r.ptr == text.data() + text.size());
    REQUIRE(back == value);
  }
}

TEST_CASE("numbers are parsed as doubles and written the JCS way", "[json][number]") {
  struct Row {
    const char* input;
    const char* canonical;
  };
  const Row rows[] = {
      {"4739072.0", "4739072"},
      {"9007199254740993", "9007199254740992"},
      {"4094.1111111111113", "4094.1111111111113"},
      {"-0.0", "0"},
      {"-0", "0"},
      {"0.0", "0"},
      {"1e+2", "100"},
      {"1E-7", "1e-7"},
      {"18446744073709551616", "18446744073709552000"},
      {"-9223372036854775809", "-9223372036854776000"},
      {"1.7976931348623157e308", "1.7976931348623157e+308"},
      {"1.7976931348623158e308", "1.7976931348623157e+308"},  // rounds down to DBL_MAX
      // Below half the smallest subnormal: zero, as ECMAScript reads it. (RapidJSON's
      // own conversion gives 5e-324 for the first of these two; see parse_json.)
      {"1e-400", "0"},
      {"-1e-400", "0"},
      {"2.4703282292062327e-324", "0"},
      {"2.4703282292062328e-324", "5e-324"},
      {"0.00000000000000000000000000000000000000000000000001e100", "1e+50"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.input);
    CHECK(canon(row.input) == row.canonical);
  }
  // Overflow is an error (see the bad-input table for the messages). RapidJSON's own
  // conversion would have let "10e308" through as -3.09e-308 and "1.8e308" as NaN.
  for (const char* input : {"1E400", "10e308", "1.8e308", "-1.7976931348623159e308"}) {
    CAPTURE(input);
    CHECK_THROWS_AS(parse_json(input, "n"), Error);
  }
}

// ---------------------------------------------------------------------------
// Strings and member order

TEST_CASE("strings escape only quote, backslash and U+0000-U+001F", "[json][string]") {
  const char* controls[32] = {
      "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007",
      "\\b",     "\\t",     "\\n",     "\\u000b", "\\f",     "\\r",     "\\u000e", "\\u000f",
      "\\u0010", "\\u0011", "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017",
      "\\u0018", "\\u0019", "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
  };
  for (int c = 0; c < 32; ++c) {
    std::string out;
    write_json_string(std::string(1, static_cast<char>(c)), out);
    CAPTURE(c);
    CHECK(out == std::string("\"") + controls[c] + "\"");
  }
  struct Row {
    std::string raw;
    std::string written;
  };
  const Row rows[] = {
      {"\"", "\"\\\"\""},
      {"\\", "\"\\\\\""},
      {"/", "\"/\""},
      {"\x7f", "\"\x7f\""},
      {"\xc3\xa9", "\"\xc3\xa9\""},                   // é
      {"\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""},   // U+1F600
      {"a\"b\\c\nd", "\"a\\\"b\\\\c\\nd\""},
      {"", "\"\""},
  };
  for (const Row& row : rows) {
    std::string out;
    write_json_string(row.raw, out);
    CHECK(out == row.written);
  }
  CHECK(canon(R"(["\u00e9\/\u007F\u20AC"])") == "[\"\xc3\xa9/\x7f\xe2\x82\xac\"]");
}

TEST_CASE("escaping finds special characters at every position of long strings", "[json][string]") {
  const std::string specials[] = {"\"", "\\", std::string(1, '\0'), "\x1f", "\n"};
  const std::string escaped[] = {"\\\"", "\\\\", "\\u0000", "\\u001f", "\\n"};
  const std::string filler = "ab\xc3\xa9\x7f /~\xf0\x9f\x98\x80xyz0123456789";  // no escapes
  for (std::size_t k = 0; k < std::size(specials); ++k) {
    for (std::size_t at = 0; at <= filler.size(); ++at) {
      const std::string raw = filler.substr(0, at) + specials[k] + filler.substr(at);
      std::string out;
      write_json_string(raw, out);
      CAPTURE(k, at);
      CHECK(out == "\"" + filler.substr(0, at) + escaped[k] + filler.substr(at) + "\"");
    }
  }
  std::string out;
  write_json_string(filler, out);
  CHECK(out == "\"" + filler + "\"");
}

TEST_CASE("member order is UTF-16 order, not UTF-8 byte order", "[json][string]") {
  // U+10000 is D800 DC00 in UTF-16: before U+E000 and U+FFFF, although its
  // UTF-8 bytes (F0 ...) sort after theirs (EE ..., EF ...).
  CHECK(canon(R"({"\uffff":1,"\ud800\udc00":2,"\ue000":3,"\ud7ff":4})") ==
        "{\"\xed\x9f\xbf\":4,\"\xf0\x90\x80\x80\":2,\"\xee\x80\x80\":3,\"\xef\xbf\xbf\":1}");
  // A name sorts after its own prefix; code units compare unsigned.
  CHECK(canon(R"({"ab":1,"a":2,"":3,"\u0080":4,"b":5})") ==
        "{\"\":3,\"a\":2,\"ab\":1,\"b\":5,\"\xc2\x80\":4}");
}

TEST_CASE("canonical output has no whitespace and keeps array order", "[json][jcs]") {
  CHECK(canon(" { \"b\" : [ 3 , 1 , 2 ] ,\n\t\"a\" : { } , \"c\" : [ ] } ") ==
        R"({"a":{},"b":[3,1,2],"c":[]})");
  CHECK(canon("true") == "true");
  CHECK(canon("null") == "null");
  CHECK(canon("\"x\"") == "\"x\"");
}

TEST_CASE("write_canonical appends", "[json][jcs]") {
  std::string out = "prefix:";
  write_canonical(parse_json("[1,2]", "t"), out);
  CHECK(out == "prefix:[1,2]");
}

// ---------------------------------------------------------------------------
// Bad input: one row per case, with the location the message must name.

TEST_CASE("bad input is rejected with source:line:column and what was found", "[json][errors]") {
  struct Row {
    const char* name;
    std::string input;
    std::size_t first_line;
    std::string message;  // expected substring
  };
  const std::string deep65 = std::string(65, '[') + std::string(65, ']');
  std::string deep65_objects;
  for (int i = 0; i < 65; ++i) deep65_objects += "{\"a\":";
  deep65_objects += "1" + std::string(65, '}');
  const Row rows[] = {
      {"missing comma", "{\n  \"a\": 1\n  \"b\": 2\n}", 1,
       "in.json:3:3: expected ',' or '}' after an object member, found '\"'"},
      {"junk in array", "[1, 2 x]", 1, "in.json:1:7: expected ',' or ']' after an array element, found 'x'"},
      {"misspelt literal", "[tru]", 1, "in.json:1:2: expected a JSON value"},
      {"misspelt literal found", "[tru]", 1, "found 'tru'"},
      {"NaN", "NaN", 1, "in.json:1:1: expected a JSON value"},
      {"single quotes", "['a']", 1, "in.json:1:2: expected a JSON value"},
      {"trailing comma in object", "{\"a\":1,}", 1, "in.json:1:8: expected a member name in double quotes, found '}'"},
      {"trailing comma in array", "[1,]", 1, "in.json:1:4: expected a JSON value"},
      {"missing colon", "{\"a\" 1}", 1, "in.json:1:6: expected ':' after a member name, found '1'"},
      {"name not a string", "{1:2}", 1, "in.json:1:2: expected a member name in double quotes, found '1'"},
      {"no fraction digits", "[1.]", 1, "in.json:1:4: expected a digit after the decimal point, found ']'"},
      {"no exponent digits", "[1e]", 1, "in.json:1:4: expected a digit in the exponent, found ']'"},
      {"lone minus", "[-]", 1, "in.json:1:2: expected a JSON value"},
      {"unterminated string", "\"abc", 1, "in.json:1:5: expected '\"' to close the string, found end of input"},
      {"raw tab in string", "\"a\tb\"", 1, "in.json:1:3: expected a character allowed in a string"},
      {"raw tab found", "\"a\tb\"", 1, "found control character U+0009"},
      {"raw NUL in string", std::string("\"a\0b\"", 5), 1, "in.json:1:3: expected a character allowed in a string (control characters must be escaped), found control character U+0000"},
      {"NUL between values", std::string("[1\0]", 4), 1, "in.json:1:3: expected ',' or ']' after an array element, found control character U+0000"},
      {"bad escape", "\"\\x\"", 1, "in.json:1:2: expected an escape"},
      {"bad hex digit", "\"\\u12g4\"", 1, "in.json:1:6: expected four hex digits after \\u, found 'g'"},
      {"bad hex digit in a low surrogate", "\"\\ud800\\u12g4\"", 1, "in.json:1:12: expected four hex digits after \\u, found 'g'"},
      {"escape cut short", "\"\\u12", 1, "in.json:1:6: expected four hex digits after \\u, found end of input"},
      {"invalid UTF-8 byte", "[\"a\xff" "b\"]", 1, "in.json:1:4: expected UTF-8 text, found invalid UTF-8 byte 0xff"},
      {"overlong UTF-8", "\"\xc0\x80\"", 1, "in.json:1:2: expected UTF-8 text, found invalid UTF-8 byte 0xc0"},
      {"raw surrogate in UTF-8", "\"\xed\xa0\x80\"", 1, "in.json:1:2: expected UTF-8 text, found invalid UTF-8 sequence 0xed 0xa0"},
      {"truncated UTF-8", "\"\xe2\x82", 1, "in.json:1:2: expected UTF-8 text, found truncated UTF-8 sequence 0xe2 0x82"},
      {"byte order mark", "\xef\xbb\xbf{}", 1, "in.json:1:1: expected a JSON value (object, array, string, number, true, false or null), found '\xef\xbb\xbf' (U+FEFF)"},
      {"non-ASCII where a value belongs", "[\xe2\x82\xac]", 1, "in.json:1:2: expected a JSON value (object, array, string, number, true, false or null), found '\xe2\x82\xac' (U+20AC)"},
      {"emoji where a comma belongs", "[1\xf0\x9f\x98\x80]", 1, "in.json:1:3: expected ',' or ']' after an array element, found '\xf0\x9f\x98\x80' (U+1F600)"},
      {"two-byte character", "{\"a\"\xc2\xa0:1}", 1, "in.json:1:5: expected ':' after a member name, found '\xc2\xa0' (U+00A0)"},
      {"invalid UTF-8 outside strings", "[\xff]", 1, "in.json:1:2: expected a JSON value"},
      {"lone high surrogate", "\"\\ud800\"", 1, "in.json:1:2: expected a low surrogate escape (\\udc00-\\udfff) after \\ud800, found lone surrogate \\ud800"},
      {"high surrogate then non-surrogate", "\"\\ud800\\u0041\"", 1, "in.json:1:2: expected a low surrogate escape"},
      {"lone low surrogate", "\"\\udc00\"", 1, "in.json:1:2: expected a high surrogate escape (\\ud800-\\udbff) before \\udc00, found lone surrogate \\udc00"},
      {"lone low surrogate after text", "[\"x\\uDC00\"]", 1, "in.json:1:4: expected a high surrogate escape"},
      {"lone low surrogate after a pair", "[\"\\ud83d\\ude00\\udfff\"]", 1, "in.json:1:15: expected a high surrogate escape (\\ud800-\\udbff) before \\udfff"},
      {"lone low surrogate in a name", "{\"ok\":1,\n \"a\\udc01\":1}", 1, "in.json:2:4: expected a high surrogate escape"},
      {"duplicate name", "{\"a\":1,\"a\":2}", 1, "in.json:1:8: expected unique member names, found duplicate member name \"a\""},
      {"nested duplicate name", "{\"x\":{\"b\":1,\n\"b\":2}}", 1, "in.json:2:1: expected unique member names, found duplicate member name \"b\""},
      {"duplicate after escapes", "{\"\\u0061\":1, \"a\":2}", 1, "in.json:1:14: expected unique member names, found duplicate member name \"a\""},
      {"number too big", "1E400", 1, "in.json:1:1: expected a number that fits in a double, found 1E400 (number out of range of a double)"},
      {"number too big in array", "[0, 10e308]", 1, "in.json:1:5: expected a number that fits in a double, found 10e308 (number out of range of a double)"},
      {"number just too big", "-1.7976931348623159e308", 1, "in.json:1:1: expected a number that fits in a double"},
      {"arrays 65 deep", deep65, 1, "in.json:1:65: expected arrays and objects nested at most 64 deep, found an array at depth 65"},
      {"objects 65 deep", deep65_objects, 1, "in.json:1:321: expected arrays and objects nested at most 64 deep, found an object at depth 65"},
      {"trailing garbage", "{} x", 1, "in.json:1:4: expected end of input after the JSON value, found 'x'"},
      {"second value", "1\n2", 1, "in.json:2:1: expected end of input after the JSON value, found '2'"},
      {"trailing NUL", std::string("1\0", 2), 1, "in.json:1:2: expected end of input after the JSON value, found control character U+0000"},
      {"empty input", "", 1, "in.json:1:1: expected a JSON value, found end of input"},
      {"blank input", "  \n ", 1, "in.json:2:2: expected a JSON value, found end of input"},
      {"first line honoured", "[\n,]", 17, "in.json:18:1: expected a JSON value"},
      {"first line honoured on line one", "[,]", 17, "in.json:17:2: expected a JSON value"},
      {"column counts bytes", "[\"\xc3\xa9\", x]", 1, "in.json:1:8: expected a JSON value"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.name);
    const std::string message = parse_error(row.input, row.first_line);
    CAPTURE(message);
    CHECK(message.find(row.message) != std::string::npos);
  }
}

TEST_CASE("nesting 64 deep is accepted", "[json][errors]") {
  const std::string deep = std::string(64, '[') + std::string(64, ']');
  CHECK(canon(deep) == deep);
  std::string objects;
  for (int i = 0; i < 64; ++i) objects += "{\"a\":";
  objects += "1" + std::string(64, '}');
  CHECK(canon(objects) == objects);
}

TEST_CASE("input size: 16 MiB accepted, one byte more rejected", "[json][errors]") {
  std::string text(kMaxInputBytes, 'a');
  text.front() = '"';
  text.back() = '"';
  CHECK(parse_json(text, "big.json").as_string().size() == kMaxInputBytes - 2);
  text.insert(1, "a");
  CHECK(parse_error(text) ==
        "in.json:1:1: expected at most 16777216 bytes (16 MiB) of JSON text, found 16777217 bytes");
}

TEST_CASE("parse_json_up_to: a text kistore wrote, past 16 MiB, under its own bound", "[json][errors]") {
  std::string text(kMaxInputBytes + 2, 'a');  // one string of 16 MiB: over parse_json's bound
  text.front() = '"';
  text.back() = '"';
  CHECK_THROWS_AS(parse_json(text, "manifest.json"), Error);
  CHECK(parse_json_up_to(text, "manifest.json", text.size()).as_string().size() == kMaxInputBytes);
  try {
    parse_json_up_to(text, "manifest.json", kMaxInputBytes + 1);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidInput);
    CHECK(std::string(e.what()) ==
          "manifest.json:1:1: expected at most 16777217 bytes of JSON text, found 16777218 bytes");
  }
  // Its errors are parse_json's, with the source and position.
  CHECK_THROWS_WITH(parse_json_up_to("{\"a\":}", "m.json", 100), Catch::Contains("m.json:1:6"));
}

TEST_CASE("the first of several duplicates in a large object is reported", "[json][errors]") {
  // More than 16 members: the sorting path of the duplicate check.
  std::string text = "{\n";
  const auto member = [&](const std::string& name, int value, bool last) {
    text += "\"" + name + "\": " + std::to_string(value) + (last ? "\n" : ",\n");
  };
  for (int i = 0; i < 18; ++i) member("k" + std::to_string(i), i, false);
  member("k3", 18, false);   // line 20
  member("k1", 19, true);    // line 21
  text += "}";
  CHECK(parse_error(text) == "in.json:20:1: expected unique member names, found duplicate member name \"k3\"");
}

TEST_CASE("names in messages are escaped", "[json][errors]") {
  CHECK(parse_error("{\"a\\nb\":1,\"a\\nb\":2}") ==
        "in.json:1:11: expected unique member names, found duplicate member name \"a\\nb\"");
}

// ---------------------------------------------------------------------------
// Round trips

class RandomJson {
 public:
  explicit RandomJson(std::uint64_t seed) : rng_(seed) {}

  Json value(int depth) {
    switch (pick(depth > 4 ? 4 : 6)) {
      case 0: return Json();
      case 1: return Json(pick(2) == 1);
      case 2: return Json(number());
      case 3: return Json(text());
      case 4: {
        Json a = Json::array();
        for (int n = pick(5); n > 0; --n) a.push_back(value(depth + 1));
        return a;
      }
      default: {
        Json o = Json::object();
        std::set<std::string> names;
        for (int n = pick(6); n > 0; --n) {
          std::string name = text();
          if (names.insert(name).second) o.as_object().emplace_back(name, value(depth + 1));
        }
        return o;
      }
    }
  }

 private:
  int pick(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }

  double number() {
    if (pick(2) == 0) return static_cast<double>(static_cast<int>(rng_() % 2001) - 1000);
    for (;;) {
      const double d = std::bit_cast<double>(rng_());
      if (std::isfinite(d)) return d;
    }
  }

  // Characters from every range that matters to escaping and to UTF-16 order.
  std::string text() {
    std::string s;
    for (int n = pick(6); n > 0; --n) {
      char32_t c;
      switch (pick(6)) {
        case 0: c = static_cast<char32_t>(pick(0x20)); break;
        case 1: c = static_cast<char32_t>(0x20 + pick(0x60)); break;
        case 2: c = static_cast<char32_t>(0x80 + pick(0xD800 - 0x80)); break;
        case 3: c = static_cast<char32_t>(0xE000 + pick(0x2000)); break;
        case 4: c = static_cast<char32_t>(0x10000 + pick(0x100000)); break;
        default: c = U"\"\\/~"[pick(4)];
      }
      append_utf8(c, s);
    }
    return s;
  }

  static void append_utf8(char32_t c, std::string& s) {
    if (c < 0x80) {
      s += static_cast<char>(c);
    } else if (c < 0x800) {
      s += static_cast<char>(0xC0 | (c >> 6));
      s += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      s += static_cast<char>(0xE0 | (c >> 12));
      s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (c >> 18));
      s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (c & 0x3F));
    }
  }

  std::mt19937_64 rng_;
};

TEST_CASE("canonical(parse(canonical(x))) == canonical(x)", "[json][roundtrip]") {
  RandomJson gen(1);
  for (int i = 0; i < 2000; ++i) {
    const Json x = gen.value(0);
    const std::string c = canonical(x);
    CAPTURE(c);
    const Json y = parse_json(c, "roundtrip");
    REQUIRE(canonical(y) == c);
    REQUIRE(y == x);
    REQUIRE(parse_json(pretty(x), "pretty") == x);
  }
  for (const char* name : {"rfc8785-3.2.2.input.json", "rfc8785-3.2.3.input.json",
                           "kernelindex-seed-bundle.json"}) {
    const std::string c = canonical(parse_json(golden(name), name));
    CHECK(canonical(parse_json(c, name)) == c);
  }
}

// ---------------------------------------------------------------------------
// pretty

TEST_CASE("pretty: empty containers, scalars, nesting, no trailing newline", "[json][pretty]") {
  CHECK(pretty(Json::array()) == "[]");
  CHECK(pretty(Json::object()) == "{}");
  CHECK(pretty(Json(1e21)) == "1e+21");
  CHECK(pretty(Json("a\nb")) == "\"a\\nb\"");
  CHECK(pretty(parse_json(R"({"b":[1,{"x":[]},{}],"a":"s"})", "t")) ==
        "{\n"
        "  \"a\": \"s\",\n"
        "  \"b\": [\n"
        "    1,\n"
        "    {\n"
        "      \"x\": []\n"
        "    },\n"
        "    {}\n"
        "  ]\n"
        "}");
}

// ---------------------------------------------------------------------------
// The Json value API

TEST_CASE("Json find, set, erase", "[json][value]") {
  Json o = Json::object();
  CHECK(o.find("a") == nullptr);
  o.set("b", 1);
  o.set("a", "x");
  Json& replaced = o.set("b", true);
  CHECK(replaced.as_bool());
  REQUIRE(o.as_object().size() == 2);
  CHECK(o.as_object()[0].first == "b");  // replacing keeps the member's place
  CHECK(o.find("b")->as_bool());
  o.find("a")->as_string();  // mutable find reaches the member itself
  *o.find("a") = Json(2);
  CHECK(o.find("a")->as_number() == 2);
  CHECK(o.erase("a"));
  CHECK_FALSE(o.erase("a"));
  CHECK(o.find("a") == nullptr);
  CHECK(canonical(o) == R"({"b":true})");

  const Json array = parse_json("[1]", "t");
  CHECK(array.find("0") == nullptr);
  Json scalar(1);
  CHECK_FALSE(scalar.erase("a"));
  CHECK_THROWS_AS(scalar.set("a", 1), std::bad_variant_access);
}

TEST_CASE("Json equality", "[json][value]") {
  const auto p = [](const char* text) { return parse_json(text, "eq"); };
  CHECK(p(R"({"a":1,"b":[1,2]})") == p(R"({"b":[1,2],"a":1})"));  // member order is not data
  CHECK_FALSE(p("[1,2]") == p("[2,1]"));                        // element order is
  CHECK(p("0") == p("-0.0"));
  CHECK(p("1") == p("1.0"));
  CHECK_FALSE(p("1") == p("\"1\""));
  CHECK_FALSE(p("null") == p("false"));
  CHECK_FALSE(p(R"({"a":1})") == p(R"({"a":1,"b":2})"));
  CHECK_FALSE(p(R"({"a":1})") == p(R"({"b":1})"));
  CHECK_FALSE(p(R"({"a":{"x":1}})") == p(R"({"a":{"x":2}})"));

  // More than 16 members: compared by sorting rather than by lookup.
  Json a = Json::object(), b = Json::object();
  for (int i = 0; i < 40; ++i) a.set("m" + std::to_string(i), i);
  for (int i = 39; i >= 0; --i) b.set("m" + std::to_string(i), i);
  CHECK(a == b);
  b.set("m7", -7);
  CHECK_FALSE(a == b);
}

TEST_CASE("pointer_token escapes ~ and / (RFC 6901)", "[json][value]") {
  CHECK(pointer_token("plain") == "plain");
  CHECK(pointer_token("a/b~c") == "a~1b~0c");
  CHECK(pointer_token("~1") == "~01");
  CHECK(pointer_token("") == "");
}

TEST_CASE("pointer_child appends one escaped token or index", "[json][value]") {
  CHECK(pointer_child("", "runs") == "/runs");
  CHECK(pointer_child("/a", "b/c~d") == "/a/b~1c~0d");
  CHECK(pointer_child("/a", "") == "/a/");
  CHECK(pointer_child("/runs", std::size_t{0}) == "/runs/0");
  CHECK(pointer_child("", std::size_t{18446744073709551615u}) == "/18446744073709551615");
}

TEST_CASE("quoted_excerpt: a JSON string, cut at a UTF-8 boundary with ...", "[json][value]") {
  struct Case {
    std::string in;
    std::size_t max;
    std::string out;
  };
  const std::vector<Case> cases = {
      {"", 80, "\"\""},
      {"plain", 80, "\"plain\""},
      {"tab\there \"q\"", 80, "\"tab\\there \\\"q\\\"\""},
      {"abcdef", 6, "\"abcdef\""},
      {"abcdefg", 6, "\"abcdef...\""},
      {"ab\xC3\xA9" "cd", 3, "\"ab...\""},       // é is two bytes: not cut in half
      {"ab\xC3\xA9" "cd", 4, "\"ab\xC3\xA9...\""},
      {"\xE5\x90\x8D\xE5\x89\x8D", 4, "\"\xE5\x90\x8D...\""},
  };
  for (const Case& c : cases) {
    INFO(c.in << " max " << c.max);
    CHECK(quoted_excerpt(c.in, c.max) == c.out);
  }
}

}  // namespace
}  // namespace kistore

// ---------------------------------------------------------------------------
// is_canonical_json: the reading without a value agrees with parse + canonical.

namespace kistore {
namespace {

// What parse_json and canonical() say of `text`: whether it is its own
// canonical form.
bool canonical_by_value(std::string_view text) {
  try {
    return canonical(parse_json(text, "t")) == text;
  } catch (const Error&) {
    return false;
  }
}

TEST_CASE("is_canonical_json agrees with parse_json and canonical, case by case", "[json][jcs]") {
  const std::string deep64 = std::string(64, '[') + std::string(64, ']');
  const std::string deep65 = std::string(65, '[') + std::string(65, ']');
  const std::vector<std::pair<std::string, bool>> cases = {
      {R"({})", true},
      {R"([])", true},
      {R"({"a":1,"b":[true,false,null],"c":{"d":"e"}})", true},
      {R"({"b":1,"a":2})", false},                     // members out of order
      {R"({"a":1,"a":1})", false},                     // a name twice
      {R"({"a":{"z":1},"b":{"a":2}})", true},          // order is per object
      {R"({"a":{"z":1},"a":{"a":2}})", false},
      {R"({ "a":1})", false},                          // a blank
      {"{\"a\":1}\n", false},
      {R"({"a":1.0})", false},                         // numbers in their shortest form only
      {R"({"a":1e2})", false},
      {R"({"a":100})", true},
      {R"({"a":1e+21})", true},
      {R"({"a":1E+21})", false},
      {R"({"a":0.000001})", true},
      {R"({"a":1e-7})", true},
      {R"({"a":-0})", false},                          // "-0" is written "0"
      {R"({"a":0})", true},
      {R"({"a":1e400})", false},                       // out of range: refused
      {R"({"a":1e-400})", false},                      // underflows to 0
      {R"({"a":"\u0041"})", false},                    // escapes JCS does not write
      {R"({"a":"\/"})", false},
      {R"({"a":"\u001f"})", true},
      {R"({"a":"\u001F"})", false},
      {R"({"a":"\n\"\\"})", true},
      {R"({"a":"\ud83d\ude00"})", false},              // a pair is written as its character
      {"{\"a\":\"\xf0\x9f\x98\x80\"}", true},
      {R"({"a":"\udc00"})", false},                    // a lone surrogate is refused
      {R"({"a":"\ud800"})", false},
      {"{\"a\":\"\xed\xa0\x80\"}", false},             // surrogate bytes are not UTF-8
      {"{\"a\":\"\xff\"}", false},
      {std::string("{\"a\":\"x\0\"}", 9), false},      // an embedded NUL
      {std::string("{}\0", 3), false},
      {"{\"\xee\x80\x80\":1,\"\xf0\x90\x80\x80\":2}", false},  // UTF-16 order: U+10000 before U+E000
      {"{\"\xf0\x90\x80\x80\":2,\"\xee\x80\x80\":1}", true},
      {R"({"":1,"a":2})", true},
      {R"({"a":2,"":1})", false},
      {R"("x")", true},
      {R"(12)", true},
      {R"(true)", true},
      {R"(nul)", false},
      {R"({"a":1,})", false},
      {R"({"a":1}{})", false},
      {R"({"a":[1,2,]})", false},
      {deep64, true},
      {deep65, false},                                 // deeper than kMaxDepth
      {"", false},
  };
  for (const auto& [text, expected] : cases) {
    INFO(text);
    CHECK(canonical_by_value(text) == expected);
    CHECK(is_canonical_json(text) == expected);
  }
}

TEST_CASE("is_canonical_json agrees with parse_json and canonical on mutated texts", "[json][jcs]") {
  // Every one-byte change, insertion and removal of canonical texts: the two
  // readings agree on each.
  const std::vector<std::string> seeds = {
      R"({"labels":{"a":"é","b":1},"name":"x","title":"GeGLU · liger","v":[1.5,-2,1e-7,null,true]})",
      R"({"a":"\u0001\n","b":{"c":[{},[]]},"d":0.1})",
  };
  const std::string alphabet = "{}[]\",:\\ 0123456789.-+eEuabnlrtf\x80\xc3\xa9\xed";
  std::size_t tried = 0;
  for (const std::string& seed : seeds) {
    REQUIRE(is_canonical_json(seed));
    for (std::size_t i = 0; i <= seed.size(); ++i) {
      for (char c : alphabet) {
        std::string changed = seed, inserted = seed;
        if (i < seed.size()) changed[i] = c;
        inserted.insert(inserted.begin() + static_cast<std::ptrdiff_t>(i), c);
        for (const std::string& text : {changed, inserted}) {
          INFO(text);
          REQUIRE(is_canonical_json(text) == canonical_by_value(text));
          ++tried;
        }
      }
      if (i < seed.size()) {
        std::string removed = seed;
        removed.erase(i, 1);
        INFO(removed);
        REQUIRE(is_canonical_json(removed) == canonical_by_value(removed));
      }
    }
  }
  CHECK(tried > 5000);
}

TEST_CASE("error: a NUL from the input does not cut the message short", "[error]") {
  // what() is a C string: a member name with "\u0000" once ended the message
  // there, before what was expected and what was found.
  using namespace std::string_literals;
  const Error e = InvalidInput("f.json: /a\0b: expected a key, found \"a\0b\""s);
  CHECK(std::string(e.what()) == "f.json: /a\\u0000b: expected a key, found \"a\\u0000b\"");
  // Through the parser: the name is refused (a control character), and the whole
  // message comes back.
  try {
    parse_json(R"({"k\u0000x": 1, "k\u0000x": 2})", "f.json");
    FAIL("a duplicate name was taken");
  } catch (const Error& dup) {
    const std::string message = dup.what();
    CHECK(message.find("\\u0000") != std::string::npos);
    CHECK(message.find("found") != std::string::npos);
  }
}

}  // namespace
}  // namespace kistore
