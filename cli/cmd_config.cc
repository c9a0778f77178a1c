#include <cstdio>

#include "cli/common.h"

namespace kistore::cli {
namespace {

// Settings users may name, and where the store keeps them (git config kistore.<key>).
struct Setting {
  const char* name;
  const char* key;
};
constexpr Setting kSettings[] = {{"sign.key", "signkey"}};

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("config", "Read or set a store setting");
  app->footer(
      "Settings are local to this store (never synced). Known settings:\n"
      "  sign.key   the Ed25519 OpenSSH private key that signs every commit this store writes,\n"
      "             as --sign KEY would\n"
      "Example: kistore config sign.key ~/.ssh/id_ed25519");
  auto name = std::make_shared<std::string>();
  auto value = std::make_shared<std::string>();
  app->add_option("NAME", *name, "The setting")->required();
  app->add_option("VALUE", *value, "The new value (omit to print the current one)");
  return Command{app, [&g, name, value]() -> int {
    const Setting* setting = nullptr;
    for (const Setting& s : kSettings)
      if (*name == s.name) setting = &s;
    if (!setting) throw InvalidInput("config: expected a known setting (sign.key), found \"" + *name + "\"");
    Store store = open_store(g);
    if (value->empty()) {
      auto current = store.setting(setting->key);
      if (!current) throw NotFound(*name + " is not set");
      std::printf("%s\n", current->c_str());
      return kOk;
    }
    store.set_setting(setting->key, *value);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
