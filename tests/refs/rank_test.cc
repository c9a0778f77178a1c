#include "refs/rank.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
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
    for (int i = 0; i < 12; ++i) d.push_back(Digest::of("run " + std::to_string(i)));
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

// "D<i>:<rank>" for each member, in output order: the golden form of a table row.
std::string render(const std::vector<RankedMember>& ranked) {
  std::ostringstream out;
  for (const RankedMember& r : ranked) out << (out.tellp() > 0 ? " " : "") << "D" << index_of(r.member.run) << ":" << r.rank;
  return out.str();
}

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

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
      {"runs without primary last, unrankable, in digest order",
       {{0, std::nullopt}, {1, 5.0}, {2, std::nullopt}, {3, 3.0}},
       "D3:1 D1:2 D0:0 D2:0"},
      {"no run has a primary", {{1, std::nullopt}, {0, std::nullopt}}, "D0:0 D1:0"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(render(rank_group(members(c.in))) == c.expected);
  }
}

TEST_CASE("rank_group compares values across units of one scale", "[rank][units]") {
  struct Case {
    const char* name;
    std::vector<In> in;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"s, ms, us, ns convert to one time scale",
       {{0, 0.003, "s"}, {1, 2.0, "ms"}, {2, 1500.0, "us"}, {3, 1000000.0, "ns"}},
       "D3:1 D2:2 D1:3 D0:4"},
      {"a bare small number in s does not win: 0.0026 s is 2.6 ms",
       {{0, 0.0026, "s"}, {1, 1491968.0}, {2, 2606080.0}, {3, 2675712.0}},
       "D1:1 D0:2 D2:3 D3:4"},
      {"equal times in different units tie", {{2, 1.0, "us"}, {1, 1000.0, "ns"}, {0, 0.001, "ms"}},
       "D0:1 D1:1 D2:1"},
      {"a tie across units then a skip", {{0, 500.0}, {1, 1.0, "us"}, {2, 1000.0}, {3, 2.0, "us"}},
       "D0:1 D1:2 D2:2 D3:4"},
      {"memory: B, KB, KiB, MB, MiB, GB, GiB",
       {{0, 1.0, "GiB"}, {1, 1.0, "GB"}, {2, 1.0, "MiB"}, {3, 1.0, "MB"}, {4, 1.0, "KiB"}, {5, 1.0, "KB"},
        {6, 999.0, "B"}},
       "D6:1 D5:2 D4:3 D3:4 D2:5 D1:6 D0:7"},
      {"memory: 1000 B = 1 KB, 1024 B = 1 KiB",
       {{0, 1.0, "KiB"}, {1, 1024.0, "B"}, {2, 1.0, "KB"}, {3, 1000.0, "B"}},
       "D2:1 D3:1 D0:3 D1:3"},
      {"memory: Liger's MB rows rank among themselves", {{0, 232.25, "MB"}, {1, 186.25, "MB"}, {2, 264.25, "MB"}},
       "D1:1 D0:2 D2:3"},
      {"a unit outside time and memory ranks only with itself",
       {{0, 30.0, "cycles"}, {1, 10.0, "cycles"}, {2, 20.0, "cycles"}},
       "D1:1 D2:2 D0:3"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(render(rank_group(members(c.in))) == c.expected);
  }
}

