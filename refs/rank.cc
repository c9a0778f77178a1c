#include "refs/rank.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <utility>

#include "objects/json.h"

namespace kistore {
namespace {

struct UnitFactor {
  std::string_view unit;
  double factor;  // to the scale's base unit
};

constexpr UnitFactor kTimeUnits[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
constexpr UnitFactor kMemoryUnits[] = {
    {"B", 1},           {"KB", 1e3},          {"MB", 1e6},
    {"GB", 1e9},        {"KiB", 1024.0},      {"MiB", 1024.0 * 1024},
    {"GiB", 1024.0 * 1024 * 1024},
};

template <std::size_t N>
std::optional<double> factor_in(const UnitFactor (&table)[N], std::string_view unit) {
  for (const UnitFactor& u : table)
    if (u.unit == unit) return u.factor;
  return std::nullopt;
}

std::optional<double> factor_of(const std::string& unit, const RankScale& scale) {
  switch (scale.kind) {
    case RankScale::Kind::kTime: return factor_in(kTimeUnits, unit);
    case RankScale::Kind::kMemory: return factor_in(kMemoryUnits, unit);
    case RankScale::Kind::kUnit: break;
  }
  return unit == scale.unit ? std::optional<double>(1.0) : std::nullopt;
}

// A unit as data shows it: printable ASCII kept, everything else \xNN, cut at 32 bytes.
std::string quoted(std::string_view unit) {
  constexpr std::size_t kMaxBytes = 32;
  std::string out = "\"";
  for (std::size_t i = 0; i < unit.size() && i < kMaxBytes; ++i) {
    unsigned char c = static_cast<unsigned char>(unit[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  if (unit.size() > kMaxBytes) out += "…";
  return out + "\"";
}

bool positive_finite(const Measurement& m) { return std::isfinite(m.value) && m.value > 0; }

}  // namespace

std::string RankScale::describe() const {
  switch (kind) {
    case Kind::kTime: return "time";
    case Kind::kMemory: return "memory";
    case Kind::kUnit: break;
  }
  return "unit " + quoted(unit);
}

std::optional<double> to_scale(double value, const std::string& unit, const RankScale& scale) {
  auto factor = factor_of(unit, scale);
  if (!factor) return std::nullopt;
  return value * *factor;
}

// Runs whose harness did not pass them never rank (SPEC §1, a run that is not
// passed is a claim, not a result).
static bool status_ranks(const std::string& status) { return status.empty() || status == "passed"; }

RankScale group_scale(const std::vector<GroupMember>& members) {
  bool memory = false;
  std::map<std::string, std::size_t> others;  // ordered: ties go to the first unit in byte order
  for (const GroupMember& m : members) {
    if (!m.primary || !positive_finite(*m.primary) || !status_ranks(m.status)) continue;
    if (factor_in(kTimeUnits, m.primary->unit)) return RankScale{RankScale::Kind::kTime, ""};
    if (factor_in(kMemoryUnits, m.primary->unit)) memory = true;
    else ++others[m.primary->unit];
  }
  if (memory) return RankScale{RankScale::Kind::kMemory, ""};
  if (others.empty()) return RankScale{RankScale::Kind::kTime, ""};
  auto most = others.begin();
  for (auto it = others.begin(); it != others.end(); ++it)
    if (it->second > most->second) most = it;
  return RankScale{RankScale::Kind::kUnit, most->first};
}

std::optional<std::string> unrankable_reason(const std::optional<Measurement>& primary, const RankScale& scale) {
  if (!primary) return "no primary measurement";
  auto factor = factor_of(primary->unit, scale);
  if (!factor) {
    switch (scale.kind) {
      case RankScale::Kind::kTime:
        return "unit " + quoted(primary->unit) + " does not convert to time (ns, us, ms, s)";
      case RankScale::Kind::kMemory:
        return "unit " + quoted(primary->unit) + " does not convert to memory (B, KB, MB, GB, KiB, MiB, GiB)";
      case RankScale::Kind::kUnit: break;
    }
    return "unit " + quoted(primary->unit) + " is not the group's unit " + quoted(scale.unit);
  }
  if (!std::isfinite(primary->value)) return "value is not a finite number";
  if (primary->value <= 0) return "value " + format_number(primary->value) + " is not positive";
  // Only time and memory units scale (by up to 2^30), so the unit here is one of SPEC's.
  if (!std::isfinite(primary->value * *factor))
    return "value " + format_number(primary->value) + " " + primary->unit + " overflows on the " + scale.describe() +
           " scale";
  return std::nullopt;
}

std::vector<RankedMember> rank_group(std::vector<GroupMember> members) {
  const RankScale scale = group_scale(members);
  struct Keyed {
    double value;  // on the scale; unused when unrankable
    RankedMember ranked;
  };
  std::vector<Keyed> keyed;
  keyed.reserve(members.size());
  for (GroupMember& m : members) {
    Keyed k{0, RankedMember{0, std::move(m), ""}};
    const auto& p = k.ranked.member.primary;
    if (!status_ranks(k.ranked.member.status))
      k.ranked.unrankable = "status " + quoted(k.ranked.member.status) + ": not passed by its harness";
    else if (auto why = unrankable_reason(p, scale)) k.ranked.unrankable = std::move(*why);
    else k.value = *to_scale(p->value, p->unit, scale);
    keyed.push_back(std::move(k));
  }
  std::sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
    bool a_ranks = a.ranked.unrankable.empty(), b_ranks = b.ranked.unrankable.empty();
    if (a_ranks != b_ranks) return a_ranks;
    if (a_ranks && a.value != b.value) return a.value < b.value;
    return a.ranked.member.run < b.ranked.member.run;
  });
  std::vector<RankedMember> out;
  out.reserve(keyed.size());
  for (std::size_t i = 0; i < keyed.size(); ++i) {
    Keyed& k = keyed[i];
    if (k.ranked.unrankable.empty()) {
      bool tie = i > 0 && keyed[i - 1].ranked.unrankable.empty() && keyed[i - 1].value == k.value;
      k.ranked.rank = tie ? out.back().rank : static_cast<int>(i) + 1;
    }
    out.push_back(std::move(k.ranked));
  }
  return out;
}

std::vector<RankedMember> rank_group(std::vector<GroupMember> members, Level min_level) {
  std::erase_if(members, [&](const GroupMember& m) { return m.level < min_level; });
  return rank_group(std::move(members));
}

std::size_t ranked_count(const std::vector<RankedMember>& ranked) {
  return static_cast<std::size_t>(
      std::count_if(ranked.begin(), ranked.end(), [](const RankedMember& r) { return r.rank != 0; }));
}

}  // namespace kistore
