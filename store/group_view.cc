#include "store/group_view.h"

#include <map>

#include "objects/error.h"

namespace kistore {

GroupView group_view(const Snapshot& snap, AuditOnDemand& audit, const Digest& key, std::optional<Level> min_level,
                     bool with_metadata) {
  // Levels from the runs and their rerun entries (run_level): the default
  // levels' folders hold an entry per run of the store.
  std::vector<GroupMember> members = group_members(snap, key, false);
  if (members.empty()) throw NotFound("group " + key.str() + " has no runs");
  std::map<Digest, Document> runs;
  for (GroupMember& m : members) {
    Document run = snap.document(m.run, with_metadata);
    m.level = run_level(snap, run);
    runs.emplace(m.run, std::move(run));
  }
  std::vector<RankedMember> ranked = min_level ? rank_group(members, *min_level) : rank_group(members);
  GroupView view{key, {}, ranked_count(ranked)};
  ImplementationNames names;  // the members of a group mostly share a few
  view.rows.reserve(ranked.size());
  for (RankedMember& r : ranked) {
    const Document& run = runs.at(r.member.run);
    GroupRow row{r, run, implementation_name(snap, run, &names), level_standing(snap, audit, run, r.member.level),
                 reruns_of(snap, r.member.run)};
    view.rows.push_back(std::move(row));
  }
  return view;
}

}  // namespace kistore
