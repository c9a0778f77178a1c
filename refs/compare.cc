#include "refs/compare.h"

#include "refs/rank.h"

namespace kistore {

std::optional<Spread> primary_spread(const Json& run_spec, const std::string& unit) {
  const Json* list = run_spec.find("measurements");
  if (!list || !list->is_array()) return std::nullopt;
  std::optional<double> p20, p80;
  for (const Json& m : list->as_array()) {
    auto parsed = Measurement::from_json(m);
    if (!parsed || parsed->unit != unit) continue;
    if (parsed->statistic == "p20") p20 = parsed->value;
    if (parsed->statistic == "p80") p80 = parsed->value;
  }
  if (!p20 || !p80) return std::nullopt;
  return Spread{*p20, *p80};
}

RunComparison compare_runs(const Json& a_spec, const Json& b_spec, const VerdictOptions& options) {
  RunComparison out;
  for (const char* role : {"workload", "protocol", "environment"}) {
    const std::string member = std::string(role) + "Digest";
    const Json *a = a_spec.find(member), *b = b_spec.find(member);
    if (!a || !b || !(*a == *b)) out.differs.push_back(role);
  }
  out.same_group = out.differs.empty();
  out.primary_a = primary_measurement(a_spec);
  out.primary_b = primary_measurement(b_spec);
  if (out.primary_a) out.spread_a = primary_spread(a_spec, out.primary_a->unit);
  if (out.primary_b) out.spread_b = primary_spread(b_spec, out.primary_b->unit);
  // The scale the two would be ranked on if they were one group.
  const Digest none = Digest::of("");
  RankScale scale = group_scale({GroupMember{none, out.primary_a, Level::kReported},
                                 GroupMember{none, out.primary_b, Level::kReported}});
  out.statistics_a = run_statistics(a_spec, scale);
  out.statistics_b = run_statistics(b_spec, scale);
  if (out.same_group) {
    out.verdict = decide(out.statistics_a, out.statistics_b, options);
  } else {
    out.verdict.method = "none";
    out.verdict.reason = "the runs are in different comparison groups: no test says anything about them";
  }
  auto why_a = unrankable_reason(out.primary_a, scale), why_b = unrankable_reason(out.primary_b, scale);
  if (why_a || why_b) {
    out.no_ratio = why_a ? "first run: " + *why_a : "second run: " + *why_b;
    return out;
  }
  double a = *to_scale(out.primary_a->value, out.primary_a->unit, scale);
  double b = *to_scale(out.primary_b->value, out.primary_b->unit, scale);
  out.ratio = b / a;
  if (!out.verdict.ratio) out.verdict.ratio = out.ratio;
  if (out.spread_a && out.spread_b) {
    auto conv = [&](double v, const std::string& unit) { return to_scale(v, unit, scale); };
    auto al = conv(out.spread_a->low, out.primary_a->unit), ah = conv(out.spread_a->high, out.primary_a->unit);
    auto bl = conv(out.spread_b->low, out.primary_b->unit), bh = conv(out.spread_b->high, out.primary_b->unit);
    if (al && ah && bl && bh) out.spreads_overlap = *al <= *bh && *bl <= *ah;
  }
  return out;
}

}  // namespace kistore
