// The pages of a comparison group, of a benchmark definition and the index
// (cli/site/site.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <ctime>

#include "objects/shown_text.h"

#include "cli/output/correctness.h"
#include "cli/output/group_json.h"
#include "cli/site/site_model.h"
#include "refs/rank.h"

namespace kistore::cli::site {
namespace {

// "12.5", "324" (no ".0"): a coordinate of a chart.
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string out = buf;
  if (out.size() > 2 && out.compare(out.size() - 2, 2, ".0") == 0) out.resize(out.size() - 2);
  return out;
}

const std::string& benchmark_name(const SiteGroup& g) {
  return g.label.definition.empty() ? g.label.benchmark : g.label.definition;
}

// The best ranked row of a group, or null when none ranks.
const GroupRow* best_row(const SiteGroup& g) {
  const GroupRow& first = g.view.rows.front();
  return first.ranked.rank ? &first : nullptr;
}

std::string level_cell(const LevelStanding& standing) {
  std::string name(level_name(standing.level));
  std::string out = "<span class=\"level " + name + "\">" + name + "</span>";
  if (!standing.justified) out += " <span class=\"unverified\">" + esc(stored_text(standing)) + "</span>";
  return out;
}

// The statistic the group's values are ("median", "mean"), when every run's
// primary is the same; else "value".
std::string value_heading(const SiteGroup& g) {
  std::string statistic;
  for (const GroupRow& row : g.view.rows) {
    const auto& p = row.ranked.member.primary;
    if (!p) continue;
    if (!statistic.empty() && statistic != p->statistic) return "value";
    statistic = p->statistic;
  }
  return statistic.empty() ? "value" : cut_text(statistic, 24);
}

// The run's p20 – p80 as the ranking shows it: "18.104 – 18.834 ms", the
// unit once where both ends have it (else spread_text's "999.1 us - 1.002 ms").
std::string spread_cell(const Document& run, const std::string& unit) {
  auto spread = spread_values(run, unit);
  if (!spread) return "";
  std::string low = human_value(spread->first, unit), high = human_value(spread->second, unit);
  const std::size_t space = high.rfind(' ');
  if (space != std::string::npos && low.size() > high.size() - space &&
      low.compare(low.size() - (high.size() - space), std::string::npos, high, space) == 0)
    return low.substr(0, low.size() - (high.size() - space)) + " – " + high;
  return low + " - " + high;
}

// Whether every run of the group has the same level, justified: then the
// page says it once, above the ranking, and the table has no level column.
bool level_shared(const SiteGroup& g) {
  for (const GroupRow& row : g.view.rows)
    if (!row.standing.justified || row.standing.level != g.view.rows.front().standing.level) return false;
  return true;
}

// Whether every run of the group was observed on the same day (or none says
// when): then the page says it once and the table has no date column.
bool date_shared(const SiteGroup& g) {
  const std::string first = observed_date(g.view.rows.front().run);
  for (const GroupRow& row : g.view.rows)
    if (observed_date(row.run) != first) return false;
  return true;
}

// The ranking: a row per run, its record (cli/site/site_model.h: run_record),
// its numbers right-aligned by the style sheet (table.ranking's 1st, 3rd and
// 4th columns), not by a class per cell. The row's id is the run's address.
// Where some run of the group says whether its harness checked its output
// (cli/output/correctness.h), a column says what it found; the level and the
// date have a column only where the runs differ in them.
std::string members_table(const SiteData& data, std::size_t gi, const RecordFacts& shared) {
  const SiteGroup& g = data.groups[gi];
  bool said = false;
  for (const GroupRow& row : g.view.rows) said = said || run_correctness(row.run.spec()).said;
  const bool one_level = level_shared(g), one_date = date_shared(g);
  std::string out = "<div class=\"table-wrap\"><table class=\"ranking";
  if (one_level) out += " " + std::string(level_code(g.view.rows.front().standing.level));
  // The 1st, 3rd and 4th columns are right-aligned by the style sheet.
  out += "\"><thead><tr><th>rank</th><th>implementation</th><th>";
  out += esc(value_heading(g));
  out += "</th><th>p20 – p80</th>";
  if (!one_level) out += "<th>level</th>";
  if (said) out += "<th>correctness</th>";
  if (!one_date) out += "<th>observed</th>";
  out += "<th>run</th></tr></thead><tbody>\n";
  const std::vector<std::string> bars = member_bars(g, !one_level);
  for (std::size_t i = 0; i < g.view.rows.size(); ++i) {
    const GroupRow& row = g.view.rows[i];
    const auto& p = row.ranked.member.primary;
    out += "<tr id=\"" + run_anchor(row.run.digest()) + "\"><td>" +
           (row.ranked.rank ? std::to_string(row.ranked.rank) : "-") + "</td><td>" + esc(cut_text(row.implementation));
    // The revision cut at 40 characters with "…", the whole a hover away.
    if (std::string rev = revision_of(g.facts[i]); !rev.empty()) out += " <small>" + cut_html(rev, 40) + "</small>";
    if (!row.ranked.rank) out += "<br><span class=\"muted\">unrankable: " + esc(row.ranked.unrankable) + "</span>";
    for (const RerunInfo& r : row.reruns) {
      char ratio[32] = "";
      if (r.readable) std::snprintf(ratio, sizeof ratio, " x%.3f", r.ratio);
      out += "<br><span class=\"muted rerun\">◆ rerun " +
             std::string(r.readable ? level_name(r.verdict) : "unreadable") + ratio + "</span>";
    }
    out += "</td><td>" + esc(value_text(p)) + bars[i] + "</td><td>" + esc(p ? spread_cell(row.run, p->unit) : "") +
           "</td>";
    if (!one_level) out += "<td>" + level_cell(row.standing) + "</td>";
    if (said) {
      const RunCorrectness c = run_correctness(row.run.spec());
      out += "<td class=\"correct-";
      out += c.said ? (c.checked ? (c.passed ? "passed" : "failed") : "unchecked") : "unsaid";
      out += "\">";
      out += c.said ? std::string(c.verdict()) : std::string("not said");
      out += "</td>";
    }
    if (!one_date) out += "<td>" + esc(observed_date(row.run)) + "</td>";
    out += "<td>" + run_record(data, gi, i, shared) + "</td></tr>\n";
  }
  out += "</tbody></table></div>\n";
  if (said) {
    // How each harness checked, as `kistore rank` prints it under its table.
    const GroupCorrectness c = group_correctness(g.view);
    out += "<p class=\"correctness\">Correctness of the outputs, as each harness recorded it:</p><ul>";
    for (const CorrectnessWay& way : c.ways) {
      out += "<li>";
      out += esc(correctness_way_text(way));
      out += ": ";
      out += cut_html(way.by, 80);
      out += "</li>";
    }
    if (c.silent) {
      out += "<li>not said, ";
      out += std::to_string(c.silent);
      out += c.silent == 1 ? " run</li>" : " runs</li>";
    }
    out += "</ul>\n";
  }
  return out;
}

std::string date_time(std::int64_t t) {
  std::time_t shifted = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&shifted, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

// The workload as the group page states it, once: its definition and title,
// then every parameter, each value cut with "…" (the whole is in its JSON).
std::string workload_html(const SiteGroup& g) {
  std::optional<Digest> shared = shared_document(g, Role::kWorkload);
  if (!shared) return "<p class=\"workload\">" + esc(g.workload_summary) + "</p>\n";
  const Document& w = *g.facts.front().workload;
  std::string out = "<p class=\"workload\">";
  const std::optional<Json>& meta = w.metadata();
  const Json* title = meta ? meta->find("title") : nullptr;
  const std::string name = title && title->is_string() ? cut_text(title->as_string()) : "workload";
  out += "<a href=\"" + document_href(w.digest(), 1) + "\">" + esc(name) + "</a> ";
  std::string params;
  if (const Json* list = w.spec().find("parameters"); list && list->is_object())
    for (const auto& [name, value] : list->as_object())
      params += (params.empty() ? "" : " ") + esc(cut_text(name)) + "=" +
                esc(value.is_string() ? cut_text(value.as_string()) : canonical(cut_json(value)));
  return out + (params.empty() ? "" : "<code>" + params + "</code>") + "</p>\n";
}

// The documents every run of the group names: once here, not in each run's
// record (the workload: linked from the page's workload line), each with its
// title where the page's title does not say it (the protocol's is the timed pass).
std::string documents_html(const SiteGroup& g) {
  std::string out;
  for (Role role : {Role::kProtocol, Role::kEnvironment, Role::kImplementation}) {
    if (!shared_document(g, role)) continue;
    const Document& doc = *role_document(g.facts.front(), role);
    const std::optional<Json>& meta = doc.metadata();
    const Json* title = meta ? meta->find("title") : nullptr;
    std::string shown = title && title->is_string() ? cut_text(title->as_string()) : "";
    if (role == Role::kProtocol && shown == g.label.pass) shown.clear();
    out += (out.empty() ? "" : " · ") + std::string(role_name(role)) + " " + (shown.empty() ? "" : esc(shown) + " ") +
           "<a href=\"" + document_href(doc.digest(), 1) + "\">" + doc.digest().hex().substr(0, 12) + ".json</a>";
  }
  return out.empty() ? "" : "<p id=\"documents\">Documents: " + out + "</p>\n";
}

// Every commit that a run of the group names, once, newest first; run
// records link here (#commit-<12 hex>).
std::string commits_html(const SiteData& data, const SiteGroup& g) {
  std::set<std::size_t> entries;
  for (const RunFacts& f : g.facts)
    if (f.story)
      for (const StoryEvent& ev : *f.story) entries.insert(ev.entry);
  if (entries.empty()) return "<p class=\"muted\">No commit names these runs.</p>\n";
  std::string out = "<ol class=\"timeline\">\n";
  for (std::size_t i : entries) {
    const LogEntry& e = data.stories.entries[i];
    out += "<li id=\"commit-" + e.id.substr(0, 12) + "\"><code>" + e.id + "</code> " + esc(date_time(e.time)) + " · " + esc(cut_text(e.author)) + " · " +
           esc(cut_text(data.signatures[i].text())) + "<br>" + esc(cut_text(e.summary)) + "</li>\n";
  }
  return out + "</ol>\n";
}

}  // namespace

std::string group_page(const SiteData& data, std::size_t gi) {
  const SiteGroup& g = data.groups[gi];
  std::string out = page_start(group_title(g) + " · kistore", 1);
  out.reserve(4096 + 512 * g.view.rows.size());
  out += "<h1>" + esc(group_title(g)) + "</h1>\n" + workload_html(g);
  out += "<p>" + std::to_string(g.view.rows.size()) + " runs, " + std::to_string(g.view.ranked) +
         " ranked · <a href=\"" + benchmark_href(g.benchmark_id, 1) + "\">All results for " + esc(benchmark_name(g)) +
         "</a> · comparison key <code>" + g.view.key.str() + "</code></p>\n<h2>Ranking</h2>\n";
  // What every run states alike, once: its level and day where the table has
  // no column for them, then the facts of its record.
  RecordFacts every;
  if (level_shared(g)) every.emplace_back("level", level_cell(g.view.rows.front().standing));
  if (std::string day = observed_date(g.view.rows.front().run); date_shared(g) && !day.empty())
    every.emplace_back("observed", esc(day));
  const RecordFacts shared = shared_facts(data, gi);
  every.insert(every.end(), shared.begin(), shared.end());
  if (g.view.rows.size() > 1) out += "<p>Every run:</p>";
  out += "<dl class=\"facts\" id=\"shared\">" + facts_html(every) + "</dl>\n";
  out += members_table(data, gi, shared);
  out += "<p class=\"muted\">Whole records: <code>kistore show RUN</code>, <code>kistore rank KEY --json</code></p>\n";
  if (std::string chart = series_chart(g); !chart.empty()) out += "<h2 id=\"series\">Over time</h2>\n" + chart;
  out += documents_html(g);
  out += "<h2 id=\"commits\">Commits</h2>\n" + commits_html(data, g);
  if (!data.base_url.empty()) {
    const std::string page = data.base_url + "groups/" + g.view.key.hex() + ".html";
    out += "<p class=\"cite\" id=\"cite\">Cite a run as: implementation. Benchmark run sha256:&lt;digest&gt;. kistore "
           "evidence record, " + esc(page) + "#run-&lt;its first 12 hex digits&gt;.</p>\n";
  }
  return out + page_end(1);
}

namespace {

// The two implementations found in the most groups of the benchmark.
std::pair<std::string, std::string> two_most_common(const SiteData& data, const SiteBenchmark& b) {
  std::map<std::string, std::size_t> seen;
  for (std::size_t gi : b.groups) {
    std::set<std::string> here;
    for (const GroupRow& row : data.groups[gi].view.rows)
      if (row.ranked.rank) here.insert(row.implementation);
    for (const std::string& impl : here) ++seen[impl];
  }
  std::vector<std::pair<std::size_t, std::string>> order;
  for (const auto& [impl, n] : seen) order.emplace_back(n, impl);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& c) {
    return a.first != c.first ? a.first > c.first : a.second < c.second;
  });
  if (order.size() < 2) return {};
  return {order[0].second, order[1].second};
}

