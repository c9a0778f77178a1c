#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "cli/common.h"
#include "cli/output/describe.h"
#include "cli/table.h"
#include "cli/output/terminal.h"
#include "store/query/query.h"

namespace kistore::cli {
namespace {

bool contains_ci(const std::string& hay, const std::string& needle) {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  return lower(hay).find(lower(needle)) != std::string::npos;
}

// One group as listed.
struct ListedGroup {
  Digest key;
  GroupLabel label;
  std::string parameters;  // parameters_text(label.parameters)
  std::size_t members = 0;
  std::optional<Measurement> best;  // the first ranked run's primary value; none when no run ranks
};

// By benchmark, then workload (numbers in parameters compared as numbers),
// then pass, GPU and key: the groups of one benchmark sit together, in
// order of size.
bool listed_before(const ListedGroup& a, const ListedGroup& b) {
  if (a.label.benchmark != b.label.benchmark) return a.label.benchmark < b.label.benchmark;
  if (a.parameters != b.parameters) return natural_less(a.parameters, b.parameters);
  return std::tie(a.label.pass, a.label.gpu, a.key) < std::tie(b.label.pass, b.label.gpu, b.key);
}

// For each benchmark, the names of the string and boolean parameters whose
// values differ between its listed groups (a name some lack counts): those
// parameters_text shows.
std::map<std::string, std::set<std::string>> varying_parameters(const std::vector<ListedGroup>& rows) {
  std::map<std::string, std::map<std::string, std::set<std::string>>> values;  // benchmark -> name -> values
  std::map<std::string, std::size_t> groups;                                  // benchmark -> groups listed
  for (const ListedGroup& r : rows) {
    ++groups[r.label.benchmark];
    if (!r.label.parameters.is_object()) continue;
    for (const auto& [name, value] : r.label.parameters.as_object())
      if (value.is_string() || value.is_bool()) values[r.label.benchmark][name].insert(canonical(value));
  }
  std::map<std::string, std::set<std::string>> out;
  for (const auto& [benchmark, names] : values)
    for (const auto& [name, seen] : names) {
      std::size_t with = 0;
      for (const ListedGroup& r : rows)
        if (r.label.benchmark == benchmark && r.label.parameters.is_object() && r.label.parameters.find(name)) ++with;
      if (seen.size() > 1 || with != groups[benchmark]) out[benchmark].insert(name);
    }
  return out;
}

Json group_json(const ListedGroup& r) {
  Json j = Json::object();
  j.set("group", r.key.str());
  j.set("benchmark", r.label.benchmark);
  j.set("definition", r.label.definition);
  j.set("parameters", r.label.parameters);
  j.set("pass", r.label.pass);
  j.set("gpu", r.label.gpu);
  j.set("members", static_cast<long long>(r.members));
  j.set("best", r.best ? Json(r.best->value) : Json());
  j.set("unit", r.best ? Json(r.best->unit) : Json());
  return j;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("groups", "List comparison groups with member counts");
  app->footer(
      "A comparison group holds the runs that may be compared: one kernel definition and workload,\n"
      "one timed pass, one GPU. One line per group: its key (use it with `kistore rank`), the\n"
      "benchmark, the workload's parameters in short (numbers as name=value, the dtype last:\n"
      "\"T=1024 bsz=2 bf16\"), the timed pass, the GPU, the number of runs and the best primary value.\n"
      "Sorted by benchmark, then parameters (numbers as numbers), pass and GPU.\n"
      "--benchmark and --gpu keep groups whose benchmark or GPU contains the given text (any case).\n"
      "For scripts: --format tsv (full key, exact fields, the best value as a number and its unit in\n"
      "columns of their own), or --json (the parameters as stored).\n\n"
      "Example: kistore groups --gpu 4090 --format tsv | cut -f2,4,7");
  struct Opts {
    std::string benchmark, gpu;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("--benchmark", o->benchmark, "Only groups whose benchmark contains this text");
  app->add_option("--gpu", o->gpu, "Only groups whose GPU contains this text");
  add_format_option(app, g, "group, benchmark, definition, parameters, pass, gpu, runs, best, unit");
  return Command{app, [&g, o]() -> int {
    Store store = open_store_for_reading(g);
    Snapshot snap = store.snapshot();
    std::vector<ListedGroup> rows;
    for (const Digest& key : group_keys(snap)) {
      std::vector<RankedMember> ranked = rank_group(group_members(snap, key));
      if (ranked.empty()) continue;
      ListedGroup row{key, group_label(snap, snap.document(ranked.front().member.run)), "", ranked.size(), std::nullopt};
      if (!o->benchmark.empty() && !contains_ci(row.label.benchmark, o->benchmark)) continue;
      if (!o->gpu.empty() && !contains_ci(row.label.gpu, o->gpu)) continue;
      // Only a ranked run is the group's best: an unrankable one is listed last.
      if (ranked.front().rank) row.best = ranked.front().member.primary;
      rows.push_back(std::move(row));
    }
    std::map<std::string, std::set<std::string>> varying = varying_parameters(rows);
    for (ListedGroup& r : rows) r.parameters = parameters_text(r.label.parameters, varying[r.label.benchmark]);
    std::sort(rows.begin(), rows.end(), listed_before);
    ListFormat format = list_format(g);
    if (format == ListFormat::kJson) {
      Json list = Json::array();
      for (const ListedGroup& r : rows) list.push_back(group_json(r));
      Json out = Json::object();
      out.set("groups", std::move(list));
      print_json(out);
      return kOk;
    }
    Table table = format == ListFormat::kTsv
                      ? Table({"group", "benchmark", "definition", "parameters", "pass", "gpu", "runs", "best", "unit"})
                      : Table({"group", "benchmark", "parameters", "pass", "gpu", "runs", "best"}, {"runs"});
    for (const ListedGroup& r : rows) {
      std::string runs = std::to_string(r.members);
      if (format == ListFormat::kTsv)
        table.add({r.key.str(), r.label.benchmark, r.label.definition, r.parameters, r.label.pass, r.label.gpu, runs,
                   r.best ? format_number(r.best->value) : "", r.best ? r.best->unit : ""});
      else
        table.add({r.key.hex().substr(0, 12), r.label.benchmark, r.parameters.empty() ? "-" : r.parameters,
                   r.label.pass, r.label.gpu, runs, r.best ? human_value(r.best->value, r.best->unit) : "-"});
    }
    std::string text = table.render(format);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
