#include <cstdio>

#include "cli/common.h"
#include "cli/report.h"
#include "store/add.h"

namespace kistore::cli {
namespace {

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
  return Command{app, [&g, o]() -> int {
    // Left to the process's exit to free: a bulk add holds millions of small
    // allocations, and freeing them one by one takes longer than a second.
    // Held by a static, so it stays reachable: not a leak to LeakSanitizer.
    static ParsedInput* const kept_until_exit = new ParsedInput;
    ParsedInput& parsed = *kept_until_exit;
    parse_paths(o->paths, parsed);
    if (!parsed.errors.empty() && !o->keep_going) {
      print_rejections(g, parsed.errors);
      return kUsage;
    }
    Store store = open_store(g);
    std::vector<AddedDocument> docs;
    for (const InputItem& item : parsed.items) {
      std::string where = item.where.source;
      if (auto* b = std::get_if<Bundle>(&item.value))
        for (const Document& d : b->documents())
          docs.push_back({&d, where, item.where.pointer + "/" + std::string(role_name(d.kind()))});
      else
        docs.push_back({&std::get<Document>(item.value), where, item.where.pointer});
    }
    AddOptions opts;
    opts.inputs = o->paths;
    opts.commit.author = g.author;
    opts.commit.time = g.commit_time;
    opts.commit.sign = signer_for(g, &store);
    Progress progress(g, "writing");
    opts.commit.progress = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
    AddReport report = add_documents(store, docs, opts);
    progress.finish();
    print_add_report(g, report, parsed.errors, docs);
    // With --keep-going the good inputs were written: exit 2 means nothing was.
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
