// The object codec (objects/blob.h) on frames made by the stock `zstd` tool,
// so that what is refused is what a real writer can produce: no content size,
// no checksum, two frames, a header that lies about the size, a truncated
// frame.
#include "objects/blob.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

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

// A dictionary that `zstd --train` makes from 300 small documents, with
// Dictionary_ID `id`, in s.dir/dict-<id>.
std::string trained_dictionary(const Scratch& s, unsigned id) {
  const std::string samples = s.dir + "/samples";
  fs::create_directories(samples);
  for (int i = 0; i < 300; ++i)
    std::ofstream(samples + "/" + std::to_string(i) + ".json")
        << R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation","spec":{"name":"kernel-)" << i
        << R"(","repo":"https://github.com/x/y)" << i * 7 << R"(","lang":"triton"}})";
  const std::string out = s.dir + "/dict-" + std::to_string(id);
  std::string cmd = "zstd -q -f --train '" + samples + "'/* --maxdict=2048 --dictID=" + std::to_string(id) + " -o '" +
                    out + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return read_file(out);
}

std::string corruption(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kCorruption);
    return e.what();
  }
  FAIL("accepted");
  return "";
}

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

TEST_CASE("blob: a frame naming a dictionary decodes with the store's dictionary of that ID, and only then",
          "[blob][dictionary]") {
  using Catch::Matchers::Contains;
  Scratch s;
  const std::string bytes = trained_dictionary(s, 4242);
  auto dict = std::make_shared<const Dictionary>(bytes, 4242, "dictionaries/4242");
  CHECK(dict->id() == 4242);
  // The stock tool's frame with that dictionary: it names ID 4242.
  const std::string frame = zstd_frame(s, kContent, "--check -D '" + s.dir + "/dict-4242'");
  CHECK(frame_dictionary_id(frame) == 4242);
  CHECK(frame_dictionary_id(encode_object(kContent)) == 0);
  CHECK(frame_dictionary_id("xy") == 0);
  DictionaryLookup lookup = [&](std::uint32_t id) { return id == 4242 ? dict : nullptr; };
  CHECK(decode_object(frame, "objects/sha256/ab/cd/ef", lookup) == kContent);
  // A frame without a dictionary still decodes with a lookup at hand.
  CHECK(decode_object(encode_object(kContent), "x", lookup) == kContent);

  SECTION("no such dictionary in the store") {
    CHECK_THAT(corruption([&] { decode_object(frame, "objects/sha256/ab/cd/ef"); }),
               Contains("objects/sha256/ab/cd/ef") && Contains("dictionary 4242") && Contains("dictionaries/4242"));
    DictionaryLookup none = [](std::uint32_t) { return std::shared_ptr<const Dictionary>(); };
    CHECK_THAT(corruption([&] { decode_object(frame, "o", none); }), Contains("dictionaries/4242"));
  }
  SECTION("another dictionary under the same ID: the frame does not decode") {
    // Same ID, other content: trained on other samples.
    Scratch other;
    fs::create_directories(other.dir + "/samples");
    for (int i = 0; i < 300; ++i)
      for (std::ofstream out(other.dir + "/samples/" + std::to_string(i)); out.tellp() < 200;)
        out << "zzzz qqqq " << i * 13 << " wwww " << i << ' ';
    std::string cmd = "zstd -q -f --train '" + other.dir + "'/samples/* --maxdict=2048 --dictID=4242 -o '" +
                      other.dir + "/d'";
    REQUIRE(std::system(cmd.c_str()) == 0);
    auto wrong = std::make_shared<const Dictionary>(read_file(other.dir + "/d"), 4242, "dictionaries/4242");
    DictionaryLookup lie = [&](std::uint32_t) { return wrong; };
    CHECK_THAT(corruption([&] { decode_object(frame, "o", lie); }), Contains("does not decode"));
  }
}

TEST_CASE("blob: what is not a zstd dictionary of its file's ID is refused, naming the file", "[blob][dictionary]") {
  using Catch::Matchers::Contains;
  Scratch s;
  const std::string bytes = trained_dictionary(s, 4242);
  auto refused = [&](const std::string& b, std::uint32_t id) {
    return corruption([&] { Dictionary d(b, id, "dictionaries/" + std::to_string(id)); });
  };
  CHECK_THAT(refused(bytes, 7), Contains("dictionaries/7") && Contains("Dictionary_ID is 7") && Contains("found 4242"));
  CHECK_THAT(refused("abc", 1), Contains("3 bytes"));
  CHECK_THAT(refused(bytes + std::string(kMaxDictionaryBytes, 'x'), 4242),
             Contains("at most " + std::to_string(kMaxDictionaryBytes)));
  CHECK_THAT(refused(std::string(4096, 'x'), 1), Contains("magic number 0xEC30A437"));
  // The magic and ID, then tables cut short.
  CHECK_THAT(refused(bytes.substr(0, 40), 4242), Contains("cannot load"));
}

// `dictionary` (as zstd --train writes it) with its literals Huffman table
// replaced by one that describes two byte values only (RFC 8878 §4.2.1.1:
// header byte 128 + 1, one 4-bit weight given, symbol 0 weight 1; symbol
// 1's is implied). zstd 1.5.4 loads it for decoding (ZSTD_createDDict) and
// refuses it for compression (ZSTD_createCDict returns NULL).
static std::string decode_only(const std::string& dictionary) {
  const unsigned header = static_cast<unsigned char>(dictionary.at(8));
  REQUIRE(header < 128);  // an FSE-compressed weight list of `header` bytes
  return dictionary.substr(0, 8) + std::string("\x80\x10", 2) + dictionary.substr(9 + header);
}

TEST_CASE("blob: a dictionary zstd decodes with but cannot compress with is told apart", "[blob][dictionary]") {
  using Catch::Matchers::Contains;
  Scratch s;
  const std::string bytes = trained_dictionary(s, 4242);
  Dictionary good(bytes, 4242, "dictionaries/4242");
  CHECK(good.compression_problem().empty());
  CHECK(good.compression_problem().empty());  // remembered
  Dictionary hostile(decode_only(bytes), 4242, "dictionaries/4242");  // it loads: frames naming it decode
  CHECK_THAT(hostile.compression_problem(), Contains("cannot compress with it"));
  CHECK_THROWS_AS(encode_object(kContent, &hostile), Error);
  // The checks may run on several threads at once.
  Dictionary again(decode_only(bytes), 4242, "dictionaries/4242");
  std::vector<std::thread> threads;
  std::vector<std::string> seen(4);
  for (int i = 0; i < 4; ++i) threads.emplace_back([&, i] { seen[i] = again.compression_problem(); });
  for (std::thread& t : threads) t.join();
  for (const std::string& m : seen) CHECK(m == hostile.compression_problem());
}

}  // namespace kistore
