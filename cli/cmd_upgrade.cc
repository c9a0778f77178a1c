#include <cstdio>

#include "cli/common.h"
#include "store/write/upgrade.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("upgrade", "Rewrite a format-1 or format-2 store's index as format 3, in one commit");
  app->footer(
      "Earlier kistore releases wrote the index as one git blob per fact: format 1 in flat\n"
      "folders, format 2 fanned out (refs/levels/<level>/ab/cd/<60 hex>). A run cost about nine\n"
      "git objects. Format 3 gathers the index into a few readable JSON Lines files, one fact a\n"
      "line, sorted by key (refs/groups/, refs/levels/, ...): about one git object per document,\n"
      "and `git show` of a commit reads as the facts it changed. This kistore reads every\n"
      "format but writes only format 3: add, import, attest, rerun, pull and push refuse an\n"
      "older store until you run `kistore upgrade` once.\n"
      "\n"
      "The upgrade is one commit (Kistore-Op: upgrade), signed with --sign KEY (or the store's\n"
      "sign.key) if given. It touches no object: every document keeps its bytes and digest, and\n"
      "runs, levels, attestations, source ids, metadata and the signed history read the same\n"
      "afterwards; `kistore verify` passes where it passed before. A format-1 store kept\n"
      "controlled reruns in their run's group; they move beside their run, recognised by the\n"
      "signed rerun commits of the history, judged against this store's controllers (`kistore\n"
      "trust list`), so add the controllers before upgrading. A store already of format 3 is\n"
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
      out.set("format", 3);
      out.set("from", static_cast<double>(static_cast<int>(r.from)));
      out.set("upgraded", r.commit.has_value());
      out.set("entries", static_cast<double>(r.entries));
      out.set("files", static_cast<double>(r.files));
      out.set("reruns", static_cast<double>(r.reruns));
      out.set("commit", r.commit ? Json(*r.commit) : Json());
      print_json(out);
      return kOk;
    }
    if (!r.commit) {
      if (!g.quiet) std::printf("%s is already format 3; nothing to do\n", store.dir().c_str());
      return kOk;
    }
    if (!g.quiet) {
      std::printf("upgraded %s from %s to format 3: %zu index entries rewritten as %zu file%s of JSON Lines",
                  store.dir().c_str(), format_name(r.from).c_str(), r.entries, r.files, r.files == 1 ? "" : "s");
      if (r.from == Format::k1) std::printf(", %zu rerun%s moved to refs/reruns/", r.reruns, r.reruns == 1 ? "" : "s");
      std::printf("; commit %s\n", r.commit->substr(0, 12).c_str());
    }
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
