#include <cstdio>

#include "cli/common.h"
#include "cli/describe.h"
#include "cli/group_json.h"
#include "cli/terminal.h"
#include "store/level_audit.h"
#include "store/group_view.h"
#include "store/query.h"
#include "store/trust.h"

namespace kistore::cli {
namespace {

// `text` and spaces up to `width` bytes, as printf's %-Ns pads.
std::string padded(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("rank", "Rank the comparison group of a run");
  app->footer(
      "Runs are comparable only within one comparison group: the same kernel definition and\n"
      "workload, the same timed pass (protocol) and the same GPU (environment). REF names a run\n"
      "(its group is ranked, and the run is marked with *) or a group key; a full digest or a\n"
      "unique prefix of 8+ hex digits.\n\n"
      "Runs are ordered by their primary measurement (the median latency), lower is better; ties\n"
      "share a rank and the next rank skips (1, 2, 2, 4). Values compare across units of one\n"
      "scale: time (ns, us, ms, s) or memory (B, KB, MB, GB, KiB, MiB, GiB). A run whose unit does\n"
      "not convert to the group's, whose value is not positive, or that has no median is listed\n"
      "last as unrankable, with the reason. Each line shows the implementation, the median with\n"
      "its p20 - p80 spread, the evidence level and the date observed.\n"
      "--min-level keeps runs at or above a level: disputed < reported < source-native < reproduced.\n"
      "A level the signed history does not give under the store's trust list is shown as\n"
      "\"reproduced (unverified: signer not trusted)\" or similar; `kistore verify` says why.\n"
      "A run's controlled reruns (`kistore rerun`) are listed under it, with their verdict and the\n"
      "ratio of their median to the run's; they are evidence about the run, never ranked.");
  struct Opts {
    std::string ref, min_level;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("REF", o->ref, "A run or a group key (digest or 8+ hex prefix)")->required();
  app->add_option("--min-level", o->min_level, "Only runs at or above this level")->type_name("LEVEL");
  return Command{app, [&g, o]() -> int {
    std::optional<Level> min_level;
    if (!o->min_level.empty() && !(min_level = parse_level(o->min_level)))
      throw InvalidInput("--min-level: expected one of " + std::string(level_names()) + ", found \"" +
                         o->min_level + "\"");
    Store store = open_store_for_reading(g);
    Snapshot snap = store.snapshot();
    GroupRef ref = resolve_group_ref(snap, o->ref);
    AuditOnDemand audit(store, load_trust(store));
    // The gathering `compare`, `export` and the site share (store/group_view.h).
    GroupView view = group_view(snap, audit, ref.key, min_level);
    if (g.json) {
      print_json(group_view_json(view));
      return kOk;
    }
    std::string text;
    std::optional<GroupLabel> label;
    for (const GroupRow& row : view.rows) {
      const RankedMember& r = row.ranked;
      const Document& run = row.run;
      if (!label) label = group_label(snap, run);
      const auto& p = r.member.primary;
      std::string value = p ? shown(human_value(p->value, p->unit)) : "-";
      std::string spread = p ? shown(spread_text(run, p->unit)) : "";
      std::string line = ref.run && *ref.run == r.member.run ? "*" : " ";
      line += padded(r.rank ? std::to_string(r.rank) : "-", 4) + " " + padded(shown(row.implementation), 20) + " " +
              padded(value, 12) + " " + padded(spread, 25) + " " + padded(shown(level_text(row.standing)), 14) +
              " " + padded(shown(observed_date(run)), 10) + " " + r.member.run.hex().substr(0, 12);
      if (!r.rank) line += "  unrankable: " + shown_message(r.unrankable);
      line += "\n";
      // Controlled reruns are evidence about the run, not competitors: beside it, unranked.
      for (const RerunInfo& rerun : row.reruns) line += "      " + rerun_text(rerun) + "\n";
      text += line;
    }
    std::string header = "group " + ref.key.str() + "\n";
    if (label) {
      header += "  " + shown(label->benchmark);
      if (!label->pass.empty()) header += " | " + shown(label->pass);
      if (!label->gpu.empty()) header += " | " + shown(label->gpu);
      header += " | " + std::to_string(view.rows.size()) + " runs";
      if (std::size_t apart = view.rows.size() - view.ranked)
        header += " (" + std::to_string(apart) + " unrankable)";
      header += "\n";
    }
    char cols[256];
    std::snprintf(cols, sizeof cols, " %-4s %-20s %-12s %-25s %-14s %-10s %s\n", "rank", "implementation", "median",
                  "p20 - p80", "level", "observed", "run");
    text = header + cols + text;
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
