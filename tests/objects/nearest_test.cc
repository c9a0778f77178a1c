// The "did you mean" of commands, options and remotes.
#include <catch2/catch.hpp>

#include "objects/nearest.h"

using kistore::edit_distance;
using kistore::nearest_name;

TEST_CASE("edit_distance counts insertions, deletions, substitutions and neighbour swaps", "[nearest]") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("push", "push") == 0);
  CHECK(edit_distance("pusj", "push") == 1);     // substitution
  CHECK(edit_distance("improt", "import") == 1); // swap of two neighbours
  CHECK(edit_distance("pul", "pull") == 1);      // insertion
  CHECK(edit_distance("pulll", "pull") == 1);    // deletion
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("verify", "log") == 6);
}

TEST_CASE("nearest_name: one edit for short words, two for longer, none when nothing is near", "[nearest]") {
  const std::vector<std::string> remotes{"origin", "mirror", "backup"};
  CHECK(nearest_name("orgin", remotes) == "origin");      // 5 letters: up to two edits
  CHECK(nearest_name("orign", remotes) == "origin");
  CHECK(nearest_name("mirorr", remotes) == "mirror");
  CHECK(nearest_name("zzzzzz", remotes).empty());
  const std::vector<std::string> commands{"add", "log", "ls", "pull", "push"};
  CHECK(nearest_name("pul", commands) == "pull");
  CHECK(nearest_name("lg", commands) == "log");
  CHECK(nearest_name("pxxl", commands).empty());          // 4 letters: one edit only
  CHECK(nearest_name("--frmat", {"--format", "--help"}, 5) == "--format");
  CHECK(nearest_name("anything", {}).empty());
}
