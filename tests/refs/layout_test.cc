#include "refs/layout.h"

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "objects/digest.h"
#include "objects/error.h"
#include "objects/json.h"

namespace kistore {
namespace {

// The SPEC §2 layout written out independently of layout.cc.
std::string expected_object_path(const std::string& hex) {
  return "objects/sha256/" + hex.substr(0, 2) + "/" + hex.substr(2, 2) + "/" + hex.substr(4);
}

const std::string kEmptyHex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";  // sha256("")

TEST_CASE("object_path renders SPEC's objects/sha256/ab/cd/<60 hex>", "[layout]") {
  Digest empty = Digest::of("");
  REQUIRE(empty.hex() == kEmptyHex);
  CHECK(object_path(empty) == "objects/sha256/e3/b0/c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("object_path and parse_object_path round-trip for many digests", "[layout]") {
  for (int i = 0; i < 2000; ++i) {
    Digest d = Digest::of("document " + std::to_string(i));
    std::string path = object_path(d);
    INFO(path);
    CHECK(path == expected_object_path(d.hex()));
    CHECK(path.size() == 15 + 66);
    auto back = parse_object_path(path);
    REQUIRE(back.has_value());
    CHECK(*back == d);
  }
}

TEST_CASE("parse_object_path rejects everything object_path does not render", "[layout][errors]") {
  const std::string good = expected_object_path(kEmptyHex);
  REQUIRE(parse_object_path(good).has_value());
  std::string upper = good;
  upper[good.size() - 1] = 'A';  // ...855 -> ...85A
  std::string upper_dir = good;
  upper_dir[15] = 'E';  // objects/sha256/E3/...
  std::string no_first_slash = good;
  no_first_slash.erase(17, 1);  // objects/sha256/e3b0/c4...: one short
  std::string slash_moved = "objects/sha256/e3b/0/" + kEmptyHex.substr(4);  // right length, wrong places
  std::string no_slashes = "objects/sha256/" + kEmptyHex + "xx";          // right length, no slashes
  std::string non_hex = good;
  non_hex[good.size() - 3] = 'g';
  struct Case {
    const char* name;
    std::string path;
  };
  const std::vector<Case> cases = {
      {"empty", ""},
      {"prefix only", "objects/sha256/"},
      {"one hex digit short", good.substr(0, good.size() - 1)},
      {"one hex digit long", good + "0"},
      {"trailing slash", good + "/"},
      {"uppercase in the name", upper},
      {"uppercase in a directory", upper_dir},
      {"first slash missing", no_first_slash},
      {"slashes moved", slash_moved},
      {"no slashes", no_slashes},
      {"non-hex digit", non_hex},
      {"other algorithm", "objects/sha512/" + good.substr(15)},
      {"capitalised prefix", "Objects/sha256/" + good.substr(15)},
      {"leading slash", "/" + good},
      {"no prefix", good.substr(15)},
      {"the whole digest as one name", "objects/sha256/" + kEmptyHex},
      {"refs path", "refs/metadata/" + kEmptyHex},
  };
  for (const Case& c : cases) {
    INFO(c.name << ": \"" << c.path << "\"");
    CHECK_FALSE(parse_object_path(c.path).has_value());
  }
}

// <h0h1>/<h2h3>/<h4..h63>, written out independently of layout.cc.
std::string fan(const std::string& hex) { return hex.substr(0, 2) + "/" + hex.substr(2, 2) + "/" + hex.substr(4); }

constexpr Level kLevelsAll[] = {Level::kDisputed, Level::kReported, Level::kSourceNative, Level::kReproduced};

TEST_CASE("FORMAT: exactly \"kistore 2\\n\" or \"kistore 3\\n\"; anything else is no format kistore reads", "[layout]") {
  CHECK(kFormatPath == "FORMAT");
  CHECK(kFormat2Bytes == "kistore 2\n");
  CHECK(kFormat3Bytes == "kistore 3\n");
  CHECK(parse_format_bytes("kistore 2\n") == Format::k2);
  CHECK(parse_format_bytes("kistore 3\n") == Format::k3);
  for (std::string_view bad : {"", "kistore 2", "kistore 3", "kistore 2\n\n", "kistore 3\r\n", "kistore 4\n", "kistore 1\n",
                               "Kistore 3\n", " kistore 3\n", "kistore  3\n", "kistore 30\n"}) {
    INFO("\"" << bad << "\"");
    CHECK_FALSE(parse_format_bytes(bad).has_value());
  }
  CHECK(format_name(Format::k1) == "format 1");
  CHECK(format_name(Format::k2) == "format 2");
  std::string why = unknown_format_problem("kistore 4\n");
  CHECK(why.find("FORMAT holds \"kistore 4\\n\"") != std::string::npos);
  CHECK(why.find("formats 1 to 3") != std::string::npos);
  // Control bytes are not echoed to a terminal.
  CHECK(unknown_format_problem(std::string("\x1b[2J", 4)).find('\x1b') == std::string::npos);
}

TEST_CASE("fanout and parse_fanout round-trip and refuse other names", "[layout]") {
  for (int i = 0; i < 500; ++i) {
    Digest d = Digest::of("fan " + std::to_string(i));
    CHECK(fanout(d) == fan(d.hex()));
    CHECK(parse_fanout(fanout(d)) == d);
  }
  const std::string h = kEmptyHex;
  for (const std::string& bad : {h, h.substr(0, 2) + "/" + h.substr(2), fan(h) + "/", "/" + fan(h),
                                 h.substr(0, 3) + "/" + h.substr(3, 1) + "/" + h.substr(4), fan(h).substr(1)}) {
    INFO(bad);
    CHECK_FALSE(parse_fanout(bad).has_value());
  }
}

TEST_CASE("format 2 refs paths fan every digest-named folder out (SPEC §2)", "[layout]") {
  Digest a = Digest::of("a"), b = Digest::of("b");
  const Format f = Format::k2;
  CHECK(metadata_path(f, a) == "refs/metadata/" + fan(a.hex()));
  CHECK(group_path(f, a, b) == "refs/groups/" + fan(a.hex()) + "/" + b.hex());
  CHECK(attestation_path(f, a, b) == "refs/attestations/" + fan(a.hex()) + "/" + b.hex());
  CHECK(rerun_path(a, b) == "refs/reruns/" + fan(a.hex()) + "/" + b.hex());
  for (Level l : kLevelsAll)
    CHECK(level_path(f, l, b) == "refs/levels/" + std::string(level_name(l)) + "/" + fan(b.hex()));
  CHECK(level_path(f, Level::kSourceNative, b) ==
        "refs/levels/source-native/" + b.hex().substr(0, 2) + "/" + b.hex().substr(2, 2) + "/" + b.hex().substr(4));
}

TEST_CASE("format 1 refs paths stay flat, as the format-1 release wrote them", "[layout]") {
  Digest a = Digest::of("a"), b = Digest::of("b");
  const Format f = Format::k1;
  CHECK(metadata_path(f, a) == "refs/metadata/" + a.hex());
  CHECK(group_path(f, a, b) == "refs/groups/" + a.hex() + "/" + b.hex());
  CHECK(attestation_path(f, a, b) == "refs/attestations/" + a.hex() + "/" + b.hex());
  CHECK(level_path(f, Level::kDisputed, b) == "refs/levels/disputed/" + b.hex());
  CHECK(level_path(f, Level::kReported, b) == "refs/levels/reported/" + b.hex());
  CHECK(level_path(f, Level::kSourceNative, b) == "refs/levels/source-native/" + b.hex());
  CHECK(level_path(f, Level::kReproduced, b) == "refs/levels/reproduced/" + b.hex());
  CHECK_FALSE(parse_rerun_path(f, rerun_path(a, b)).has_value());  // format 1 has no reruns folder
}

TEST_CASE("refs paths and their parse_* round-trip for many digests, in both formats", "[layout]") {
  for (Format f : {Format::k1, Format::k2}) {
    for (int i = 0; i < 300; ++i) {
      Digest a = Digest::of("a " + std::to_string(i)), b = Digest::of("b " + std::to_string(i));
      INFO(format_name(f) << " " << i);
      CHECK(parse_metadata_path(f, metadata_path(f, a)) == a);
      CHECK(parse_group_path(f, group_path(f, a, b)) == GroupEntryPath{a, b});
      CHECK(parse_attestation_path(f, attestation_path(f, a, b)) == AttestationEntryPath{a, b});
      for (Level l : kLevelsAll) CHECK(parse_level_path(f, level_path(f, l, b)) == LevelEntryPath{l, b});
      if (f == Format::k2) CHECK(parse_rerun_path(f, rerun_path(a, b)) == RerunEntryPath{a, b});
    }
  }
}

TEST_CASE("the index folders are the parents of their entries", "[layout]") {
  Digest a = Digest::of("a"), b = Digest::of("b");
  CHECK(kGroupsDir == "refs/groups");
  CHECK(kRerunsDir == "refs/reruns");
  CHECK(level_dir(Level::kSourceNative) == "refs/levels/source-native");
  CHECK(reruns_dir(a) == "refs/reruns/" + fan(a.hex()));
  CHECK(rerun_path(a, b) == reruns_dir(a) + "/" + b.hex());
  for (Format f : {Format::k1, Format::k2}) {
    const std::string name = f == Format::k1 ? a.hex() : fan(a.hex());
    CHECK(group_dir(f, a) == "refs/groups/" + name);
    CHECK(group_path(f, a, b) == group_dir(f, a) + "/" + b.hex());
    CHECK(level_path(f, Level::kSourceNative, a) == level_dir(Level::kSourceNative) + "/" + name);
    CHECK(attestations_dir(f, a) == "refs/attestations/" + name);
    CHECK(attestation_path(f, a, b) == attestations_dir(f, a) + "/" + b.hex());
  }
}

// Every parse_* of a refs path in one format, as "does it parse?", for one table of bad inputs.
struct RefsParsers {
  const char* name;
  std::function<bool(std::string_view)> parses;
  std::string good;  // one path it must accept
};

std::vector<RefsParsers> refs_parsers(Format f) {
  Digest a = Digest::of("a"), b = Digest::of("b");
  std::vector<RefsParsers> out = {
      {"metadata", [f](std::string_view p) { return parse_metadata_path(f, p).has_value(); }, metadata_path(f, a)},
      {"group", [f](std::string_view p) { return parse_group_path(f, p).has_value(); }, group_path(f, a, b)},
      {"level", [f](std::string_view p) { return parse_level_path(f, p).has_value(); },
       level_path(f, Level::kReproduced, b)},
      {"attestation", [f](std::string_view p) { return parse_attestation_path(f, p).has_value(); },
       attestation_path(f, a, b)},
  };
  if (f == Format::k2)
    out.push_back({"rerun", [f](std::string_view p) { return parse_rerun_path(f, p).has_value(); }, rerun_path(a, b)});
  return out;
}

struct BadPath {
  const char* name;
  std::string path;
};

// Paths that no format-1 parser takes.
std::vector<BadPath> format1_bad_paths() {
  const std::string h = kEmptyHex;
  std::string upper = h;
  upper[63] = 'B';
  std::string non_hex = h;
  non_hex[10] = 'g';
  return {
      {"empty", ""},
      {"metadata folder", "refs/metadata/"},
      {"metadata, hex short", "refs/metadata/" + h.substr(1)},
      {"metadata, hex long", "refs/metadata/" + h + "0"},
      {"metadata, uppercase", "refs/metadata/" + upper},
      {"metadata, non-hex", "refs/metadata/" + non_hex},
      {"metadata, sha256: prefix", "refs/metadata/sha256:" + h},
      {"metadata, trailing slash", "refs/metadata/" + h + "/"},
      {"metadata, leading slash", "/refs/metadata/" + h},
      {"metadata, fanned out", "refs/metadata/" + fan(h)},
      {"groups folder", "refs/groups/"},
      {"group key only", "refs/groups/" + h},
      {"group key folder", "refs/groups/" + h + "/"},
      {"group, run short", "refs/groups/" + h + "/" + h.substr(1)},
      {"group, key short", "refs/groups/" + h.substr(1) + "/" + h},
      {"group, no slash", "refs/groups/" + h + h},
      {"group, uppercase run", "refs/groups/" + h + "/" + upper},
      {"group, three parts", "refs/groups/" + h + "/" + h + "/" + h},
      {"group, trailing slash", "refs/groups/" + h + "/" + h + "/"},
      {"group, fanned key", "refs/groups/" + fan(h) + "/" + h},
      {"levels folder", "refs/levels/"},
      {"level folder", "refs/levels/reproduced/"},
      {"level folder, no slash", "refs/levels/reproduced"},
      {"unknown level", "refs/levels/verified/" + h},
      {"level in capitals", "refs/levels/Reproduced/" + h},
      {"level, empty name", "refs/levels//" + h},
      {"level, run short", "refs/levels/reproduced/" + h.substr(1)},
      {"level, non-hex run", "refs/levels/disputed/" + non_hex},
      {"level, extra part", "refs/levels/reported/" + h + "/x"},
      {"level, flat", "refs/levels/" + h},
      {"level, fanned run", "refs/levels/reported/" + fan(h)},
      {"attestations folder", "refs/attestations/" + h},
      {"attestation, uppercase", "refs/attestations/" + upper + "/" + h},
      {"attestation, short", "refs/attestations/" + h + "/" + h.substr(2)},
      {"attestation, sha256: names", "refs/attestations/sha256:" + h + "/sha256:" + h},
      {"object path", expected_object_path(h)},
      {"source path", "refs/sources/s/" + h},
      {"reruns folder", "refs/reruns/" + h + "/" + h},
      {"reruns, fanned", "refs/reruns/" + fan(h) + "/" + h},
      {"FORMAT", "FORMAT"},
  };
}

// Paths that no format-2 parser takes.
std::vector<BadPath> format2_bad_paths() {
  const std::string h = kEmptyHex, fh = fan(kEmptyHex);
  std::string upper = h;
  upper[63] = 'B';
  std::string fan_upper = fan(upper), fan_upper_dir = fh;
  fan_upper_dir[0] = 'E';
  std::string non_hex = fh;
  non_hex[20] = 'g';
  const std::string moved = h.substr(0, 3) + "/" + h.substr(3, 1) + "/" + h.substr(4);  // right length, slashes moved
  return {
      {"empty", ""},
      {"metadata folder", "refs/metadata/"},
      {"metadata, flat", "refs/metadata/" + h},
      {"metadata, first folder only", "refs/metadata/" + h.substr(0, 2) + "/" + h.substr(2)},
      {"metadata, slashes moved", "refs/metadata/" + moved},
      {"metadata, short", "refs/metadata/" + fh.substr(0, fh.size() - 1)},
      {"metadata, long", "refs/metadata/" + fh + "0"},
      {"metadata, uppercase", "refs/metadata/" + fan_upper},
      {"metadata, uppercase folder", "refs/metadata/" + fan_upper_dir},
      {"metadata, non-hex", "refs/metadata/" + non_hex},
      {"metadata, trailing slash", "refs/metadata/" + fh + "/"},
      {"metadata, leading slash", "/refs/metadata/" + fh},
      {"groups folder", "refs/groups/"},
      {"group key only", "refs/groups/" + fh},
      {"group, flat key", "refs/groups/" + h + "/" + h},
      {"group, fanned run", "refs/groups/" + fh + "/" + fh},
      {"group, run short", "refs/groups/" + fh + "/" + h.substr(1)},
      {"group, uppercase run", "refs/groups/" + fh + "/" + upper},
      {"group, trailing slash", "refs/groups/" + fh + "/" + h + "/"},
      {"levels folder", "refs/levels/"},
      {"level folder", "refs/levels/reproduced/"},
      {"unknown level", "refs/levels/verified/" + fh},
      {"level in capitals", "refs/levels/Reproduced/" + fh},
      {"level, flat run", "refs/levels/reported/" + h},
      {"level, slashes moved", "refs/levels/reported/" + moved},
      {"level, extra part", "refs/levels/reported/" + fh + "/x"},
      {"level, no level", "refs/levels/" + fh},
      {"attestations folder", "refs/attestations/" + fh},
      {"attestation, flat run", "refs/attestations/" + h + "/" + h},
      {"attestation, fanned attestation", "refs/attestations/" + fh + "/" + fh},
      {"attestation, uppercase", "refs/attestations/" + fan_upper + "/" + h},
      {"reruns folder", "refs/reruns/" + fh},
      {"rerun, flat run", "refs/reruns/" + h + "/" + h},
      {"rerun, fanned rerun", "refs/reruns/" + fh + "/" + fh},
      {"rerun, uppercase rerun", "refs/reruns/" + fh + "/" + upper},
      {"rerun, extra part", "refs/reruns/" + fh + "/" + h + "/x"},
      {"object path", expected_object_path(h)},
      {"source path", "refs/sources/s/" + h},
      {"FORMAT", "FORMAT"},
  };
}

TEST_CASE("refs parse_* reject everything their render does not give", "[layout][errors]") {
  for (Format f : {Format::k1, Format::k2}) {
    for (const RefsParsers& parser : refs_parsers(f)) {
      INFO(format_name(f) << " " << parser.name << " accepts " << parser.good);
      REQUIRE(parser.parses(parser.good));
      for (const BadPath& c : f == Format::k1 ? format1_bad_paths() : format2_bad_paths()) {
        INFO(parser.name << ", " << c.name << ": \"" << c.path << "\"");
        CHECK_FALSE(parser.parses(c.path));
      }
    }
  }
}

TEST_CASE("each refs parse_* takes only its own folder, and only its own format's names", "[layout][errors]") {
  for (Format f : {Format::k1, Format::k2}) {
    const Format other_format = f == Format::k1 ? Format::k2 : Format::k1;
    for (const RefsParsers& parser : refs_parsers(f)) {
      for (const RefsParsers& other : refs_parsers(f)) {
        if (std::string_view(parser.name) == other.name) continue;
        INFO(format_name(f) << " " << parser.name << " given " << other.good);
        CHECK_FALSE(parser.parses(other.good));
      }
      // A path of the other format names the same digests elsewhere: never taken.
      for (const RefsParsers& other : refs_parsers(other_format)) {
        INFO(format_name(f) << " " << parser.name << " given " << format_name(other_format) << " " << other.good);
        CHECK_FALSE(parser.parses(other.good));
      }
    }
  }
}

// A run spec whose sourceNative names `source` and `external_id`.
Json run_spec(const std::string& source, const std::string& external_id) {
  Json native = Json::object();
  native.set("source", source);
  native.set("benchmark", "bench");
  native.set("externalId", external_id);
  Json spec = Json::object();
  spec.set("status", "passed");
  spec.set("sourceNative", std::move(native));
  return spec;
}

TEST_CASE("source_path: valid source ids keep their /-separated parts", "[layout]") {
  struct Case {
    std::string source, id, path;
  };
  const std::vector<Case> cases = {
      {"liger-kernel-bench",
       "tiled_geglu/backward/liger_tiled/nvidia-geforce-rtx-4090/batch2-hidden2048-intermediate4096-seq1024-bf16/"
       "2025-11-11-06-22-57",
       "refs/sources/liger-kernel-bench/tiled_geglu/backward/liger_tiled/nvidia-geforce-rtx-4090/"
       "batch2-hidden2048-intermediate4096-seq1024-bf16/2025-11-11-06-22-57"},
      {"s", "x", "refs/sources/s/x"},
      {"s", "a/b", "refs/sources/s/a/b"},
      {"s", "...", "refs/sources/s/..."},          // only "." and ".." are special
      {"s", "a.git", "refs/sources/s/a.git"},
      {"s", "with space", "refs/sources/s/with space"},
      {"s", "ünïcødé/名前", "refs/sources/s/ünïcødé/名前"},
      {".hidden", "x", "refs/sources/.hidden/x"},
  };
  for (const Case& c : cases) {
    INFO(c.source << " / " << c.id);
    auto path = source_path(run_spec(c.source, c.id), "run.json");
    REQUIRE(path.has_value());
    CHECK(*path == c.path);
  }
}

TEST_CASE("source_path: no sourceNative, no path", "[layout]") {
  Json spec = Json::object();
  spec.set("status", "passed");
  CHECK_FALSE(source_path(spec, "run.json").has_value());
  spec.set("sourceNative", "not an object");
  CHECK_FALSE(source_path(spec, "run.json").has_value());
}

// The message source_path throws, or "" when it returns.
std::string source_error(const std::string& source, const std::string& id) {
  try {
    source_path(run_spec(source, id), "runs.jsonl:7");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidInput);
    return e.what();
  }
  return "";
}

TEST_CASE("source_path: ids that cannot be a path are rejected, naming the member", "[layout][errors]") {
  struct Case {
    const char* name;
    std::string source, id;
    std::string member;  // "source" or "externalId"
    std::string found;   // what the message says was found
  };
  const std::string nul("a\0b", 3);
  const std::vector<Case> cases = {
      {"empty source", "", "x", "source", "an empty path segment"},
      {"source ..", "..", "x", "source", "the segment \"..\""},
      {"source .", ".", "x", "source", "the segment \".\""},
      {"source .git", ".git", "x", "source", "the segment \".git\""},
      {"source .GIT", ".GIT", "x", "source", "the segment \".GIT\""},
      {"id .gitignore", "s", ".gitignore", "externalId", "the segment \".gitignore\""},
      {"id .gitmodules", "s", "a/.gitmodules", "externalId", "the segment \".gitmodules\""},
      {"source with /", "a/b", "x", "source", "a \"/\""},
      {"source leading /", "/a", "x", "source", "a \"/\""},
      {"source trailing /", "a/", "x", "source", "a \"/\""},
      {"source control char", "a\x01", "x", "source", "a control character"},
      {"source newline", "a\nb", "x", "source", "a control character"},
      {"source DEL", "a\x7f", "x", "source", "a control character"},
      {"source NUL", nul, "x", "source", "a control character"},
      {"empty id", "s", "", "externalId", "an empty path segment"},
      {"id leading /", "s", "/a", "externalId", "an empty path segment"},
      {"id trailing /", "s", "a/", "externalId", "an empty path segment"},
      {"id only /", "s", "/", "externalId", "an empty path segment"},
      {"id empty middle segment", "s", "a//b", "externalId", "an empty path segment"},
      {"id ..", "s", "..", "externalId", "the segment \"..\""},
      {"id .. inside", "s", "a/../b", "externalId", "the segment \"..\""},
      {"id . inside", "s", "a/./b", "externalId", "the segment \".\""},
      {"id .git last", "s", "a/.git", "externalId", "the segment \".git\""},
      {"id .Git inside", "s", "a/.Git/b", "externalId", "the segment \".Git\""},
      {"id tab", "s", "a/b\tc", "externalId", "a control character"},
      {"id escape", "s", "a\x1b[0m", "externalId", "a control character"},
      {"id NUL", "s", "x/" + nul, "externalId", "a control character"},
      {"id DEL", "s", "a/\x7f", "externalId", "a control character"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::string message = source_error(c.source, c.id);
    REQUIRE_FALSE(message.empty());
    CHECK(message.rfind("runs.jsonl:7: /spec/sourceNative/" + c.member + ": ", 0) == 0);
    CHECK_THAT(message, Catch::Matchers::Contains("found " + c.found));
  }
}

// git and libgit2 take other spellings for ".git" too (NTFS: ".git.",
// ".git ", "git~1"; fsck calls them hasDotgit): they must be refused with the
// member named, before libgit2's tree builder would fail on them.
TEST_CASE("source_path: NTFS spellings of .git are rejected", "[layout][errors]") {
  for (std::string id : {"a/.git./b", "a/.git /b", "a/git~1/b", "a/GIT~1", ".git..",
                         // HFS+ ignores U+200C, U+200F, U+202E, U+206F, U+FEFF in names
                         "a/.g\u200cit/b", "a/.\u200fGIT", "\ufeff.git", ".gi\u202et/x", "a/.git\u206f",
                         // NTFS reads "\\" as a folder separator
                         "a\\.git\\hooks", "a/b\\GIT~1", "x\\.gitmodules"}) {
    INFO(id);
    std::string message = source_error("s", id);
    CHECK_THAT(message, Catch::Matchers::Contains("/spec/sourceNative/externalId"));
  }
}

TEST_CASE("parse_source_path is the inverse of source_path", "[layout]") {
  struct Case {
    std::string source, id;
  };
  const std::vector<Case> cases = {
      {"liger-kernel-bench", "tiled_geglu/backward/liger_tiled/nvidia-geforce-rtx-4090/b2-seq1024-bf16/2025-11-11"},
      {"s", "x"},
      {"s", "a/b/c/d"},
      {"s", "..."},
      {"s", "a.git"},
      {".hidden", "with space/ünïcødé/名前"},
  };
  for (const Case& c : cases) {
    INFO(c.source << " / " << c.id);
    auto path = source_path(run_spec(c.source, c.id), "run.json");
    REQUIRE(path.has_value());
    auto back = parse_source_path(*path);
    REQUIRE(back.has_value());
    CHECK(*back == SourceEntryPath{c.source, c.id});
  }
}

TEST_CASE("parse_source_path rejects what source_path never renders", "[layout][errors]") {
  const std::string nul("a\0b", 3);
  struct Case {
    const char* name;
    std::string path;
  };
  const std::vector<Case> cases = {
      {"empty", ""},
      {"folder", "refs/sources/"},
      {"source without id", "refs/sources/s"},
      {"source folder", "refs/sources/s/"},
      {"empty source", "refs/sources//x"},
      {"source ..", "refs/sources/../x"},
      {"source .", "refs/sources/./x"},
      {"source .git", "refs/sources/.git/x"},
      {"source GIT~1", "refs/sources/GIT~1/x"},
      {"id trailing /", "refs/sources/s/a/"},
      {"id empty middle segment", "refs/sources/s/a//b"},
      {"id ..", "refs/sources/s/a/../b"},
      {"id .", "refs/sources/s/."},
      {"id .gitmodules", "refs/sources/s/a/.gitmodules"},
      {"id .git.", "refs/sources/s/.git./b"},
      {"id tab", "refs/sources/s/a\tb"},
      {"id NUL", "refs/sources/s/" + nul},
      {"id DEL", "refs/sources/s/a\x7f"},
      {"source control char", "refs/sources/a\x01/x"},
      {"leading slash", "/refs/sources/s/x"},
      {"other folder", "refs/source/s/x"},
      {"metadata path", "refs/metadata/" + kEmptyHex},
  };
  for (const Case& c : cases) {
    INFO(c.name << ": \"" << c.path << "\"");
    CHECK_FALSE(parse_source_path(c.path).has_value());
  }
}

}  // namespace
TEST_CASE("dictionary_path and parse_dictionary_path: decimal Dictionary_IDs, format 2 only", "[layout]") {
  for (std::uint32_t id : {1u, 9u, 10u, 4242u, 2147483647u, 4294967295u}) {
    INFO(id);
    CHECK(dictionary_path(id) == "dictionaries/" + std::to_string(id));
    CHECK(parse_dictionary_path(Format::k2, dictionary_path(id)) == id);
    CHECK_FALSE(parse_dictionary_path(Format::k1, dictionary_path(id)).has_value());
  }
  for (const char* bad : {"dictionaries/", "dictionaries", "dictionaries/0", "dictionaries/04242", "dictionaries/+1",
                          "dictionaries/-1", "dictionaries/4294967296", "dictionaries/99999999999", "dictionaries/1a",
                          "dictionaries/1/2", "dictionaries/ 1", "dictionariesx/1", "objects/dictionaries/1",
                          "dictionaries/0x10"}) {
    INFO(bad);
    CHECK_FALSE(parse_dictionary_path(Format::k2, bad).has_value());
  }
}

}  // namespace kistore
