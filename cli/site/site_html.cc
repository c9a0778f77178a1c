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

// "12.5", "74" (no ".0": a bar a run, every byte counts).
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string out = buf;
  if (out.size() > 2 && out.compare(out.size() - 2, 2, ".0") == 0) out.resize(out.size() - 2);
  return out;
}

}  // namespace

std::string esc(std::string_view text) { return html_text(text); }

const char* level_code(Level level) {
  switch (level) {
    case Level::kSourceNative: return "sn";
    case Level::kReproduced: return "ok";
    case Level::kDisputed: return "ds";
    default: return "rp";
  }
}

std::string page_start(const std::string& title, int depth) {
  // No request leaves the folder: the policy allows the site's own style
  // sheet and script only (no inline script, no other origin).
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'self'; "
         "script-src 'self'\">\n"
         "<title>" + esc(title) + "</title>\n<link rel=\"stylesheet\" href=\"" + up(depth) + "style.css\">\n"
         "</head>\n<body>\n<header><a href=\"" + up(depth) +
         "index.html\">kistore evidence</a></header>\n<main>\n";
}

std::string page_end(int depth) {
  return "</main>\n<footer><code>kistore site</code> · <a href=\"" + up(depth) + "about.html\">reading these "
         "pages</a></footer>\n<script src=\"" +
         up(depth) + "site.js\"></script>\n</body>\n</html>\n";
}

std::string digest_html(const Digest& d) {
  return "<details class=\"digest\"><summary><code>" + d.hex().substr(0, 12) + "</code></summary><code>" + d.str() +
         "</code></details>";
}

std::string value_text(const std::optional<Measurement>& p) { return p ? human_value(p->value, p->unit) : "-"; }

std::string run_href(const SiteData& data, const Digest& run, int depth) {
  const SiteGroup& g = data.groups[data.run_at.at(run).first];
  return group_href(g.view.key, depth) + "#" + run_anchor(run);
}
std::string run_json_href(const Digest& run, int depth) { return up(depth) + "runs/" + run.hex() + ".json"; }
std::string group_href(const Digest& key, int depth) { return up(depth) + "groups/" + key.hex() + ".html"; }
std::string benchmark_href(const std::string& id, int depth) { return up(depth) + "benchmarks/" + id + ".html"; }
std::string document_href(const Digest& doc, int depth) { return up(depth) + "documents/" + doc.hex() + ".json"; }

std::string group_title(const SiteGroup& g) {
  std::string out = g.label.benchmark.empty() ? "comparison group" : g.label.benchmark;
  if (!g.label.pass.empty()) out += " · " + g.label.pass;
  if (!g.label.gpu.empty()) out += " · " + g.label.gpu;
  return out;
}

std::vector<std::string> member_bars(const SiteGroup& g, bool level_classes) {
  // On the group's own scale (refs/rank.h), so that bars in ms and in us compare.
  std::vector<GroupMember> members;
  for (const GroupRow& row : g.view.rows) members.push_back(row.ranked.member);
  const RankScale scale = group_scale(members);
  struct Bar {
    double value = 0, low = 0, high = 0;
    bool drawn = false;
  };
  std::vector<Bar> bars(g.view.rows.size());
  double top = 0;
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const GroupRow& row = g.view.rows[i];
    const auto& p = row.ranked.member.primary;
    if (!row.ranked.rank || !p) continue;
    Bar& b = bars[i];
    b.drawn = true;
    b.value = b.low = b.high = *to_scale(p->value, p->unit, scale);
    if (auto s = primary_spread(row.run.spec(), p->unit)) {
      b.low = to_scale(s->low, p->unit, scale).value_or(b.value);
      b.high = to_scale(s->high, p->unit, scale).value_or(b.value);
    }
    double end = b.high;
    for (const RerunInfo& r : row.reruns)
      if (r.readable) end = std::max(end, b.value * r.ratio);
    top = std::max({top, b.value, end});
  }
  std::vector<std::string> out(bars.size());
  if (!(top > 0)) return out;
  // 0..100 % across the cell, with room for a rerun's mark at the right.
  auto x = [&](double v) { return 94 * std::clamp(v / top, 0.0, 1.0); };
  auto pct = [&](double v) { return number(x(v)) + "%"; };
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    if (!b.drawn) continue;
    const GroupRow& row = g.view.rows[i];
    // Two lines (their stroke, width and place across the bar's height are the
    // style sheet's: table.ranking line): the bar from 0 to the value, then the
    // spread, in % of the cell, a bar a run: every byte counts. A rerun's
    // mark, a ◆ drawn in the units of a viewBox 100 wide, needs one.
    bool marks = false;
    for (const RerunInfo& r : row.reruns) marks = marks || r.readable;
    std::string svg = marks ? "<svg viewBox=\"0 0 100 14\"><line" : "<svg><line";
    if (level_classes) svg += " class=\"" + std::string(level_code(row.standing.level)) + "\"";
    svg += " x2=\"" + pct(b.value) + "\"/>";
    if (b.high > b.low) svg += "<line x1=\"" + pct(b.low) + "\" x2=\"" + pct(b.high) + "\"/>";
    for (const RerunInfo& r : row.reruns)
      if (r.readable)
        svg += "<path class=\"rerun rerun-" + std::string(level_name(r.verdict)) + "\" d=\"M" +
               number(x(b.value * r.ratio)) + " 1l6 6-6 6-6-6z\"/>";
    out[i] = svg + "</svg>";
  }
  return out;
}

