#include <cstdio>

#include "cli/common.h"
#include "cli/output/describe.h"
#include "cli/output/terminal.h"
#include "refs/compare.h"
#include "store/query/query.h"
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

Json side_json(const Side& s, const std::optional<Measurement>& p, const std::optional<Spread>& spread) {
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

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("compare", "Compare two runs side by side");
  app->footer(
      "Shows two runs side by side: each one's median with its p20 - p80 spread, evidence level and\n"
      "rank, then whether they are in one comparison group (and, if not, which of workload,\n"
      "protocol (the timed pass) and environment (the GPU) differ), the ratio of the second run's\n"
      "median to the first's (units of one scale convert: time, memory), and whether their\n"
      "spreads overlap. A ratio across groups is shown but proves little: such runs were not timed\n"
      "the same way, or not on the same thing. RUN is a full digest or a unique prefix of 8+ hex digits.");
  struct Opts {
    std::string a, b;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("RUN_A", o->a, "The first run (digest or 8+ hex prefix)")->required();
  app->add_option("RUN_B", o->b, "The second run")->required();
  return Command{app, [&g, o]() -> int {
    Store store = open_store_for_reading(g);
    Snapshot snap = store.snapshot();
    AuditOnDemand audit(store, load_trust(store));
    Side a = side_of(snap, audit, o->a), b = side_of(snap, audit, o->b);
    RunComparison c = compare_runs(a.run.spec(), b.run.spec());
    if (g.json) {
      Json out = Json::object();
      out.set("a", side_json(a, c.primary_a, c.spread_a));
      out.set("b", side_json(b, c.primary_b, c.spread_b));
      out.set("sameGroup", c.same_group);
      Json differs = Json::array();
      for (const std::string& d : c.differs) differs.push_back(d);
      out.set("differs", std::move(differs));
      out.set("ratio", c.ratio ? Json(*c.ratio) : Json());
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
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
