#include <cstdio>

#include "cli/common.h"
#include "cli/describe.h"
#include "cli/terminal.h"
#include "store/query.h"

namespace kistore::cli {
namespace {

bool contains_ci(const std::string& hay, const std::string& needle) {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  return lower(hay).find(lower(needle)) != std::string::npos;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("groups", "List comparison groups with member counts");
  app->footer(
      "A comparison group holds the runs that may be compared: one kernel definition and workload,\n"
      "one timed pass, one GPU. For each group: its key (use it with `kistore rank`), the benchmark,\n"
      "the timed pass, the GPU, the number of runs and the best primary value.\n"
      "--benchmark and --gpu keep groups whose benchmark or GPU contains the given text (any case).");
  struct Opts {
    std::string benchmark, gpu;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("--benchmark", o->benchmark, "Only groups whose benchmark contains this text");
  app->add_option("--gpu", o->gpu, "Only groups whose GPU contains this text");
  return Command{app, [&g, o]() -> int {
    Store store = open_store_for_reading(g);
    Snapshot snap = store.snapshot();
    Json list = Json::array();
    std::string text;
    for (const Digest& key : group_keys(snap)) {
      std::vector<RankedMember> ranked = rank_group(group_members(snap, key));
      if (ranked.empty()) continue;
      Document first = snap.document(ranked.front().member.run);
      GroupLabel label = group_label(snap, first);
      if (!o->benchmark.empty() && !contains_ci(label.benchmark, o->benchmark)) continue;
      if (!o->gpu.empty() && !contains_ci(label.gpu, o->gpu)) continue;
      // Only a ranked run is the group's best: an unrankable one is listed last.
      const auto& best = ranked.front().rank ? ranked.front().member.primary : std::nullopt;
      if (g.json) {
        Json j = Json::object();
        j.set("group", key.str());
        j.set("benchmark", label.benchmark);
        j.set("pass", label.pass);
        j.set("gpu", label.gpu);
        j.set("members", static_cast<long long>(ranked.size()));
        j.set("best", best ? Json(best->value) : Json());
        j.set("unit", best ? Json(best->unit) : Json());
        list.push_back(std::move(j));
      } else {
        // printf's %-Ns pads by bytes; the fields are bounded by shown().
        auto padded = [](std::string s, std::size_t width) {
          if (s.size() < width) s.append(width - s.size(), ' ');
          return s;
        };
        char count[16];
        std::snprintf(count, sizeof count, "%3zu", ranked.size());
        text += key.hex().substr(0, 12) + "  " + padded(shown(label.benchmark), 40) + " " + padded(shown(label.pass), 40) +
                " " + padded(shown(label.gpu), 28) + " " + count + "  " +
                (best ? shown(human_value(best->value, best->unit)) : std::string("-")) + "\n";
      }
    }
    return print_listing(g, "groups", std::move(list), text);
  }};
});

}  // namespace
}  // namespace kistore::cli