// A chart of impl b against impl a: per group holding both, b's primary value over a's.
std::string versus_chart(const SiteData& data, const SiteBenchmark& b) {
  auto [ia, ib] = two_most_common(data, b);
  if (ia.empty()) return "<p class=\"muted\">No two implementations share a group here.</p>\n";
  struct Point {
    std::size_t group;
    double ratio;
  };
  std::vector<Point> points;
  for (std::size_t gi : b.groups) {
    const SiteGroup& g = data.groups[gi];
    std::vector<GroupMember> members;
    for (const GroupRow& row : g.view.rows) members.push_back(row.ranked.member);
    const RankScale scale = group_scale(members);
    std::optional<double> va, vb;
    for (const GroupRow& row : g.view.rows) {
      const auto& p = row.ranked.member.primary;
      if (!row.ranked.rank || !p) continue;
      if (row.implementation == ia && !va) va = to_scale(p->value, p->unit, scale);
      if (row.implementation == ib && !vb) vb = to_scale(p->value, p->unit, scale);
    }
    if (va && vb && *va > 0) points.push_back({gi, *vb / *va});
  }
  double top = 2;
  for (const Point& p : points) top = std::max(top, p.ratio);
  const double label_w = 330, plot_w = 380, row_h = 20, height = row_h * points.size() + 30;
  auto x = [&](double v) { return label_w + plot_w * std::min(v / top, 1.0); };
  std::string out = "<p>" + esc(ib) + " against " + esc(ia) + ": " + esc(ib) + "'s primary value over " + esc(ia) +
                    "'s in each group that holds both (below the dashed line at 1: " + esc(ib) + " is faster or "
                    "smaller).</p>\n<svg class=\"chart versus\" viewBox=\"0 0 " + number(label_w + plot_w + 70) + " " +
                    number(height) + "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">\n";
  double y = 4;
  for (const Point& p : points) {
    const SiteGroup& g = data.groups[p.group];
    // Cut to its column with "…", the whole a hover away (the <g>'s <title>).
    const std::string whole = g.label.gpu + " · " + g.workload_summary + " · " + g.label.pass;
    const std::string label = cut_text(whole, 44);  // 44 characters fit the 330 units left of the bars
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "x%.3f", p.ratio);
    out += "<g>" + (label == whole ? std::string() : "<title>" + esc(whole) + "</title>") + "<text class=\"label\" x=\"" + number(label_w - 6) + "\" y=\"" + number(y + 13) + "\">" + esc(label) +
           "</text><rect x=\"" + number(label_w) + "\" y=\"" + number(y + 2) + "\" width=\"" +
           number(x(p.ratio) - label_w) + "\" height=\"13\"/><text x=\"" + number(x(p.ratio) + 4) +
           "\" y=\"" + number(y + 13) + "\">" + ratio + "</text></g>\n";
    y += row_h;
  }
  out += "<line class=\"one\" x1=\"" + number(x(1)) + "\" x2=\"" + number(x(1)) + "\" y1=\"0\" y2=\"" +
         number(height) + "\"/>\n</svg>\n";
  return out;
}

