#include <cstdio>

#include "cli/common.h"
#include "cli/site/site.h"
#include "cli/output/terminal.h"
#include "store/history/trust.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("site", "Write the store as a static web site");
  app->footer(
      "Writes OUT/index.html (every comparison group, with a filter by kernel, GPU, pass and\n"
      "implementation, listed by benchmark then GPU), a page per comparison group (groups/: its\n"
      "ranking, a bar per member, each run's correctness where its harness recorded it, each series\n"
      "of an implementation's runs over time (as `kistore series` finds it: a line, its spread as a\n"
      "band, change points and controlled reruns marked, drawn without a script), each run a row of\n"
      "its ranking, at groups/<key>.html#run-<12 hex>, that opens on its digest and what distinguishes\n"
      "it (where it stands in its series, its reruns, attestations, history); what restates others is\n"
      "left out: `kistore show RUN` prints the whole record, `kistore rank KEY --json` a group),\n"
      "per benchmark definition (benchmarks/), about.html, and each document the runs name once, as\n"
      "documents/<hex>.json (as `kistore show DIGEST --canonical`); a run's own JSON (runs/<hex>.json)\n"
      "where its record cuts a string. Open OUT/index.html straight from the folder, or serve the\n"
      "folder from any web server: the pages make no request outside it.\n\n"
      "Building again into the same folder rewrites only the files whose content changed, and\n"
      "removes the pages it wrote before that are gone (OUT/site-manifest.json records what it wrote).\n"
      "A folder that is not empty and was not made by `kistore site` is refused.\n"
      "Files are written and removed only beneath OUT, never through a symbolic link: OUT itself, a\n"
      "folder of the site (runs/, ...) or the manifest being a link is an error, and a link at a page's\n"
      "place is replaced by the page. A rebuild removes only files its manifest names by a path beneath\n"
      "OUT that are still what it wrote (same sha256); any other entry (absolute, with \"..\", a link,\n"
      "a file edited since) is left alone, with a warning on stderr, and the exit status stays 0.\n"
      "Every string the pages show is cut after 200 characters (\"…\"); each document's whole JSON is\n"
      "written once, in documents/, linked from the group pages.\n"
      "--base-url names where the site is published: each group page then says how to cite its runs by\n"
      "their permalinks there.");
  struct Opts {
    std::string out, base_url;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("OUT", o->out, "The folder to write (created if missing)")->required();
  app->add_option("--base-url", o->base_url, "Where the site is published, for permalinks")->type_name("URL");
  return Command{app, [&g, o]() -> int {
    Store store = open_store(g);
    SiteOptions options{o->out, o->base_url};
    if (!options.base_url.empty() && options.base_url.back() != '/') options.base_url += '/';
    Progress progress(g, "writing the site", "pages");
    SiteReport r = build_site(store, load_trust(store), options,
                              [&](std::size_t done, std::size_t total) { progress.update(done, total); });
    progress.finish();
    for (const std::string& w : r.warnings) std::fprintf(stderr, "warning: %s\n", shown_message(w).c_str());
    if (g.json) {
      Json out = Json::object();
      out.set("out", o->out);
      for (auto [name, n] : {std::pair{"runs", r.runs}, {"groups", r.groups}, {"benchmarks", r.benchmarks},
                             {"files", r.files}, {"written", r.written}, {"removed", r.removed}})
        out.set(name, static_cast<long long>(n));
      print_json(out);
    } else if (!g.quiet) {
      std::printf("%zu runs, %zu groups, %zu benchmarks: %zu files, %zu written, %zu removed; open %s/index.html\n",
                  r.runs, r.groups, r.benchmarks, r.files, r.written, r.removed, shown(o->out).c_str());
    }
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
