// The object codec (objects/blob.h) on frames made by the stock `zstd` tool,
// so that what is refused is what a real writer can produce: no content size,
// no checksum, two frames, a header that lies about the size, a truncated
// frame.
#include "objects/blob.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "objects/error.h"
#include "objects/json.h"

namespace kistore {
namespace {
namespace fs = std::filesystem;

struct Scratch {
  std::string dir;
  Scratch() {
    char tmpl[] = "/tmp/kistore-blob-test-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    dir = tmpl;
  }
  ~Scratch() { fs::remove_all(dir); }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The frame `zstd FLAGS` makes of `content`.
std::string zstd_frame(const Scratch& s, const std::string& content, const std::string& flags) {
  const std::string in = s.dir + "/in", out = s.dir + "/out.zst";
  std::ofstream(in, std::ios::binary) << content;
  std::string cmd = "zstd -q -f " + flags + " '" + in + "' -o '" + out + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return read_file(out);
}

std::string refusal(const std::string& frame) {
  try {
    decode_object(frame, "objects/sha256/ab/cd/ef");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kCorruption);
    return e.what();
  }
  FAIL("the frame was accepted");
  return "";
}

const std::string kContent = R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation","spec":{"name":"x"}})";

}  // namespace

TEST_CASE("blob: a frame from encode_object and one from the zstd tool decode", "[blob]") {
  CHECK(decode_object(encode_object(kContent), "x") == kContent);
  Scratch s;
  CHECK(decode_object(zstd_frame(s, kContent, "--check"), "x") == kContent);
}

TEST_CASE("blob: frames the store must not hold are refused, naming the object and what was found",
          "[blob][errors]") {
  Scratch s;
  using Catch::Matchers::Contains;
  SECTION("no content size in the header") {
    std::string m = refusal(zstd_frame(s, kContent, "--no-content-size"));
    CHECK_THAT(m, Contains("objects/sha256/ab/cd/ef") && Contains("declares its content size"));
  }
  SECTION("no content checksum") {
    CHECK_THAT(refusal(zstd_frame(s, kContent, "--no-check")), Contains("content checksum"));
  }
  SECTION("two frames, one after the other") {
    std::string one = zstd_frame(s, kContent, "");
    CHECK_THAT(refusal(one + one), Contains("exactly one zstd frame") && Contains(std::to_string(one.size()) + " bytes after"));
  }
  SECTION("trailing bytes") {
    CHECK_THAT(refusal(zstd_frame(s, kContent, "") + "x"), Contains("1 bytes after"));
  }
  SECTION("a header declaring 1 TiB is refused before anything is allocated") {
    std::string f = zstd_frame(s, kContent, "");
    // zstd wrote a single-segment frame with a 1-byte Frame_Content_Size:
    // descriptor 0x24. 0xE4 keeps single segment and checksum and makes the
    // size field 8 bytes, little-endian.
    REQUIRE(static_cast<unsigned char>(f[4]) == 0x24);
    std::string size8(8, '\0');
    size8[5] = 1;  // 2^40
    std::string patched = f.substr(0, 4) + "\xE4" + size8 + f.substr(6);
    std::string m = refusal(patched);
    CHECK_THAT(m, Contains("1099511627776") && Contains(std::to_string(kMaxInputBytes)));
  }
  SECTION("a header declaring fewer bytes than the content holds") {
    std::string f = zstd_frame(s, kContent, "");
    REQUIRE(static_cast<unsigned char>(f[4]) == 0x24);
    f[5] = static_cast<char>(f[5] - 1);
    CHECK_THAT(refusal(f), Contains("does not decode"));
  }
  SECTION("a truncated frame") {
    std::string f = zstd_frame(s, kContent, "");
    CHECK_THAT(refusal(f.substr(0, f.size() - 3)), Contains("expected a whole zstd frame"));
    CHECK_THAT(refusal(f.substr(0, 5)), Contains("invalid or truncated"));
    CHECK_THAT(refusal(f.substr(0, 2)), Contains("fewer than 4 bytes"));
  }
  SECTION("a damaged block fails its checksum") {
    std::string f = encode_object(kContent);
    f[f.size() - 1] = static_cast<char>(f[f.size() - 1] ^ 1);
    CHECK_THAT(refusal(f), Contains("does not decode"));
  }
}

}  // namespace kistore
