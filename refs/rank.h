// Ranking a comparison group (SPEC §1): lower primary value is better, with
// standard competition ranking — ties share a rank and the next rank skips
// (1, 2, 2, 4). Runs without a primary measurement are listed after the
// ranked ones, unranked (rank 0). Runs whose unit differs from the group's
// first ranked unit cannot be compared and are unranked too.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <vector>

#include "objects/digest.h"
#include "refs/index.h"
#include "refs/level.h"

namespace kistore {

struct GroupMember {
  Digest run;
  std::optional<Measurement> primary;
  Level level = Level::kReported;
};

struct RankedMember {
  int rank = 0;  // 1-based; 0 = unranked
  GroupMember member;
};

// Ranks `members`; ties in value keep digest order so output is stable.
std::vector<RankedMember> rank_group(std::vector<GroupMember> members);

// Keeps members at or above `min_level`, then ranks them.
std::vector<RankedMember> rank_group(std::vector<GroupMember> members, Level min_level);

}  // namespace kistore
