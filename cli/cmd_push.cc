#include <cstdio>

#include "cli/common.h"
#include "cli/sync_output.h"
#include "cli/output/terminal.h"
#include "store/sync/sync.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("push", "Send the store's history to a remote");
  app->footer(
      "Sends the store's branch (main) to the remote. If someone else pushed since you last\n"
      "synced, push first pulls their work (checked and merged exactly as `kistore pull` does),\n"
      "then pushes the merge. When another push gets there first (many people pushing at\n"
      "once), it waits a moment and tries again, up to 10 rounds in all. It never overwrites\n"
      "the remote's history, and a push the remote rejects is an error, never a silent success.\n\n"
      "Credentials (never printed; URLs are shown without passwords):\n"
      "  ssh://     ssh-agent if SSH_AUTH_SOCK is set, then the key in KISTORE_SSH_KEY or\n"
      "             ~/.ssh/id_ed25519. The server's host key must already be in\n"
      "             ~/.ssh/known_hosts or in the file named by KISTORE_SSH_KNOWN_HOSTS: an unknown\n"
      "             host is refused with its fingerprint and how to add it (ssh-keyscan), and a\n"
      "             changed key is refused as a possible attack.\n"
      "  https://   KISTORE_TOKEN as the password (user from the URL, else \"kistore\"), tried\n"
      "             once, and only where KISTORE_TOKEN_URL says: a URL prefix\n"
      "             https://host[:port][/path] that the remote's URL must fall within (same\n"
      "             scheme, host and port; the path at or below the prefix's, as git matches\n"
      "             credential.<url>). The token is never offered to another host or port, never\n"
      "             over plain http:// (loopback included), never after a redirect to another\n"
      "             origin; the error then says that no credentials were offered and why.\n"
      "             Then ~/.netrc's line for the remote's host (machine HOST login USER\n"
      "             password PASSWORD, as git's https reads it), over https to that remote only;\n"
      "             its `default` line is never sent. Then what git's own credential helpers\n"
      "             hold for that origin (`git credential fill`, with GIT_TERMINAL_PROMPT=0: never a\n"
      "             prompt), over https only; a refused one is reported back (`reject`, so a stale\n"
      "             stored password is dropped), one that worked is `approve`d, as git does.\n"
      "             KISTORE_SSL_CAINFO names a PEM file of the certificate authorities to check\n"
      "             https servers against instead of the system's (as GIT_SSL_CAINFO for git).\n"
      "             An https or http server that refuses (HTTP 401, 403, 404, 5xx) is quoted in its\n"
      "             own words, escaped: libgit2 drops them, so kistore asks the same URL once more\n"
      "             itself (one GET of its info/refs, 10 s at most, no redirect followed, the\n"
      "             certificates libgit2 accepts, only the credential the refused request sent)\n"
      "             and shows the status and up to 10 lines of the answer.\n"
      "             kistore never stores a password: `remote add` keeps a URL without it; a\n"
      "             password written in a URL you give is sent by libgit2 as you wrote it.\n\n"
      "Example: kistore remote add origin https://git.example.org/evidence.git\n"
      "         export KISTORE_TOKEN_URL=https://git.example.org/ KISTORE_TOKEN=...\n"
      "         kistore push\n\n"
      "Exit status: 0 pushed (or already there), 1 the remote's new history was refused by the\n"
      "pull on the way, 2 unknown remote or empty store, 3 the local store failed, 4 the remote\n"
      "could not be reached, refused the push, or authentication failed.");
  auto remote = add_sync_arguments(app, g);
  return Command{app, [&g, remote]() -> int {
    Store store = open_store(g);
    SyncProgress progress(g);
    SyncOptions options = sync_options(g, store, progress);
    PushReport report = push(store, *remote, options);
    progress.finish();
    if (!g.quiet) {
      for (const PullReport& p : report.pulls)
        for (const std::string& n : p.notes) std::fprintf(stderr, "note: %s\n", shown_message(n).c_str());
      // The server's own words, as git shows them (a hook's notice).
      for (const std::string& line : report.remote_messages) std::fprintf(stderr, "remote: %s\n", shown_message(line).c_str());
    }
    if (report.result == PushResult::kRefused) print_refusal(report.pulls.back());
    if (g.json) {
      Json out = Json::object();
      out.set("remote", report.remote);
      out.set("url", report.url);
      out.set("result", std::string(push_result_name(report.result)));
      out.set("commit", report.commit);
      out.set("pushed_objects", static_cast<long long>(report.pushed_objects));
      out.set("pushed_bytes", static_cast<long long>(report.pushed_bytes));
      Json pulls = Json::array();
      for (const PullReport& p : report.pulls) pulls.push_back(pull_json(p));
      out.set("pulls", std::move(pulls));
      Json said = Json::array();
      for (const std::string& line : report.remote_messages) said.push_back(line);
      out.set("remote_messages", std::move(said));
      if (report.result == PushResult::kRefused) out.set("error", error_member(kProblems, refusal_message(report.pulls.back())));
      print_json(out);
    } else if (!g.quiet && report.result != PushResult::kRefused) {
      for (const PullReport& p : report.pulls)
        if (p.result == PullResult::kMerge)
          std::printf("Merged %s first (%s): merge commit %s.\n", shown(p.remote).c_str(),
                      shown(p.incoming.substr(0, 12)).c_str(),
                      p.commit ? p.commit->substr(0, 12).c_str() : "");
      if (report.result == PushResult::kUpToDate)
        std::printf("%s is up to date (%s).\n", shown(report.remote).c_str(), shown(report.commit.substr(0, 12)).c_str());
      else
        std::printf("Pushed %s to %s (%s): %zu objects sent (%s).\n", shown(report.commit.substr(0, 12)).c_str(),
                    shown(report.remote).c_str(), shown(report.url).c_str(), report.pushed_objects,
                    size_text(report.pushed_bytes).c_str());
    }
    return report.result == PushResult::kRefused ? kProblems : kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
