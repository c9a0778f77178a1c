#include "refs/index_lines.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "objects/digest.h"
#include "objects/error.h"
#include "objects/json.h"

namespace kistore {
namespace {

std::string hex(char c) { return std::string(64, c); }
Digest digest(char c) { return *Digest::parse_hex(hex(c)); }

// sha256 of "liger-kernel-bench" NUL "geglu/backward/seq1024", from sha256sum.
const std::string kSourceKey = "fc65fdb59c6dc5c26b67c56571958a50f8893103e18f280f84189313445dc245";

struct Golden {
  IndexFact fact;
  std::string line;  // written by hand from docs/format.md
};

std::vector<Golden> goldens() {
  return {
      {MetadataFact{digest('1'), canonical(parse_json(R"({"title":"GeGLU · liger","name":"x","labels":{"b":1,"a":"é"}})", "t"))},
       R"({"@key":")" + hex('1') + R"(","metadata":{"labels":{"a":"é","b":1},"name":"x","title":"GeGLU · liger"}})" "\n"},
      {GroupFact{digest('a'), digest('b'), Measurement{"latency", "p50", "ns", 4739072}},
       R"({"@key":")" + hex('a') + hex('b') + R"(","metric":"latency","statistic":"p50","unit":"ns","value":4739072})" "\n"},
      {GroupFact{digest('a'), digest('c'), std::nullopt},
       R"({"@key":")" + hex('a') + hex('c') + R"(","metric":null,"statistic":null,"unit":null,"value":null})" "\n"},
      {LevelFact{digest('c'), Level::kDisputed, digest('d')},
       R"({"@key":")" + hex('c') + R"(","evidence":"sha256:)" + hex('d') + R"(","level":"disputed"})" "\n"},
      {RerunFact{digest('c'), digest('d'), Level::kReproduced, 1.3046414538310414},
       R"({"@key":")" + hex('c') + hex('d') + R"(","level":"reproduced","ratio":1.3046414538310414})" "\n"},
      {AttestationFact{digest('c'), digest('e'), "Ada <ada@example.org>", "note"},
       R"({"@key":")" + hex('c') + hex('e') + R"(","author":"Ada <ada@example.org>","type":"note"})" "\n"},
      {SourceFact{"liger-kernel-bench", "geglu/backward/seq1024", digest('f')},
       R"({"@key":")" + kSourceKey + R"(","externalId":"geglu/backward/seq1024","run":"sha256:)" + hex('f') +
           R"(","source":"liger-kernel-bench"})" "\n"},
  };
}

TEST_CASE("each family's fact renders as its documented line, and the line parses back to it", "[index_lines]") {
  for (const Golden& g : goldens()) {
    const Family family = family_of(g.fact);
    INFO(family_name(family));
    CHECK(render_line(g.fact) == g.line);
    CHECK(fact_key(g.fact) == g.line.substr(9, key_digits(family)));
    CHECK(parse_line(family, g.line, "refs/x/1", 1) == g.fact);
    // Every documented shape, a measurement and a null one, metadata with
    // characters beyond ASCII, is read without building a JSON value.
    CHECK(read_plain_line(family, g.line) == std::optional<IndexFact>(g.fact));
  }
}

TEST_CASE("family names, key lengths and the sources key", "[index_lines]") {
  std::vector<std::string> names;
  for (Family f : kFamilies) {
    names.emplace_back(family_name(f));
    CHECK(parse_family(family_name(f)) == f);
  }
  CHECK(names == std::vector<std::string>{"metadata", "groups", "levels", "reruns", "attestations", "sources"});
  CHECK_FALSE(parse_family("level"));
  CHECK(key_digits(Family::kGroups) == 128);
  CHECK(key_digits(Family::kReruns) == 128);
  CHECK(key_digits(Family::kAttestations) == 128);
  CHECK(key_digits(Family::kMetadata) == 64);
  CHECK(key_digits(Family::kLevels) == 64);
  CHECK(key_digits(Family::kSources) == 64);
  CHECK(source_key("a", "b") == "59b271ae1bbcb1d31d41929817f4b16fb439eb4f31520b5ad1d5ce98920a7138");
  // The NUL keeps the split between the two unambiguous.
  CHECK(source_key("ab", "") != source_key("a", "b"));
}