TEST_CASE("rank_group lists runs that cannot be compared apart, never displacing one that can", "[rank][units]") {
  struct Case {
    const char* name;
    std::vector<In> in;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"a unit that does not convert takes no rank", {{0, 1.0}, {1, 0.5, "widgets"}, {2, 3.0}}, "D0:1 D2:2 D1:0"},
      {"a memory run in a time group is unrankable", {{0, 1.0, "B"}, {1, 2.0}, {2, 3.0, "ms"}}, "D1:1 D2:2 D0:0"},
      {"time wins whatever the count", {{0, 1.0, "B"}, {1, 2.0, "B"}, {2, 3.0, "B"}, {3, 9.0, "s"}},
       "D3:1 D0:0 D1:0 D2:0"},
      {"memory before other units", {{0, 1.0, "widgets"}, {1, 2.0, "widgets"}, {2, 3.0, "KiB"}},
       "D2:1 D0:0 D1:0"},
      {"zero is not positive", {{0, 0.0}, {1, 5.0}}, "D1:1 D0:0"},
      {"negative zero is not positive", {{0, -0.0}, {1, 5.0}}, "D1:1 D0:0"},
      {"negative values never rank first", {{0, -3.0}, {1, 5.0}, {2, -1e9, "s"}}, "D1:1 D0:0 D2:0"},
      {"NaN and infinities are unrankable", {{0, kNaN}, {1, kInf}, {2, -kInf}, {3, 1.0}}, "D3:1 D0:0 D1:0 D2:0"},
      {"a time value that overflows on conversion is unrankable", {{0, 1e308, "s"}, {1, 1.0}}, "D1:1 D0:0"},
      {"unrankable in digest order whatever the reason",
       {{5, std::nullopt}, {4, -1.0}, {3, 1.0, "widgets"}, {2, 7.0}, {1, 0.0}, {0, 1.0, "MiB"}},
       "D2:1 D0:0 D1:0 D3:0 D4:0 D5:0"},
      {"ties around unrankable runs", {{0, 1.0}, {1, 2.0, "widgets"}, {2, 2.0}, {3, 2.0}}, "D0:1 D2:2 D3:2 D1:0"},
      {"an unrankable run equal in bare value is not a tie", {{1, 1.0, "widgets"}, {0, 1.0}}, "D0:1 D1:0"},
      {"zero or negative time runs do not make the group a time group",
       {{0, 0.0, "ns"}, {1, -2.0, "s"}, {2, 2.0, "MB"}, {3, 1.0, "MB"}},
       "D3:1 D2:2 D0:0 D1:0"},
      {"other units: the unit most runs share",
       {{0, 1.0, "widgets"}, {1, 2.0, "cycles"}, {2, 3.0, "cycles"}},
       "D1:1 D2:2 D0:0"},
      {"other units, equally shared: the first in byte order",
       {{0, 1.0, "widgets"}, {1, 2.0, "cycles"}, {2, 3.0, "widgets"}, {3, 4.0, "cycles"}},
       "D1:1 D3:2 D0:0 D2:0"},
      {"units are case-sensitive: MS and µs are not time units", {{0, 1.0, "MS"}, {1, 1.0, "\xc2\xb5s"}, {2, 5.0}},
       "D2:1 D0:0 D1:0"},
      {"nothing positive: every run unrankable", {{0, 0.0}, {1, -1.0, "B"}, {2, std::nullopt}}, "D0:0 D1:0 D2:0"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(render(rank_group(members(c.in))) == c.expected);
  }
}

TEST_CASE("the fixture's group ranks 3 of 4 whatever else is added to it", "[rank][units]") {
  // The tiled_geglu backward group (seq 1024, RTX 4090) as Liger publishes it:
  // liger, huggingface, liger_tiled (the seed fixture), deepspeed_tiled.
  const std::vector<In> real = {{3, 1491968.0}, {5, 1549920.0}, {7, 2606080.0}, {9, 2675712.0}};
  const std::vector<In> hostile = {
      {0, 0.0026, "s"},       // bare 0.0026: used to take rank 1
      {1, 2676.0, "us"},      // 2.676 ms: slower than all four
      {2, 0.0001, "widgets"}, // does not convert
      {4, 0.0},               // zero
      {6, -3.0},              // negative
      {8, std::nullopt},      // no primary
      {10, 1e-9, "B"},        // another scale
  };
  struct Case {
    const char* name;
    std::vector<int> added;  // indices into `hostile`
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"as published", {}, "D3:1 D5:2 D7:3 D9:4"},
      {"with every unrankable kind", {2, 3, 4, 5, 6}, "D3:1 D5:2 D7:3 D9:4 D2:0 D4:0 D6:0 D8:0 D10:0"},
      {"with a slower run in us", {1}, "D3:1 D5:2 D7:3 D9:4 D1:5"},
      {"with 0.0026 s (2.6 ms, between huggingface and liger_tiled)", {0}, "D3:1 D5:2 D0:3 D7:4 D9:5"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::vector<In> in = real;
    for (int h : c.added) in.push_back(hostile[h]);
    std::reverse(in.begin(), in.end());  // input order must not matter
    auto ranked = rank_group(members(in));
    CHECK(render(ranked) == c.expected);
  }
  std::vector<In> all = real;
  for (int h : {1, 2, 3, 4, 5, 6}) all.push_back(hostile[h]);
  auto ranked = rank_group(members(all));
  CHECK(render(ranked) == "D3:1 D5:2 D7:3 D9:4 D1:5 D2:0 D4:0 D6:0 D8:0 D10:0");
  CHECK(ranked_count(ranked) == 5);
}

