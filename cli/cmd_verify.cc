#include <cstdio>

#include "cli/common.h"
#include "store/verify.h"

namespace kistore::cli {
namespace {

Json problems_json(const std::vector<Problem>& list) {
  Json out = Json::array();
  for (const Problem& p : list) {
    Json o = Json::object();
    o.set("kind", p.kind);
    o.set("path", p.path);
    o.set("detail", p.detail);
    out.push_back(std::move(o));
  }
  return out;
}

// Checks bundle files without a store: each embedded digest against the
// document the bundle carries. A mismatch is a problem (exit 1); input that is
// not JSON or not a document is an input error (exit 2).
VerifyReport verify_files(const std::vector<std::string>& paths) {
  VerifyReport report;
  for (const std::string& path : paths) {
    std::string text = read_input_file(path);
    std::string source = path == "-" ? "<stdin>" : path;
    Json value = parse_json(text, source);
    std::vector<std::pair<Location, Json*>> items;
    Location root{source, ""};
    if (value.is_array())
      for (std::size_t i = 0; i < value.as_array().size(); ++i) items.emplace_back(root.child(i), &value.as_array()[i]);
    else
      items.emplace_back(root, &value);
    for (auto& [where, item] : items) {
      if (item->is_object() && item->find("run") && !item->find("kind")) {
        // Hash each carried document on its own first, so a mismatch is
        // reported as such rather than as a rejected bundle.
        Json* run_json = item->find("run");
        Document run = Document::from_json(*run_json, where.child("run"));
        ++report.objects;
        for (const char* role : {"protocol", "environment", "workload", "implementation"}) {
          auto recorded = run_reference(run, role);
          Json* member = item->find(role);
          if (!member) {
            report.warnings.push_back({"external-reference", where.child("run").child("spec").child(std::string(role) + "Digest").format(""),
                                       "the bundle does not carry the run's " + std::string(role) + " " + recorded->str()});
            continue;
          }
          Document doc = Document::from_json(*member, where.child(role));
          ++report.objects;
          if (doc.digest() != *recorded)
            report.problems.push_back({"digest-mismatch", where.child("run").child("spec").child(std::string(role) + "Digest").format(""),
                                       "bundle's " + std::string(role) + " hashes to " + doc.digest().str() + ", run says " + recorded->str()});
        }
      } else {
        parse_item(std::move(*item), where);
        ++report.objects;
      }
    }
  }
  for (auto* list : {&report.problems, &report.warnings})
    for (Problem& p : *list)
      if (p.path.ends_with(": ")) p.path.resize(p.path.size() - 2);
  return report;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("verify", "Check the store (or bundle files) offline");
  app->footer(
      "Without FILE: reads every object and index entry of the store and its history, and reports\n"
      "every problem: objects that are not valid zstd frames or whose bytes do not hash to their\n"
      "name, paths outside the layout, index entries that disagree with the objects, levels no\n"
      "signed controlled rerun justifies, history that lost objects. Read-only; needs no network.\n"
      "--deep also checks that every object is in RFC 8785 form and validates as its kind.\n\n"
      "With FILE...: checks bundles without a store: every digest a run records against the\n"
      "document the bundle carries; references to documents not carried are warnings.\n\n"
      "Exit status: 0 clean, 1 problems found, 2 bad input, 3 the store cannot be read.");
  struct Opts {
    std::vector<std::string> files;
    bool deep = false;
    std::string allowed_signers;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("FILE", o->files, "Bundle files to check without a store");
  app->add_flag("--deep", o->deep, "Also check canonical form and document validity");
  app->add_option("--allowed-signers", o->allowed_signers,
                  "Judge signed level changes against this allowed-signers file instead of the store's")
      ->type_name("FILE");
  return Command{app, [&g, o]() -> int {
    VerifyReport report;
    if (!o->files.empty()) {
      report = verify_files(o->files);
    } else {
      Store store = open_store(g);
      VerifyOptions opts;
      opts.deep = o->deep;
      opts.justify_level = level_justifier(g, store, o->allowed_signers);
      Progress progress(g, "verifying");
      opts.progress = [&](std::size_t done, std::size_t) { progress.update(done, 0); };
      report = verify_store(store, opts);
    }
    if (g.json) {
      Json out = Json::object();
      out.set("ok", report.ok());
      out.set("objects", static_cast<long long>(report.objects));
      out.set("problems", problems_json(report.problems));
      out.set("warnings", problems_json(report.warnings));
      print_json(out);
    } else {
      for (const Problem& p : report.problems)
        std::fprintf(stderr, "problem: %s: %s: %s\n", p.kind.c_str(), p.path.c_str(), p.detail.c_str());
      if (!g.quiet)
        for (const Problem& p : report.warnings)
          std::fprintf(stderr, "warning: %s: %s: %s\n", p.kind.c_str(), p.path.c_str(), p.detail.c_str());
      if (!g.quiet)
        std::printf("%s: %zu objects, %zu problems, %zu warnings\n", report.ok() ? "ok" : "FAILED", report.objects,
                    report.problems.size(), report.warnings.size());
    }
    return report.ok() ? kOk : kProblems;
  }};
});

}  // namespace
}  // namespace kistore::cli
