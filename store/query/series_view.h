// A series (docs/statistics.md): the runs of one comparison group whose
// implementations share project and name, whatever their revision, ordered by
// observedAt (ties: the order of the commits that added them), each with its
// value on the group's scale.
//
// The one gathering behind `kistore series` and `kistore compare --series`,
// so that they cannot draw a series two ways. Controlled reruns are never
// group members, so never points.
//
// Thread-safety: as Snapshot (one thread at a time per Snapshot).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "refs/rank.h"
#include "store/query/group_view.h"

namespace kistore {

// What makes runs points of one series. An Implementation document the store
// does not carry is known by implementation_name, with no project.
struct SeriesIdentity {
  std::string project, name, revision;
  // "project/name", or the name alone without a project.
  std::string label() const { return project.empty() ? name : project + "/" + name; }
};

struct SeriesPoint {
  std::size_t row = 0;  // index into SeriesView::group.rows
  SeriesIdentity id;
  std::string observed;  // spec.observedAt as written
  double seconds = 0;    // the same, as seconds since 1970 (refs/series.h)
  double value = 0;      // the primary value on `scale`
};

struct SeriesLeftOut {
  Digest run;
  std::string reason;  // "no observedAt", "no positive value on the group's scale"
};

struct SeriesView {
  GroupView group;
  RankScale scale;
  std::string label;  // the series' SeriesIdentity::label()
  std::vector<SeriesPoint> points;
  std::vector<SeriesLeftOut> left_out;
  // The scale's base unit: "ns" for time, "B" for memory, else the unit.
  std::string unit() const;
};

// The series in group `ref.key` of the implementation named `implementation`
// (by its name), or, when that is empty, of the run `ref.run`'s
// implementation. Points observed at the same instant are ordered by the
// commits that added them (read from `store`'s history, only when such ties
// exist), then by digest (one commit that added both). Error(kInvalidInput)
// when neither is given (naming the group's implementations), when the name
// is not one of them, or when it names implementations of several projects;
// errors of group_view and of reading the history pass through.
SeriesView series_view(const Store& store, const Snapshot& snap, AuditOnDemand& audit, const GroupRef& ref,
                       const std::string& implementation);

// Every series of the group `key` at once, over one group_view: what `kistore
// check` reads for each group a new run joined. Points observed at the same
// instant come in digest order, except that the runs of `later` (added after
// the others: the runs being checked) follow the rest; the history is not
// read. Errors of group_view pass through.
struct GroupSeries {
  GroupView group;
  RankScale scale;
  struct Line {
    std::string label;  // SeriesIdentity::label()
    std::vector<SeriesPoint> points;
    std::vector<SeriesLeftOut> left_out;
  };
  std::vector<Line> series;  // by label
};
GroupSeries group_series(const Snapshot& snap, AuditOnDemand& audit, const Digest& key, const std::set<Digest>& later);

}  // namespace kistore
