#include "cli/output/correctness.h"

#include <map>

namespace kistore::cli {
namespace {

bool is_true(const Json* v) { return v && v->is_bool() && v->as_bool(); }

}  // namespace

std::string_view RunCorrectness::verdict() const {
  if (!said) return "";
  if (!checked) return "not checked";
  return passed ? "passed" : "failed";
}

RunCorrectness run_correctness(const Json& spec) {
  RunCorrectness out;
  if (const Json* status = spec.find("status"); status && status->is_string()) out.status = status->as_string();
  const Json* c = spec.find("correctness");
  const Json* by = c && c->is_object() ? c->find("by") : nullptr;
  if (!by || !by->is_string()) return out;
  out.said = true;
  out.by = by->as_string();
  out.checked = is_true(c->find("checked"));
  out.passed = is_true(c->find("passed"));
  return out;
}

GroupCorrectness group_correctness(const GroupView& view) {
  GroupCorrectness out;
  std::map<std::string, CorrectnessWay> ways;
  for (const GroupRow& row : view.rows) {
    const RunCorrectness c = run_correctness(row.run.spec());
    if (!c.said) {
      ++out.silent;
      continue;
    }
    CorrectnessWay& way = ways.try_emplace(c.by, CorrectnessWay{c.by, c.checked, 0, 0}).first->second;
    ++way.runs;
    if (c.passed) ++way.passed;
  }
  for (auto& [by, way] : ways) out.ways.push_back(std::move(way));
  return out;
}

std::string correctness_way_text(const CorrectnessWay& way) {
  std::string runs = std::to_string(way.runs);
  runs += way.runs == 1 ? " run" : " runs";
  std::string out = way.checked ? "checked, " : "not checked, ";
  if (!way.checked) return out + runs;
  out += runs;
  out += " (";
  out += std::to_string(way.passed);
  out += " passed)";
  return out;
}

}  // namespace kistore::cli
