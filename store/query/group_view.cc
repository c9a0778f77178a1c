#include "store/query/group_view.h"

#include <map>

#include "objects/error.h"

namespace kistore {

GroupView group_view(const Snapshot& snap, AuditOnDemand& audit, const Digest& key, std::optional<Level> min_level,
                     bool with_metadata) {
  // Levels from the runs and their rerun entries (run_level): the default
  // levels' folders hold an entry per run of the store.
  std::vector<GroupMember> members = group_members(snap, key, false);
  if (members.empty()) throw NotFound("group " + key.str() + " has no runs");
  // Each member at the level every reader gives it (level_standing): the
  // one --min-level filters on and the rows show.
  std::map<Digest, Document> runs;
  std::map<Digest, LevelStanding> standings;
  std::map<Digest, std::vector<RerunInfo>> reruns;
  for (GroupMember& m : members) {
    Document run = snap.document(m.run, with_metadata);
    std::vector<RerunInfo> its = reruns_of(snap, m.run);
    LevelStanding standing = level_standing(snap, audit, run, !its.empty());
    m.level = standing.level;
    standings.emplace(m.run, std::move(standing));
    reruns.emplace(m.run, std::move(its));
    runs.emplace(m.run, std::move(run));
  }
  std::vector<RankedMember> ranked = min_level ? rank_group(members, *min_level) : rank_group(members);
  GroupView view{key, {}, ranked_count(ranked)};
  ImplementationNames names;  // the members of a group mostly share a few
  view.rows.reserve(ranked.size());
  for (RankedMember& r : ranked) {
    const Document& run = runs.at(r.member.run);
    GroupRow row{r, run, implementation_name(snap, run, &names), standings.at(r.member.run),
                 std::move(reruns.at(r.member.run))};
    view.rows.push_back(std::move(row));
  }
  return view;
}

}  // namespace kistore
