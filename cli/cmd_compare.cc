#include <algorithm>
#include <cmath>
#include <map>
#include <cstdio>
#include <tuple>

#include "cli/common.h"
#include "cli/output/describe.h"
#include "cli/output/terminal.h"
#include "cli/output/verdict_text.h"
#include "refs/compare.h"
#include "store/query/query.h"
#include "store/query/series_view.h"
#include "store/history/trust.h"

namespace kistore::cli {
namespace {

// A run's side of the comparison: its document, level and rank (store/query/query.h).
struct Side {
  Digest digest;
  Document run;
  std::string implementation;
  LevelStanding standing;
  int rank = 0;
  std::size_t of = 0;
};

Side side_of(const Snapshot& snap, AuditOnDemand& audit, const std::string& ref) {
  Digest d = snap.resolve(ref);
  Document run = snap.document(d, false);
  if (run.kind() != Kind::kRun)
    throw InvalidInput("RUN \"" + ref + "\": expected a run, found a " + std::string(kind_name(run.kind())));
  Side s{d, run, implementation_name(snap, run), level_standing(snap, audit, run)};
  std::vector<RankedMember> ranked = rank_group(group_members(snap, comparison_key(run.spec())));
  s.of = ranked_count(ranked);
  for (const RankedMember& r : ranked)
    if (r.member.run == d) s.rank = r.rank;
  return s;
}

Json side_json(const Side& s, const std::optional<Measurement>& p, const std::optional<Spread>& spread,
               const RunStatistics& stats) {
  Json j = Json::object();
  j.set("run", s.digest.str());
  j.set("implementation", s.implementation);
  j.set("group", comparison_key(s.run.spec()).str());
  j.set("value", p ? Json(p->value) : Json());
  j.set("unit", p ? Json(p->unit) : Json());
  j.set("p20", spread ? Json(spread->low) : Json());
  j.set("p80", spread ? Json(spread->high) : Json());
  set_level_json(j, s.standing);
  j.set("rank", s.rank ? Json(s.rank) : Json());
  j.set("of", static_cast<long long>(s.of));
  j.set("statistics", std::string(stats.strongest_kind()));
  Json notes = Json::array();
  for (const std::string& n : stats.notes) notes.push_back(n);
  j.set("notes", std::move(notes));
  return j;
}

std::string side_text(const char* name, const Side& s, const std::optional<Measurement>& p) {
  std::string out = std::string(name) + " " + s.digest.hex().substr(0, 12) + "  " + shown(s.implementation) + "\n";
  out += "  median  " + (p ? shown(human_value(p->value, p->unit)) : std::string("-"));
  if (p)
    if (std::string spread = spread_text(s.run, p->unit); !spread.empty()) out += "  (p20 - p80 " + shown(spread) + ")";
  out += "\n  level   " + shown(level_text(s.standing)) + "\n  rank    " +
         (s.rank ? std::to_string(s.rank) : std::string("unranked")) + " of " + std::to_string(s.of) + " in group " +
         comparison_key(s.run.spec()).hex().substr(0, 12) + "\n";
  return out;
}

std::string fixed(double v, int digits = 3) {
  if (!std::isfinite(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string general(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// "verdict", "method", "why" lines, and one per field set aside.
// `id_a`, `id_b`: the runs the statistics were read from, as set-aside lines name them.
std::string verdict_text(const VerdictResult& v, const RunStatistics& stats_a, const RunStatistics& stats_b,
                         const VerdictOptions& o, const std::string& id_a, const std::string& id_b) {
  std::string out = "verdict  ";
  switch (v.verdict) {
    case ComparisonVerdict::kFaster: out += "faster: B takes less than A"; break;
    case ComparisonVerdict::kSlower: out += "slower: B takes more than A"; break;
    case ComparisonVerdict::kSame: out += "same: A and B differ by less than the threshold"; break;
    case ComparisonVerdict::kAmbiguous: out += "ambiguous: the evidence cannot decide"; break;
  }
  if (v.ratio) {
    out += "; ratio B/A " + fixed(*v.ratio);
    if (v.interval) {
      out += v.method == "quantiles" ? " (spreads allow " : " (" + general((1 - o.alpha) * 100) + " % interval ";
      out += fixed(v.interval->first) + " - " + fixed(v.interval->second) + ")";
    }
  }
  out += "\nmethod   ";
  if (v.method == "mann-whitney") out += "Mann-Whitney U on the samples, Hodges-Lehmann shift";
  else if (v.method == "welch") out += "Welch's t-test on mean, standard deviation and count";
  else if (v.method == "quantiles") out += "ratio of medians, overlap of the spreads";
  else out += "none";
  if (v.p) out += "; p = " + general(*v.p);
  out += "; threshold " + general(o.threshold * 100) + " %, alpha " + general(o.alpha);
  out += "\n         (A: " + stats_a.strongest() + "; B: " + stats_b.strongest() + ")";
  out += "\nwhy      " + shown_message(v.reason) + "\n";
  for (const auto& [name, id, stats] : {std::tuple{"A", &id_a, &stats_a}, std::tuple{"B", &id_b, &stats_b}})
    for (const std::string& n : stats->notes) out += "set aside " + std::string(name) + " " + *id + ": " + shown_message(n) + "\n";
  return out;
}

// One side of `compare --series`: the series of a run's implementation, and
// the statistics it is judged by: its points' values as samples when it has
// 2 or more, else the run's own figures.
struct SeriesSide {
  Digest run;
  SeriesView view;
  RunStatistics stats;
};

SeriesSide series_side(const Store& store, const Snapshot& snap, AuditOnDemand& audit, const std::string& ref,
                       const char* which) {
  GroupRef r = resolve_group_ref(snap, ref);
  if (!r.run)
    throw InvalidInput(std::string(which) + " \"" + ref + "\": expected a run, found the group key " + r.key.str());
  SeriesView view = series_view(store, snap, audit, r, "");
  RunStatistics stats;
  if (view.points.size() >= 2) {
    std::vector<double> values;
    for (const SeriesPoint& p : view.points) values.push_back(p.value);
    stats = sample_statistics(std::move(values));
  } else {
    stats = run_statistics(snap.document(*r.run, false).spec(), view.scale);
  }
  return SeriesSide{*r.run, std::move(view), std::move(stats)};
}

std::map<std::string, long long> level_counts(const SeriesView& v) {
  std::map<std::string, long long> out;
  for (const SeriesPoint& p : v.points) ++out[std::string(level_name(v.group.rows[p.row].standing.level))];
  return out;
}

Json series_side_json(const SeriesSide& s) {
  Json j = Json::object();
  j.set("run", s.run.str());
  j.set("implementation", s.view.label);
  j.set("group", s.view.group.key.str());
  j.set("points", static_cast<long long>(s.view.points.size()));
  Json runs = Json::array();
  for (const SeriesPoint& p : s.view.points) runs.push_back(s.view.group.rows[p.row].ranked.member.run.str());
  j.set("runs", std::move(runs));
  j.set("unit", s.view.unit());
  Json levels = Json::object();
  for (const auto& [name, n] : level_counts(s.view)) levels.set(name, n);
  j.set("levels", std::move(levels));
  j.set("statistics", std::string(s.stats.strongest_kind()));
  Json notes = Json::array();
  for (const std::string& n : s.stats.notes) notes.push_back(n);
  j.set("notes", std::move(notes));
  return j;
}

std::string series_side_text(const char* name, const SeriesSide& s) {
  const auto& pts = s.view.points;
  std::string out = std::string(name) + " " + shown(s.view.label) + " (series of " + s.run.hex().substr(0, 12) + ")\n  " +
                    std::to_string(pts.size()) + " point" + (pts.size() == 1 ? "" : "s");
  if (!pts.empty()) {
    std::vector<double> values;
    for (const SeriesPoint& p : pts) values.push_back(p.value);
    std::sort(values.begin(), values.end());
    out += ", " + shown(pts.front().observed.substr(0, 10)) + " - " + shown(pts.back().observed.substr(0, 10)) +
           ", median " + human_value(quantile_sorted(values, 0.5), s.view.unit());
  }
  std::string levels;
  const auto counts = level_counts(s.view);
  // Weakest first, as --min-level orders them.
  for (const char* level : {"disputed", "reported", "source-native", "reproduced"})
    if (auto it = counts.find(level); it != counts.end())
      levels += (levels.empty() ? "" : ", ") + std::to_string(it->second) + " " + level;
  out += "\n  levels  " + (levels.empty() ? std::string("-") : levels) + "\n";
  if (!s.view.left_out.empty()) out += "  left out " + std::to_string(s.view.left_out.size()) + " (see kistore series)\n";
  return out;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("compare", "Compare two runs side by side");
  app->footer(
      "Shows two runs side by side: each one's median with its p20 - p80 spread, evidence level and\n"
      "rank, then whether they are in one comparison group (and, if not, which of workload,\n"
      "protocol (the timed pass) and environment (the GPU) differ), the ratio of the second run's\n"
      "median to the first's (units of one scale convert: time, memory), and whether their\n"
      "spreads overlap. A ratio across groups is shown but proves little: such runs were not timed\n"
      "the same way, or not on the same thing. RUN is a full digest or a unique prefix of 8+ hex digits.\n"
      "\n"
      "Then the verdict on B against A: faster, slower, same or ambiguous, from the strongest\n"
      "statistics both runs carry: raw samples (Mann-Whitney U test, Hodges-Lehmann ratio with its\n"
      "interval), else mean, standard deviation and count (Welch's t-test), else median with a\n"
      "p20 - p80 spread (ratio of medians; the spreads must not overlap). A difference needs\n"
      "p < --alpha (default 0.01) and at least --threshold (default 0.05, i.e. 5 %); \"same\" needs\n"
      "the whole interval within the threshold; anything else is \"ambiguous\", never a guess.\n"
      "A field that cannot be used (a negative or zero time, a count of 1, ...) is set aside and\n"
      "named by its JSON pointer. docs/statistics.md gives the rules.\n"
      "\n"
      "\n"
      "--series compares two implementations of one group over time instead: the series (see\n"
      "kistore series) of RUN_A's implementation with that of RUN_B's, each series' points' values\n"
      "taken as samples (a series of one point is judged by its run's own figures).\n"
      "\n"
      "Example: kistore compare 628643ba fe4cf9df --threshold 0.02");
  struct Opts {
    std::string a, b;
    double threshold = 0.05, alpha = 0.01;
    bool series = false;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("RUN_A", o->a, "The first run (digest or 8+ hex prefix)")->required();
  app->add_option("RUN_B", o->b, "The second run")->required();
  app->add_option("--threshold", o->threshold,
                  "Smallest relative difference that counts, in (0, 1); default 0.05 (5 %)");
  app->add_option("--alpha", o->alpha, "Significance level of the tests, in (0, 0.5); default 0.01");
  app->add_flag("--series", o->series,
                "Compare the series of RUN_A's implementation with RUN_B's (one group; see kistore series)");
  return Command{app, [&g, o]() -> int {
    const VerdictOptions options = verdict_options(o->threshold, o->alpha);
    Store store = open_store_for_reading(g);
    Snapshot snap = store.snapshot();
    AuditOnDemand audit(store, load_trust(store));
    if (o->series) {
      SeriesSide a = series_side(store, snap, audit, o->a, "RUN_A"), b = series_side(store, snap, audit, o->b, "RUN_B");
      if (!(a.view.group.key == b.view.group.key))
        throw InvalidInput("--series: expected two runs of one comparison group, found groups " +
                           a.view.group.key.str() + " and " + b.view.group.key.str());
      VerdictResult v = decide(a.stats, b.stats, options);
      if (g.json) {
        Json out = verdict_json(v, options);
        out.set("series", true);
        out.set("group", a.view.group.key.str());
        out.set("a", series_side_json(a));
        out.set("b", series_side_json(b));
        print_json(out);
        return kOk;
      }
      std::string text = series_side_text("A", a) + series_side_text("B", b) + "\n" +
                         verdict_text(v, a.stats, b.stats, options, a.run.hex().substr(0, 12), b.run.hex().substr(0, 12));
      std::fwrite(text.data(), 1, text.size(), stdout);
      return kOk;
    }
    Side a = side_of(snap, audit, o->a), b = side_of(snap, audit, o->b);
    RunComparison c = compare_runs(a.run.spec(), b.run.spec(), options);
    if (g.json) {
      Json out = verdict_json(c.verdict, options);
      out.set("a", side_json(a, c.primary_a, c.spread_a, c.statistics_a));
      out.set("b", side_json(b, c.primary_b, c.spread_b, c.statistics_b));
      out.set("sameGroup", c.same_group);
      Json differs = Json::array();
      for (const std::string& d : c.differs) differs.push_back(d);
      out.set("differs", std::move(differs));
      if (!c.ratio) out.set("noRatio", c.no_ratio);
      out.set("spreadsOverlap", c.spreads_overlap ? Json(*c.spreads_overlap) : Json());
      print_json(out);
      return kOk;
    }
    std::string text = side_text("A", a, c.primary_a) + side_text("B", b, c.primary_b) + "\n";
    if (c.same_group) {
      text += "same comparison group\n";
    } else {
      std::string list;
      for (const std::string& d : c.differs) list += (list.empty() ? "" : ", ") + d;
      text += "different comparison groups: " + list + " differ" + (c.differs.size() == 1 ? "s" : "") +
              "; the runs are not comparable\n";
    }
    char ratio[64];
    if (c.ratio) std::snprintf(ratio, sizeof ratio, "ratio B/A %.3f (B is %s)\n", *c.ratio,
                               *c.ratio > 1 ? "slower or larger" : *c.ratio < 1 ? "faster or smaller" : "equal");
    text += c.ratio ? std::string(ratio) : "no ratio: " + shown_message(c.no_ratio) + "\n";
    if (c.spreads_overlap) text += *c.spreads_overlap ? "spreads overlap\n" : "spreads do not overlap\n";
    else text += "spreads: not known for both\n";
    text += "\n" + verdict_text(c.verdict, c.statistics_a, c.statistics_b, options, a.digest.hex().substr(0, 12),
                                 b.digest.hex().substr(0, 12));
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
