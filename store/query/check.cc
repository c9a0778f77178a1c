#include "store/query/check.h"

#include <algorithm>
#include <map>
#include <set>

#include "objects/error.h"
#include "objects/shown_text.h"
#include "refs/regression.h"
#include "store/core/index_diff.h"
#include "store/core/layout_trees.h"
#include "store/history/last_pull.h"

namespace kistore {
namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  out += cut_text(text);
  out += "\"";
  return out;
}

// The commit `id` must be the head or an ancestor of it; `what` names the
// option and the text given, for the message.
void require_in_history(git_repository* repo, const git_oid& head, const git_oid& id, const std::string& what) {
  if (git::descends_from(repo, head, id)) return;
  throw InvalidInput(what + ": expected a commit of the store's history (the branch head " + git::oid_str(head) +
                     " or one of its ancestors), found the commit " + git::oid_str(id) + ", which is not");
}

}  // namespace

CheckRange check_range(const Store& store, const Snapshot& head, const std::string& since,
                       const std::string& since_ref) {
  if (head.empty()) return CheckRange{"", "", "empty store"};
  if (head.format() != Format::k3)
    throw Error(ErrorCode::kIO, "check reads format 3's index; this store is of format " +
                                    std::to_string(static_cast<int>(head.format())) + ": run `kistore upgrade`");
  git_repository* repo = store.repo();
  const git_oid head_id = git::parse_oid(head.commit_id());
  CheckRange range;
  range.to = head.commit_id();
  if (!since.empty()) {
    const std::string what = "--since " + quoted(since);
    if (since.size() < 4 || since.size() > 40 || since.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
      throw InvalidInput("--since: expected a commit id (4 to 40 hex digits), found " + quoted(since));
    git::NamedObject named = git::object_by_prefix(repo, since);
    if (named.found == git::NamedObject::Found::kNone)
      throw InvalidInput(what + ": expected a commit of the store's history, found no object with that id");
    if (named.found == git::NamedObject::Found::kSeveral)
      throw InvalidInput(what + ": expected one commit, found several objects whose ids start so; give more digits");
    if (named.type != "commit")
      throw InvalidInput(what + ": expected a commit, found a " + named.type + " (" + git::oid_str(named.id) + ")");
    require_in_history(repo, head_id, named.id, what);
    range.from = git::oid_str(named.id);
    range.basis = "--since";
  } else if (!since_ref.empty()) {
    const std::string what = "--since-ref " + quoted(since_ref);
    if (since_ref.size() > 1024 || !git::valid_ref_name(since_ref))
      throw InvalidInput("--since-ref: expected a full reference name (such as refs/kistore/synced/origin), found " +
                         quoted(since_ref));
    std::optional<git_oid> target;
    try {
      target = git::ref_target(repo, since_ref);
    } catch (const Error& e) {
      throw InvalidInput(what + ": expected a reference to a commit, found one that does not resolve: " + e.what());
    }
    if (!target) throw InvalidInput(what + ": expected a reference of this store, found none by that name");
    git::NamedObject named = git::object_by_prefix(repo, git::oid_str(*target));
    if (named.found != git::NamedObject::Found::kOne)
      throw InvalidInput(what + ": expected a reference to a commit, found one to " + git::oid_str(*target) +
                         ", which the store does not hold");
    if (named.type != "commit")
      throw InvalidInput(what + ": expected a reference to a commit, found one to a " + named.type);
    require_in_history(repo, head_id, named.id, what);
    range.from = git::oid_str(named.id);
    range.basis = "--since-ref";
  } else if (auto pulled = last_pull(repo); pulled && git::descends_from(repo, pulled->to, pulled->from) &&
                                           git::descends_from(repo, head_id, pulled->to)) {
    range.from = git::oid_str(pulled->from);
    range.to = git::oid_str(pulled->to);
    range.basis = "last pull";
  } else {
    std::optional<git_oid> parent = git::first_parent(repo, head_id);
    range.from = parent ? git::oid_str(*parent) : "";
    range.basis = "last commit";
  }
  if (!range.from.empty() && store.snapshot_at(range.from).format() != Format::k3)
    throw InvalidInput("since commit " + range.from + ": expected a commit of format 3 (after `kistore upgrade`), found " +
                       "one of an older format; name a later commit");
  return range;
}

CheckReport check_runs(const Store& store, const Snapshot& head, AuditOnDemand& audit, const CheckRange& range,
                       const VerdictOptions& options) {
  CheckReport report;
  report.range = range;
  if (range.to.empty()) return report;
  // The runs the range added, by group: refs/groups lines that `to` has
  // and `from` has not (key: group digest, then run digest).
  std::map<Digest, std::set<Digest>> added;
  {
    LayoutTrees trees(store.repo());
    const Snapshot to = range.to == head.commit_id() ? head : store.snapshot_at(range.to);
    std::optional<Snapshot> from;
    if (!range.from.empty()) from = store.snapshot_at(range.from);
    for (const std::string& key : added_keys(trees, from ? from->tree_id() : nullptr, to.tree_id(), Family::kGroups)) {
      auto group = Digest::parse_hex(std::string_view(key).substr(0, 64));
      auto run = Digest::parse_hex(std::string_view(key).substr(64));
      if (group && run) added[*group].insert(*run);
    }
  }
  for (const auto& entry : added) {
    const Digest& key = entry.first;
    const std::set<Digest>& runs = entry.second;
    report.new_runs += runs.size();
    ++report.groups;
    GroupSeries all = group_series(head, audit, key, runs);
    const std::string unit = all.scale.kind == RankScale::Kind::kTime     ? "ns"
                             : all.scale.kind == RankScale::Kind::kMemory ? "B"
                                                                          : all.scale.unit;
    for (const GroupSeries::Line& line : all.series) {
      for (const SeriesLeftOut& l : line.left_out) report.left_out += runs.count(l.run);
      std::vector<double> earlier;
      for (std::size_t i = 0; i < line.points.size(); ++i) {
        const SeriesPoint& p = line.points[i];
        const GroupRow& row = all.group.rows[p.row];
        const Digest& run = row.ranked.member.run;
        if (runs.count(run)) {
          if (earlier.empty()) {
            ++report.first_points;
          } else {
            const GroupRow& last = all.group.rows[line.points[i - 1].row];
            PointJudgement j = judge_point(earlier, run_statistics(last.run.spec(), all.scale),
                                           run_statistics(row.run.spec(), all.scale), p.value, options);
            CheckFinding f(run, key, last.ranked.member.run);
            f.implementation = line.label;
            f.revision = p.id.revision;
            f.observed = p.observed;
            f.value = p.value;
            f.baseline = j.baseline;
            f.ratio = j.ratio;
            f.unit = unit;
            f.baseline_points = j.window.size();
            f.verdict = j.verdict;
            f.standing = row.standing;
            f.rerun = row.standing.level == Level::kReproduced ? "confirmed"
                      : row.standing.level == Level::kDisputed ? "disputed"
                                                               : "";
            switch (j.verdict.verdict) {
              case ComparisonVerdict::kSlower: report.regressions.push_back(std::move(f)); break;
              case ComparisonVerdict::kFaster: report.improvements.push_back(std::move(f)); break;
              case ComparisonVerdict::kSame: ++report.same; break;
              case ComparisonVerdict::kAmbiguous: ++report.ambiguous; break;
            }
          }
        }
        earlier.push_back(p.value);
      }
    }
  }
  auto by = [](bool largest_first) {
    return [largest_first](const CheckFinding& a, const CheckFinding& b) {
      if (a.ratio != b.ratio) return largest_first ? a.ratio > b.ratio : a.ratio < b.ratio;
      return a.run < b.run;
    };
  };
  std::sort(report.regressions.begin(), report.regressions.end(), by(true));
  std::sort(report.improvements.begin(), report.improvements.end(), by(false));
  return report;
}

}  // namespace kistore