TEST_CASE("render_line refuses a fact outside its documented values", "[index_lines]") {
  CHECK_THROWS_AS(render_line(LevelFact{digest('1'), Level::kReported, digest('2')}), std::logic_error);
  CHECK_THROWS_AS(render_line(RerunFact{digest('1'), digest('2'), Level::kSourceNative, 1}), std::logic_error);
  CHECK_THROWS_AS(render_line(MetadataFact{digest('1'), "\"x\""}), std::logic_error);
  CHECK_THROWS_AS(render_line(AttestationFact{digest('1'), digest('2'), "a", "vote"}), std::logic_error);
  CHECK_THROWS_AS(render_line(SourceFact{std::string("a\0b", 3), "c", digest('2')}), std::logic_error);
}

struct Refusal {
  Family family;
  std::string line;
  std::string message;
};

TEST_CASE("parse_line refuses every malformed line, naming path, line, what was expected and found",
          "[index_lines]") {
  const std::string k64 = hex('c'), k128 = hex('c') + hex('d'), run = "sha256:" + hex('d');
  const std::string at = "refs/levels/c:7: ";
  const std::vector<Refusal> table = {
      {Family::kLevels, "", at + "expected a line ending in \"\\n\", found the end of the file"},
      {Family::kLevels, R"({"@key":"c"})", at + "expected a line ending in \"\\n\", found the end of the file after \"{\\\"@key\\\":\\\"c\\\"}\""},
      {Family::kLevels, "{\"a\":1}\n{}\n", at + "expected one line, found a \"\\n\" inside it"},
      {Family::kLevels, "{\"@key\":\n", "refs/levels/c:7:9: expected a JSON value (object, array, string, number, true, false or null), found end of input"},
      {Family::kLevels, "[1]\n", at + "expected a JSON object, found [1]"},
      {Family::kLevels, R"({"@key":")" + k64 + R"(","evidence":")" + run + R"(","level":"disputed","note":1})" "\n",
       at + "expected only the members @key, evidence and level in a levels line, found \"note\""},
      {Family::kLevels, R"({"evidence":")" + run + R"(","level":"disputed"})" "\n",
       at + "expected the member \"@key\", found none"},
      {Family::kLevels, R"({"@key":")" + hex('C') + R"(","evidence":")" + run + R"(","level":"disputed"})" "\n",
       at + "/@key: expected 64 lowercase hex digits, found \"" + hex('C') + "\""},
      {Family::kLevels, R"({"@key":")" + k128 + R"(","evidence":")" + run + R"(","level":"disputed"})" "\n",
       at + "/@key: expected 64 lowercase hex digits, found \"" + k128.substr(0, 80) + "...\""},
      {Family::kGroups, R"({"@key":")" + k64 + R"(","metric":null,"statistic":null,"unit":null,"value":null})" "\n",
       at + "/@key: expected 128 lowercase hex digits, found \"" + k64 + "\""},
      {Family::kLevels, R"({"@key":1,"evidence":")" + run + R"(","level":"disputed"})" "\n",
       at + "/@key: expected 64 lowercase hex digits, found 1"},
      {Family::kLevels, R"({"@key":")" + k64 + R"(","level":"disputed"})" "\n",
       at + "expected the member \"evidence\" (a levels line has @key, evidence and level), found none"},
      {Family::kLevels, R"({"@key":")" + k64 + R"(","evidence":")" + run + R"(","level":"reported"})" "\n",
       at + "/level: expected \"disputed\" or \"reproduced\", found \"reported\""},
      {Family::kLevels, R"({"@key":")" + k64 + R"(","evidence":")" + hex('d') + R"(","level":"disputed"})" "\n",
       at + "/evidence: expected a digest \"sha256:<64 lowercase hex>\", found \"" + hex('d') + "\""},
      {Family::kReruns, R"({"@key":")" + k128 + R"(","level":"disputed","ratio":"1.3"})" "\n",
       at + "/ratio: expected a number, found \"1.3\""},
      {Family::kMetadata, R"({"@key":")" + k64 + R"(","metadata":[]})" "\n", at + "/metadata: expected a JSON object, found []"},
      {Family::kGroups, R"({"@key":")" + k128 + R"(","metric":"latency","statistic":null,"unit":null,"value":null})" "\n",
       at + "/statistic: expected a string (metric, statistic, unit and value are all null, or none is), found null"},
      {Family::kGroups, R"({"@key":")" + k128 + R"(","metric":"latency","statistic":"p50","unit":"ns","value":"5"})" "\n",
       at + "/value: expected a number (metric, statistic, unit and value are all null, or none is), found \"5\""},
      {Family::kAttestations, R"({"@key":")" + k128 + R"(","author":"a","type":"vote"})" "\n",
       at + "/type: expected \"note\" or \"reproduction\", found \"vote\""},
      {Family::kAttestations, R"({"@key":")" + k128 + R"(","author":7,"type":"note"})" "\n",
       at + "/author: expected a string, found 7"},
      {Family::kSources, R"({"@key":")" + k64 + R"(","externalId":"b","run":")" + run + R"(","source":"a"})" "\n",
       at + "/@key: expected the SHA-256 of source, a NUL and externalId, " + source_key("a", "b") + ", found " + k64},
      {Family::kSources, R"({"@key":")" + k64 + R"(","externalId":"b","run":")" + run + R"(","source":"a\u0000"})" "\n",
       at + "/source: expected a string without U+0000, found \"a\\u0000\""},
      // Valid JSON with the right members, but not its RFC 8785 bytes.
      {Family::kLevels, R"({"@key":")" + k64 + R"(", "evidence":")" + run + R"(","level":"disputed"})" "\n",
       at + "expected the RFC 8785 form of the line's object, which differs from it at column 76: expected "
            "\"\\\"evidence\\\":\\\"sha256:ddddd...\", found \" \\\"evidence\\\":\\\"sha256:dddd...\""},
      {Family::kLevels, R"({"@key":")" + k64 + R"(","level":"disputed","evidence":")" + run + R"("})" "\n",
       at + "expected the RFC 8785 form of the line's object, which differs from it at column 77: expected "
            "\"evidence\\\":\\\"sha256:dddddd...\", found \"level\\\":\\\"disputed\\\",\\\"evide...\""},
      {Family::kReruns, R"({"@key":")" + k128 + R"(","level":"disputed","ratio":1.50})" "\n",
       at + "expected the RFC 8785 form of the line's object, which differs from it at column 170: expected "
            "\"}\\n\", found \"0}\\n\""},
      {Family::kMetadata, R"({"@key":")" + k64 + R"(","metadata":{"b":1,"a":2}})" "\n",
       at + "expected the RFC 8785 form of the line's object, which differs from it at column 89: expected "
            "\"a\\\":2,\\\"b\\\":1}}\\n\", found \"b\\\":1,\\\"a\\\":2}}\\n\""},
      {Family::kMetadata, R"({"@key":")" + k64 + R"(","metadata":{"a":"\u00e9"}})" "\n",
       at + "expected the RFC 8785 form of the line's object, which differs from it at column 93: expected "
            "\"é\\\"}}\\n\", found \"\\\\u00e9\\\"}}\\n\""},
  };
  for (const Refusal& r : table) {
    INFO(r.line);
    try {
      parse_line(r.family, r.line, "refs/levels/c", 7);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kCorruption);
      CHECK(std::string(e.what()) == r.message);
    }
  }
}

