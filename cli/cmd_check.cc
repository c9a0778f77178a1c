#include <cstdio>

#include "cli/common.h"
#include "cli/output/describe.h"
#include "cli/output/terminal.h"
#include "cli/output/verdict_text.h"
#include "cli/table.h"
#include "objects/shown_text.h"
#include "refs/level.h"
#include "store/history/trust.h"
#include "store/query/check.h"
#include "store/query/query.h"

namespace kistore::cli {
namespace {

// A table cell of GitHub-flavoured Markdown: escaped for a terminal first
// (shown: control bytes, bidirectional overrides, cut), then every character
// Markdown or inline HTML gives a meaning escaped with a backslash, so that
// a name can neither end the cell (|), start a link (no "[" can open one, so
// "(" needs nothing), an image, a tag or an autolink (":", "@"), nor format
// the comment.
std::string markdown_cell(const std::string& text) {
  std::string safe = shown(text), out;
  for (char c : safe) {
    if (std::string_view("\\`*_{}[]<>#!|~&$:@").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string baseline_text(const CheckFinding& f) {
  std::string out = human_value(f.baseline, f.unit);
  out += " (";
  out += std::to_string(f.baseline_points);
  out += f.baseline_points == 1 ? " point)" : " points)";
  return out;
}

std::string level_cell(const CheckFinding& f) {
  std::string out(level_name(f.standing.level));
  if (!f.rerun.empty()) {
    out += ", ";
    out += f.rerun;
  }
  return out;
}

Json finding_json(const CheckFinding& f, const VerdictOptions& options) {
  Json j = verdict_json(f.verdict, options);
  j.set("run", f.run.str());
  j.set("group", f.group.str());
  j.set("implementation", f.implementation);
  j.set("revision", f.revision.empty() ? Json() : Json(f.revision));
  j.set("observedAt", f.observed);
  j.set("value", f.value);
  j.set("baseline", f.baseline);
  j.set("baselinePoints", static_cast<long long>(f.baseline_points));
  j.set("baselineRun", f.baseline_last.str());
  j.set("unit", f.unit);
  j.set("ratio", number_or_null(f.ratio));
  set_level_json(j, f.standing);
  j.set("rerun", f.rerun.empty() ? Json() : Json(f.rerun));
  return j;
}

std::string range_text(const CheckRange& r) {
  std::string out = r.from.empty() ? std::string("the empty store") : r.from.substr(0, 12);
  out += "..";
  out += r.to.substr(0, 12);
  out += " (";
  out += r.basis;
  out += ")";
  return out;
}

std::string plural(std::size_t n, const char* one, const char* many) {
  std::string out = count_text(n);
  out += " ";
  out += n == 1 ? one : many;
  return out;
}

std::string summary_text(const CheckReport& r) {
  std::string out = plural(r.new_runs, "run", "runs");
  out += " added in ";
  out += plural(r.groups, "group", "groups");
  out += ": ";
  out += plural(r.regressions.size(), "regression", "regressions");
  out += ", ";
  out += plural(r.improvements.size(), "improvement", "improvements");
  out += ", ";
  out += count_text(r.same);
  out += " the same, ";
  out += count_text(r.ambiguous);
  out += " ambiguous, ";
  out += count_text(r.first_points);
  out += " first of their series, ";
  out += count_text(r.left_out);
  out += " left out\n";
  return out;
}

std::string text_report(const CheckReport& r, const VerdictOptions& o) {
  std::string out = "check ";
  out += range_text(r.range);
  out += ", threshold ";
  out += format_number(o.threshold * 100);
  out += " %, alpha ";
  out += format_number(o.alpha);
  out += "\n";
  out += summary_text(r);
  auto section = [&](const char* title, const std::vector<CheckFinding>& list) {
    if (list.empty()) return;
    out += "\n";
    out += title;
    out += "\n";
    Table table({"ratio", "verdict", "value", "baseline", "level", "implementation", "revision", "group", "run"});
    for (const CheckFinding& f : list)
      table.add({ratio_text(f.ratio), verdict_brief(f.verdict), human_value(f.value, f.unit), baseline_text(f), level_cell(f),
                 f.implementation, f.revision.empty() ? "-" : f.revision, f.group.hex().substr(0, 12),
                 f.run.hex().substr(0, 12)});
    out += table.text(true);
  };
  section("regressions, worst first", r.regressions);
  section("improvements, best first", r.improvements);
  return out;
}

std::string markdown_report(const CheckReport& r, const VerdictOptions& o) {
  std::string out = "### kistore check: ";
  out += plural(r.regressions.size(), "regression", "regressions");
  out += ", ";
  out += plural(r.improvements.size(), "improvement", "improvements");
  out += "\n\n";
  const std::string summary = summary_text(r);  // kistore's own words and counts: nothing to escape
  out += summary.substr(0, summary.size() - 1);
  out += " Range `";
  out += range_text(r.range);
  out += "`; threshold ";
  out += format_number(o.threshold * 100);
  out += " %, alpha ";
  out += format_number(o.alpha);
  out += ".\n";
  if (r.regressions.empty() && r.improvements.empty()) return out;
  out += "\n| | run | implementation | revision | group | value | baseline | ratio | verdict | level |\n";
  out += "|---|---|---|---|---|---|---|---|---|---|\n";
  auto rows = [&](const char* what, const std::vector<CheckFinding>& list) {
    for (const CheckFinding& f : list) {
      out += "| ";
      out += what;
      out += " | `";
      out += f.run.hex().substr(0, 12);
      out += "` | ";
      out += markdown_cell(f.implementation);
      out += " | ";
      out += f.revision.empty() ? std::string("\\-") : markdown_cell(f.revision);
      out += " | `";
      out += f.group.hex().substr(0, 12);
      out += "` | ";
      out += markdown_cell(human_value(f.value, f.unit));
      out += " | ";
      out += markdown_cell(baseline_text(f));
      out += " | ";
      out += ratio_text(f.ratio);
      out += " | ";
      out += markdown_cell(verdict_brief(f.verdict));
      out += " | ";
      out += markdown_cell(level_cell(f));
      out += " |\n";
    }
  };
  rows("regression", r.regressions);
  rows("improvement", r.improvements);
  return out;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("check", "Find regressions among the runs added since a commit (for CI)");
  app->footer(
      "Looks at every run added to the store since a commit and compares each with the points\n"
      "before it in its series (see kistore series: the runs of one comparison group whose\n"
      "implementation has the same project and name, ordered by observedAt). It prints the\n"
      "regressions (slower, or larger for memory) and the improvements, worst first.\n"
      "\n"
      "Which runs: those added after --since COMMIT (4 to 40 hex digits of a commit id of the\n"
      "store's history) or after the commit --since-ref REF names (a full reference name, e.g.\n"
      "refs/kistore/synced/origin). Without either: the runs the last `kistore pull` brought,\n"
      "else the runs of the last commit (what the last add or import added).\n"
      "\n"
      "How a run is judged: its baseline is the latest points before it in its series, at most\n"
      "10, after the last change point among the 50 before it. With 3 or more such points, the\n"
      "run's value must fall outside the range their own ups and downs predict for one more\n"
      "point (a 1 - alpha prediction interval) and differ from their geometric mean by at least\n"
      "--threshold (default 0.05, i.e. 5 %); with 1 or 2, the run is compared with the latest\n"
      "point as `kistore compare` does, by the two runs' own figures. Anything less is \"same\"\n"
      "or \"ambiguous\", never reported as a change. docs/statistics.md gives the rules.\n"
      "\n"
      "A regression whose run a controlled rerun reproduced since is marked \"confirmed\"; one\n"
      "whose rerun failed to reproduce it is marked \"disputed\" (kistore rerun).\n"
      "\n"
      "Output: text; --json ({\"since\",\"regressions\":[{\"run\",\"group\",\"implementation\",\n"
      "\"baseline\",\"value\",\"ratio\",\"verdict\",\"method\",\"level\",...}],\"improvements\":[...]});\n"
      "--format markdown, a table to paste into a pull request's comment.\n"
      "\n"
      "Exit codes: 0 no regression at or above --min-level (default reported, so that a\n"
      "regression a rerun disputed does not fail a build); 1 at least one; 2 a usage error (a\n"
      "--since that names no commit of the store's history, say); 3 the store cannot be read.\n"
      "\n"
      "Examples:\n"
      "  kistore pull origin && kistore check                  what the pull brought\n"
      "  kistore import liger new.csv && kistore check --format markdown > comment.md\n"
      "  kistore check --since 4f2a9c1e --min-level source-native --threshold 0.1");
  struct Opts {
    std::string since, since_ref, min_level = "reported", format = "text";
    double threshold = 0.05, alpha = 0.01;
  };
  auto o = std::make_shared<Opts>();
  auto* since = app->add_option("--since", o->since, "Check the runs added after this commit (4 to 40 hex digits)")
                    ->type_name("COMMIT");
  auto* since_ref = app->add_option("--since-ref", o->since_ref, "Check the runs added after the commit this reference names")
                        ->type_name("REF");
  since->excludes(since_ref);
  since_ref->excludes(since);
  app->add_option("--threshold", o->threshold, "Smallest relative change reported, in (0, 1); default 0.05 (5 %)");
  app->add_option("--alpha", o->alpha, "Significance level of the tests, in (0, 0.5); default 0.01");
  app->add_option("--min-level", o->min_level,
                  "Fail (exit 1) only for regressions of runs at or above this level; default reported")
      ->type_name("LEVEL");
  app->add_option("--format", o->format, "text (the default), markdown (a table for a pull request) or json (as --json)")
      ->type_name("FORMAT")
      ->choices({"text", "markdown", "json"});
  return Command{app, [&g, o]() -> int {
    const VerdictOptions options = verdict_options(o->threshold, o->alpha);
    std::optional<Level> min_level = parse_level(o->min_level);
    if (!min_level)
      throw InvalidInput("--min-level: expected one of " + std::string(level_names()) + ", found \"" +
                         cut_text(o->min_level) + "\"");
    Store store = open_store_for_reading(g);
    Snapshot snap = store.snapshot();
    CheckRange range = check_range(store, snap, o->since, o->since_ref);
    AuditOnDemand audit(store, load_trust(store));
    CheckReport report = check_runs(store, snap, audit, range, options);
    bool failed = false;
    for (const CheckFinding& f : report.regressions) failed = failed || f.standing.level >= *min_level;
    const int code = failed ? kProblems : kOk;

    if (g.json || o->format == "json") {
      Json out = Json::object();
      out.set("since", range.from.empty() ? Json() : Json(range.from));
      out.set("to", range.to);
      out.set("basis", range.basis);
      out.set("threshold", o->threshold);
      out.set("alpha", o->alpha);
      out.set("minLevel", std::string(level_name(*min_level)));
      out.set("newRuns", static_cast<long long>(report.new_runs));
      out.set("groups", static_cast<long long>(report.groups));
      out.set("same", static_cast<long long>(report.same));
      out.set("ambiguous", static_cast<long long>(report.ambiguous));
      out.set("firstPoints", static_cast<long long>(report.first_points));
      out.set("leftOut", static_cast<long long>(report.left_out));
      Json regressions = Json::array(), improvements = Json::array();
      for (const CheckFinding& f : report.regressions) regressions.push_back(finding_json(f, options));
      for (const CheckFinding& f : report.improvements) improvements.push_back(finding_json(f, options));
      out.set("regressions", std::move(regressions));
      out.set("improvements", std::move(improvements));
      out.set("failed", failed);
      print_json(out);
      return code;
    }
    std::string text = o->format == "markdown" ? markdown_report(report, options) : text_report(report, options);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return code;
  }};
});

}  // namespace
}  // namespace kistore::cli