const char* const kStyleSheet = R"CSS(:root{--fg:#1d232a;--muted:#5b6570;--line:#d8dde3;--bg:#fff;--panel:#f5f7f9;--accent:#0b5cad;
--reproduced:#1a7f37;--source-native:#3b6fb6;--reported:#8a8f98;--disputed:#c62828}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{padding:.6rem 1rem;border-bottom:1px solid var(--line);background:var(--panel)}
header a{font-weight:600;color:var(--fg);text-decoration:none}
main{max-width:1100px;margin:0 auto;padding:1rem}
footer{max-width:1100px;margin:2rem auto;padding:1rem;color:var(--muted);font-size:.85rem;border-top:1px solid var(--line)}
a{color:var(--accent)}
h1{font-size:1.45rem;margin:.4rem 0}
h2{font-size:1.1rem;margin:1.6rem 0 .5rem;border-bottom:1px solid var(--line);padding-bottom:.2rem}
.level{display:inline-block;padding:.05rem .5rem;border-radius:1rem;color:#fff;font-size:.85rem;font-weight:600}
.level.reproduced{background:var(--reproduced)}.level.source-native{background:var(--source-native)}
.level.reported{background:var(--reported)}.level.disputed{background:var(--disputed)}
.unverified{color:var(--disputed);font-weight:600}
table{border-collapse:collapse;width:100%;margin:.4rem 0;font-size:.92rem}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--panel);font-weight:600;overflow-wrap:normal}
td.num,th.num,table.ranking :is(td,th):nth-child(-n+4):not(:nth-child(2)),table.groups td:nth-child(5),table.groups td:nth-child(7){text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
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
.filters label{max-width:100%}
.filters input,.filters select{font:inherit;padding:.3rem;border:1px solid var(--line);border-radius:.3rem;max-width:100%}
table.ranking svg{display:block;width:7rem;height:.9rem;margin-left:auto;overflow:visible}
table.ranking line{stroke:var(--reported);stroke-width:10px;transform:translateY(7px)}
table.sn line,line.sn{stroke:var(--source-native)}table.ok line,line.ok{stroke:var(--reproduced)}
table.ds line,line.ds{stroke:var(--disputed)}table.ranking line+line{stroke:var(--fg);stroke-width:1.5px}
table.ranking path.rerun{fill:#fff;stroke:var(--fg);stroke-width:1}table.ranking path.rerun-reproduced{fill:var(--reproduced)}
table.ranking path.rerun-disputed{fill:var(--disputed)}
table.ranking small{color:var(--muted);font-size:.85em}
table.ranking details summary{cursor:pointer;font-family:ui-monospace,monospace;font-size:.85em}
table.ranking details{max-width:30rem}table.ranking details[open]{min-width:12rem}
.level{white-space:nowrap}
tr:target{background:#fff7d6}
svg.chart{width:100%;height:auto;max-width:820px;font-size:12px}
svg.chart text.label{text-anchor:end;fill:var(--fg)}svg.chart rect+text{fill:var(--muted)}
svg.chart rect{fill:var(--source-native)}
svg.chart line.one{stroke:var(--fg);stroke-dasharray:3 3}
.table-wrap{overflow-x:auto}
td.correct-passed{color:var(--reproduced)}td.correct-failed{color:var(--disputed);font-weight:600}
svg.series{display:block;width:100%;max-width:820px;height:auto;font-size:11px}
svg.series text{fill:var(--muted)}svg.series text.v,svg.series text.end{text-anchor:end}
svg.series path{fill:none;stroke:var(--c)}svg.series path.grid{stroke:var(--line)}
svg.series path.b{fill:var(--c);fill-opacity:.15;stroke:none}svg.series path.l{stroke-width:1.5}
svg.series path.d{stroke-width:6;stroke-linecap:round}svg.series path.cp{stroke-width:2;stroke-dasharray:4 3}
svg.series path.rerun{fill:#fff;stroke:var(--fg)}svg.series path.rerun-reproduced{fill:var(--reproduced)}
svg.series path.rerun-disputed{fill:var(--disputed)}
.s0{--c:#0b5cad}.s1{--c:#c2410c}.s2{--c:#1a7f37}.s3{--c:#7c3aed}.s4{--c:#b45309}.s5{--c:#0e7490}
ul.legend{list-style:none;padding-left:0;margin:.3rem 0}ul.legend li::before{content:"";display:inline-block;
width:.8rem;height:.8rem;margin-right:.4rem;vertical-align:-.1rem;background:var(--c)}
main{overflow-wrap:anywhere}
@media (max-width:640px){main{padding:.6rem}dl.facts{grid-template-columns:1fr}
dl.facts dt{font-weight:600;margin-top:.3rem}th,td{padding:.25rem .3rem}
table.ranking thead,table.groups thead{display:none}
table.ranking tr,table.groups tr{display:block;border-bottom:1px solid var(--line);padding:.2rem 0}
table.ranking td,table.groups td{display:inline-block;border:0;padding:.1rem .4rem .1rem 0}
table.ranking svg{display:inline-block;vertical-align:middle;margin-left:.3rem;width:5rem}}
)CSS";

const char* const kScript = R"JS(// The index's filter, the run record an address names opened, and the access date of a citation. No request is made.
(function () {
  // A run's address is its row on its group's page (#run-<12 hex>): open its record.
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (el && el.tagName === "TR") el = el.querySelector("details");
    if (el && el.tagName === "DETAILS") el.open = true;
  }
  openTarget();
  window.addEventListener("hashchange", openTarget);
  var accessed = document.querySelectorAll("[data-accessed]");
  for (var i = 0; i < accessed.length; i++) accessed[i].textContent = new Date().toISOString().slice(0, 10);
  var table = document.getElementById("groups");
  if (!table) return;
  var fields = ["kernel", "gpu", "pass", "impl"];
  var rows = [];  // every benchmark's <tbody>
  for (var b = 0; b < table.tBodies.length; b++)
    for (var k = 0; k < table.tBodies[b].rows.length; k++) rows.push(table.tBodies[b].rows[k]);
  var count = document.getElementById("shown");
  // What a row is filtered on: its cells (benchmark, pass, GPU), the kernel's
  // definition (its <tbody>'s data-kernel) and the implementations (data-impl, one a line).
  function have(r, f) {
    if (f === "kernel") return r.cells[0].textContent + "\n" + (r.parentNode.getAttribute("data-kernel") || "");
    if (f === "pass") return r.cells[1].textContent;
    if (f === "gpu") return r.cells[2].textContent;
    return r.getAttribute("data-impl") || "";
  }
  function apply() {
    var want = {};
    fields.forEach(function (f) { want[f] = document.getElementById("f-" + f).value.toLowerCase(); });
    var n = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i], ok = true;
      fields.forEach(function (f) {
        if (!want[f]) return;
        var h = have(r, f).toLowerCase();
        if (f === "kernel" ? h.indexOf(want[f]) < 0 : ("\n" + h + "\n").indexOf("\n" + want[f] + "\n") < 0) ok = false;
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
