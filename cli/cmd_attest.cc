#include <cstdio>

#include "cli/common.h"
#include "cli/report.h"
#include "store/write/add.h"

namespace kistore::cli {
namespace {

// The run document of a reproduction file: a bundle's run or a run document.
Document reproduction_run(const std::string& path) {
  ParsedInput parsed;
  parse_paths({path}, parsed);
  if (!parsed.errors.empty()) throw InvalidInput(parsed.errors.front().message);
  if (parsed.items.size() != 1)
    throw InvalidInput(path + ": expected one bundle or run document, found " + std::to_string(parsed.items.size()));
  if (auto* b = std::get_if<Bundle>(&parsed.items.front().value)) return b->run();
  Document d = std::get<Document>(parsed.items.front().value);
  if (d.kind() != Kind::kRun)
    throw InvalidInput(path + ": /kind: expected \"BenchmarkRun\" (or a bundle), found \"" +
                       std::string(kind_name(d.kind())) + "\"");
  return d;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("attest", "Attach a community attestation to a run");
  app->footer(
      "Records what someone says about a run, beside it: a note (--note TEXT) or a reproduction\n"
      "measured by someone else (--reproduction FILE: a bundle or run document; its measurements\n"
      "are copied into the attestation). The attestation is its own document, indexed under the\n"
      "run, in one commit (Kistore-Op: attest), authored by --author / KISTORE_AUTHOR / git config.\n"
      "An attestation never changes the run's evidence level: only a signed controlled rerun\n"
      "(`kistore rerun`) does. Attesting a run the store does not have is refused.");
  struct Opts {
    std::string run, note, reproduction;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("RUN", o->run, "The run (digest or 8+ hex prefix)")->required();
  auto* note_opt = app->add_option("--note", o->note, "A note about the run");
  auto* repro_opt = app->add_option("--reproduction", o->reproduction, "A bundle or run measured by someone else")
                        ->type_name("FILE");
  note_opt->excludes(repro_opt);
  app->add_option("--author", g.author, "Author as \"Name <email>\" (default: KISTORE_AUTHOR, git config)");
  app->add_option("--sign", g.sign_key, "Sign the commit with this Ed25519 OpenSSH private key")->type_name("KEY");
  return Command{app, [&g, o]() -> int {
    if (o->note.empty() && o->reproduction.empty())
      throw InvalidInput("attest: expected --note TEXT or --reproduction FILE, found neither");
    Store store = open_store(g);
    Snapshot snap = store.snapshot();
    Digest run = snap.resolve(o->run);
    if (snap.document(run).kind() != Kind::kRun)
      throw InvalidInput("RUN \"" + o->run + "\": expected a run, found another kind of document");
    Json spec = Json::object();
    spec.set("subject", run.str());
    spec.set("author", store.author(g.author));
    if (!o->reproduction.empty()) {
      Document repro = reproduction_run(o->reproduction);
      spec.set("type", "reproduction");
      spec.set("body", "reproduction " + repro.digest().str());
      spec.set("measurements", *repro.spec().find("measurements"));
      spec.set("reproduction", repro.digest().str());
    } else {
      spec.set("type", "note");
      spec.set("body", o->note);
    }
    Json doc = Json::object();
    doc.set("apiVersion", std::string(kApiVersion));
    doc.set("kind", "Attestation");
    doc.set("spec", std::move(spec));
    Document attestation = Document::from_json(std::move(doc), Location{"attestation", ""});
    std::vector<AddedDocument> docs{{&attestation, "attestation", ""}};
    AddOptions opts;
    opts.op = "attest";
    opts.summary = "attest: " + std::string(o->note.empty() ? "reproduction of " : "note on ") + run.str();
    opts.commit.author = g.author;
    opts.commit.time = g.commit_time;
    opts.commit.sign = signer_for(g, &store);
    AddReport report = add_documents(store, docs, opts);
    print_add_report(g, report, {}, docs);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
