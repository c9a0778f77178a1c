// A comparison group as every reader shows it: ranked, each member with its
// document, implementation name, level standing and controlled reruns.
//
// The one gathering behind `rank`, `compare`, `export` and the static site
// (cli/site/site.h), so that they cannot rank or judge levels two ways: levels
// come from level_standing, ranks from rank_group
// (store/query/query.h, refs/rank.h); nothing here decides either.
//
// Thread-safety: as Snapshot (one thread at a time per Snapshot).
#pragma once

#include <optional>
#include <vector>

#include "store/query/query.h"

namespace kistore {

struct GroupRow {
  RankedMember ranked;  // rank, primary measurement, level (standing.level)
  Document run;         // without metadata unless the caller asked for it
  std::string implementation;  // implementation_name
  LevelStanding standing;      // the level, and the stored entry when it differs
  std::vector<RerunInfo> reruns;
};

struct GroupView {
  Digest key;
  std::vector<GroupRow> rows;  // rank_group's order: ranked first, then unrankable
  std::size_t ranked = 0;      // ranked_count: the M of "rank N of M"
};

// The group `key`, as `rank` shows it: its members from refs/groups, each
// at the level level_standing gives through `audit` (never the big
// default-level folders), ranked by rank_group (with `min_level`, on the
// members at or above that level). `with_metadata` reads each
// run's metadata too (the site shows titles). Error(kNotFound) when the
// group has no runs; errors of Snapshot reads and LevelAudit pass through.
GroupView group_view(const Snapshot& snap, AuditOnDemand& audit, const Digest& key,
                     std::optional<Level> min_level = std::nullopt, bool with_metadata = false);

}  // namespace kistore
