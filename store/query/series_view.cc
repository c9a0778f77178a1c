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
  auto digest = run_reference(row.run, "implementation");
  if (!digest || !snap.has_object(*digest)) return series_identity(row, std::nullopt);
  try {
    return series_identity(row, snap.document(*digest, false));
  } catch (const Error&) {
    // An object that does not read is verify's to report; the name stays.
    return series_identity(row, std::nullopt);
  }
}

std::string quoted_list(const std::set<std::string>& items) {
  std::string list;
  for (const std::string& i : items) list += (list.empty() ? "\"" : ", \"") + cut_text(i) + "\"";
  return list;
}

RankScale scale_of(const GroupView& group) {
  std::vector<GroupMember> members;
  for (const GroupRow& row : group.rows) members.push_back(row.ranked.member);
  return group_scale(members);
}

}  // namespace

SeriesIdentity series_identity(const GroupRow& row, const std::optional<Document>& implementation) {
  std::string_view project, name = row.implementation, revision;
  if (implementation) {
    auto text = [&](const char* member) -> std::string_view {
      const Json* v = implementation->spec().find(member);
      return v && v->is_string() ? std::string_view(v->as_string()) : std::string_view();
    };
    if (!text("name").empty()) name = text("name");
    project = text("project");
    revision = text("revision");
  }
  SeriesIdentity id{cut_text(project), cut_text(name), cut_text(revision), {}};
  if (id.project.size() == project.size() && id.name.size() == name.size()) {
    id.key = id.label();
  } else {
    std::string whole(project);
    whole += '\0';
    whole += name;
    id.key = Digest::of(whole).str();
  }
  return id;
}

void collect_series_points(const GroupView& group, const RankScale& scale, const std::vector<SeriesIdentity>& ids,
                           const std::string& key, std::vector<SeriesPoint>& points,
                           std::vector<SeriesLeftOut>& left_out) {
  const std::size_t first = points.size();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i].key != key) continue;
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
  const auto& rows = group.rows;
  std::sort(points.begin() + static_cast<std::ptrdiff_t>(first), points.end(),
            [&rows](const SeriesPoint& a, const SeriesPoint& b) {
              if (a.seconds != b.seconds) return a.seconds < b.seconds;
              return rows[a.row].ranked.member.run < rows[b.row].ranked.member.run;
            });
}

bool series_has_ties(const std::vector<SeriesPoint>& points) {
  for (std::size_t i = 1; i < points.size(); ++i)
    if (points[i].seconds == points[i - 1].seconds) return true;
  return false;
}

void order_ties(std::vector<SeriesPoint>& points, const GroupView& group, const RunStories& stories) {
  // Which commit added each run: its oldest event (entries are newest first); 0 = the oldest commit.
  std::map<Digest, std::size_t> added;
  for (const SeriesPoint& p : points) {
    const Digest& run = group.rows[p.row].ranked.member.run;
    auto it = stories.by_run.find(run);
    added[run] = it == stories.by_run.end() || it->second.empty()
                     ? stories.entries.size()
                     : stories.entries.size() - 1 - it->second.back().entry;
  }
  const auto& rows = group.rows;
  std::stable_sort(points.begin(), points.end(), [&](const SeriesPoint& a, const SeriesPoint& b) {
    if (a.seconds != b.seconds) return a.seconds < b.seconds;
    return added.at(rows[a.row].ranked.member.run) < added.at(rows[b.row].ranked.member.run);
  });
}

std::vector<SeriesChange> series_changes(const GroupView& group, const RankScale& scale,
                                         const std::vector<SeriesPoint>& points, const VerdictOptions& options) {
  std::vector<double> values;
  for (const SeriesPoint& p : points) values.push_back(p.value);
  const std::vector<SeriesStep> steps = series_steps(values, options.threshold, options.alpha);
  std::vector<SeriesChange> out;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::size_t from = i ? steps[i - 1].index : 0, to = i + 1 < steps.size() ? steps[i + 1].index : points.size();
    const std::size_t at = steps[i].index;
    // The segments' rank test, where it can reach alpha at all: with n1 and
    // n2 points its smallest two-sided p is 2 / C(n1 + n2, n1) (0.1 for 3
    // against 3). Else the runs either side of the step, by their own figures.
    const double n1 = static_cast<double>(at - from), n2 = static_cast<double>(to - at);
    const double log_pairs = std::lgamma(n1 + n2 + 1) - std::lgamma(n1 + 1) - std::lgamma(n2 + 1);
    VerdictResult verdict;
    if (std::log(2.0) - log_pairs < std::log(options.alpha)) {
      auto begin = values.begin();
      using D = std::ptrdiff_t;
      verdict = decide(sample_statistics({begin + static_cast<D>(from), begin + static_cast<D>(at)}),
                       sample_statistics({begin + static_cast<D>(at), begin + static_cast<D>(to)}), options);
    } else {
      verdict = decide(run_statistics(group.rows[points[at - 1].row].run.spec(), scale),
                       run_statistics(group.rows[points[at].row].run.spec(), scale), options);
    }
    out.push_back({steps[i], std::move(verdict)});
  }
  return out;
}

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
  std::map<std::string, std::string> key_of;  // label -> key
  for (std::size_t i = 0; i < ids.size(); ++i) {
    names.insert(ids[i].name);
    const Digest& run = view.group.rows[i].ranked.member.run;
    if (!implementation.empty() ? ids[i].name == implementation : ref.run && run == *ref.run) {
      labels.insert(ids[i].label());
      key_of.emplace(ids[i].label(), ids[i].key);
    }
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

  collect_series_points(view.group, view.scale, ids, key_of.at(view.label), view.points, view.left_out);
  // Ties: the history, read once, says which commit added each run.
  if (series_has_ties(view.points)) order_ties(view.points, view.group, read_run_stories(store));
  return view;
}

GroupSeries group_series(const Snapshot& snap, AuditOnDemand& audit, const Digest& key, const std::set<Digest>& later) {
  GroupSeries out{group_view(snap, audit, key), {}, {}};
  out.scale = scale_of(out.group);
  std::vector<SeriesIdentity> ids;
  std::map<std::string, std::string> label_of;  // key -> label
  for (const GroupRow& row : out.group.rows) {
    ids.push_back(identity_of(snap, row));
    label_of.emplace(ids.back().key, ids.back().label());
  }
  auto run_of = [&](const SeriesPoint& p) -> const Digest& { return out.group.rows[p.row].ranked.member.run; };
  for (const auto& [key, label] : label_of) {
    GroupSeries::Line line{label, {}, {}};
    collect_series_points(out.group, out.scale, ids, key, line.points, line.left_out);
    std::stable_sort(line.points.begin(), line.points.end(), [&](const SeriesPoint& a, const SeriesPoint& b) {
      if (a.seconds != b.seconds) return a.seconds < b.seconds;
      return later.count(run_of(a)) < later.count(run_of(b));
    });
    out.series.push_back(std::move(line));
  }
  return out;
}

}  // namespace kistore
