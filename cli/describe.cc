#include "cli/describe.h"

#include "refs/index.h"
#include "store/query.h"

namespace kistore::cli {
namespace {

struct Evidence {
  std::optional<Level> level;
  int rank = 0;
  std::size_t of = 0;
  Digest group = Digest::of("");
  std::size_t attestations = 0;
};

Evidence evidence_of(const Snapshot& snap, const Document& run) {
  Evidence e;
  e.level = recorded_level(snap, run.digest());
  e.group = comparison_key(run.spec());
  auto ranked = rank_group(group_members(snap, e.group));
  e.of = ranked.size();
  for (const RankedMember& r : ranked)
    if (r.member.run == run.digest()) e.rank = r.rank;
  e.attestations = attestations_of(snap, run.digest()).size();
  return e;
}

}  // namespace

Json stored_bundle(const Snapshot& snap, const Document& run) {
  Json out = Json::object();
  out.set("run", run.with_metadata());
  for (const char* role : {"protocol", "environment", "workload", "implementation"}) {
    auto d = run_reference(run, role);
    if (d && snap.has_object(*d)) out.set(role, snap.document(*d).with_metadata());
  }
  return out;
}

Json run_evidence_json(const Snapshot& snap, const Document& run) {
  Evidence e = evidence_of(snap, run);
  Json out = Json::object();
  out.set("level", e.level ? Json(std::string(level_name(*e.level))) : Json());
  out.set("rank", e.rank ? Json(e.rank) : Json());
  out.set("of", static_cast<long long>(e.of));
  out.set("group", e.group.str());
  out.set("attestations", static_cast<long long>(e.attestations));
  return out;
}

std::string run_evidence_text(const Snapshot& snap, const Document& run) {
  Evidence e = evidence_of(snap, run);
  std::string out = "level: " + std::string(e.level ? level_name(*e.level) : "(none recorded)") + "\n";
  out += "rank: " + (e.rank ? std::to_string(e.rank) : std::string("unranked")) + " of " +
         std::to_string(e.of) + " in group " + e.group.str() + "\n";
  out += "attestations: " + std::to_string(e.attestations) + "\n";
  return out;
}

}  // namespace kistore::cli