// The index's table of groups, `groups` in its order (a benchmark's groups
// together): a <tbody> per benchmark, with the benchmark's id as its anchor
// (its page links there) and its kernel's definition for the filter
// (data-kernel); each row the implementations of the group, each once
// (data-impl), and its best run (rank 1: the first row of the group's page).
std::string groups_table(const SiteData& data, const std::vector<std::size_t>& groups, int depth) {
  std::string out = "<div class=\"table-wrap\"><table class=\"groups\" id=\"groups\"><thead><tr><th>benchmark</th>"
                    "<th>pass</th><th>GPU</th><th>workload</th><th class=\"num\">runs</th><th>best</th>"
                    "<th class=\"num\">median</th></tr></thead>\n";
  std::string last;
  for (std::size_t gi : groups) {
    const SiteGroup& g = data.groups[gi];
    const GroupRow* best = best_row(g);
    if (g.benchmark_id != last)
      out += std::string(last.empty() ? "" : "</tbody>\n") + "<tbody id=\"" + g.benchmark_id + "\" data-kernel=\"" +
             esc(benchmark_name(g)) + "\">\n";
    last = g.benchmark_id;
    std::set<std::string> seen;
    std::string impls;
    for (const GroupRow& row : g.view.rows)
      if (seen.insert(row.implementation).second) impls += (impls.empty() ? "" : "\n") + row.implementation;
    out += "<tr data-impl=\"" + esc(impls) + "\"><td><a href=\"" + group_href(g.view.key, depth) + "\">" +
           esc(g.label.benchmark) + "</a></td><td>" + esc(g.label.pass) + "</td><td>" + esc(g.label.gpu) + "</td><td>" +
           esc(g.workload_summary) + "</td><td>" + std::to_string(g.view.rows.size()) + "</td><td>" +
           esc(best ? cut_text(best->implementation) : "-") + "</td><td>" +
           esc(best ? value_text(best->ranked.member.primary) : "-") + "</td></tr>\n";
  }
  return out + (last.empty() ? "" : "</tbody>\n") + "</table></div>\n";
}

