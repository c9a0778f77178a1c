// The site's shared pieces: page frame, digests, links, the group chart,
// and the style sheet and script every page loads.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cli/output/html.h"
#include "cli/site/site_model.h"
#include "refs/compare.h"
#include "refs/rank.h"

namespace kistore::cli::site {
namespace {

std::string up(int depth) {
  std::string out;
  for (int i = 0; i < depth; ++i) out += "../";
  return out;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

}  // namespace

std::string esc(std::string_view text) { return html_text(text); }

std::string page_start(const std::string& title, int depth) {
  // No request leaves the folder: the policy allows the site's own style
  // sheet and script only (no inline script, no other origin).
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'self'; "
         "script-src 'self'; img-src 'self' data:\">\n"
         "<title>" + esc(title) + "</title>\n<link rel=\"stylesheet\" href=\"" + up(depth) + "style.css\">\n"
         "</head>\n<body>\n<header class=\"top\"><a href=\"" + up(depth) +
         "index.html\">kistore evidence</a></header>\n<main>\n";
}

std::string page_end(int depth) {
  return "</main>\n<footer>Built by <code>kistore site</code> from a content-addressed evidence store. "
         "Every digest can be checked offline with <code>kistore verify</code>.</footer>\n<script src=\"" +
         up(depth) + "site.js\"></script>\n</body>\n</html>\n";
}

std::string digest_html(const Digest& d) {
  return "<details class=\"digest\"><summary><code>" + d.hex().substr(0, 12) + "</code></summary><code>" + d.str() +
         "</code></details>";
}

std::string value_text(const std::optional<Measurement>& p) { return p ? human_value(p->value, p->unit) : "-"; }

std::string run_href(const Digest& run, int depth) { return up(depth) + "runs/" + run.hex() + ".html"; }
std::string group_href(const Digest& key, int depth) { return up(depth) + "groups/" + key.hex() + ".html"; }
std::string benchmark_href(const std::string& id, int depth) { return up(depth) + "benchmarks/" + id + ".html"; }
std::string document_href(const Digest& doc, int depth) { return up(depth) + "documents/" + doc.hex() + ".json"; }

std::string group_title(const SiteGroup& g) {
  std::string out = g.label.benchmark.empty() ? "comparison group" : g.label.benchmark;
  if (!g.label.pass.empty()) out += " · " + g.label.pass;
  if (!g.label.gpu.empty()) out += " · " + g.label.gpu;
  return out;
}

std::string group_chart(const SiteGroup& g) {
  // On the group's own scale (refs/rank.h), so that bars in ms and in us compare.
  std::vector<GroupMember> members;
  for (const GroupRow& row : g.view.rows) members.push_back(row.ranked.member);
  const RankScale scale = group_scale(members);
  struct Bar {
    const GroupRow* row;
    double value, low, high, end;  // end: the rightmost mark (spread or rerun)
  };
  std::vector<Bar> bars;
  double top = 0;
  for (const GroupRow& row : g.view.rows) {
    const auto& p = row.ranked.member.primary;
    if (!row.ranked.rank || !p) continue;
    Bar b{&row, *to_scale(p->value, p->unit, scale), 0, 0, 0};
    b.low = b.high = b.value;
    if (auto s = primary_spread(row.run.spec(), p->unit)) {
      b.low = to_scale(s->low, p->unit, scale).value_or(b.value);
      b.high = to_scale(s->high, p->unit, scale).value_or(b.value);
    }
    b.end = b.high;
    for (const RerunInfo& r : row.reruns)
      if (r.readable) b.end = std::max(b.end, b.value * r.ratio);
    top = std::max({top, b.value, b.end});
    bars.push_back(b);
  }
  if (bars.empty() || !(top > 0)) return "<p>No member has a rankable value to chart.</p>";
  const double label_w = 190, plot_w = 480, row_h = 26, width = label_w + plot_w + 230;
  const double height = row_h * static_cast<double>(bars.size()) + 24;
  auto x = [&](double v) { return label_w + plot_w * std::clamp(v / top, 0.0, 1.0); };
  std::string svg = "<svg class=\"chart\" viewBox=\"0 0 " + number(width) + " " + number(height) +
                    "\" role=\"img\" aria-label=\"primary value of each ranked member, with its p20-p80 spread\" "
                    "xmlns=\"http://www.w3.org/2000/svg\">\n";
  double y = 4;
  for (const Bar& b : bars) {
    const GroupRow& row = *b.row;
    const std::string level(level_name(row.standing.level));
    std::string label = "#";
    label.append(std::to_string(row.ranked.rank)).append(" ").append(row.implementation);
    svg += "<g class=\"member\"><text class=\"label\" x=\"" + number(label_w - 6) + "\" y=\"" + number(y + 16) +
           "\">" + esc(label.size() > 28 ? label.substr(0, 27) + "…" : label) + "</text>";
    svg += "<rect class=\"bar level-" + level + "\" data-run=\"" + row.run.digest().hex() + "\" x=\"" +
           number(label_w) + "\" y=\"" + number(y + 3) + "\" width=\"" + number(x(b.value) - label_w) +
           "\" height=\"16\"><title>" + esc(row.implementation + ": " + value_text(row.ranked.member.primary) +
                                           " (" + level_text(row.standing) + ")") +
           "</title></rect>";
    if (b.high > b.low)
      svg += "<line class=\"spread\" x1=\"" + number(x(b.low)) + "\" x2=\"" + number(x(b.high)) + "\" y1=\"" +
             number(y + 11) + "\" y2=\"" + number(y + 11) + "\"/>";
    for (const RerunInfo& r : row.reruns) {
      if (!r.readable) continue;
      const double rx = x(b.value * r.ratio), ry = y + 11;
      svg += "<path class=\"rerun rerun-" + std::string(level_name(r.verdict)) + "\" d=\"M" + number(rx) + " " +
             number(ry - 6) + " l6 6 l-6 6 l-6 -6 z\"><title>rerun " + std::string(level_name(r.verdict)) +
             "</title></path>";
    }
    svg += "<text class=\"value\" x=\"" + number(x(std::max(b.value, b.end)) + 8) + "\" y=\"" + number(y + 16) +
           "\">" + esc(value_text(row.ranked.member.primary)) + " · " + level + "</text></g>\n";
    y += row_h;
  }
  svg += "</svg>\n";
  return svg;
}

const char* const kStyleSheet = R"CSS(:root{--fg:#1d232a;--muted:#5b6570;--line:#d8dde3;--bg:#fff;--panel:#f5f7f9;--accent:#0b5cad;
--reproduced:#1a7f37;--source-native:#3b6fb6;--reported:#8a8f98;--disputed:#c62828}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header.top{padding:.6rem 1rem;border-bottom:1px solid var(--line);background:var(--panel)}
header.top a{font-weight:600;color:var(--fg);text-decoration:none}
main{max-width:1100px;margin:0 auto;padding:1rem}
footer{max-width:1100px;margin:2rem auto;padding:1rem;color:var(--muted);font-size:.85rem;border-top:1px solid var(--line)}
a{color:var(--accent)}
h1{font-size:1.45rem;margin:.4rem 0}
h2{font-size:1.1rem;margin:1.6rem 0 .5rem;border-bottom:1px solid var(--line);padding-bottom:.2rem}
.primary{font-size:2rem;font-weight:650;margin:.2rem 0}
.spread-text{color:var(--muted);font-size:1rem;font-weight:400}
.rankline{font-size:1.05rem}
.level{display:inline-block;padding:.05rem .5rem;border-radius:1rem;color:#fff;font-size:.85rem;font-weight:600}
.level.reproduced{background:var(--reproduced)}.level.source-native{background:var(--source-native)}
.level.reported{background:var(--reported)}.level.disputed{background:var(--disputed)}
.unverified{color:var(--disputed);font-weight:600}
table{border-collapse:collapse;width:100%;margin:.4rem 0;font-size:.92rem}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--panel);font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.this{background:#fff7d6}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:.4rem 0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}
pre{background:var(--panel);padding:.7rem;overflow:auto;font-size:.8rem;max-height:32rem;white-space:pre-wrap;overflow-wrap:anywhere}
code{font-size:.88em;overflow-wrap:anywhere}
details.digest{display:inline-block}details.digest summary{cursor:pointer}
.note{white-space:pre-wrap;overflow-wrap:anywhere}
.cite{background:var(--panel);padding:.7rem;border-left:3px solid var(--accent)}
ol.timeline{list-style:none;padding-left:0;border-left:2px solid var(--line);margin-left:.4rem}
ol.timeline li{padding:.2rem 0 .6rem 1rem;position:relative}
ol.timeline li::before{content:"";position:absolute;left:-.4rem;top:.55rem;width:.6rem;height:.6rem;border-radius:50%;background:var(--accent)}
.muted{color:var(--muted)}
.para{margin:1em 0}
.filters{display:flex;flex-wrap:wrap;gap:.5rem;margin:.6rem 0}
.filters input,.filters select{font:inherit;padding:.3rem;border:1px solid var(--line);border-radius:.3rem}
svg.chart{width:100%;height:auto;max-width:820px;font-size:12px}
svg.chart text.label{text-anchor:end;fill:var(--fg)}svg.chart text.value{fill:var(--muted)}
svg.chart rect.bar{fill:var(--reported)}svg.chart rect.level-reproduced{fill:var(--reproduced)}
svg.chart rect.level-source-native{fill:var(--source-native)}svg.chart rect.level-disputed{fill:var(--disputed)}
svg.chart line.spread{stroke:var(--fg);stroke-width:2}
svg.chart path.rerun{fill:#fff;stroke:var(--fg);stroke-width:1.5}svg.chart path.rerun-reproduced{fill:var(--reproduced)}
svg.chart path.rerun-disputed{fill:var(--disputed)}
svg.chart line.one{stroke:var(--fg);stroke-dasharray:3 3}
.legend span{margin-right:1rem}.swatch{display:inline-block;width:.8rem;height:.8rem;vertical-align:middle;margin-right:.3rem}
.swatch.reproduced{background:var(--reproduced)}.swatch.source-native{background:var(--source-native)}
.swatch.reported{background:var(--reported)}.swatch.disputed{background:var(--disputed)}
.table-wrap{overflow-x:auto}
@media (max-width:640px){main{padding:.6rem}.primary{font-size:1.5rem}dl.facts{grid-template-columns:1fr}
dl.facts dt{font-weight:600;margin-top:.3rem}th,td{padding:.25rem .3rem}}
)CSS";

const char* const kScript = R"JS(// The index's filter, and the access date of "Cite this record". No request is made.
(function () {
  var accessed = document.querySelectorAll("[data-accessed]");
  for (var i = 0; i < accessed.length; i++) accessed[i].textContent = new Date().toISOString().slice(0, 10);
  var table = document.getElementById("groups");
  if (!table) return;
  var fields = ["kernel", "gpu", "pass", "impl"];
  var rows = table.tBodies[0].rows;
  var count = document.getElementById("shown");
  function apply() {
    var want = {};
    fields.forEach(function (f) { want[f] = document.getElementById("f-" + f).value.toLowerCase(); });
    var n = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i], ok = true;
      fields.forEach(function (f) {
        if (!want[f]) return;
        var have = (r.getAttribute("data-" + f) || "").toLowerCase();
        if (f === "kernel" ? have.indexOf(want[f]) < 0 : ("\n" + have + "\n").indexOf("\n" + want[f] + "\n") < 0) ok = false;
      });
      r.hidden = !ok;
      if (ok) n++;
    }
    count.textContent = String(n);
  }
  fields.forEach(function (f) { document.getElementById("f-" + f).addEventListener("input", apply); });
  apply();
})();
)JS";

}  // namespace kistore::cli::site
