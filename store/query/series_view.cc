#include "store/query/series_view.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "objects/error.h"
#include "objects/shown_text.h"
#include "refs/series.h"
#include "store/query/run_story.h"

namespace kistore {
namespace {

SeriesIdentity identity_of(const Snapshot& snap, const GroupRow& row) {
  SeriesIdentity id{"", row.implementation, ""};
  auto digest = run_reference(row.run, "implementation");
  if (!digest || !snap.has_object(*digest)) return id;
  try {
    Document impl = snap.document(*digest, false);
    auto text = [&](const char* member) -> std::string {
      const Json* v = impl.spec().find(member);
      return v && v->is_string() ? v->as_string() : std::string();
    };
    if (!text("name").empty()) id.name = text("name");
    id.project = text("project");
    id.revision = text("revision");
  } catch (const Error&) {
    // An object that does not read is verify's to report; the name stays.
  }
  return id;
}

std::string quoted_list(const std::set<std::string>& items) {
  std::string list;
  for (const std::string& i : items) list += (list.empty() ? "\"" : ", \"") + cut_text(i) + "\"";
  return list;
}

// The points of the series `label` among the group's rows (ids[i] is row
// i's identity), in order of observedAt then digest; the runs that cannot be
// points in `left_out`.
void collect_points(const GroupView& group, const RankScale& scale, const std::vector<SeriesIdentity>& ids,
                    const std::string& label, std::vector<SeriesPoint>& points, std::vector<SeriesLeftOut>& left_out) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i].label() != label) continue;
    const GroupRow& row = group.rows[i];
    const Json* at = row.run.spec().find("observedAt");
    std::optional<double> seconds;
    if (at && at->is_string()) seconds = rfc3339_seconds(at->as_string());
    const auto& p = row.ranked.member.primary;
    std::optional<double> value;
    if (p) value = to_scale(p->value, p->unit, scale);
    if (!seconds) {
      left_out.push_back({row.ranked.member.run, "no observedAt"});
    } else if (!value || !std::isfinite(*value) || *value <= 0) {
      left_out.push_back({row.ranked.member.run, "no positive value on the group's scale"});
    } else {
      points.push_back({i, ids[i], at->as_string(), *seconds, *value});
    }
  }
  auto run_of = [&](const SeriesPoint& p) -> const Digest& { return group.rows[p.row].ranked.member.run; };
  std::sort(points.begin(), points.end(), [&](const SeriesPoint& a, const SeriesPoint& b) {
    if (a.seconds != b.seconds) return a.seconds < b.seconds;
    return run_of(a) < run_of(b);
  });
}

RankScale scale_of(const GroupView& group) {
  std::vector<GroupMember> members;
  for (const GroupRow& row : group.rows) members.push_back(row.ranked.member);
  return group_scale(members);
}

}  // namespace

std::string SeriesView::unit() const {
  return scale.kind == RankScale::Kind::kTime ? "ns" : scale.kind == RankScale::Kind::kMemory ? "B" : scale.unit;
}

SeriesView series_view(const Store& store, const Snapshot& snap, AuditOnDemand& audit, const GroupRef& ref,
                       const std::string& implementation) {
  SeriesView view{group_view(snap, audit, ref.key), {}, {}, {}, {}};
  view.scale = scale_of(view.group);

  std::vector<SeriesIdentity> ids;
  for (const GroupRow& row : view.group.rows) ids.push_back(identity_of(snap, row));
  std::set<std::string> labels, names;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    names.insert(ids[i].name);
    const Digest& run = view.group.rows[i].ranked.member.run;
    if (!implementation.empty() ? ids[i].name == implementation : ref.run && run == *ref.run)
      labels.insert(ids[i].label());
  }
  if (labels.empty() && implementation.empty())
    throw InvalidInput("REF " + ref.key.str() + " is a group: expected --implementation NAME, one of: " +
                       quoted_list(names));
  if (labels.empty())
    throw InvalidInput("--implementation: expected one of the group's implementations (" + quoted_list(names) +
                       "), found \"" + cut_text(implementation) + "\"");
  if (labels.size() > 1)
    throw InvalidInput("--implementation \"" + cut_text(implementation) +
                       "\": expected one series, found implementations of several projects: " + quoted_list(labels));
  view.label = *labels.begin();

  collect_points(view.group, view.scale, ids, view.label, view.points, view.left_out);
  const auto& rows = view.group.rows;
  auto run_of = [&](const SeriesPoint& p) -> const Digest& { return rows[p.row].ranked.member.run; };
  bool ties = false;
  for (std::size_t i = 1; i < view.points.size(); ++i) ties = ties || view.points[i].seconds == view.points[i - 1].seconds;
  if (!ties) return view;
  // Ties: the history, read once, says which commit added each run (its
  // oldest event; entries are newest first).
  RunStories stories = read_run_stories(store);
  std::map<Digest, std::size_t> added;  // 0 = the oldest commit
  for (const SeriesPoint& p : view.points) {
    auto it = stories.by_run.find(run_of(p));
    added[run_of(p)] = it == stories.by_run.end() || it->second.empty()
                           ? stories.entries.size()
                           : stories.entries.size() - 1 - it->second.back().entry;
  }
  std::stable_sort(view.points.begin(), view.points.end(), [&](const SeriesPoint& a, const SeriesPoint& b) {
    if (a.seconds != b.seconds) return a.seconds < b.seconds;
    return added.at(run_of(a)) < added.at(run_of(b));
  });
  return view;
}

GroupSeries group_series(const Snapshot& snap, AuditOnDemand& audit, const Digest& key, const std::set<Digest>& later) {
  GroupSeries out{group_view(snap, audit, key), {}, {}};
  out.scale = scale_of(out.group);
  std::vector<SeriesIdentity> ids;
  std::set<std::string> labels;
  for (const GroupRow& row : out.group.rows) {
    ids.push_back(identity_of(snap, row));
    labels.insert(ids.back().label());
  }
  auto run_of = [&](const SeriesPoint& p) -> const Digest& { return out.group.rows[p.row].ranked.member.run; };
  for (const std::string& label : labels) {
    GroupSeries::Line line{label, {}, {}};
    collect_points(out.group, out.scale, ids, label, line.points, line.left_out);
    std::stable_sort(line.points.begin(), line.points.end(), [&](const SeriesPoint& a, const SeriesPoint& b) {
      if (a.seconds != b.seconds) return a.seconds < b.seconds;
      return later.count(run_of(a)) < later.count(run_of(b));
    });
    out.series.push_back(std::move(line));
  }
  return out;
}

}  // namespace kistore
