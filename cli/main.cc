// kistore: a content-addressed evidence store for GPU-kernel benchmark results.
//
// The entry point parses global options and dispatches to the one command
// given; every kistore::Error becomes an exit code here and nowhere else.
#include <cstdio>
#include <iostream>

#include "cli/common.h"
#include "cli/terminal.h"

using namespace kistore;
using namespace kistore::cli;

int main(int argc, char** argv) {
  CLI::App app{
      "kistore keeps GPU-kernel benchmark evidence (KernelIndex manifests) as immutable, content-addressed\n"
      "objects in a git repository: add documents, rank comparable runs, verify every digest offline,\n"
      "and sync through any git remote.\n\n"
      "Start with `kistore init`, then `kistore add FILE`; `kistore COMMAND --help` explains each command.",
      "kistore"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kistore 0.1.0");
  Globals g;
  app.add_option("--store", g.store_dir, "The store's folder (default: $KISTORE_DIR, else .kistore)")
      ->type_name("DIR");
  app.add_flag("--json", g.json, "Print one JSON document on stdout, for machines");
  app.add_flag("--quiet,-q", g.quiet, "Print only errors");
  app.add_flag("--no-progress", g.no_progress, "Never draw progress bars");
  std::vector<Command> commands;
  for (auto& r : registrars()) commands.push_back(r(app, g));
  // Name an unknown command (CLI11 would only say that one is required).
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--store") {
      ++i;
      continue;
    }
    if (arg.starts_with("-")) continue;
    bool known = false;
    for (const Command& c : commands) known |= c.app->get_name() == arg;
    if (!known) {
      std::fprintf(stderr, "error: unknown command \"%s\"; `kistore --help` lists the commands\n", shown(arg).c_str());
      return kUsage;
    }
    break;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kUsage;
  }
  for (Command& c : commands) {
    if (!c.app->parsed()) continue;
    try {
      int rc = c.run();
      std::fflush(stdout);
      return rc;
    } catch (const Error& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "error: %s\n", shown_message(e.what()).c_str());
      return exit_code_for(e.code());
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "error: out of memory\n");
      return kStoreError;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: internal: %s\n", shown_message(e.what()).c_str());
      return kStoreError;
    }
  }
  return kUsage;
}
