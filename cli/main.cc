// kistore: a content-addressed evidence store for GPU-kernel benchmark results.
//
// The entry point declares the global options, lets every cmd_*.cc declare
// its command, has the command table (cli/command_table.h) parse the command
// line, and runs the one command given; every kistore::Error becomes an exit
// code here and nowhere else.
#include <csignal>
#include <cstdio>
#include <new>
#include <string_view>

#include "cli/command_table.h"
#include "cli/common.h"
#include "cli/output/terminal.h"
#include "store/edge/interrupt.h"

using namespace kistore;
using namespace kistore::cli;

namespace {

// Whether --json is among the words before "--": known before the command
// line is parsed, so that a usage error is a JSON document too (SPEC §3).
bool json_requested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") return false;
    if (arg == "--json") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // A remote that hangs up while a push is still sending (git daemon refusing
  // a pack over receive.maxInputSize, a dropped connection) must give a write
  // error that sync reports (exit 4), not a silent death by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  // Ctrl-C, SIGTERM, SIGHUP: stop children, remove temporary files, say what
  // was written, exit 130 (store/edge/interrupt.h). Before any thread starts.
  handle_interrupts();
  CommandSpec root(
      "kistore",
      "kistore keeps GPU-kernel benchmark evidence (KernelIndex manifests) as immutable, content-addressed\n"
      "objects in a git repository: add documents, rank comparable runs, verify every digest offline,\n"
      "and sync through any git remote.\n\n"
      "Start with `kistore init`, then `kistore add FILE`; `kistore help COMMAND` explains each command.\n"
      "The options below work before or after the command.");
  root.require_subcommand(1);
  Globals g;
  root.add_option("--store", g.store_dir,
                  "The store's folder (default: $KISTORE_DIR, else the .kistore of this folder or of the nearest "
                  "parent that has one)")
      ->type_name("DIR");
  root.add_flag("--json", g.json, "Print one JSON document on stdout, for machines");
  root.add_flag("--quiet,-q", g.quiet, "Print only errors");
  root.add_flag("--no-progress", g.no_progress, "Never draw progress bars");
  std::vector<Command> commands;
  for (auto& r : registrars()) commands.push_back(r(root, g));
  const bool json = json_requested(argc, argv);
  UsageErrorPrinter usage_error;
  if (json) usage_error = [](const std::string& message) { print_error(true, kUsage, message); };
  if (auto done = parse_command_line(root, "kistore 0.1.0", argc, argv, usage_error)) return *done;
  for (Command& c : commands) {
    if (!c.app->parsed()) continue;
    const bool json_errors = json || g.json || g.format == "json";
    try {
      read_environment(g);
      int rc = c.run();
      std::fflush(stdout);
      if (used_fallback_identity() && !g.quiet)
        std::fputs("warning: the author was kistore <kistore@localhost>, for want of an identity; set yours with "
                   "KISTORE_AUTHOR=\"Name <email>\", --author, or git config --global user.name and user.email\n",
                   stderr);
      if (const std::string behind = work_tree_left_behind(); !behind.empty() && !g.quiet)
        std::fprintf(stderr,
                     "warning: the work tree was left behind the store's branch (%s); the commit stands, "
                     "and `git status` shows what differs\n",
                     shown_message(behind).c_str());
      return rc;
    } catch (const Error& e) {
      print_error(json_errors, exit_code_for(e.code()), e.what());
      return exit_code_for(e.code());
    } catch (const std::bad_alloc&) {
      // Without allocating: what print_error would print.
      static_assert(kStoreError == 3, "the literal below says code 3");
      std::fflush(stdout);
      std::fputs("error: out of memory\n", stderr);
      if (json_errors) std::fputs("{\"error\":{\"code\":3,\"message\":\"out of memory\"}}\n", stdout);
      return kStoreError;
    } catch (const std::exception& e) {
      print_error(json_errors, kStoreError, std::string("internal: ") + e.what());
      return kStoreError;
    }
  }
  return kUsage;
}