std::string level_line(char run) { return render_line(LevelFact{digest(run), Level::kReproduced, digest('0')}); }

TEST_CASE("parse_index_file reads sorted unique lines under the file's prefix", "[index_lines]") {
  const std::string file = level_line('a') + level_line('b') + level_line('c');
  // The keys aaaa…, bbbb…, cccc… share no prefix: only "" holds them all.
  CHECK(parse_index_file(Family::kLevels, "refs/levels/x", "", file).size() == 3);
  CHECK(parse_index_file(Family::kLevels, "refs/levels/a", "a", level_line('a')).size() == 1);
  const std::string path = "refs/levels/a/a";
  struct Case {
    std::string prefix, bytes, message;
  };
  const std::vector<Case> table = {
      {"aa", "", path + ": expected at least one line, found an empty file"},
      {"aa", level_line('a') + level_line('a'),
       path + ":2: /@key: expected each key once, found " + hex('a') + " again (line 1)"},
      {"", level_line('b') + level_line('a'),
       path + ":2: /@key: expected keys in ascending order, found " + hex('a') + " after line 1's " + hex('b')},
      {"aa", level_line('a') + level_line('b'),
       path + ":2: /@key: expected a key starting with aa (the digits its file's path stands for), found " + hex('b')},
      {"aa", level_line('a').substr(0, 100),
       path + ":1: expected a line ending in \"\\n\", found the end of the file after \"ence\\\":\\\"sha256:000000\""},
      {"aa", level_line('a') + "\n", path + ":2:1: expected a JSON value, found end of input"},
  };
  for (const Case& c : table) {
    INFO(c.bytes);
    try {
      parse_index_file(Family::kLevels, path, c.prefix, c.bytes);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kCorruption);
      CHECK(std::string(e.what()) == c.message);
    }
  }
}


