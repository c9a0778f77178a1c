#include <cstdio>

#include "cli/common.h"
#include "cli/report.h"
#include "cli/input_batches.h"
#include "store/write/add.h"
#include "store/write/bulk_add.h"

#include <memory>
#include <optional>

namespace kistore::cli {
namespace {

// The documents of a batch's items, as BulkAdd takes them.
std::vector<AddedDocument> documents_of(const ParsedInput& batch) {
  std::vector<AddedDocument> docs;
  for (const InputItem& item : batch.items) {
    const std::string& where = item.where.source;
    if (auto* b = std::get_if<Bundle>(&item.value))
      for (const Document& d : b->documents())
        docs.push_back({&d, where, item.where.pointer + "/" + std::string(role_name(d.kind()))});
    else
      docs.push_back({&std::get<Document>(item.value), where, item.where.pointer});
  }
  return docs;
}

// Reads the inputs a batch at a time and streams each batch into one bulk
// add (store/write/bulk_add.h): memory stays bounded whatever the input's size.
// Without --keep-going, the first bad input stops the writing (the pack
// written so far is removed) but not the reading, so that every error is
// reported; nothing is written then (exit 2).
int run_add(const Globals& g, const std::vector<std::string>& paths, bool keep_going) {
  tune_allocator_for_bulk_work();
  std::vector<InputError> errors;
  std::optional<Store> store;
  std::unique_ptr<BulkAdd> bulk;
  Progress progress(g, "adding", "documents");
  bool indexing = false;
  read_in_batches(paths, [&](ParsedInput& batch) {
    for (InputError& e : batch.errors) errors.push_back(std::move(e));
    if (!errors.empty() && !keep_going) {
      bulk.reset();
      return;
    }
    if (batch.items.empty()) return;
    if (!bulk) {
      store.emplace(open_store(g));
      BulkAddOptions opts;
      opts.inputs = paths;
      opts.list_limit = kListLimit;
      opts.commit.author = g.author;
      opts.commit.time = g.commit_time;
      opts.commit.sign = signer_for(g, &*store);
      // Documents are written first (how many is known only at the end),
      // then the index entries, of a known total.
      opts.commit.progress = [&](std::size_t done, std::size_t total) {
        if (total && !indexing) progress.stage("indexing", "index entries"), indexing = true;
        progress.update(done, total);
      };
      bulk = std::make_unique<BulkAdd>(*store, std::move(opts));
    }
    bulk->add(documents_of(batch));
  });
  if (!errors.empty() && !keep_going) {
    progress.finish();
    print_rejections(g, errors);
    return kUsage;
  }
  if (!store) store.emplace(open_store(g));  // nothing to add: still a store error if there is none
  BulkAddReport report;
  if (bulk) report = bulk->commit();
  bulk.reset();
  progress.finish();
  print_add_report(g, report, errors);
  // With --keep-going the good inputs were written: exit 2 means nothing was.
  return kOk;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("add", "Add bundles and documents to the store, in one commit");
  app->footer(
      "Each PATH is a bundle (a run with the protocol, environment, ... it was measured under), a\n"
      "single document, a JSON array of them, or a JSON Lines file (one per line). A folder is read\n"
      "recursively (*.json, *.jsonl); - reads standard input.\n\n"
      "Every document is checked first: its kind and spec, and that the digests a run records match\n"
      "the documents its bundle carries. Then everything new is written in one commit. If any input\n"
      "is bad, nothing is written (exit 2) and each error names its file:line and JSON pointer;\n"
      "--keep-going adds the good ones and lists the rejected. Adding what is already there changes\n"
      "nothing and makes no commit.\n\n"
      "Example: kistore add runs.jsonl bundles/");
  struct Opts {
    std::vector<std::string> paths;
    bool keep_going = false;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("PATH", o->paths, "Files, folders, or - for standard input")->required();
  app->add_flag("--keep-going", o->keep_going, "Add the valid inputs even if some are rejected");
  app->add_option("--author", g.author, "Commit author as \"Name <email>\" (default: KISTORE_AUTHOR, git config)");
  app->add_option("--sign", g.sign_key, "Sign the commit with this Ed25519 OpenSSH private key")->type_name("KEY");
  return Command{app, [&g, o]() -> int { return run_add(g, o->paths, o->keep_going); }};
});

}  // namespace
}  // namespace kistore::cli
