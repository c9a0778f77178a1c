// Format-3 stores for the tests of the rooms that know format 3 (refs/layout.h:
// taught room by room; commands do not open such a store yet).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "objects/json.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "store/core/index_trees.h"
#include "store/core/store.h"
#include "store/history/trust.h"
#include "store/verify/verify.h"
#include "store/write/add.h"
#include "store/write/rerun.h"
#include "tests/store/support.h"

namespace kistore::test_support {

// Makes the empty `store`'s first commit name format 3, by `author`.
inline void make_format3(Store& store, const std::string& author = "Test <t@example.com>") {
  CommitOptions o;
  o.author = author;
  o.time = 1767225600;
  o.upgrade = true;
  store.commit(
      [](const Snapshot&) -> std::optional<ChangeSet> {
        ChangeSet c;
        c.upserts.emplace(std::string(kFormatPath), std::string(kFormat3Bytes));
        c.op = "upgrade";
        c.summary = "format 3";
        return c;
      },
      o);
}


inline std::string format3_data(const std::string& rel) { return read_file(std::string(KISTORE_SOURCE_DIR) + "/tests/data/" + rel); }
inline const char kFormat3Fixture[] = "refs/seed-run-tiled-geglu-backward.json";

inline CommitOptions as(const char* author) {
  CommitOptions o;
  o.author = author;
  o.time = 1767225600;
  return o;
}

// A format-3 store holding the seed bundle, two more runs of its group, an
// attestation and a signed rerun of the seed run.
struct Format3Store {
  TempDir tmp;
  std::string dir = tmp.path + "/store";
  Store store = Store::init(dir);
  std::shared_ptr<const SshPrivateKey> controller =
      std::make_shared<const SshPrivateKey>(SshPrivateKey::parse(format3_data("keys/controller"), "controller"));
  Digest run = Digest::of("unset"), rerun = Digest::of("unset");

  Format3Store() {
    make_format3(store, "T <t@example.org>");
    Json bundle = parse_json(format3_data(kFormat3Fixture), kFormat3Fixture);
    Bundle seed = Bundle::from_json(bundle, Location{"seed.json", ""});
    std::vector<Document> more;
    for (int i = 1; i <= 2; ++i) {
      Json r = *bundle.find("run");
      r.find("spec")->find("timing")->find("latencyNs")->set("median", 2600000 + i);
      r.find("spec")->find("sourceNative")->set("externalId", "variant/" + std::to_string(i));
      more.push_back(Document::from_json(r, Location{"more.json", ""}));
    }
    run = seed.run().digest();
    Json note = parse_json(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Attestation","spec":{"type":"note","author":"Ann <a@example.com>","body":"ok"}})", "att");
    note.find("spec")->set("subject", run.str());
    more.push_back(Document::from_json(note, Location{"att.json", ""}));
    std::vector<AddedDocument> docs;
    for (const Document& d : seed.documents()) docs.push_back({&d, "seed.json"});
    for (const Document& d : more) docs.push_back({&d, "more.json"});
    AddOptions options;
    options.commit = as("T <t@example.org>");
    add_documents(store, docs, options);
    save_trust(store, {AllowedSigner{{"controller@example.org"}, "namespaces=\"git\"", controller->public_key()}});
    Json again = bundle;
    Json* spec = again.find("run")->find("spec");
    spec->find("timing")->find("latencyNs")->set("median", 2650000);
    spec->set("observedAt", "2026-11-30T09:00:00.000Z");
    spec->erase("sourceNative");
    RerunOptions o;
    o.tolerance = 0.10;
    o.key = controller;
    o.key_source = "controller";
    o.author = "Controller <c@example.org>";
    rerun = record_rerun(store, run.str(), InputItem{Location{"rerun.json", ""}, Bundle::from_json(again, Location{"rerun.json", ""})}, o).rerun;
  }
  VerifyReport verify() const {
    VerifyOptions o;
    o.trust = load_trust(store);
    return verify_store(store, o);
  }
  // Commits raw changes made by hand, as an attacker with stock git would.
  void tamper(const std::function<void(const Snapshot&, ChangeSet&)>& edit) {
    store.commit(
        [&](const Snapshot& head) -> std::optional<ChangeSet> {
          ChangeSet c;
          edit(head, c);
          c.op = "add";
          c.summary = "tamper";
          return c;
        },
        as("Mallory <m@example.org>"));
  }
  std::string file_of(Family family, const std::string& key) const { return fact_file(store.snapshot(), family, key); }
};

}  // namespace kistore::test_support