// Lines in the plain shape parse_line reads without a JSON value (printable
// ASCII strings, numbers, nulls) that are still not render_line of what they
// hold: each is refused as the full reading refuses it.
TEST_CASE("parse_line's quick reading refuses plain lines that are not their RFC 8785 form", "[index_lines]") {
  const std::string k64 = hex('c'), k128 = hex('c') + hex('d'), run = "sha256:" + hex('d');
  const std::string group = R"({"@key":")" + k128 + R"(","metric":"latency","statistic":"p50","unit":"ns","value":)";
  const std::vector<std::pair<Family, std::string>> lines = {
      {Family::kGroups, group + "4.739072e6}\n"},
      {Family::kGroups, group + "4739072.0}\n"},
      {Family::kGroups, group + "-0}\n"},
      {Family::kGroups, group + "1E+2}\n"},
      {Family::kGroups, group + "0100}\n"},
      {Family::kReruns, R"({"@key":")" + k128 + R"(","level":"disputed","ratio":1.30e0})" "\n"},
      {Family::kMetadata, R"({"@key":")" + k64 + R"(","metadata":{"a": 1}})" "\n"},
      {Family::kMetadata, R"({"@key":")" + k64 + R"(","metadata":{"a":1,"a":1}})" "\n"},
      {Family::kMetadata, R"({"@key":")" + k64 + R"(","metadata":{"a":1}} })" "\n"},
      {Family::kSources, R"({"@key":")" + source_key("a", "b") + R"(","externalId":"b","run":"sha256:)" + hex('D') +
                             R"(","source":"a"})" "\n"},
      {Family::kLevels, R"({"@key":")" + k64 + R"(","evidence":")" + run + R"(","level":"disputed"} )" "\n"},
  };
  for (const auto& [family, line] : lines) {
    INFO(line);
    CHECK_THROWS_AS(parse_line(family, line, "refs/x/c", 1), Error);
  }
  // The same shapes written canonically are read, quick or not, as the facts that render them.
  CHECK(parse_line(Family::kGroups, group + "4739072}\n", "refs/x/c", 1) ==
        IndexFact(GroupFact{digest('c'), digest('d'), Measurement{"latency", "p50", "ns", 4739072}}));
  CHECK(parse_line(Family::kGroups, group + "1e+21}\n", "refs/x/c", 1) ==
        IndexFact(GroupFact{digest('c'), digest('d'), Measurement{"latency", "p50", "ns", 1e21}}));
}

TEST_CASE("for_each_index_line hands each fact with its key, the line's own text", "[index_lines]") {
  const std::string file = level_line('a') + level_line('b');
  std::vector<std::string> keys;
  for_each_index_line(Family::kLevels, "refs/levels/x", "", file, [&](IndexFact&& fact, std::string_view key) {
    CHECK(fact_key(fact) == key);
    keys.emplace_back(key);
  });
  CHECK(keys == std::vector<std::string>{hex('a'), hex('b')});
  const SourceFact source{"liger-kernel-bench", "geglu/backward/seq1024", digest('f')};
  for_each_index_line(Family::kSources, "refs/sources/f", "fc", render_line(source),
                      [&](IndexFact&& fact, std::string_view key) {
                        CHECK(fact == IndexFact(source));
                        CHECK(key == kSourceKey);
                      });
}

}  // namespace
}  // namespace kistore

namespace kistore {
namespace {

// The reading of lowercase_hex it must agree with, a character at a time.
bool lowercase_hex_slowly(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

TEST_CASE("lowercase_hex: every byte at every place of keys of every length up to 2 words and a tail") {
  CHECK_FALSE(lowercase_hex(""));
  CHECK(lowercase_hex(std::string(64, '0')));
  CHECK(lowercase_hex("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
  CHECK_FALSE(lowercase_hex("0123456789ABCDEF"));
  for (std::size_t length = 1; length <= 19; ++length) {
    const std::string base = std::string("0123456789abcdef0123456789abcdef").substr(0, length);
    REQUIRE(lowercase_hex(base));
    for (std::size_t at = 0; at < length; ++at)
      for (int b = 0; b < 256; ++b) {
        std::string s = base;
        s[at] = static_cast<char>(b);
        INFO("length " << length << ", byte " << b << " at " << at);
        REQUIRE(lowercase_hex(s) == lowercase_hex_slowly(s));
      }
  }
}

}  // namespace
}  // namespace kistore
