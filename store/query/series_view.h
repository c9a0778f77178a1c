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
#include <optional>
#include <string>
#include <vector>

#include "refs/rank.h"
#include "refs/series.h"
#include "refs/statistics.h"
#include "store/query/group_view.h"
#include "store/query/run_story.h"

namespace kistore {

// What makes runs points of one series. An Implementation document the store
// does not carry is known by implementation_name, with no project.
// Its strings are cut as readers show them (objects/shown_text.h: a 15 MiB
// name named by every run of a group is held once per run as 200
// characters); `key` tells series apart by the whole project and name.
struct SeriesIdentity {
  std::string project, name, revision;
  // label(), or where a string was cut, the sha256 of the whole project and
  // name: what makes two runs points of one series.
  std::string key;
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

// The identity of `row`'s series, from its Implementation document
// (`implementation`; nullopt: the store does not carry it, then the name is
// the row's implementation name and the project empty). Never fails.
SeriesIdentity series_identity(const GroupRow& row, const std::optional<Document>& implementation);

// The points of the series `key` (SeriesIdentity::key) among the rows of
// `group` (`ids`: one identity per row), on `scale`, ordered by observedAt, then by digest;
// the rows of that series without observedAt or without a positive value
// are put in `left_out`, with the reason. Never fails.
void collect_series_points(const GroupView& group, const RankScale& scale, const std::vector<SeriesIdentity>& ids,
                           const std::string& key, std::vector<SeriesPoint>& points,
                           std::vector<SeriesLeftOut>& left_out);
// Whether two of `points` (in order) share an instant: only then does the
// order need the history (order_ties).
bool series_has_ties(const std::vector<SeriesPoint>& points);
// Orders `points` observed at one instant by the commit that added each run
// (`stories`, the history: its oldest event names it), then as they are. Never fails.
void order_ties(std::vector<SeriesPoint>& points, const GroupView& group, const RunStories& stories);

// A change point of a series: the step (refs/series.h) and its verdict.
struct SeriesChange {
  SeriesStep step;
  VerdictResult verdict;
};
// The change points of `points` (in order; values on `scale`), each with
// its verdict (docs/statistics.md, "Series and change points"): the rank test
// between the two segments when they hold enough points to reach
// options.alpha, else `decide` between the runs either side of the step, by
// their own figures. What `kistore series` prints and the site draws. Never fails.
std::vector<SeriesChange> series_changes(const GroupView& group, const RankScale& scale,
                                         const std::vector<SeriesPoint>& points, const VerdictOptions& options);

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
  std::vector<Line> series;  // by SeriesIdentity::key
};
GroupSeries group_series(const Snapshot& snap, AuditOnDemand& audit, const Digest& key, const std::set<Digest>& later);

}  // namespace kistore
