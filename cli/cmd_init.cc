#include "cli/common.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("init", "Create an empty store");
  app->footer(
      "Creates a bare git repository that holds kistore's evidence: objects, index, history.\n"
      "Without DIR, the store is made where --store or KISTORE_DIR say, else at .kistore.\n"
      "Example: kistore init && kistore add manifest.json");
  auto dir = std::make_shared<std::string>();
  app->add_option("DIR", *dir, "Where to create the store");
  return Command{app, [&g, dir]() -> int {
    std::string target = !dir->empty() ? *dir : g.store_dir;
    Store::init(target);
    if (g.json) {
      Json out = Json::object();
      out.set("store", target);
      print_json(out);
    } else {
      note(g, "initialised an empty kistore store in " + target);
    }
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
