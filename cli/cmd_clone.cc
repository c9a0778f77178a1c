#include <cstdio>

#include "cli/common.h"
#include "cli/sync_output.h"
#include "cli/output/terminal.h"
#include "store/sync/remote_head.h"
#include "store/sync/sync.h"
#include "store/history/trust.h"

namespace kistore::cli {
namespace {

// What remote_head_advice says of the new store's origin; "" also when the
// remote cannot be reached a second time (the clone itself is done).
std::string head_advice(const std::string& target, const SyncOptions& options) {
  try {
    Store store = Store::open(target);
    return remote_head_advice(store, "origin", store.branch(), options);
  } catch (const Error&) {
    return "";
  }
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("clone", "Copy a store from a remote: init + remote add origin + pull");
  app->footer(
      "Creates a new store, names URL as its remote \"origin\", and pulls: everything that comes\n"
      "in is checked as `kistore pull --help` describes, so a clone holds only evidence whose\n"
      "digests, index and signed level changes hold up. URL can be a folder path, file://,\n"
      "git://, ssh:// or http(s)://, and may name a store written by kistore or a repository made\n"
      "with stock git in the store layout (bare or not).\n\n"
      "Where the store goes: DIR if given, else --store or KISTORE_DIR, else .kistore in the\n"
      "current folder -- the place the other commands look by default (unlike `git clone`, the\n"
      "folder is not named after the URL). It must not exist yet, or be empty. If the clone fails,\n"
      "is interrupted or the incoming history is refused, the folder is removed again; an empty\n"
      "folder that was there is left as it was (the clone is made in a .kistore-clone-XXXXXX\n"
      "folder inside it and moved up only when whole).\n\n"
      "A new store trusts no controller, so a remote whose levels were set by signed reruns is\n"
      "refused unless you name the controllers you trust: --allowed-signers FILE (git's\n"
      "allowed-signers format) checks them and becomes the new store's trust list.\n\n"
      "Example: kistore clone https://git.example.org/evidence.git && kistore groups\n\n"
      "Exit status: 0 done, 1 the remote's history was refused, 2 bad arguments or DIR not empty,\n"
      "3 the store cannot be created, 4 the remote could not be reached or refused.\n"
      "Credentials: see `kistore push --help`: KISTORE_TOKEN goes only to an https URL within\n"
      "KISTORE_TOKEN_URL (https://host[:port][/path]), never over plain http nor to another origin;\n"
      "then ~/.netrc's line for the host, then git's credential helpers (git credential fill),\n"
      "each over https to the remote's own origin only. A server that refuses is quoted in its\n"
      "own words, escaped (over http(s), from one more request of the same URL: see\n"
      "`kistore push --help`).\n"
      "A password in URL (https://user:password@host/...) is used for this clone but not saved:\n"
      "give it as KISTORE_TOKEN (with KISTORE_TOKEN_URL) to later pushes and pulls.");
  struct Opts {
    std::string url, dir, allowed_signers;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("URL", o->url, "The remote store: path, file://, git://, ssh:// or http(s)://")->required();
  app->add_option("DIR", o->dir, "Where to create the store (default: --store, KISTORE_DIR, else .kistore)");
  app->add_option("--allowed-signers", o->allowed_signers,
                  "Trust these controllers (an allowed-signers file): their signed reruns may set levels; "
                  "the file becomes the new store's trust list")
      ->type_name("FILE");
  return Command{app, [&g, o]() -> int {
    std::string target = !o->dir.empty() ? o->dir : g.store_dir;
    SyncProgress progress(g);
    SyncOptions options;
    options.credentials = credentials_from_environment();
    options.progress = progress.callback();
    options.commit.author = g.author;
    options.commit.time = g.commit_time;
    if (!o->allowed_signers.empty()) options.trust = load_allowed_signers(o->allowed_signers);
    PullReport report = clone(o->url, target, options);
    progress.finish();
    if (report.refused()) {
      print_refusal(report);
      bool levels = false;
      for (const Problem& p : report.problems) levels |= p.kind == ProblemKind::kLevelUnjustified;
      if (levels && o->allowed_signers.empty())
        std::fprintf(stderr,
                     "hint: a new store trusts no controller; if you trust the keys that signed these reruns, "
                     "name them with --allowed-signers FILE\n");
      if (g.json) print_json(pull_json(report));
      return kProblems;
    }
    if (!o->allowed_signers.empty()) save_trust(Store::open(target), options.trust);
    if (std::string advice = head_advice(target, options); !advice.empty()) report.notes.push_back(advice);
    if (!url_password(o->url).empty())
      note(g, "note: the password in the URL was used for this clone, not saved; give it as KISTORE_TOKEN (with "
              "KISTORE_TOKEN_URL, over https) when you push or pull");
    if (g.json) {
      Json out = pull_json(report);
      out.set("store", target);
      print_json(out);
    } else if (!g.quiet) {
      for (const std::string& n : report.notes) std::fprintf(stderr, "note: %s\n", shown_message(n).c_str());
      std::printf("Cloned %s into %s: %zu commit%s, %zu document%s (%s).\n", shown(report.url).c_str(), shown(target).c_str(),
                  report.new_commits, report.new_commits == 1 ? "" : "s", report.new_documents,
                  report.new_documents == 1 ? "" : "s",
                  report.commit ? shown(report.commit->substr(0, 12)).c_str() : "empty");
    }
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
