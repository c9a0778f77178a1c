// The pages of a comparison group, of a benchmark definition and the index
// (cli/site/site.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "cli/output/group_json.h"
#include "cli/site/site_model.h"
#include "refs/rank.h"

namespace kistore::cli::site {
namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
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

std::string legend() {
  std::string out = "<p class=\"legend\">";
  for (const char* l : {"reproduced", "source-native", "reported", "disputed"})
    out += "<span><span class=\"swatch " + std::string(l) + "\"></span>" + l + "</span>";
  return out + "<span>— p20 – p80 spread</span><span>◆ controlled rerun</span></p>\n";
}

std::string members_table(const SiteGroup& g) {
  std::string out = "<div class=\"table-wrap\"><table class=\"ranking\"><thead><tr><th class=\"num\">rank</th>"
                    "<th>implementation</th><th class=\"num\">median</th><th class=\"num\">p20 – p80</th><th>level</th>"
                    "<th>observed</th><th>run</th></tr></thead><tbody>\n";
  for (const GroupRow& row : g.view.rows) {
    const auto& p = row.ranked.member.primary;
    const Digest& run = row.run.digest();
    out += "<tr class=\"member\" id=\"run-" + run.hex().substr(0, 12) + "\" data-rank=\"" +
           std::to_string(row.ranked.rank) + "\"><td class=\"num\">" +
           (row.ranked.rank ? std::to_string(row.ranked.rank) : "-") + "</td><td><a href=\"" + run_href(run, 1) +
           "\">" + esc(row.implementation) + "</a>";
    if (!row.ranked.rank) out += "<br><span class=\"muted\">unrankable: " + esc(row.ranked.unrankable) + "</span>";
    for (const RerunInfo& r : row.reruns) {
      char ratio[32] = "";
      if (r.readable) std::snprintf(ratio, sizeof ratio, " x%.3f", r.ratio);
      out += "<br><span class=\"muted rerun\">◆ rerun " +
             std::string(r.readable ? level_name(r.verdict) : "unreadable") + ratio + "</span>";
    }
    out += "</td><td class=\"num\">" + esc(value_text(p)) + "</td><td class=\"num\">" +
           esc(p ? spread_text(row.run, p->unit) : "") + "</td><td>" + level_cell(row.standing) + "</td><td>" +
           esc(observed_date(row.run)) + "</td><td>" + digest_html(run) + "</td></tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

}  // namespace

std::string group_page(const SiteData& data, std::size_t gi) {
  const SiteGroup& g = data.groups[gi];
  std::string out = page_start(group_title(g) + " · kistore", 1);
  out += "<h1>" + esc(group_title(g)) + "</h1>\n<p class=\"muted\">" + esc(g.workload_summary) + "</p>\n";
  out += "<p>" + std::to_string(g.view.rows.size()) + " runs, " + std::to_string(g.view.ranked) +
         " ranked · <a href=\"" + benchmark_href(g.benchmark_id, 1) + "\">All results for " + esc(benchmark_name(g)) +
         "</a> · <a href=\"" + g.view.key.hex() + ".json\">JSON</a> (as <code>kistore rank --json</code>)</p>\n";
  out += "<p class=\"muted\">Runs are comparable only within one comparison group: the same kernel definition and "
         "workload, timed pass and GPU. Lower is better; ties share a rank.</p>\n";
  out += "<h2>Primary value of each member</h2>\n" + group_chart(g) + legend();
  out += "<h2>Ranking</h2>\n" + members_table(g);
  out += "<div class=\"muted para\">Comparison key " + digest_html(g.view.key) + "</div>\n";
  return out + page_end(1);
}

std::string group_json(const SiteData& data, std::size_t g) {
  return canonical(group_view_json(data.groups[g].view)) + "\n";
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
    std::string label = g.label.pass + " · " + g.label.gpu + " · " + g.workload_summary;
    if (label.size() > 60) label = label.substr(0, 59) + "…";
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "x%.3f", p.ratio);
    out += "<g><text class=\"label\" x=\"" + number(label_w - 6) + "\" y=\"" + number(y + 13) + "\">" + esc(label) +
           "</text><rect class=\"bar\" x=\"" + number(label_w) + "\" y=\"" + number(y + 2) + "\" width=\"" +
           number(x(p.ratio) - label_w) + "\" height=\"13\"/><text class=\"value\" x=\"" + number(x(p.ratio) + 4) +
           "\" y=\"" + number(y + 13) + "\">" + ratio + "</text></g>\n";
    y += row_h;
  }
  out += "<line class=\"one\" x1=\"" + number(x(1)) + "\" x2=\"" + number(x(1)) + "\" y1=\"0\" y2=\"" +
         number(height) + "\"/>\n</svg>\n";
  return out;
}

