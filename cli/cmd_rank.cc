#include <cstdio>

#include "cli/common.h"
#include "cli/output/correctness.h"
#include "cli/output/describe.h"
#include "cli/table.h"
#include "cli/output/group_json.h"
#include "cli/output/terminal.h"
#include "store/history/level_audit.h"
#include "store/query/group_view.h"
#include "store/query/query.h"
#include "store/history/trust.h"

namespace kistore::cli {
namespace {

// "group sha256:…" and a line naming what the group compares: benchmark,
// parameters, pass, GPU and how many runs (how many unrankable).
std::string group_header(const GroupRef& ref, const std::optional<GroupLabel>& label, const GroupView& view) {
  std::string header = "group " + ref.key.str() + "\n";
  if (!label) return header;
  header += "  " + shown(label->benchmark);
  if (std::string params = parameters_text(label->parameters); !params.empty()) header += " | " + shown(params);
  if (!label->pass.empty()) header += " | " + shown(label->pass);
  if (!label->gpu.empty()) header += " | " + shown(label->gpu);
  header += " | " + std::to_string(view.rows.size()) + " runs";
  if (std::size_t apart = view.rows.size() - view.ranked) header += " (" + std::to_string(apart) + " unrankable)";
  return header + "\n";
}

// Which runs' outputs their harness checked for correctness, and by what
// (spec.correctness {checked, by, passed}), as lines under the table: one
// per way of checking, then the runs that do not say. Nothing when no run
// of the group says (the lines would only repeat "not said").
std::string correctness_text(const GroupView& view) {
  const GroupCorrectness c = group_correctness(view);
  if (c.ways.empty()) return "";
  std::string out = "correctness of the outputs, as each harness recorded it:\n";
  for (const CorrectnessWay& way : c.ways) {
    out += "  ";
    out += correctness_way_text(way);
    out += ": ";
    out += shown(way.by);
    out += "\n";
  }
  if (c.silent) {
    out += "  not said, ";
    out += std::to_string(c.silent);
    out += c.silent == 1 ? " run\n" : " runs\n";
  }
  return out;
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
      "last as unrankable, with the reason; so is a run its harness did not pass (its status is\n"
      "incorrect, compile_error, ...), however fast. Each line shows the implementation, the median\n"
      "with its p20 - p80 spread, the evidence level and the date observed. Under the table, when\n"
      "the runs say so (imported from KernelBench, FlashInfer-Bench, tritonbench, nvbench): which\n"
      "runs' outputs their harness checked for correctness, how many passed, and by what.\n"
      "--min-level keeps runs at or above a level: disputed < reported < source-native < reproduced.\n"
      "The level is the one the signed history gives under this store's trust list, as `kistore\n"
      "verify` computes it; a stored level entry that the trust list no longer justifies (a rerun\n"
      "signed by a key since removed) is shown beside it, never as the level: \"reported (stored:\n"
      "reproduced, not justified by the trust list: signer not trusted)\"; --json gives it as\n"
      "\"storedLevel\" with \"verified\": false and \"why\". `kistore verify` says more.\n"
      "A run's controlled reruns (`kistore rerun`) are listed under it, with their verdict and the\n"
      "ratio of their median to the run's; they are evidence about the run, never ranked.\n"
      "For scripts: --format tsv (a header line, then one line per run, values as numbers in\n"
      "their unit, separated by tabs) or --json.\n"
      "An implementation name longer than 200 characters is cut, ending in \"…\", in every format (many\n"
      "runs share one Implementation document; `kistore show RUN --canonical` prints it whole).");
  struct Opts {
    std::string ref, min_level;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("REF", o->ref, "A run or a group key (digest or 8+ hex prefix)")->required();
  app->add_option("--min-level", o->min_level, "Only runs at or above this level")->type_name("LEVEL");
  add_format_option(app, g,
                    "rank, run, implementation, median, unit, p20, p80, level, verified, observed, reruns, "
                    "unrankable");
  return Command{app, [&g, o]() -> int {
    std::optional<Level> min_level;
    if (!o->min_level.empty() && !(min_level = parse_level(o->min_level)))
      throw InvalidInput("--min-level: expected one of " + std::string(level_names()) + ", found \"" +
                         o->min_level + "\"");
    Store store = open_store_for_reading(g);
    Snapshot snap = store.snapshot();
    GroupRef ref = resolve_group_ref(snap, o->ref);
    AuditOnDemand audit(store, load_trust(store));
    // The gathering `compare`, `export` and the site share (store/query/group_view.h).
    GroupView view = group_view(snap, audit, ref.key, min_level);
    ListFormat format = list_format(g);
    if (format == ListFormat::kJson) {
      print_json(group_view_json(view));
      return kOk;
    }
    Table table = format == ListFormat::kTsv
                      ? Table({"rank", "run", "implementation", "median", "unit", "p20", "p80", "level", "verified",
                               "observed", "reruns", "unrankable"})
                      : Table({" rank", "implementation", "median", "p20 - p80", "level", "observed", "run", ""});
    std::optional<GroupLabel> label;
    for (const GroupRow& row : view.rows) {
      const RankedMember& r = row.ranked;
      const Document& run = row.run;
      if (!label) label = group_label(snap, run);
      const auto& p = r.member.primary;
      std::string rank = r.rank ? std::to_string(r.rank) : "-";
      if (format == ListFormat::kTsv) {
        auto spread = p ? spread_values(run, p->unit) : std::nullopt;
        table.add({r.rank ? rank : "", r.member.run.str(), row.implementation, p ? format_number(p->value) : "",
                   p ? p->unit : "", spread ? format_number(spread->first) : "",
                   spread ? format_number(spread->second) : "", std::string(level_name(row.standing.level)),
                   !row.standing.checked ? "" : row.standing.justified ? "yes" : "no", observed_date(run),
                   std::to_string(row.reruns.size()), r.rank ? "" : r.unrankable});
        continue;
      }
      // The run asked about is marked; controlled reruns are evidence about
      // the run, not competitors: beside it, unranked.
      std::vector<std::string> below;
      for (const RerunInfo& rerun : row.reruns) below.push_back("  " + rerun_text(rerun));
      table.add({(ref.run && *ref.run == r.member.run ? "*" : " ") + rank, row.implementation,
                 p ? human_value(p->value, p->unit) : "-", p ? spread_text(run, p->unit) : "",
                 level_text(row.standing), observed_date(run), r.member.run.hex().substr(0, 12),
                 r.rank ? "" : "unrankable: " + r.unrankable},
                std::move(below));
    }
    std::string text = format == ListFormat::kTsv ? table.tsv()
                                                  : group_header(ref, label, view) + table.text(true) + correctness_text(view);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
