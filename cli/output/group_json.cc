#include "cli/output/group_json.h"

#include "cli/output/describe.h"

namespace kistore::cli {

std::string observed_date(const Document& run) {
  const Json* at = run.spec().find("observedAt");
  return at && at->is_string() ? at->as_string().substr(0, 10) : "";
}

Json group_row_json(const GroupRow& row) {
  const RankedMember& r = row.ranked;
  const auto& p = r.member.primary;
  Json m = Json::object();
  m.set("rank", r.rank ? Json(r.rank) : Json());
  m.set("run", r.member.run.str());
  m.set("implementation", row.implementation);
  m.set("value", p ? Json(p->value) : Json());
  m.set("unit", p ? Json(p->unit) : Json());
  set_level_json(m, row.standing);
  m.set("observedAt", observed_date(row.run));
  if (!r.rank) m.set("reason", r.unrankable);
  // What its harness said of it: spec.status, and whether and by what its
  // output was checked for correctness (spec.correctness; left out when the
  // document does not say: most runs do not, and the site writes this once
  // a run).
  const Json* status = row.run.spec().find("status");
  m.set("status", status && status->is_string() ? Json(status->as_string()) : Json());
  const Json* correctness = row.run.spec().find("correctness");
  if (correctness && correctness->is_object()) m.set("correctness", *correctness);
  m.set("reruns", reruns_json(row.reruns));
  return m;
}

Json group_view_json(const GroupView& view) {
  Json list = Json::array();
  for (const GroupRow& row : view.rows) list.push_back(group_row_json(row));
  Json out = Json::object();
  out.set("group", view.key.str());
  out.set("members", std::move(list));
  return out;
}

}  // namespace kistore::cli
