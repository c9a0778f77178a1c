// What git's receive-pack writes on a pre-receive hook's standard input, read
// strictly (store/sync/hook.h): anything else is bad input naming its line.
#include <catch2/catch.hpp>

#include <string>

#include "objects/error.h"
#include "store/sync/hook.h"

namespace kistore {
namespace {

const std::string kA(40, 'a'), kB(40, 'b'), kZero(40, '0');

TEST_CASE("parse_ref_updates: receive-pack's lines, and nothing else", "[store][sync][hook]") {
  std::vector<RefUpdate> u = parse_ref_updates(kZero + " " + kA + " refs/heads/main\n" + kA + " " + kB + " refs/tags/x\n\n");
  REQUIRE(u.size() == 2);
  CHECK(u[0].old_id == kZero);
  CHECK(u[0].new_id == kA);
  CHECK(u[0].ref == "refs/heads/main");
  CHECK(u[1].ref == "refs/tags/x");
  CHECK(parse_ref_updates("").empty());

  const std::pair<std::string, std::string> bad[] = {
      {"not a ref line\n", "line 1"},
      {kA + " " + kB + "\n", "line 1"},                                        // no ref
      {kA + " " + kB + " refs/heads/main extra\n", "line 1"},                  // a fourth word
      {kA + " " + kB + " refs/heads/main\n" + std::string(40, 'A') + " " + kB + " r\n", "line 2"},  // upper case
      {kA.substr(1) + " " + kB + " refs/heads/main\n", "line 1"},             // 39 digits
  };
  for (const auto& [text, line] : bad) {
    INFO(text);
    try {
      parse_ref_updates(text);
      FAIL("taken");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInvalidInput);
      CHECK_THAT(e.what(), Catch::Contains("standard input, " + line + ": expected \"<old id> <new id> <ref>\""));
    }
  }
}

}  // namespace
}  // namespace kistore
