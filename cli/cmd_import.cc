#include <cstdio>

#include "cli/common.h"
#include "cli/report.h"
#include "store/write/add.h"
#include "store/ingest/capture.h"
#include "store/ingest/import_flashinfer.h"
#include "store/ingest/import_kernelbench.h"
#include "store/ingest/import_liger.h"
#include "store/ingest/import_nvbench.h"
#include "store/ingest/import_tritonbench.h"

namespace kistore::cli {
namespace {

// What a run name is when the user gives none: KernelBench writes
// runs/<run name>/eval_results.json, so the folder's name; for any other file
// name, the name without ".json".
std::string default_run_name(const std::string& file) {
  std::string path = file;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  std::size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base == "eval_results.json" && slash != std::string::npos && slash > 0) {
    std::string dir = path.substr(0, slash);
    std::size_t s2 = dir.rfind('/');
    std::string parent = s2 == std::string::npos ? dir : dir.substr(s2 + 1);
    if (!parent.empty() && parent != "." && parent != "..") return parent;
  }
  if (base.size() > 5 && base.substr(base.size() - 5) == ".json") base.resize(base.size() - 5);
  return base.empty() ? "run" : base;
}

// The bundles of one harness file, or its rejections.
void read_harness_file(const std::string& format, const std::string& file, HarnessOptions options,
                       std::vector<HarnessRecord>& records, std::vector<InputError>& rejected) {
  std::string text = read_input_file(file);
  options.file_digest = Digest::of(text).hex();
  if (options.run_name.empty()) options.run_name = default_run_name(file);
  HarnessImport got;
  if (format == "flashinfer-bench") {
    got = import_flashinfer(text, file, options);
  } else {
    Json root = parse_json(text, file);
    got = format == "nvbench"       ? import_nvbench(root, file, options)
                      : format == "tritonbench" ? import_tritonbench(root, file, options)
                                                : import_kernelbench(root, file, options);
  }
  for (HarnessError& e : got.errors) rejected.push_back({e.where, std::move(e.message)});
  for (HarnessRecord& r : got.records) records.push_back(std::move(r));
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("import", "Turn published benchmark tables into bundles and add them");
  app->footer(
      "kistore import FORMAT FILE... turns a benchmark harness's own output into KernelIndex bundles\n"
      "(the run, the protocol that timed it, the GPU's environment, the workload, the implementation)\n"
      "and adds them all in one commit (Kistore-Op: import). Importing the same file again changes\n"
      "nothing. A malformed record is named by file:line or file and JSON pointer, and nothing is\n"
      "written (exit 2), unless --keep-going, which imports the good records and lists the bad ones.\n"
      "docs/importers.md gives each format's mapping field by field.\n\n"
      "FORMAT is one of:\n"
      "  liger        Liger-Kernel's benchmark tables (benchmark/data/all_benchmark_data*.csv)\n"
      "  nvbench      nvbench's --json output: one run per state (axis values x device)\n"
      "  tritonbench  tritonbench's --output-json file: one run per input and backend; needs\n"
      "               --environment (the file names no GPU); accuracy 0 is kept as incorrect\n"
      "  kernelbench  KernelBench's eval_results.json (needs --level) or baseline_time_*.json;\n"
      "               samples it found incorrect or that failed to build are kept with that status\n"
      "  flashinfer-bench  FlashInfer-Bench trace files (traces/**/<definition>.jsonl): one run per\n"
      "               trace with a solution; INCORRECT_*, COMPILE_ERROR, RUNTIME_ERROR are kept as such\n\n"
      "--environment FILE: the ExecutionEnvironment document of the machine the results were\n"
      "measured on, as `kistore capture > FILE` printed it there. It becomes every run's environment;\n"
      "where the file names its GPU, that name must be the document's product.\n\n"
      "Examples:\n"
      "  kistore import liger all_benchmark_data.csv\n"
      "  kistore import nvbench results.json\n"
      "  kistore import kernelbench --level 1 runs/my_run/eval_results.json");
  struct Opts {
    std::string format;
    std::vector<std::string> files;
    bool keep_going = false;
    std::string environment;
    int level = 0;
    std::string run_name;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("FORMAT", o->format, "The harness whose output the files are: liger, nvbench, tritonbench, kernelbench, flashinfer-bench")
      ->required()
      ->choices({"liger", "nvbench", "tritonbench", "kernelbench", "flashinfer-bench"});
  app->add_option("FILE", o->files, "The harness's output files")->required();
  app->add_option("--level", o->level, "KernelBench: the level (1, 2 or 3) the eval results are of");
  app->add_option("--run-name", o->run_name,
                  "KernelBench: the run's name (default: the folder of eval_results.json, else the file's name)")
      ->type_name("NAME");
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
    if (o->level < 0 || o->level > 9)  // 0: not given
      throw InvalidInput("--level: expected a KernelBench level from 1 to 9, found " + std::to_string(o->level));
    if (o->format != "liger") {
      HarnessOptions options;
      options.environment = env;
      if (o->level) options.level = o->level;
      options.run_name = o->run_name;
      for (const std::string& file : o->files) {
        std::vector<HarnessRecord> records;
        read_harness_file(o->format, file, options, records, rejected);
        for (HarnessRecord& r : records) {
          try {
            bundles.push_back(Bundle::from_json(r.bundle, Location{r.where, ""}));
            wheres.push_back(r.where);
          } catch (const Error& e) {
            rejected.push_back({r.where, e.what()});
          }
        }
        reading.update(bundles.size(), bundles.size());
      }
    }
    for (const std::string& file : o->format == "liger" ? o->files : std::vector<std::string>{}) {
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
