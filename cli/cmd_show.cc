#include <cstdio>

#include "cli/common.h"
#include "cli/output/describe.h"
#include "store/history/level_audit.h"
#include "store/history/trust.h"
#include "cli/output/terminal.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("show", "Show a run's bundle (or any document), with metadata");
  app->footer(
      "For a run: its bundle (the run and the protocol, environment, workload and implementation\n"
      "it names, where the store has them), each with its metadata, pretty-printed, followed by\n"
      "the run's evidence level, its rank in its comparison group and its attestations. The level\n"
      "is the one the signed history gives under the store's trust list, as `kistore verify`\n"
      "computes it; a stored level entry that the trust list no longer justifies (a rerun signed by\n"
      "a key since removed, say) is shown beside it with the reason, never as the level.\n"
      "For any other document: the document. --canonical prints the RFC 8785 bytes instead.\n"
      "REF is a full digest or a unique prefix of 8+ hex digits.");
  struct Opts {
    std::string ref;
    bool canonical = false;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("REF", o->ref, "Digest or unique hex prefix (8+)")->required();
  app->add_flag("--canonical", o->canonical, "Print the RFC 8785 bytes");
  return Command{app, [&g, o]() -> int {
    Store store = open_store_for_reading(g);
    Snapshot snap = store.snapshot();
    Digest d = snap.resolve(o->ref);
    Document doc = snap.document(d);
    Json bundle = doc.kind() == Kind::kRun ? stored_bundle(snap, doc) : doc.with_metadata();
    AuditOnDemand audit(store, load_trust(store));
    if (o->canonical) {
      std::string out = canonical(bundle);
      std::fwrite(out.data(), 1, out.size(), stdout);
      return kOk;
    }
    if (g.json) {
      Json out = Json::object();
      out.set("digest", d.str());
      out.set("kind", std::string(kind_name(doc.kind())));
      out.set("document", bundle);
      if (doc.kind() == Kind::kRun) out.set("evidence", run_evidence_json(snap, audit, doc));
      print_json(out);
      return kOk;
    }
    std::string text = "# " + d.str() + " " + std::string(kind_name(doc.kind())) + "\n" +
                       shown_lines(pretty(bundle) + "\n");
    if (doc.kind() == Kind::kRun) text += shown_lines(run_evidence_text(snap, audit, doc));
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
