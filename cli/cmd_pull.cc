#include "cli/common.h"
#include "cli/sync_output.h"
#include "store/sync/sync.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("pull", "Fetch a remote's evidence, check it, and merge it in");
  app->footer(
      "Fetches the remote's branch (main) into a quarantine (a temporary repository inside the\n"
      "store's objects folder), never straight into the store, and checks there every commit that is\n"
      "new here before taking any of it:\n"
      "  - every git object is rehashed before it is used; sizes are bounded before anything is\n"
      "    read; only 100644 files and 040000 folders, at most 16 folders deep;\n"
      "  - every new object's bytes decode and hash to the digest its path names;\n"
      "  - no commit removes or changes an object the store already has;\n"
      "  - index entries (groups, levels, sources, attestations) agree with their documents;\n"
      "  - a run's level changes only in a rerun commit signed by a controller this store trusts\n"
      "    (`kistore trust`); attestations never change levels;\n"
      "  - the remote still contains what was last pulled from or pushed to it (no rewritten,\n"
      "    force-pushed history).\n"
      "Then the store fast-forwards, or gets a merge commit with two parents (Kistore-Op: merge):\n"
      "documents and attestations are a union, metadata keeps the earliest, a level follows the\n"
      "side that changed it. If anything fails a check, nothing is taken: the store stays exactly\n"
      "as it was and each problem is printed with the commit and path it is about.\n\n"
      "Credentials: see `kistore push --help`: KISTORE_TOKEN goes only to an https URL within\n"
      "KISTORE_TOKEN_URL (https://host[:port][/path]), never over plain http nor to another origin;\n"
      "then ~/.netrc's line for the host, then git's credential helpers (git credential fill),\n"
      "each over https to the remote's own origin only. A server that refuses is quoted in its\n"
      "own words, escaped (over http(s), from one more request of the same URL: see\n"
      "`kistore push --help`).\n\n"
      "Example: kistore pull            (from origin)\n"
      "         kistore pull backup --json\n"
      "         kistore pull /srv/evidence.git   (a path or URL works where a name does)\n\n"
      "Exit status: 0 done (or nothing new), 1 the incoming history was refused, 2 unknown remote,\n"
      "3 the local store failed, 4 the remote could not be reached or refused (auth, host key).");
  auto remote = add_sync_arguments(app, g);
  return Command{app, [&g, remote]() -> int {
    Store store = open_store(g);
    SyncProgress progress(g);
    SyncOptions options = sync_options(g, store, progress);
    PullReport report = pull(store, *remote, options);
    progress.finish();
    return print_pull(g, report);
  }};
});

}  // namespace
}  // namespace kistore::cli