std::string groups_table(const SiteData& data, const std::vector<std::size_t>& groups, int depth, bool filterable) {
  std::string out = std::string("<div class=\"table-wrap\"><table") + (filterable ? " id=\"groups\"" : "") +
                    "><thead><tr><th>benchmark</th><th>pass</th><th>GPU</th><th>workload</th><th class=\"num\">runs"
                    "</th><th>best</th><th class=\"num\">median</th></tr></thead><tbody>\n";
  for (std::size_t gi : groups) {
    const SiteGroup& g = data.groups[gi];
    const GroupRow* best = best_row(g);
    std::string impls;
    for (const GroupRow& row : g.view.rows) impls += (impls.empty() ? "" : "\n") + row.implementation;
    out += "<tr data-kernel=\"" + esc(g.label.benchmark + "\n" + benchmark_name(g)) + "\" data-gpu=\"" +
           esc(g.label.gpu) + "\" data-pass=\"" + esc(g.label.pass) + "\" data-impl=\"" + esc(impls) + "\"><td><a href=\"" +
           group_href(g.view.key, depth) + "\">" + esc(g.label.benchmark) + "</a></td><td>" + esc(g.label.pass) +
           "</td><td>" + esc(g.label.gpu) + "</td><td>" + esc(g.workload_summary) + "</td><td class=\"num\">" +
           std::to_string(g.view.rows.size()) + "</td><td>" +
           (best ? "<a href=\"" + run_href(best->run.digest(), depth) + "\">" + esc(best->implementation) + "</a>"
                 : std::string("-")) +
           "</td><td class=\"num\">" + esc(best ? value_text(best->ranked.member.primary) : "-") + "</td></tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

Json group_summary_json(const SiteGroup& g) {
  Json j = Json::object();
  j.set("group", g.view.key.str());
  j.set("benchmark", g.label.benchmark);
  j.set("definition", g.label.definition);
  j.set("pass", g.label.pass);
  j.set("gpu", g.label.gpu);
  j.set("members", static_cast<long long>(g.view.rows.size()));
  const GroupRow* best = best_row(g);
  j.set("best", best ? group_row_json(*best) : Json());
  return j;
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
         " comparison groups (GPUs, workloads and timed passes), " + std::to_string(runs) + " runs · <a href=\"" +
         b.id + ".json\">JSON</a></p>\n";
  out += "<h2>One implementation against another</h2>\n" + versus_chart(data, b);
  out += "<h2>Groups</h2>\n" + groups_table(data, b.groups, 1, false);
  return out + page_end(1);
}

std::string benchmark_json(const SiteData& data, std::size_t bi) {
  const SiteBenchmark& b = data.benchmarks[bi];
  Json groups = Json::array();
  for (std::size_t gi : b.groups) groups.push_back(group_summary_json(data.groups[gi]));
  Json out = Json::object();
  out.set("benchmark", b.name);
  out.set("groups", std::move(groups));
  return canonical(out) + "\n";
}

std::string index_page(const SiteData& data) {
  std::string out = page_start("kistore evidence", 0);
  std::size_t runs = 0;
  std::set<std::string> gpus, passes, impls;
  std::vector<std::size_t> all;
  for (std::size_t gi = 0; gi < data.groups.size(); ++gi) {
    const SiteGroup& g = data.groups[gi];
    runs += g.view.rows.size();
    all.push_back(gi);
    gpus.insert(g.label.gpu);
    passes.insert(g.label.pass);
    for (const GroupRow& row : g.view.rows) impls.insert(row.implementation);
  }
  out += "<h1>Evidence</h1>\n<p>" + std::to_string(runs) + " runs in " + std::to_string(data.groups.size()) +
         " comparison groups of " + std::to_string(data.benchmarks.size()) +
         " benchmarks · <a href=\"index.json\">JSON</a></p>\n<h2>Benchmarks</h2>\n<ul class=\"benchmarks\">\n";
  for (const SiteBenchmark& b : data.benchmarks)
    out += "<li><a href=\"" + benchmark_href(b.id, 0) + "\">" + esc(b.name) + "</a> <span class=\"muted\">(" +
           std::to_string(b.groups.size()) + " groups)</span></li>\n";
  out += "</ul>\n<h2>Comparison groups</h2>\n<div class=\"filters\"><label>kernel <input id=\"f-kernel\" "
         "type=\"search\" placeholder=\"e.g. swiglu\"></label>\n" +
         select("gpu", "GPU", gpus) + select("pass", "pass", passes) + select("impl", "implementation", impls) +
         "</div>\n<p class=\"muted\"><span id=\"shown\">" + std::to_string(data.groups.size()) + "</span> of " +
         std::to_string(data.groups.size()) + " groups shown</p>\n";
  out += groups_table(data, all, 0, true);
  return out + page_end(0);
}

std::string index_json(const SiteData& data) {
  Json groups = Json::array();
  for (const SiteGroup& g : data.groups) groups.push_back(group_summary_json(g));
  Json out = Json::object();
  out.set("groups", std::move(groups));
  return canonical(out) + "\n";
}

}  // namespace kistore::cli::site
