#include "refs/rank.h"

#include <algorithm>

namespace kistore {

std::vector<RankedMember> rank_group(std::vector<GroupMember> members) {
  std::sort(members.begin(), members.end(), [](const GroupMember& a, const GroupMember& b) {
    if (a.primary.has_value() != b.primary.has_value()) return a.primary.has_value();
    if (a.primary && a.primary->value != b.primary->value) return a.primary->value < b.primary->value;
    return a.run < b.run;
  });
  std::vector<RankedMember> out;
  out.reserve(members.size());
  const std::string* unit = nullptr;
  const RankedMember* last_ranked = nullptr;
  int ranked = 0;
  for (GroupMember& m : members) {
    RankedMember r{0, std::move(m)};
    const auto& p = r.member.primary;
    if (p && (!unit || *unit == p->unit)) {
      bool tie = last_ranked && last_ranked->member.primary->value == p->value;
      r.rank = tie ? last_ranked->rank : ranked + 1;
      ++ranked;
    }
    out.push_back(std::move(r));
    if (out.back().rank) {
      last_ranked = &out.back();
      if (!unit) unit = &out.back().member.primary->unit;
    }
  }
  // Unit mismatches were skipped in place; move unranked ones after the ranked.
  std::stable_partition(out.begin(), out.end(), [](const RankedMember& r) { return r.rank != 0; });
  return out;
}

std::vector<RankedMember> rank_group(std::vector<GroupMember> members, Level min_level) {
  std::erase_if(members, [&](const GroupMember& m) { return m.level < min_level; });
  return rank_group(std::move(members));
}

}  // namespace kistore
