#include <cmath>
#include <cstdio>

#include "cli/common.h"
#include "cli/report.h"
#include "objects/ssh_signature.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "store/add.h"
#include "store/query.h"
#include "store/trust.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("rerun", "Record a controlled rerun and set the run's evidence level");
  app->footer(
      "A controller (a key in this store's trust list, see `kistore trust`) reran RUN under the\n"
      "same protocol, on the same GPU, with the same workload, and publishes the result as\n"
      "RERUN-FILE (a bundle, or a run document whose protocol, environment and workload the store\n"
      "has). In one commit signed with --sign KEY (Kistore-Op: rerun), kistore adds the rerun and\n"
      "moves RUN to `reproduced` when the rerun's primary measurement is within --tolerance of\n"
      "RUN's (default 0.10, i.e. 10 %), else to `disputed`.\n\n"
      "Refused with exit 2 and nothing written: no key, a key that is not a controller, a rerun\n"
      "from another comparison group, a RUN the store does not have, a run without a primary\n"
      "measurement.");
  struct Opts {
    std::string run, file;
    double tolerance = 0.10;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("RUN", o->run, "The run that was rerun (digest or 8+ hex prefix)")->required();
  app->add_option("RERUN-FILE", o->file, "The controlled rerun: a bundle or a run document")->required();
  app->add_option("--tolerance", o->tolerance, "Largest relative difference that still reproduces")
      ->range(0.0, 10.0);
  app->add_option("--sign", g.sign_key, "The controller's Ed25519 OpenSSH private key")->type_name("KEY");
  app->add_option("--author", g.author, "Commit author as \"Name <email>\" (default: KISTORE_AUTHOR, git config)");
  return Command{app, [&g, o]() -> int {
    Store store = open_store(g);
    std::string key_path = g.sign_key.empty() ? store.setting("signkey").value_or("") : g.sign_key;
    if (key_path.empty())
      throw InvalidInput("rerun: a controlled rerun must be signed: pass --sign KEY or set `kistore config sign.key PATH`");
    SshPrivateKey key = SshPrivateKey::load(key_path);
    std::vector<AllowedSigner> trust = load_trust(store);
    if (!find_signer(trust, key.public_key()))
      throw InvalidInput(key_path + ": key " + key.public_key().fingerprint() +
                         " is not a controller of this store; add it with `kistore trust add PRINCIPAL KEY.pub`");
    Snapshot snap = store.snapshot();
    // An unknown RUN is bad input here (exit 2): nothing can be rerun against it.
    Digest run_digest = [&] {
      try {
        return snap.resolve(o->run);
      } catch (const Error& e) {
        if (e.code() == ErrorCode::kNotFound) throw InvalidInput(e.what());
        throw;
      }
    }();
    Document run = snap.document(run_digest);
    if (run.kind() != Kind::kRun)
      throw InvalidInput("RUN \"" + o->run + "\": expected a run, found a " + std::string(kind_name(run.kind())));

    ParsedInput parsed;
    parse_paths({o->file}, parsed);
    if (!parsed.errors.empty()) throw InvalidInput(parsed.errors.front().message);
    if (parsed.items.size() != 1)
      throw InvalidInput(o->file + ": expected one bundle or run document, found " + std::to_string(parsed.items.size()));
    std::vector<AddedDocument> docs;
    const Document* rerun = nullptr;
    if (auto* b = std::get_if<Bundle>(&parsed.items.front().value)) {
      for (const Document& d : b->documents()) docs.push_back({&d, o->file, "/" + std::string(role_name(d.kind()))});
      rerun = &b->run();
    } else {
      const Document& d = std::get<Document>(parsed.items.front().value);
      if (d.kind() != Kind::kRun)
        throw InvalidInput(o->file + ": /kind: expected \"BenchmarkRun\" (or a bundle), found \"" +
                           std::string(kind_name(d.kind())) + "\"");
      docs.push_back({&d, o->file, ""});
      rerun = &d;
    }
    if (rerun->digest() == run_digest)
      throw InvalidInput(o->file + ": the rerun is RUN itself (" + run_digest.str() + "); a rerun is a new measurement");
    Digest key_run = comparison_key(run.spec()), key_rerun = comparison_key(rerun->spec());
    if (key_run != key_rerun)
      throw InvalidInput(o->file + ": /spec: expected a rerun in RUN's comparison group " + key_run.str() +
                         " (same protocol, environment and workload), found group " + key_rerun.str());
    auto original = primary_measurement(run.spec()), measured = primary_measurement(rerun->spec());
    if (!original || original->value == 0)
      throw InvalidInput("RUN " + run_digest.str() + " has no primary measurement to reproduce");
    if (!measured || measured->unit != original->unit)
      throw InvalidInput(o->file + ": /spec: expected a primary measurement in " + original->unit + ", found " +
                         (measured ? measured->unit : std::string("none")));
    double difference = std::fabs(measured->value - original->value) / std::fabs(original->value);
    Level level = difference <= o->tolerance ? Level::kReproduced : Level::kDisputed;

    AddOptions opts;
    opts.op = "rerun";
    opts.inputs = {o->file};
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.2f%%", difference * 100);
    opts.summary = "rerun: " + run_digest.str() + " " + std::string(level_name(level)) + " (" + pct + " off, tolerance " +
                   std::to_string(static_cast<int>(std::lround(o->tolerance * 100))) + "%)";
    opts.commit_without_new_documents = true;
    opts.commit.author = g.author;
    opts.commit.time = g.commit_time;
    auto shared_key = std::make_shared<SshPrivateKey>(std::move(key));
    opts.commit.sign = [shared_key](std::string_view payload) { return shared_key->sign(payload, "git"); };
    Digest evidence = rerun->digest();
    opts.also = [&](const Snapshot& head, ChangeSet& change) {
      if (auto old = recorded_level(head, run_digest)) change.removals.push_back(level_path(*old, run_digest));
      change.upserts[level_path(level, run_digest)] = level_entry(evidence);
    };
    AddReport report = add_documents(store, docs, opts);
    if (g.json) {
      Json out = Json::object();
      out.set("run", run_digest.str());
      out.set("rerun", evidence.str());
      out.set("level", std::string(level_name(level)));
      out.set("difference", difference);
      out.set("tolerance", o->tolerance);
      out.set("commit", report.commit ? Json(*report.commit) : Json());
      print_json(out);
    } else if (!g.quiet) {
      std::printf("%s is now %s: rerun %s differs by %s (tolerance %.0f%%); commit %s\n", run_digest.str().c_str(),
                  std::string(level_name(level)).c_str(), evidence.str().c_str(), pct, o->tolerance * 100,
                  report.commit ? report.commit->substr(0, 12).c_str() : "-");
    }
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
