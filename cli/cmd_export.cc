#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <limits>
#include <map>

#include "cli/common.h"
#include "cli/output/correctness.h"
#include "cli/output/csv_cell.h"
#include "cli/output/describe.h"
#include "cli/output/group_json.h"
#include "cli/output/terminal.h"
#include "objects/shown_text.h"
#include "refs/compare.h"
#include "store/query/group_view.h"
#include "store/history/trust.h"

namespace kistore::cli {
namespace {

bool contains_any_case(std::string hay, std::string needle) {
  for (std::string* s : {&hay, &needle})
    for (char& c : *s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return hay.find(needle) != std::string::npos;
}

// The columns, in order; every row has each (null where not known).
const char* const kColumns[] = {"group", "benchmark", "definition", "pass", "gpu", "rank", "run", "implementation",
                                "level", "metric", "statistic", "value", "unit", "p20", "p80", "observedAt",
                                "parameters", "storedLevel", "status", "correctness", "correctnessBy"};

Json export_row(const GroupView& view, const GroupRow& row, const GroupLabel& label, const Json& parameters) {
  const auto& p = row.ranked.member.primary;
  std::optional<Spread> spread = p ? primary_spread(row.run.spec(), p->unit) : std::nullopt;
  Json j = Json::object();
  j.set("group", view.key.str());
  j.set("benchmark", label.benchmark);
  j.set("definition", label.definition);
  j.set("pass", label.pass);
  j.set("gpu", label.gpu);
  j.set("rank", row.ranked.rank ? Json(row.ranked.rank) : Json());
  j.set("run", row.run.digest().str());
  j.set("implementation", row.implementation);
  j.set("level", std::string(level_name(row.standing.level)));
  j.set("metric", p ? Json(p->metric) : Json());
  j.set("statistic", p ? Json(p->statistic) : Json());
  j.set("value", p ? Json(p->value) : Json());
  j.set("unit", p ? Json(p->unit) : Json());
  j.set("p20", spread ? Json(spread->low) : Json());
  j.set("p80", spread ? Json(spread->high) : Json());
  j.set("observedAt", observed_date(row.run));
  j.set("parameters", parameters);
  // A stored level entry that the trust list does not justify, beside the
  // level, never as it: "reproduced (not justified by the trust list: …)".
  j.set("storedLevel", row.standing.justified ? Json()
                                              : Json(std::string(level_name(row.standing.stored)) +
                                                     " (not justified by the trust list" +
                                                     (row.standing.why.empty() ? "" : ": " + row.standing.why) + ")"));
  // What its harness said of its output, as `rank` reads it (cli/output/correctness.h).
  const RunCorrectness c = run_correctness(row.run.spec());
  j.set("status", c.status.empty() ? Json() : Json(c.status));
  j.set("correctness", c.said ? Json(std::string(c.verdict())) : Json());
  j.set("correctnessBy", c.said ? Json(cut_text(c.by)) : Json());
  return j;
}

// One CSV line of `row`: text cells neutralised and quoted (cli/output/csv_cell.h),
// numbers as JSON writes them, the parameters as one JSON text cell.
std::string csv_line(const Json& row) {
  std::string line;
  for (const char* column : kColumns) {
    const Json& v = *row.find(column);
    if (!line.empty() || column != kColumns[0]) line += ",";
    if (v.is_number()) line += canonical(v);
    else if (v.is_string()) line += csv_text_cell(v.as_string());
    else if (!v.is_null()) line += csv_text_cell(canonical(v));
  }
  return line + "\n";
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("export", "Export every run as CSV or JSON Lines, one row per run");
  app->footer(
      "One row per run of every comparison group (reruns are evidence about a run and are not rows):\n"
      "group, benchmark, definition, pass, gpu, rank, run, implementation, level, metric, statistic,\n"
      "value, unit, p20, p80, observedAt, the workload's parameters (as one JSON object),\n"
      "storedLevel, and what the run's harness said of it: status (spec.status: passed, incorrect,\n"
      "compile_error, ...), correctness (passed, failed or not checked; empty when the run does not\n"
      "say) and correctnessBy (how it was checked), as `kistore rank` reads them; for a spreadsheet\n"
      "or pandas (pandas.read_csv, or read_json(lines=True)). Units are the run's own (value, p20\n"
      "and p80 in unit: ns for every importer's times). Ranks\n"
      "and levels are those of `kistore rank`: the level the signed history gives under this store's\n"
      "trust list, as verify computes it; storedLevel is empty unless the store records another\n"
      "level that the trust list no longer justifies (\"reproduced (not justified by the trust list:\n"
      "signer not trusted)\").\n"
      "--format csv (default) quotes as RFC 4180, and every cell that holds a , ; tab, quote or line\n"
      "break, so that a spreadsheet of any locale sees one cell; it writes a ' before a text cell that\n"
      "starts with = + - @, a tab or a carriage return (also after spaces, and in their full-width\n"
      "forms such as U+FF1D), and after a , ; tab or line break inside a cell that one follows, so\n"
      "that no spreadsheet, however it splits, runs it as a formula (OWASP's rule). Numbers (value,\n"
      "p20, p80, rank) are written as numbers, -1.5 too. --format jsonl keeps every value exact.\n"
      "Text taken from documents that many runs share (the implementation's name, the benchmark,\n"
      "definition, pass, GPU and parameters) is cut after 200 characters, ending in \"…\" (after 4096\n"
      "characters in all for the parameters, the rest as a member \"…\"), in both formats, so that an\n"
      "export grows with the store and not with runs times document size; `kistore show RUN\n"
      "--canonical` prints the documents whole.\n"
      "--benchmark and --gpu keep groups whose benchmark or GPU contains the text (any case, as\n"
      "`kistore groups`); --min-level keeps runs at or above a level and ranks those kept, as\n"
      "`kistore rank --min-level` does.");
  struct Opts {
    std::string format = "csv", benchmark, gpu, min_level;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("--format", o->format, "csv (default) or jsonl")->choices({"csv", "jsonl"});
  app->add_option("--benchmark", o->benchmark, "Only groups whose benchmark contains this text");
  app->add_option("--gpu", o->gpu, "Only groups whose GPU contains this text");
  app->add_option("--min-level", o->min_level, "Only runs at or above this level")->type_name("LEVEL");
  return Command{app, [&g, o]() -> int {
    std::optional<Level> min_level;
    if (!o->min_level.empty() && !(min_level = parse_level(o->min_level)))
      throw InvalidInput("--min-level: expected one of " + std::string(level_names()) + ", found \"" +
                         o->min_level + "\"");
    Store store = open_store_for_reading(g);
    Snapshot snap = store.snapshot();
    AuditOnDemand audit(store, load_trust(store));
    std::map<Digest, Json> parameters;  // by workload: shared by the runs of a group and more
    std::string out;
    // Exact bytes for a file or a pipe (a program reads them); on a terminal,
    // what a terminal may show (cli/output/terminal.h): a document's escape
    // sequences or bidirectional overrides never reach it raw.
    const bool terminal = isatty(STDOUT_FILENO) != 0;
    auto write_out = [&](std::string& text) {
      if (terminal) text = shown_lines(text, std::numeric_limits<std::size_t>::max());
      std::fwrite(text.data(), 1, text.size(), stdout);
      text.clear();
    };
    if (o->format == "csv") {
      for (const char* column : kColumns) out += std::string(out.empty() ? "" : ",") + column;
      out += "\n";
    }
    for (const Digest& key : group_keys(snap)) {
      GroupView view = group_view(snap, audit, key, min_level);
      if (view.rows.empty()) continue;
      GroupLabel label = group_label(snap, view.rows.front().run);
      if (!o->benchmark.empty() && !contains_any_case(label.benchmark + "\n" + label.definition, o->benchmark)) continue;
      if (!o->gpu.empty() && !contains_any_case(label.gpu, o->gpu)) continue;
      Json params;
      if (auto w = run_reference(view.rows.front().run, "workload"); w && snap.has_object(*w)) {
        auto it = parameters.find(*w);
        if (it == parameters.end()) {
          Document workload = snap.document(*w, false);
          const Json* p = workload.spec().find("parameters");
          it = parameters.emplace(*w, p ? cut_json(*p) : Json()).first;
        }
        params = it->second;
      }
      for (const GroupRow& row : view.rows) {
        Json j = export_row(view, row, label, params);
        out += o->format == "csv" ? csv_line(j) : canonical(j) + "\n";
      }
      if (out.size() > (1u << 20)) write_out(out);
    }
    write_out(out);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
