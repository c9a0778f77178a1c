#include "refs/rank.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace kistore {
namespace {

// Run digests D0 < D1 < ... so that "digest order" in the tables below is
// simply index order.
const std::vector<Digest>& runs() {
  static const std::vector<Digest> sorted = [] {
    std::vector<Digest> d;
    for (int i = 0; i < 8; ++i) d.push_back(Digest::of("run " + std::to_string(i)));
    std::sort(d.begin(), d.end());
    return d;
  }();
  return sorted;
}

int index_of(const Digest& d) {
  const auto& all = runs();
  return static_cast<int>(std::find(all.begin(), all.end(), d) - all.begin());
}

struct In {
  int run;                      // index into runs()
  std::optional<double> value;  // nullopt: no primary measurement
  const char* unit = "ns";
  Level level = Level::kReported;
};

std::vector<GroupMember> members(const std::vector<In>& in) {
  std::vector<GroupMember> out;
  for (const In& m : in) {
    GroupMember g{runs()[m.run], std::nullopt, m.level};
    if (m.value) g.primary = Measurement{"latency", "median", m.unit, *m.value};
    out.push_back(g);
  }
  return out;
}

// "D<i>:<rank>" for each ranked member, in output order: the golden form of a table row.
std::string render(const std::vector<RankedMember>& ranked) {
  std::ostringstream out;
  for (const RankedMember& r : ranked) out << (out.tellp() > 0 ? " " : "") << "D" << index_of(r.member.run) << ":" << r.rank;
  return out.str();
}

TEST_CASE("rank_group: standard competition ranking, lower is better", "[rank]") {
  struct Case {
    const char* name;
    std::vector<In> in;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"empty", {}, ""},
      {"single", {{0, 3.0}}, "D0:1"},
      {"1,2,2,4 -> ranks 1,2,2,4", {{3, 4.0}, {1, 2.0}, {0, 1.0}, {2, 2.0}}, "D0:1 D1:2 D2:2 D3:4"},
      {"1,1,3", {{2, 3.0}, {1, 1.0}, {0, 1.0}}, "D0:1 D1:1 D2:3"},
      {"1,2,2,2,5", {{4, 5.0}, {3, 2.0}, {2, 2.0}, {1, 2.0}, {0, 1.0}}, "D0:1 D1:2 D2:2 D3:2 D4:5"},
      {"all equal", {{2, 5.0}, {0, 5.0}, {1, 5.0}}, "D0:1 D1:1 D2:1"},
      {"ties keep digest order whatever the input order", {{3, 2.0}, {1, 2.0}, {0, 1.0}}, "D0:1 D1:2 D3:2"},
      {"lower is better", {{0, 30.0}, {1, 20.0}, {2, 10.0}}, "D2:1 D1:2 D0:3"},
      {"fractions and large values", {{0, 1e9}, {1, 0.5}, {2, 0.25}}, "D2:1 D1:2 D0:3"},
      {"zero and negative zero tie", {{1, 0.0}, {0, -0.0}}, "D0:1 D1:1"},
      {"runs without primary last, unranked, in digest order",
       {{0, std::nullopt}, {1, 5.0}, {2, std::nullopt}, {3, 3.0}},
       "D3:1 D1:2 D0:0 D2:0"},
      {"no run has a primary", {{1, std::nullopt}, {0, std::nullopt}}, "D0:0 D1:0"},
      {"unit mismatch is unranked and does not take a rank",
       {{0, 1.0, "ns"}, {1, 2.0, "ms"}, {2, 3.0, "ns"}},
       "D0:1 D2:2 D1:0"},
      {"unit mismatch listed before runs without primary",
       {{0, std::nullopt}, {1, 2.0, "ms"}, {2, 1.0, "ns"}, {3, 3.0, "ns"}},
       "D2:1 D3:2 D1:0 D0:0"},
      {"ties around a unit mismatch", {{0, 1.0, "ns"}, {1, 2.0, "ms"}, {2, 2.0, "ns"}, {3, 2.0, "ns"}},
       "D0:1 D2:2 D3:2 D1:0"},
      {"a mismatch equal in value is not a tie", {{1, 1.0, "ms"}, {0, 1.0, "ns"}}, "D0:1 D1:0"},
      {"the group's unit is the first ranked (lowest) run's",
       {{0, 1.0, "ms"}, {1, 2.0, "ns"}, {2, 3.0, "ns"}},
       "D0:1 D1:0 D2:0"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(render(rank_group(members(c.in))) == c.expected);
  }
}

TEST_CASE("rank_group keeps each member's data", "[rank]") {
  auto ranked = rank_group(members({{1, 7.5, "ns", Level::kReproduced}, {0, std::nullopt, "ns", Level::kDisputed}}));
  REQUIRE(ranked.size() == 2);
  CHECK(ranked[0].member.run == runs()[1]);
  REQUIRE(ranked[0].member.primary.has_value());
  CHECK(ranked[0].member.primary->value == 7.5);
  CHECK(ranked[0].member.level == Level::kReproduced);
  CHECK(ranked[1].member.run == runs()[0]);
  CHECK_FALSE(ranked[1].member.primary.has_value());
  CHECK(ranked[1].member.level == Level::kDisputed);
}

TEST_CASE("rank_group with --min-level keeps members at or above it, then ranks", "[rank]") {
  const std::vector<In> in = {
      {0, 1.0, "ns", Level::kDisputed},
      {1, 2.0, "ns", Level::kReported},
      {2, 3.0, "ns", Level::kSourceNative},
      {3, 4.0, "ns", Level::kReproduced},
      {4, std::nullopt, "ns", Level::kReproduced},
      {5, 3.0, "ns", Level::kReproduced},
  };
  struct Case {
    Level min;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {Level::kDisputed, "D0:1 D1:2 D2:3 D5:3 D3:5 D4:0"},
      {Level::kReported, "D1:1 D2:2 D5:2 D3:4 D4:0"},
      {Level::kSourceNative, "D2:1 D5:1 D3:3 D4:0"},
      {Level::kReproduced, "D5:1 D3:2 D4:0"},
  };
  for (const Case& c : cases) {
    INFO("min level " << level_name(c.min));
    CHECK(render(rank_group(members(in), c.min)) == c.expected);
  }
}

}  // namespace
}  // namespace kistore