std::string select(const char* id, const char* label, const std::set<std::string>& values) {
  std::string out = std::string("<label>") + label + " <select id=\"f-" + id + "\"><option value=\"\">any</option>";
  for (const std::string& v : values) out += "<option value=\"" + esc(v) + "\">" + esc(v) + "</option>";
  return out + "</select></label>\n";
}

}  // namespace

std::string benchmark_page(const SiteData& data, std::size_t bi) {
  const SiteBenchmark& b = data.benchmarks[bi];
  std::string out = page_start(b.name + " · kistore", 1);
  std::size_t runs = 0;
  for (std::size_t gi : b.groups) runs += data.groups[gi].view.rows.size();
  out += "<h1>All results for " + esc(b.name) + "</h1>\n<p>" + std::to_string(b.groups.size()) +
         " comparison groups (GPUs, workloads and timed passes), " + std::to_string(runs) + " runs</p>\n";
  out += "<h2>One implementation against another</h2>\n" + versus_chart(data, b);
  out += "<h2>Groups</h2>\n<p>Its " + std::to_string(b.groups.size()) + " groups, by GPU, are listed in <a href=\"" +
         "../index.html#" + b.id + "\">the index</a>.</p>\n";
  return out + page_end(1);
}

std::string index_page(const SiteData& data) {
  std::string out = page_start("kistore evidence", 0);
  std::size_t runs = 0;
  std::set<std::string> gpus, passes, impls;
  std::vector<std::size_t> all;  // by benchmark, then GPU (the benchmarks' order)
  for (const SiteBenchmark& b : data.benchmarks) all.insert(all.end(), b.groups.begin(), b.groups.end());
  for (std::size_t gi : all) {
    const SiteGroup& g = data.groups[gi];
    runs += g.view.rows.size();
    gpus.insert(g.label.gpu);
    passes.insert(g.label.pass);
    for (const GroupRow& row : g.view.rows) impls.insert(row.implementation);
  }
  out += "<h1>Evidence</h1>\n<p>" + std::to_string(runs) + " runs in " + std::to_string(data.groups.size()) +
         " comparison groups of " + std::to_string(data.benchmarks.size()) +
         " benchmarks</p>\n<h2>Benchmarks</h2>\n<ul class=\"benchmarks\">\n";
  for (const SiteBenchmark& b : data.benchmarks)
    out += "<li><a href=\"" + benchmark_href(b.id, 0) + "\">" + esc(b.name) + "</a> <span class=\"muted\">(" +
           std::to_string(b.groups.size()) + " groups)</span></li>\n";
  out += "</ul>\n<h2>Comparison groups</h2>\n<div class=\"filters\"><label>kernel <input id=\"f-kernel\" "
         "type=\"search\" placeholder=\"e.g. swiglu\"></label>\n" +
         select("gpu", "GPU", gpus) + select("pass", "pass", passes) + select("impl", "implementation", impls) +
         "</div>\n<p class=\"muted\"><span id=\"shown\">" + std::to_string(data.groups.size()) + "</span> of " +
         std::to_string(data.groups.size()) + " groups shown</p>\n";
  out += groups_table(data, all, 0);
  return out + page_end(0);
}