TEST_CASE("group_scale: time if any, else memory, else the most shared unit", "[rank][units]") {
  using K = RankScale::Kind;
  struct Case {
    const char* name;
    std::vector<In> in;
    RankScale expected;
  };
  const std::vector<Case> cases = {
      {"empty group", {}, {K::kTime, ""}},
      {"ns", {{0, 1.0}}, {K::kTime, ""}},
      {"one s among bytes", {{0, 1.0, "B"}, {1, 1.0, "B"}, {2, 1.0, "s"}}, {K::kTime, ""}},
      {"MiB and widgets", {{0, 1.0, "widgets"}, {1, 1.0, "MiB"}}, {K::kMemory, ""}},
      {"a non-positive time run does not count", {{0, -1.0, "ns"}, {1, 1.0, "GB"}}, {K::kMemory, ""}},
      {"a NaN time run does not count", {{0, kNaN, "ns"}, {1, 1.0, "GB"}}, {K::kMemory, ""}},
      {"no primary anywhere", {{0, std::nullopt}}, {K::kTime, ""}},
      {"only non-positive values", {{0, 0.0, "widgets"}}, {K::kTime, ""}},
      {"most shared other unit", {{0, 1.0, "b"}, {1, 1.0, "a"}, {2, 1.0, "b"}}, {K::kUnit, "b"}},
      {"tie: first in byte order", {{0, 1.0, "b"}, {1, 1.0, "a"}}, {K::kUnit, "a"}},
      {"non-positive values do not count for other units", {{0, 0.0, "a"}, {1, -1.0, "a"}, {2, 1.0, "b"}},
       {K::kUnit, "b"}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    RankScale got = group_scale(members(c.in));
    CHECK(got.describe() == c.expected.describe());
    CHECK(got == c.expected);
  }
}

TEST_CASE("to_scale converts to ns and B, and only units of the scale", "[rank][units]") {
  const RankScale time{RankScale::Kind::kTime, ""}, memory{RankScale::Kind::kMemory, ""},
      cycles{RankScale::Kind::kUnit, "cycles"};
  struct Case {
    double value;
    const char* unit;
    const RankScale* scale;
    std::optional<double> expected;
  };
  const std::vector<Case> cases = {
      {5, "ns", &time, 5},          {5, "us", &time, 5e3},          {5, "ms", &time, 5e6},
      {5, "s", &time, 5e9},         {5, "B", &time, std::nullopt},  {5, "sec", &time, std::nullopt},
      {5, "B", &memory, 5},         {5, "KB", &memory, 5e3},        {5, "MB", &memory, 5e6},
      {5, "GB", &memory, 5e9},      {5, "KiB", &memory, 5 * 1024.0}, {5, "MiB", &memory, 5 * 1048576.0},
      {5, "GiB", &memory, 5 * 1073741824.0}, {5, "kB", &memory, std::nullopt}, {5, "ns", &memory, std::nullopt},
      {5, "cycles", &cycles, 5},    {5, "Cycles", &cycles, std::nullopt}, {5, "ns", &cycles, std::nullopt},
  };
  for (const Case& c : cases) {
    INFO(c.value << " " << c.unit << " on " << c.scale->describe());
    CHECK(to_scale(c.value, c.unit, *c.scale) == c.expected);
  }
}

TEST_CASE("unrankable_reason says why, with units escaped for a terminal", "[rank][units][errors]") {
  const RankScale time{RankScale::Kind::kTime, ""}, memory{RankScale::Kind::kMemory, ""},
      cycles{RankScale::Kind::kUnit, "cycles"}, escape{RankScale::Kind::kUnit, "\x1b[2J"};
  auto m = [](double value, std::string unit) {
    return std::optional<Measurement>(Measurement{"latency", "median", unit, value});
  };
  struct Case {
    std::optional<Measurement> primary;
    const RankScale* scale;
    std::optional<std::string> expected;
  };
  const std::vector<Case> cases = {
      {m(2606080, "ns"), &time, std::nullopt},
      {m(0.0026, "s"), &time, std::nullopt},
      {m(186.25, "MB"), &memory, std::nullopt},
      {m(3, "cycles"), &cycles, std::nullopt},
      {std::nullopt, &time, "no primary measurement"},
      {m(1, "widgets"), &time, "unit \"widgets\" does not convert to time (ns, us, ms, s)"},
      {m(1, "ns"), &memory, "unit \"ns\" does not convert to memory (B, KB, MB, GB, KiB, MiB, GiB)"},
      {m(1, "ms"), &cycles, "unit \"ms\" is not the group's unit \"cycles\""},
      {m(-3, "ns"), &time, "value -3 is not positive"},
      {m(0, "ns"), &time, "value 0 is not positive"},
      {m(-0.0, "ns"), &time, "value 0 is not positive"},
      {m(-2.5e-7, "s"), &time, "value -2.5e-7 is not positive"},
      {m(kNaN, "ns"), &time, "value is not a finite number"},
      {m(kInf, "ns"), &time, "value is not a finite number"},
      {m(1e308, "s"), &time, "value 1e+308 s overflows on the time scale"},
      {m(1e299, "GiB"), &memory, std::nullopt},
      {m(1e300, "GiB"), &memory, "value 1e+300 GiB overflows on the memory scale"},
      {m(1, ""), &time, "unit \"\" does not convert to time (ns, us, ms, s)"},
      {m(-1, "widgets"), &time, "unit \"widgets\" does not convert to time (ns, us, ms, s)"},
      {m(1, "\x1b]0;pwned\x07\n"), &time, "unit \"\\x1b]0;pwned\\x07\\x0a\" does not convert to time (ns, us, ms, s)"},
      {m(1, "a\"b\\c"), &time, "unit \"a\\x22b\\x5cc\" does not convert to time (ns, us, ms, s)"},
      {m(1, "\xc2\xb5s"), &time, "unit \"\\xc2\\xb5s\" does not convert to time (ns, us, ms, s)"},
      {m(1, std::string(40, 'x')), &time,
       "unit \"" + std::string(32, 'x') + "…\" does not convert to time (ns, us, ms, s)"},
      {m(1, "ms"), &escape, "unit \"ms\" is not the group's unit \"\\x1b[2J\""},
  };
  for (const Case& c : cases) {
    std::ostringstream what;
    if (c.primary) what << c.primary->value << " " << c.primary->unit;
    else what << "no primary";
    INFO(what.str() << " on " << c.scale->describe());
    CHECK(unrankable_reason(c.primary, *c.scale) == c.expected);
  }
}

TEST_CASE("rank_group keeps each member's data and says why a member is unrankable", "[rank]") {
  auto ranked = rank_group(members({{1, 7.5, "us", Level::kReproduced},
                                    {0, std::nullopt, "ns", Level::kDisputed},
                                    {2, -3.0, "ns", Level::kSourceNative}}));
  REQUIRE(ranked.size() == 3);
  CHECK(ranked[0].member.run == runs()[1]);
  CHECK(ranked[0].rank == 1);
  CHECK(ranked[0].unrankable.empty());
  REQUIRE(ranked[0].member.primary.has_value());
  CHECK(ranked[0].member.primary->value == 7.5);  // the original value and unit, for display
  CHECK(ranked[0].member.primary->unit == "us");
  CHECK(ranked[0].member.level == Level::kReproduced);
  CHECK(ranked[1].member.run == runs()[0]);
  CHECK_FALSE(ranked[1].member.primary.has_value());
  CHECK(ranked[1].member.level == Level::kDisputed);
  CHECK(ranked[1].unrankable == "no primary measurement");
  CHECK(ranked[2].member.run == runs()[2]);
  CHECK(ranked[2].rank == 0);
  CHECK(ranked[2].unrankable == "value -3 is not positive");
  CHECK(ranked[2].member.primary->value == -3.0);
  CHECK(ranked_count(ranked) == 1);
}

TEST_CASE("rank_group with --min-level keeps members at or above it, then ranks", "[rank]") {
  const std::vector<In> in = {
      {0, 1.0, "ns", Level::kDisputed},
      {1, 2.0, "ns", Level::kReported},
      {2, 3.0, "ns", Level::kSourceNative},
      {3, 4.0, "ns", Level::kReproduced},
      {4, std::nullopt, "ns", Level::kReproduced},
      {5, 3.0, "ns", Level::kReproduced},
      {6, 0.5, "widgets", Level::kReproduced},
      {7, 1.0, "KiB", Level::kReproduced},
  };
  struct Case {
    Level min;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {Level::kDisputed, "D0:1 D1:2 D2:3 D5:3 D3:5 D4:0 D6:0 D7:0"},
      {Level::kReported, "D1:1 D2:2 D5:2 D3:4 D4:0 D6:0 D7:0"},
      {Level::kSourceNative, "D2:1 D5:1 D3:3 D4:0 D6:0 D7:0"},
      {Level::kReproduced, "D5:1 D3:2 D4:0 D6:0 D7:0"},
  };
  for (const Case& c : cases) {
    INFO("min level " << level_name(c.min));
    CHECK(render(rank_group(members(in), c.min)) == c.expected);
  }
}

}  // namespace
}  // namespace kistore
