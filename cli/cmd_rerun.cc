#include <cstdio>
#include <memory>

#include "cli/common.h"
#include "cli/signing.h"
#include "store/write/rerun.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("rerun", "Record a controlled rerun and set the run's evidence level");
  app->footer(
      "A controller (a key in this store's trust list, see `kistore trust`) reran RUN under the\n"
      "same protocol, on the same GPU, with the same workload and the same implementation, and\n"
      "publishes the result as RERUN-FILE (a bundle, or a run document whose protocol,\n"
      "environment and workload the store has). In one commit signed with --sign KEY\n"
      "(Kistore-Op: rerun), kistore adds the rerun and moves RUN to `reproduced` when the rerun's\n"
      "primary measurement is within --tolerance of RUN's (default 0.10, i.e. 10 %), else to\n"
      "`disputed`.\n\n"
      "Refused with exit 2 and nothing written: no key, a key that is not a controller, a rerun\n"
      "from another comparison group or of another implementation (a controlled rerun times the\n"
      "same code), a RUN the store does not have, a run without a primary measurement, a\n"
      "--tolerance that is not a number greater than 0 and at most 1.");
  struct Opts {
    std::string run, file;
    double tolerance = 0.10;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("RUN", o->run, "The run that was rerun (digest or 8+ hex prefix)")->required();
  app->add_option("RERUN-FILE", o->file, "The controlled rerun: a bundle or a run document")->required();
  app->add_option("--tolerance", o->tolerance, "Largest relative difference that still reproduces, in (0, 1]");
  app->add_option("--sign", g.sign_key, "The controller's Ed25519 OpenSSH private key")->type_name("KEY");
  app->add_option("--author", g.author, "Commit author as \"Name <email>\" (default: KISTORE_AUTHOR, git config)");
  return Command{app, [&g, o]() -> int {
    if (auto problem = tolerance_problem(o->tolerance)) throw InvalidInput("--tolerance: " + *problem);
    Store store = open_store(g);
    std::string key_path = g.sign_key.empty() ? store.setting("signkey").value_or("") : g.sign_key;
    if (key_path.empty())
      throw InvalidInput("rerun: a controlled rerun must be signed: pass --sign KEY or set `kistore config sign.key PATH`");
    RerunOptions opts;
    opts.tolerance = o->tolerance;
    opts.key = std::make_shared<const SshPrivateKey>(read_private_key(key_path));
    opts.key_source = key_path;
    opts.author = g.author;
    opts.time = g.commit_time;
    ParsedInput parsed;
    parse_paths({o->file}, parsed);
    if (!parsed.errors.empty()) throw InvalidInput(parsed.errors.front().message);
    if (parsed.items.size() != 1)
      throw InvalidInput(o->file + ": expected one bundle or run document, found " + std::to_string(parsed.items.size()));
    RerunResult r = record_rerun(store, o->run, parsed.items.front(), opts);
    if (g.json) {
      Json out = Json::object();
      out.set("run", r.run.str());
      out.set("rerun", r.rerun.str());
      out.set("level", std::string(level_name(r.level)));
      out.set("difference", r.difference);
      out.set("tolerance", o->tolerance);
      out.set("commit", r.commit ? Json(*r.commit) : Json());
      print_json(out);
    } else if (!g.quiet) {
      std::printf("%s is now %s: rerun %s differs by %.2f%% (tolerance %.0f%%); commit %s\n", r.run.str().c_str(),
                  std::string(level_name(r.level)).c_str(), r.rerun.str().c_str(), r.difference * 100,
                  o->tolerance * 100, r.commit ? r.commit->substr(0, 12).c_str() : "-");
    }
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
