#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cli/common.h"
#include "cli/output/describe.h"
#include "cli/output/terminal.h"
#include "cli/output/verdict_text.h"
#include "cli/table.h"
#include "refs/rank.h"
#include "refs/series.h"
#include "refs/statistics.h"
#include "store/history/trust.h"
#include "store/query/group_view.h"
#include "store/query/query.h"
#include "store/query/series_view.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("series", "List one implementation's runs over time, with change points");
  app->footer(
      "A series is the runs of one comparison group (the same workload, timed pass and GPU) whose\n"
      "implementations share project and name, whatever their revision, ordered by observedAt\n"
      "(ties: the order of the commits that added them). Controlled reruns are evidence about a\n"
      "run, not points of a series.\n"
      "REF is a run (its implementation's series) or a group key (then --implementation NAME says\n"
      "whose series); a full digest or a unique prefix of 8+ hex digits.\n"
      "\n"
      "Each point shows its primary value with its p20 - p80 spread, revision, evidence level and\n"
      "run. Change points are where the level of the values steps out of the series' own noise at\n"
      "--alpha, by a step not surely under --threshold (default 0.05, i.e. 5 %): found by\n"
      "binary segmentation of the logarithms of the values, each split kept only if a t-test\n"
      "finds it significant, then steps whose interval lies within the threshold merged away\n"
      "(docs/statistics.md says how), each\n"
      "with the medians before and after, their ratio, and a verdict: a rank test between the two\n"
      "segments when they hold enough points to reach --alpha (5 and 5 do at 0.01), else\n"
      "`compare`'s verdict between the two runs either side of the step, from their own figures.\n"
      "Runs without observedAt or without a usable value are listed as left out.\n"
      "\n"
      "Example: kistore series 628643ba --json");
  struct Opts {
    std::string ref, implementation;
    double threshold = 0.05, alpha = 0.01;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("REF", o->ref, "A run or a group key (digest or 8+ hex prefix)")->required();
  app->add_option("--implementation", o->implementation, "Whose series, by implementation name (with a group key)")
      ->type_name("NAME");
  app->add_option("--threshold", o->threshold, "Smallest relative step that is a change point, in (0, 1); default 0.05");
  app->add_option("--alpha", o->alpha, "Significance level of the verdicts, in (0, 0.5); default 0.01");
  return Command{app, [&g, o]() -> int {
    const VerdictOptions options = verdict_options(o->threshold, o->alpha);
    Store store = open_store_for_reading(g);
    Snapshot snap = store.snapshot();
    GroupRef ref = resolve_group_ref(snap, o->ref);
    AuditOnDemand audit(store, load_trust(store));
    const SeriesView view = series_view(store, snap, audit, ref, o->implementation);
    const std::vector<SeriesPoint>& points = view.points;
    const RankScale& scale = view.scale;
    auto row_of = [&](const SeriesPoint& p) -> const GroupRow& { return view.group.rows[p.row]; };
    const std::string label = view.label;
    const std::vector<SeriesChange> changes = series_changes(view.group, scale, points, options);

    const std::string unit = view.unit();
    if (g.json) {
      Json out = Json::object();
      out.set("group", ref.key.str());
      out.set("implementation", points.empty() ? Json(label) : Json(points.front().id.name));
      out.set("project", points.empty() || points.front().id.project.empty() ? Json() : Json(points.front().id.project));
      Json list = Json::array();
      for (const SeriesPoint& p : points) {
        Json j = Json::object();
        j.set("run", row_of(p).ranked.member.run.str());
        j.set("value", p.value);
        j.set("unit", unit);
        j.set("revision", p.id.revision.empty() ? Json() : Json(p.id.revision));
        j.set("observedAt", p.observed);
        j.set("level", std::string(level_name(row_of(p).standing.level)));
        list.push_back(std::move(j));
      }
      out.set("points", std::move(list));
      Json change_list = Json::array();
      for (const SeriesChange& c : changes) {
        Json j = Json::object();
        j.set("index", static_cast<long long>(c.step.index));
        j.set("run", row_of(points[c.step.index]).ranked.member.run.str());
        j.set("before", c.step.before);
        j.set("after", c.step.after);
        j.set("ratio", c.step.after / c.step.before);
        j.set("verdict", std::string(verdict_name(c.verdict.verdict)));
        j.set("method", c.verdict.method);
        j.set("p", c.verdict.p ? Json(*c.verdict.p) : Json());
        change_list.push_back(std::move(j));
      }
      out.set("changePoints", std::move(change_list));
      Json left_out = Json::array();
      for (const SeriesLeftOut& l : view.left_out) {
        Json j = Json::object();
        j.set("run", l.run.str());
        j.set("reason", l.reason);
        left_out.push_back(std::move(j));
      }
      out.set("leftOut", std::move(left_out));
      print_json(out);
      return kOk;
    }
    std::string text = "series " + shown(label) + " in group " + ref.key.hex().substr(0, 12) + ": " +
                       std::to_string(points.size()) + " point" + (points.size() == 1 ? "" : "s") + ", " +
                       std::to_string(changes.size()) + " change point" + (changes.size() == 1 ? "" : "s") + "\n";
    Table table({" #", "observed", "revision", "value", "p20 - p80", "level", "run"});
    // A change point is shown under the last point before it.
    std::size_t next_step = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const SeriesPoint& p = points[i];
      std::vector<std::string> below;
      if (next_step < changes.size() && changes[next_step].step.index == i + 1) {
        const SeriesStep& s = changes[next_step].step;
        const VerdictResult& v = changes[next_step].verdict;
        // Appended piece by piece: GCC 12 -O3 misreads "literal" + std::string (-Wrestrict).
        std::string line = "  change point: ";
        line += human_value(s.before, unit);
        line += " -> ";
        line += human_value(s.after, unit);
        line += ", ratio ";
        line += ratio_text(s.after / s.before);
        line += ", ";
        line += verdict_brief(v);
        below.push_back(std::move(line));
        ++next_step;
      }
      const auto& primary = row_of(p).ranked.member.primary;
      std::string index = " ";
      index += std::to_string(i);
      table.add({std::move(index), p.observed, p.id.revision.empty() ? "-" : p.id.revision,
                 human_value(p.value, unit), primary ? spread_text(row_of(p).run, primary->unit) : "",
                 level_text(row_of(p).standing), row_of(p).ranked.member.run.hex().substr(0, 12)},
                std::move(below));
    }
    text += table.text(true);
    for (const SeriesLeftOut& l : view.left_out) {
      text += "left out ";
      text += l.run.hex().substr(0, 12);
      text += ": ";
      text += l.reason;
      text += "\n";
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
