#include "refs/level.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "objects/json.h"

namespace kistore {
namespace {

const std::vector<std::pair<Level, std::string>> kLevels = {
    {Level::kDisputed, "disputed"},
    {Level::kReported, "reported"},
    {Level::kSourceNative, "source-native"},
    {Level::kReproduced, "reproduced"},
};

TEST_CASE("level names are SPEC §1's and parse_level is their inverse", "[level]") {
  for (const auto& [level, name] : kLevels) {
    INFO(name);
    CHECK(level_name(level) == name);
    auto back = parse_level(name);
    REQUIRE(back.has_value());
    CHECK(*back == level);
  }
}

TEST_CASE("parse_level rejects other spellings", "[level][errors]") {
  for (const char* name : {"", "Reported", "REPORTED", "source_native", "sourceNative", "sourcenative",
                           "source-native ", " reported", "reproduce", "disputed\n", "unknown"}) {
    INFO("\"" << name << "\"");
    CHECK_FALSE(parse_level(name).has_value());
  }
}

TEST_CASE("levels are ordered disputed < reported < source-native < reproduced", "[level]") {
  CHECK(Level::kDisputed < Level::kReported);
  CHECK(Level::kReported < Level::kSourceNative);
  CHECK(Level::kSourceNative < Level::kReproduced);
}

TEST_CASE("level_names lists every level in order, as level_name spells them", "[level]") {
  std::string expected;
  for (const auto& [level, name] : kLevels) {
    if (!expected.empty()) expected += ", ";
    expected += std::string(level_name(level));
  }
  CHECK(level_names() == expected);
}

TEST_CASE("default_level: source-native only for passed runs with sourceNative", "[level]") {
  Json native = Json::object();
  native.set("source", "liger-kernel-bench");
  native.set("benchmark", "b");
  native.set("externalId", "x");
  struct Case {
    const char* name;
    Json status;  // null: absent
    bool has_native;
    Level expected;
  };
  const std::vector<Case> cases = {
      {"passed + sourceNative", "passed", true, Level::kSourceNative},
      {"passed, no sourceNative", "passed", false, Level::kReported},
      {"failed + sourceNative", "failed", true, Level::kReported},
      {"failed, no sourceNative", "failed", false, Level::kReported},
      {"Passed (case matters) + sourceNative", "Passed", true, Level::kReported},
      {"error + sourceNative", "error", true, Level::kReported},
      {"empty status + sourceNative", "", true, Level::kReported},
      {"no status + sourceNative", Json(), true, Level::kReported},
      {"status not a string + sourceNative", true, true, Level::kReported},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Json spec = Json::object();
    if (!c.status.is_null()) spec.set("status", c.status);
    if (c.has_native) spec.set("sourceNative", native);
    CHECK(default_level(spec) == c.expected);
  }
}

}  // namespace
}  // namespace kistore