std::string about_page() {
  std::string out = page_start("Reading these pages · kistore", 0);
  out += "<h1>Reading these pages</h1>\n"
         "<h2>Comparison groups</h2>\n<p>Runs are comparable only within one comparison group: the same kernel "
         "definition and workload, timed pass and GPU. A group's page ranks its members by their primary value "
         "(lower is better; ties share a rank), a row per run that holds its record. The bar beside a median "
         "is that median on the group's scale, in its level's colour, with the p20 – p80 spread as a line and each "
         "controlled rerun as a ◆.</p>\n"
         "<h2>Over time</h2>\n<p>Where a group holds two or more runs of one implementation (the same project and "
         "name, any revision: a series, as <code>kistore series</code> lists it), its page draws each series over "
         "time: a line through the values by <code>observedAt</code>, the spread each run carries (p20 – p80, else "
         "p25 – p75, else the mean ± one standard deviation) as a band, each change point (a step of 5 % or more "
         "found by binary segmentation, with its verdict) as a dashed line, and each controlled rerun as a ◆. A run's record "
         "says where it stands in its series. The method is in the project's docs/statistics.md.</p>\n"
         "<h2>Evidence levels</h2>\n<ul>\n"
         "<li><span class=\"level source-native\">source-native</span> the source's own published measurement, marked "
         "passed by the source.</li>\n"
         "<li><span class=\"level reported\">reported</span> a claim without a source's own record (or not marked "
         "passed).</li>\n"
         "<li><span class=\"level reproduced\">reproduced</span> a controlled rerun, signed by a controller, "
         "reproduced the primary measurement.</li>\n"
         "<li><span class=\"level disputed\">disputed</span> a controlled rerun, signed by a controller, failed to "
         "reproduce it.</li>\n</ul>\n<p>A level shown with \"unverified\" is stored in the store but not justified "
         "under the trust list the site was built with. Attestations are community notes and reproductions; they "
         "never change the evidence level.</p>\n"
         "<h2 id=\"record\">A run's record</h2>\n<p>Each run is a row of its group's ranking, at <code>groups/&lt;comparison "
         "key&gt;.html#run-&lt;the first 12 hex digits of the run's digest&gt;</code>. The row's last cell opens on "
         "the run's whole digest and what distinguishes it beyond the row: where it stands in its series, how its "
         "level was given, the members of its metadata and spec that the page does not say otherwise, the documents "
         "it names that are not the group's, its reruns, attestations and history (as <code>kistore log --run</code> "
         "tells it). What every run of the group states alike is said once, above the ranking. Members that restate "
         "others are left out: the run's name and title (the group's title and the implementation), the source's copy "
         "of the measurements and its id at the source, the timing the primary value is read from. The store holds "
         "the whole record: <code>kistore show DIGEST</code> prints it, and <code>kistore rank KEY --json</code> a "
         "group's ranking. Every string over " + std::to_string(kShownChars) + " characters is cut with \"…\"; a run "
         "with a string cut has its whole JSON in <code>runs/&lt;hex&gt;.json</code>, linked from its record, and each "
         "document is whole in <code>documents/&lt;hex&gt;.json</code> (as <code>kistore show DIGEST "
         "--canonical</code> prints it).</p>\n"
         "<h2>Citing a run</h2>\n<p class=\"cite\">implementation. Benchmark run sha256:&lt;digest&gt;. kistore "
         "evidence record, &lt;the group page's address&gt;#run-&lt;12 hex&gt;. Accessed <span data-accessed>(the "
         "date you read this)</span>.</p>\n";
  return out + page_end(0);
}

}  // namespace kistore::cli::site
