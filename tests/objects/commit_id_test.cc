// CommitId (objects/commit_id.h): parse is hex()'s inverse and accepts
// nothing else; ids order and hash by their bytes.
#include "objects/commit_id.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <unordered_set>

namespace kistore {
namespace {

const std::string kHexId = "0123456789abcdef00112233445566778899aabb";

TEST_CASE("CommitId: parse and hex are inverses", "[objects][commit_id]") {
  std::optional<CommitId> id = CommitId::parse(kHexId);
  REQUIRE(id);
  CHECK(id->hex() == kHexId);
  CHECK(id->bytes()[0] == 0x01);
  CHECK(id->bytes()[19] == 0xbb);
  CHECK(CommitId::parse(id->hex()) == id);
  CommitId copy = CommitId::from_bytes(id->bytes().data());
  CHECK(copy == *id);
}

TEST_CASE("CommitId: parse refuses everything hex() does not write", "[objects][commit_id]") {
  // One line per case: the text, and why it is no commit id.
  const std::pair<std::string, const char*> bad[] = {
      {"", "empty"},
      {kHexId.substr(0, 39), "39 digits"},
      {kHexId + "0", "41 digits"},
      {"0123456789ABCDEF00112233445566778899aabb", "uppercase"},
      {"0123456789abcdef00112233445566778899aabg", "not a hex digit"},
      {" 123456789abcdef00112233445566778899aabb", "leading space"},
      {"0123456789abcdef00112233445566778899aab\n", "trailing newline"},
      {"sha1:0123456789abcdef00112233445566778899", "a prefix"},
      {std::string("0123456789abcdef001122334455667788\0" "9aabb", 40), "a NUL"},
  };
  for (const auto& [text, why] : bad) {
    INFO(why);
    CHECK_FALSE(CommitId::parse(text));
  }
}

TEST_CASE("CommitId: ordered and hashed by its bytes", "[objects][commit_id]") {
  CommitId a = *CommitId::parse("00" + kHexId.substr(2));
  CommitId b = *CommitId::parse("01" + kHexId.substr(2));
  CommitId b2 = *CommitId::parse("01" + kHexId.substr(2));
  CHECK(a < b);
  CHECK(b == b2);
  CHECK(a != b);
  CHECK(std::hash<CommitId>{}(b) == std::hash<CommitId>{}(b2));
  std::set<CommitId> ordered{b, a, b2};
  CHECK(ordered.size() == 2);
  CHECK(*ordered.begin() == a);
  std::unordered_set<CommitId> hashed{a, b, b2};
  CHECK(hashed.size() == 2);
}

}  // namespace
}  // namespace kistore
