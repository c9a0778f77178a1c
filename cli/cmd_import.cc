#include <cstdio>

#include "cli/common.h"
#include "cli/report.h"
#include "store/write/add.h"
#include "store/ingest/capture.h"
#include "store/ingest/import_liger.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("import", "Turn published benchmark tables into bundles and add them");
  app->footer(
      "kistore import liger CSV...\n"
      "  Reads Liger-Kernel's published benchmark tables (benchmark/data/all_benchmark_data*.csv)\n"
      "  and turns every row into a KernelIndex bundle: the run, the protocol of its timed pass,\n"
      "  the GPU's environment, the workload and the implementation. All rows are added in one\n"
      "  commit (Kistore-Op: import). Importing the same rows again changes nothing. A malformed\n"
      "  row is named by file:line and nothing is written (exit 2), unless --keep-going, which\n"
      "  imports the good rows and lists the bad ones.\n\n"
      "  --environment FILE: the ExecutionEnvironment document of the machine the rows were\n"
      "  measured on, as `kistore capture` printed it there; it becomes every run's environment\n"
      "  (instead of one that names the GPU alone), and each row's gpu_name must be its product.");
  struct Opts {
    std::string format;
    std::vector<std::string> files;
    bool keep_going = false;
    std::string environment;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("FORMAT", o->format, "The table format: liger")->required()->choices({"liger"});
  app->add_option("CSV", o->files, "The CSV files")->required();
  app->add_option("--environment", o->environment, "The runs' ExecutionEnvironment document (kistore capture)")
      ->type_name("FILE");
  app->add_flag("--keep-going", o->keep_going, "Import the good rows even if some are malformed");
  app->add_option("--author", g.author, "Commit author as \"Name <email>\" (default: KISTORE_AUTHOR, git config)");
  app->add_option("--sign", g.sign_key, "Sign the commit with this Ed25519 OpenSSH private key")->type_name("KEY");
  return Command{app, [&g, o]() -> int {
    std::vector<InputError> rejected;
    std::vector<Bundle> bundles;
    std::vector<std::string> wheres;
    std::optional<Json> environment;
    if (!o->environment.empty()) environment = parse_environment_document(read_input_file(o->environment), o->environment);
    const Json* env = environment ? &*environment : nullptr;
    Progress reading(g, "reading", "rows");
    for (const std::string& file : o->files) {
      std::string text = read_input_file(file);
      LigerParse parsed = parse_liger_csv_lenient(text, file, env);
      for (const LigerRowError& e : parsed.errors)
        rejected.push_back({file + ":" + std::to_string(e.line), e.message});
      std::size_t done = 0;
      for (const LigerRow& row : parsed.rows) {
        std::string where = file + ":" + std::to_string(row.line);
        try {
          bundles.push_back(Bundle::from_json(liger_bundle(row, env), Location{where, ""}));
          wheres.push_back(where);
        } catch (const Error& e) {
          rejected.push_back({where, e.what()});
        }
        reading.update(++done, parsed.rows.size());
      }
    }
    reading.finish();
    if (!rejected.empty() && !o->keep_going) {
      print_rejections(g, rejected);
      return kUsage;
    }
    Store store = open_store(g);
    std::vector<AddedDocument> docs;
    for (std::size_t i = 0; i < bundles.size(); ++i)
      for (const Document& d : bundles[i].documents()) docs.push_back({&d, wheres[i], "/" + std::string(role_name(d.kind()))});
    AddOptions opts;
    opts.op = "import";
    opts.inputs = o->files;
    opts.commit.author = g.author;
    opts.commit.time = g.commit_time;
    opts.commit.sign = signer_for(g, &store);
    Progress progress(g, "writing", "files");
    opts.commit.progress = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
    AddReport report = add_documents(store, docs, opts);
    progress.finish();
    print_add_report(g, report, rejected, docs);
    // With --keep-going the good rows were written: exit 2 means nothing was.
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
