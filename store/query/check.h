// The runs added to a store since a commit, each judged against the points
// before it in its series: what `kistore check` reports (regressions and
// improvements, for a CI job to gate on). docs/statistics.md, "Checking new
// runs", is the contract; refs/regression.h judges one point.
//
// Only what changed is read: the groups index (refs/groups/) of the two trees
// is compared file by file (store/core/index_diff.h: equal subtrees are
// skipped), and only the groups that gained a run are gathered
// (series_view.h, group_series). The cost follows the number of new runs
// and the size of their groups, not the size of the store.
//
// Thread-safety: as Store.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "refs/statistics.h"
#include "store/query/series_view.h"

namespace kistore {

// The commits a check compares: the runs that `to`'s tree indexes and
// `from`'s does not.
struct CheckRange {
  std::string from;  // 40 hex digits; "" for the empty tree (`to` is a root commit)
  std::string to;    // 40 hex digits
  std::string basis;  // "--since", "--since-ref", "last pull", "last commit"
};

// The range a check looks at in `store`, whose branch head is `head`:
//  - `since` (4 to 40 hex digits of a commit id) or `since_ref` (a full git
//    reference name such as refs/kistore/synced/origin): from that commit to
//    the head. The commit must be the head or one of its ancestors.
//  - neither: what the last pull brought (store/history/last_pull.h) when its
//    record is still in the head's history, else the head's last commit
//    (from its first parent).
// Error(kInvalidInput), quoting the text given (cut), for a `since` that is
// not hex, names no object, several, or an object that is not a commit, or a
// commit outside the head's history; the same for a `since_ref` that is not
// a well-formed reference name, names no reference, or one whose target is
// not such a commit. Error(kInvalidInput) for an empty store. Error(kIO)
// when the store is not of format 3 (run `kistore upgrade`) or the history
// cannot be read.
CheckRange check_range(const Store& store, const Snapshot& head, const std::string& since,
                       const std::string& since_ref);

// One new run judged against its series.
struct CheckFinding {
  CheckFinding(const Digest& r, const Digest& g, const Digest& last) : run(r), group(g), baseline_last(last) {}
  Digest run, group;
  std::string implementation;  // the series' label, "project/name"
  std::string revision;        // the implementation's revision, "" if none
  std::string observed;        // observedAt as written
  double value = 0, baseline = 0, ratio = 0;
  std::string unit;            // of value and baseline: the group's scale ("ns", "B", …)
  std::size_t baseline_points = 0;
  Digest baseline_last;        // the latest point of the baseline
  VerdictResult verdict;       // the run against its baseline
  LevelStanding standing;      // the run's evidence level
  // What a controlled rerun of the run has said since: "confirmed" (its
  // level is reproduced), "disputed", or "" (none).
  std::string rerun;
};

struct CheckReport {
  CheckRange range;
  std::size_t new_runs = 0;       // runs added in the range
  std::size_t groups = 0;         // groups they joined
  std::size_t first_points = 0;   // runs with no earlier point in their series
  std::size_t left_out = 0;       // runs that are no point (no observedAt, no usable value)
  std::size_t same = 0, ambiguous = 0;
  // Worst first: regressions by ratio, largest first; improvements by ratio,
  // smallest first.
  std::vector<CheckFinding> regressions, improvements;
};

// Judges every run `range` added (each against the head's series, as
// refs/regression.h says) with `options`. Errors of reading the index, the
// groups and the levels pass through.
CheckReport check_runs(const Store& store, const Snapshot& head, AuditOnDemand& audit, const CheckRange& range,
                       const VerdictOptions& options);

}  // namespace kistore
