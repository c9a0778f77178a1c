#include <cstdlib>
#include <cstdio>

#include "cli/common.h"
#include "cli/problems.h"
#include "objects/bundle_check.h"
#include "store/history/trust.h"
#include "store/verify/verify.h"

namespace kistore::cli {
namespace {

// Checks bundle files without a store (objects/bundle_check.h holds the
// rules): a mismatch is a problem (exit 1); input that is not JSON or not a
// document is an input error (exit 2).
VerifyReport verify_files(const std::vector<std::string>& paths) {
  BundleFileCheck check;
  for (const std::string& path : paths)
    check_bundle_text(read_input_file(path), path == "-" ? "<stdin>" : path, check,
                      path == "-" ? InputFormat::kAuto : format_for_name(path));
  VerifyReport report;
  report.objects = check.documents;
  auto kind = [](const BundleFinding& f) {
    return parse_problem_kind(f.kind).value_or(ProblemKind::kDigestMismatch);
  };
  for (const BundleFinding& f : check.problems) report.problems.push_back({kind(f), f.path, f.detail});
  for (const BundleFinding& f : check.warnings) report.warnings.push_back({kind(f), f.path, f.detail});
  return report;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("verify", "Check the store (or bundle files) offline");
  app->footer(
      "Without FILE: reads every object and index entry of the store and its history, and reports\n"
      "every problem: objects that are not valid zstd frames or whose bytes do not hash to their\n"
      "name, paths outside the layout, index entries that disagree with the objects, level entries\n"
      "that are not what the history's signed controlled reruns give (the newest decide; two\n"
      "concurrent ones reproduce only if both do), history that lost objects. Read-only; needs no\n"
      "network.\n"
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
  app->add_option("FILE", o->files,
                  "Bundle files to check without a store (JSON, a JSON array or JSON Lines, as add takes them)");
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
      opts.timing = std::getenv("KISTORE_VERIFY_TIMING") != nullptr;  // bench/: where the time goes
      opts.deep = o->deep;
      opts.trust = o->allowed_signers.empty() ? load_trust(store) : load_allowed_signers(o->allowed_signers);
      Progress progress(g, "verifying", "git objects");
      opts.progress = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
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
      print_problems("problem", report.problems);
      if (!g.quiet) print_problems("warning", report.warnings);
      if (!g.quiet)
        std::printf("%s: %zu objects, %zu problems, %zu warnings\n", report.ok() ? "ok" : "FAILED", report.objects,
                    report.problems.size(), report.warnings.size());
    }
    return report.ok() ? kOk : kProblems;
  }};
});

}  // namespace
}  // namespace kistore::cli
