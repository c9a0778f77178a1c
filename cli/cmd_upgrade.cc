#include <cstdio>

#include "cli/common.h"
#include "store/write/upgrade.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("upgrade", "Rewrite a format-1 store's index as format 2, in one commit");
  app->footer(
      "Earlier kistore releases wrote stores in format 1, whose index keeps one flat folder per\n"
      "level, per group and for all metadata: every add rewrote those big folders. Format 2\n"
      "fans every digest-named folder out as git does its own objects\n"
      "(refs/levels/<level>/ab/cd/<60 hex>),\n"
      "names its format in a FORMAT file, and keeps controlled reruns beside their run\n"
      "(refs/reruns/<run>/<rerun>) instead of in its group. This kistore reads both formats but\n"
      "writes only format 2: add, import, attest, rerun and pull refuse a format-1 store until\n"
      "you run `kistore upgrade` once.\n"
      "\n"
      "The upgrade is one commit (Kistore-Op: upgrade), signed with --sign KEY (or the store's\n"
      "sign.key) if given. It touches no object: every document keeps its bytes and digest, and\n"
      "runs, levels, attestations, source ids, metadata and the signed history read the same\n"
      "afterwards; `kistore verify` passes where it passed before. Reruns are recognised by the\n"
      "signed rerun commits of the history, judged against this store's controllers (`kistore\n"
      "trust list`), so add the controllers before upgrading. A store already of format 2 is\n"
      "left as it is (exit 0).\n"
      "\n"
      "Stores of different formats do not sync: upgrade every clone (or upgrade one and clone it\n"
      "again) before pulling or pushing between them.");
  app->add_option("--author", g.author, "Author as \"Name <email>\" (default: KISTORE_AUTHOR, git config)");
  app->add_option("--sign", g.sign_key, "Sign the commit with this Ed25519 OpenSSH private key")->type_name("KEY");
  return Command{app, [&g]() -> int {
    Store store = open_store(g);
    CommitOptions options;
    options.author = g.author;
    options.time = g.commit_time;
    options.sign = signer_for(g, &store);
    UpgradeResult r = upgrade_store(store, options);
    if (g.json) {
      Json out = Json::object();
      out.set("format", 2);
      out.set("upgraded", r.commit.has_value());
      out.set("entries", static_cast<double>(r.entries));
      out.set("reruns", static_cast<double>(r.reruns));
      out.set("commit", r.commit ? Json(*r.commit) : Json());
      print_json(out);
      return kOk;
    }
    if (!r.commit) {
      if (!g.quiet) std::printf("%s is already format 2; nothing to do\n", store.dir().c_str());
      return kOk;
    }
    if (!g.quiet)
      std::printf("upgraded %s from format 1 to format 2: %zu index entries rewritten, %zu rerun%s moved to "
                  "refs/reruns/; commit %s\n",
                  store.dir().c_str(), r.entries, r.reruns, r.reruns == 1 ? "" : "s", r.commit->substr(0, 12).c_str());
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
