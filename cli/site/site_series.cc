// A group's series over time on its page (cli/site/site_model.h): the series
// as `kistore series` draws them (store/query/series_view.h, the one
// gathering), drawn as one inline SVG per group, readable without a script
// and from file://. Small by construction: a series is four paths (band,
// line, points, reruns) whose coordinates are whole units of the viewBox,
// its colour a class the style sheet defines once; change points are one
// path each, with their words as its <title> and in a list below.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "cli/site/site_model.h"
#include "objects/parallel.h"
#include "objects/shown_text.h"

namespace kistore::cli::site {
namespace {

// The chart's frame, in viewBox units: the plot spans x kLeft..kRight and
// y kTop..kBottom; the values' labels sit left of it, the dates below.
constexpr int kWidth = 640, kHeight = 168, kLeft = 72, kRight = 632, kTop = 8, kBottom = 140;
constexpr std::size_t kColours = 6;        // classes s0..s5 of the style sheet
constexpr std::size_t kLegendChars = 60;   // a series' label in the legend and the change points' words

std::string coord(double v) { return std::to_string(std::lround(v)); }

std::string scale_unit(const RankScale& scale) {
  return scale.kind == RankScale::Kind::kTime ? "ns" : scale.kind == RankScale::Kind::kMemory ? "B" : scale.unit;
}

std::string ratio_text(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", r);
  return buf;
}

// The spread the run carries, on the group's scale: its quantiles (p20 -
// p80, else p25 - p75), else mean ± one standard deviation, else none
// (the value itself).
std::pair<double, double> spread_of(const GroupRow& row, const RankScale& scale, double value) {
  const RunStatistics s = run_statistics(row.run.spec(), scale);
  double low = value, high = value;
  if (s.quantiles) {
    low = s.quantiles->low, high = s.quantiles->high;
  } else if (s.moments && s.moments->stdev > 0) {
    low = std::max(s.moments->mean - s.moments->stdev, 0.0), high = s.moments->mean + s.moments->stdev;
  }
  if (!std::isfinite(low) || !std::isfinite(high) || low > value || high < value) return {value, value};
  return {low, high};
}

// "2.606 ms → 2.083 ms, ×0.799, faster (quantiles)": a change point in words.
std::string change_words(const SeriesChange& c, const std::string& unit) {
  std::string out = human_value(c.step.before, unit);
  out += " → ";
  out += human_value(c.step.after, unit);
  out += ", ×";
  out += ratio_text(c.step.after / c.step.before);
  out += ", ";
  out += verdict_name(c.verdict.verdict);
  out += " (";
  out += c.verdict.method;
  out += ")";
  return out;
}

void series_of(SiteGroup& g, const RunStories& stories) {
  std::vector<GroupMember> members;
  for (const GroupRow& row : g.view.rows) members.push_back(row.ranked.member);
  g.scale = group_scale(members);
  std::vector<SeriesIdentity> ids;
  std::map<std::string, std::string> label_of;  // key -> label, by key
  for (std::size_t r = 0; r < g.view.rows.size(); ++r) {
    ids.push_back(series_identity(g.view.rows[r], g.facts[r].implementation));
    label_of.emplace(ids.back().key, ids.back().label());
  }
  if (label_of.size() == ids.size()) return;  // no two runs of one series
  for (const auto& [key, label] : label_of) {
    SiteSeries s{label, {}, {}};
    std::vector<SeriesLeftOut> left_out;
    collect_series_points(g.view, g.scale, ids, key, s.points, left_out);
    if (s.points.size() < 2) continue;
    if (series_has_ties(s.points)) order_ties(s.points, g.view, stories);
    s.changes = series_changes(g.view, g.scale, s.points, VerdictOptions{});
    g.series.push_back(std::move(s));
  }
}

}  // namespace

std::string cut_html(std::string_view text, std::size_t max_chars) {
  std::string cut = cut_text(text, max_chars);
  if (cut.size() == text.size()) return esc(text);
  return "<span title=\"" + esc(cut_text(text)) + "\">" + esc(cut) + "</span>";
}

void add_series(SiteData& data) {
  parallel_for(data.groups.size(), [&data](std::size_t g) { series_of(data.groups[g], data.stories); });
}

std::string series_chart(const SiteGroup& g) {
  if (g.series.empty()) return "";
  const std::string unit = scale_unit(g.scale);
  // The ranges of time and value, over every point, spread and rerun drawn.
  double t0 = std::numeric_limits<double>::infinity(), t1 = -t0, lo = t0, hi = -t0;
  std::vector<std::vector<std::pair<double, double>>> spreads;
  for (const SiteSeries& s : g.series) {
    spreads.emplace_back();
    for (const SeriesPoint& p : s.points) {
      const GroupRow& row = g.view.rows[p.row];
      spreads.back().push_back(spread_of(row, g.scale, p.value));
      t0 = std::min(t0, p.seconds), t1 = std::max(t1, p.seconds);
      lo = std::min(lo, spreads.back().back().first), hi = std::max(hi, spreads.back().back().second);
      for (const RerunInfo& r : row.reruns)
        if (r.readable && std::isfinite(p.value * r.ratio) && r.ratio > 0)
          lo = std::min(lo, p.value * r.ratio), hi = std::max(hi, p.value * r.ratio);
    }
  }
  const double pad = hi > lo ? (hi - lo) * 0.08 : std::max(std::abs(lo) * 0.05, 1e-9);
  lo = std::max(lo - pad, 0.0), hi += pad;
  auto x = [&](double t) { return t1 > t0 ? kLeft + (t - t0) / (t1 - t0) * (kRight - kLeft) : (kLeft + kRight) / 2.0; };
  auto y = [&](double v) { return kBottom - (v - lo) / (hi - lo) * (kBottom - kTop); };
  std::string out = "<svg class=\"series\" viewBox=\"0 0 " + std::to_string(kWidth) + " " + std::to_string(kHeight) +
                    "\" role=\"img\" aria-label=\"each series' value over time\">";
  out += "<path class=\"grid\" d=\"M" + coord(kLeft) + " " + coord(kTop) + "H" + coord(kRight) + "M" + coord(kLeft) +
         " " + coord(kBottom) + "H" + coord(kRight) + "\"/>";
  // Labels: the values at the top and bottom of the plot, the first and last dates.
  out += "<text x=\"" + coord(kLeft - 4) + "\" y=\"" + coord(kTop + 4) + "\" class=\"v\">" + esc(human_value(hi, unit)) +
         "</text><text x=\"" + coord(kLeft - 4) + "\" y=\"" + coord(kBottom + 4) + "\" class=\"v\">" +
         esc(human_value(lo, unit)) + "</text>";
  std::string first_date, last_date;
  for (const SiteSeries& s : g.series) {
    const std::string& a = s.points.front().observed;
    const std::string& b = s.points.back().observed;
    if (first_date.empty() || s.points.front().seconds == t0) first_date = a.substr(0, 10);
    if (last_date.empty() || s.points.back().seconds == t1) last_date = b.substr(0, 10);
  }
  out += "<text x=\"" + coord(kLeft) + "\" y=\"" + coord(kHeight - 6) + "\">" + esc(first_date) + "</text>";
  if (t1 > t0 && last_date != first_date)  // one day: said once
    out += "<text x=\"" + coord(kRight) + "\" y=\"" + coord(kHeight - 6) + "\" class=\"end\">" + esc(last_date) +
           "</text>";
  std::string legend, changes;
  for (std::size_t k = 0; k < g.series.size(); ++k) {
    const SiteSeries& s = g.series[k];
    std::string cls = "s";
    cls += std::to_string(k % kColours);
    const auto& sp = spreads[k];
    std::string band, line, dots;
    bool spread = false;
    // Appended piece by piece: GCC 12 -O3 misreads "literal" + std::string (-Wrestrict).
    auto point = [](std::string& path, char command, double px, double py) {
      path += command;
      path += coord(px);
      path += ' ';
      path += coord(py);
    };
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const double px = x(s.points[i].seconds);
      point(band, i ? 'L' : 'M', px, y(sp[i].second));
      point(line, i ? 'L' : 'M', px, y(s.points[i].value));
      point(dots, 'M', px, y(s.points[i].value));
      dots += "h0";
      spread = spread || sp[i].second > sp[i].first;
    }
    for (std::size_t i = s.points.size(); i-- > 0;) point(band, 'L', x(s.points[i].seconds), y(sp[i].first));
    out += "<g class=\"" + cls + "\">";
    // The band, the line and its dots: classes b, l and d (a chart a group).
    if (spread) out += "<path class=\"b\" d=\"" + band + "Z\"/>";
    out += "<path class=\"l\" d=\"" + line + "\"/><path class=\"d\" d=\"" + dots + "\"/>";
    // Controlled reruns: a diamond at the rerun's value, in its verdict's colour.
    for (Level verdict : {Level::kReproduced, Level::kDisputed}) {
      std::string marks;
      for (const SeriesPoint& p : s.points)
        for (const RerunInfo& r : g.view.rows[p.row].reruns)
          if (r.readable && r.verdict == verdict && r.ratio > 0 && std::isfinite(p.value * r.ratio)) {
            point(marks, 'M', x(p.seconds), y(p.value * r.ratio) - 5);
            marks += "l5 5-5 5-5-5z";
          }
      if (!marks.empty())
        out += "<path class=\"rerun rerun-" + std::string(level_name(verdict)) + "\" d=\"" + marks + "\"/>";
    }
    for (const SeriesChange& c : s.changes) {
      const double at = (x(s.points[c.step.index - 1].seconds) + x(s.points[c.step.index].seconds)) / 2;
      const std::string words = change_words(c, unit);
      out += "<path class=\"cp\" d=\"M" + coord(at) + " " + coord(kTop) + "V" + coord(kBottom) + "\"><title>" +
             esc(cut_text(s.label, kLegendChars)) + ": change point, " + esc(words) + "</title></path>";
      changes += "<li class=\"" + cls + "\">" + cut_html(s.label, kLegendChars) + ", between " +
                 esc(s.points[c.step.index - 1].observed.substr(0, 10)) + " and " +
                 esc(s.points[c.step.index].observed.substr(0, 10)) + ": " + esc(words) + "</li>";
    }
    out += "</g>";
    legend += "<li class=\"" + cls + "\">" + cut_html(s.label, kLegendChars) + " (" +
              std::to_string(s.points.size()) + " points)</li>";
  }
  out += "</svg>\n<ul class=\"legend\">" + legend + "</ul>\n";
  if (!changes.empty()) out += "<p>Change points:</p><ul class=\"legend\">" + changes + "</ul>\n";
  return out;
}

std::string series_position_html(const SiteGroup& g, std::size_t r) {
  for (const SiteSeries& s : g.series)
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      if (s.points[i].row != r) continue;
      // Of the series of its implementation (the row names it); the series'
      // label too where another series of the group has an implementation so named.
      std::string out = "point " + std::to_string(i + 1) + " of " + std::to_string(s.points.size());
      bool ambiguous = false;
      for (const SiteSeries& other : g.series)
        for (const SeriesPoint& p : other.points)
          ambiguous = ambiguous || (&other != &s && g.view.rows[p.row].implementation == g.view.rows[r].implementation);
      if (ambiguous) out += " of " + cut_html(s.label, kLegendChars);
      // The last change point at or before this point: where its segment began.
      const SeriesChange* after = nullptr;
      for (const SeriesChange& c : s.changes)
        if (c.step.index <= i) after = &c;
      if (after) {
        out += "; after a change point (at point " + std::to_string(after->step.index + 1) + "): " +
               esc(change_words(*after, scale_unit(g.scale)));
      } else if (!s.changes.empty()) {
        out += "; before its change point (at point " + std::to_string(s.changes.front().step.index + 1) + ")";
      }
      return out;
    }
  return "";
}

}  // namespace kistore::cli::site
