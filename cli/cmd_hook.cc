#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <iterator>

#include "cli/common.h"
#include "cli/problems.h"
#include "objects/ssh_signature.h"
#include "store/history/trust.h"
#include "store/sync/hook.h"

namespace kistore::cli {
namespace {

// What receive-pack writes on a hook's standard input: a line per ref, far
// below this.
constexpr std::size_t kMaxInput = 16u << 20;

std::string read_stdin() {
  std::string text;
  char buffer[65536];
  std::size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, stdin)) > 0) {
    text.append(buffer, got);
    if (text.size() > kMaxInput)
      throw InvalidInput("standard input: more than 16 MiB, expected the ref lines git's receive-pack writes");
  }
  return text;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("hook", "Guard a shared git repository: the checks of a pull, run by the server");
  app->footer(
      "kistore hook pre-receive is what a git server runs before it takes a push into a store's\n"
      "repository (install it as hooks/pre-receive: see docs/hosting.md). git gives it the pushed\n"
      "refs on standard input and keeps the pushed objects apart until it answers. It checks them\n"
      "as `kistore pull` checks what it takes: only the store's branch may move, only forward;\n"
      "every pushed object is read and rehashed, its path and mode checked; every new commit's\n"
      "change to the index and to run levels must follow from the documents and the signed\n"
      "history, judged against the server store's trust list (kistore trust, or\n"
      "--allowed-signers). So a plain `git push` of a README, or of a level no controller signed,\n"
      "is refused with the reasons, and every store that pulls from the server stays whole.\n\n"
      "It reads GIT_DIR (default: the current folder, where git runs hooks) and\n"
      "GIT_QUARANTINE_PATH (where git keeps the pushed objects meanwhile).\n\n"
      "Exit status: 0 take the push, 1 refuse it (the problems are printed, and git shows them\n"
      "to the pusher), 2 bad input, 3 the repository cannot be read.");
  struct Opts {
    std::string hook;
    std::string allowed_signers;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("HOOK", o->hook, "The hook git runs: pre-receive")->required()->choices({"pre-receive"});
  app->add_option("--allowed-signers", o->allowed_signers,
                  "Judge signed level changes against this allowed-signers file instead of the store's")
      ->type_name("FILE");
  return Command{app, [&g, o]() -> int {
    const char* dir = std::getenv("GIT_DIR");
    std::string gitdir = dir && *dir ? dir : ".";
    const char* quarantine_env = std::getenv("GIT_QUARANTINE_PATH");
    const std::string quarantine = quarantine_env ? quarantine_env : "";
    std::vector<AllowedSigner> trust;
    if (!o->allowed_signers.empty()) {
      trust = load_allowed_signers(o->allowed_signers);
    } else {
      const std::string own = (std::filesystem::path(gitdir) / "kistore" / "allowed_signers").string();
      std::error_code ec;
      if (std::filesystem::exists(own, ec)) trust = load_allowed_signers(own);
    }
    std::vector<RefUpdate> updates = parse_ref_updates(read_stdin());
    PushVerdict verdict = check_push(gitdir, quarantine, updates, trust);
    if (g.json) {
      Json out = Json::object();
      out.set("ok", verdict.problems.empty());
      out.set("commits", static_cast<long long>(verdict.commits));
      out.set("objects", static_cast<long long>(verdict.objects));
      out.set("problems", problems_json(verdict.problems));
      print_json(out);
    } else {
      print_problems("problem", verdict.problems);
      if (!verdict.problems.empty())
        std::printf("kistore: push refused: %zu problem%s; this repository is a kistore store, and what is pushed "
                    "must keep it one (kistore verify explains each kind)\n",
                    verdict.problems.size(), verdict.problems.size() == 1 ? "" : "s");
      else if (!g.quiet)
        std::printf("kistore: %zu new commit%s, %zu objects checked\n", verdict.commits, verdict.commits == 1 ? "" : "s", verdict.objects);
    }
    std::fflush(stdout);
    return verdict.problems.empty() ? kOk : kProblems;
  }};
});

}  // namespace
}  // namespace kistore::cli
