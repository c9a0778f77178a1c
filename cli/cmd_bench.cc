#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "cli/common.h"
#include "cli/output/terminal.h"
#include "cli/process_env.h"
#include "cli/report.h"
#include "cli/signing.h"
#include "refs/index.h"
#include "store/write/add.h"
#include "store/ingest/bench_liger.h"
#include "store/ingest/bench_tritonbench.h"
#include "store/ingest/import_liger.h"
#include "store/ingest/import_tritonbench.h"
#include "store/query/query.h"
#include "store/write/rerun.h"
#include "store/history/trust.h"

#include <ctime>

namespace kistore::cli {
namespace {

struct Opts {
  std::string format, liger_dir, tritonbench_dir, mode, python;
  std::vector<std::string> items;  // Liger's scripts, tritonbench's operators
  bool rerun = false, keep_scratch = false;
  double tolerance = kDefaultRerunTolerance;
  double timeout = 1200;
  ProcessOptions process;
};

const std::string kFooter = std::string(
    "kistore bench liger --liger DIR SCRIPT... [--rerun --sign KEY]\n"
    "  Runs Liger-Kernel's own benchmark scripts (benchmark/scripts/SCRIPT of the checkout DIR,\n"
    "  e.g. benchmark_geglu.py) on this machine's GPU and adds what they measured. Each script\n"
    "  runs alone, from a scratch copy of benchmark/scripts/ beside an empty data folder (DIR is\n"
    "  never written), with DIR/src first on Python's path, within --timeout seconds; a line on\n"
    "  stderr says when each starts and ends. The environment is captured before the first and\n"
    "  after the last (as `kistore capture`): if the GPU, driver or software changed in between,\n"
    "  nothing is added (exit 2). The rows become runs whose environment is the captured\n"
    "  document, with the same protocol, workload and implementation as `kistore import liger`\n"
    "  gives them, all in one commit.\n\n"
    "  --rerun: a row whose comparison group (same protocol, environment, workload) holds a\n"
    "  stored run of the same implementation becomes a controlled rerun of it (the newest such\n"
    "  run) instead: one commit each, signed with --sign KEY (a controller of this store), which\n"
    "  sets that run to `reproduced` (within --tolerance, default 10 %) or `disputed`. Other rows\n"
    "  are added as runs. The summary counts both.\n\n"
    "  A script that fails or runs past --timeout never becomes runs: its exit code and the end\n"
    "  of its stderr are shown, the rows of the scripts that succeeded are kept (exit 1), and\n"
    "  nothing is written when none succeeded (exit 2).\n\n"
    "kistore bench tritonbench --tritonbench DIR OP... [--mode MODE] [--rerun --sign KEY]\n"
    "  Runs tritonbench's operators (`python run.py --op OP` of the checkout DIR, e.g. softmax,\n"
    "  vector_add) on this machine's GPU, with --metrics latency,accuracy, and adds what they\n"
    "  measured, as `kistore import tritonbench` would with the environment captured here: one\n"
    "  run per input and backend, its p50 latency; a backend whose output differed from the\n"
    "  baseline's (accuracy 0) is stored as incorrect and never ranked. Each operator runs alone,\n"
    "  in a scratch folder (DIR is never written), within --timeout seconds. --mode: fwd (the\n"
    "  default), bwd, fwd_bwd or fwd_no_grad. Captures, failures, --rerun and exit codes as for\n"
    "  liger.\n\n") +
    kProcessHelp + "\n"
    "  The scripts run in the scratch copy of benchmark/scripts/, with sys.path as `python3 SCRIPT`\n"
    "  gives it plus DIR/src and the --pythonpath folders (PYTHONPATH is not read: pass\n"
    "  --pythonpath DIR for each folder it held).";

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f %%", fraction * 100);
  return buf;
}

// The stored run a row reruns: in its group, of its implementation, the newest.
std::optional<Digest> stored_run_for(const Snapshot& snap, const Document& row_run) {
  const Json* impl = row_run.spec().find("implementationDigest");
  std::optional<Digest> best;
  std::string best_time;
  for (const GroupMember& m : group_members(snap, comparison_key(row_run.spec()), /*levels=*/false)) {
    Document stored = snap.document(m.run, false);
    const Json* stored_impl = stored.spec().find("implementationDigest");
    if (!impl || !stored_impl || !(*impl == *stored_impl)) continue;
    const Json* at = stored.spec().find("observedAt");
    std::string time = at && at->is_string() ? at->as_string() : "";
    if (!best || time > best_time || (time == best_time && m.run.str() < best->str())) {
      best = m.run;
      best_time = time;
    }
  }
  return best;
}

void report_failures(const Globals& g, const BenchResult& bench) {
  for (const BenchItemResult& s : bench.items) {
    if (s.succeeded) continue;
    std::fprintf(stderr, "error: %s: %s after %.1f s; no row of it is used. The end of its stderr:\n",
                 shown(s.name).c_str(), shown_message(s.outcome).c_str(), s.seconds);
    std::string tail = s.stderr_tail.empty() ? "(nothing)" : s.stderr_tail;
    for (std::size_t pos = 0; pos <= tail.size();) {
      std::size_t nl = tail.find('\n', pos);
      if (nl == std::string::npos) nl = tail.size();
      // The program's own bytes: escaped, as every text kistore prints that it did not write.
      std::fprintf(stderr, "    | %s\n", shown_message(tail.substr(pos, nl - pos)).c_str());
      pos = nl + 1;
    }
  }
}

struct Rows {
  std::vector<Bundle> bundles;
  std::vector<std::string> wheres;
  std::vector<InputError> rejected;
  std::size_t scripts_ok = 0;
};

// Liger's table: a bundle per row, as `import liger` reads it.
void liger_rows(const BenchResult& bench, const BenchItemResult& s, Rows& out) {
  LigerParse parsed = parse_liger_csv_lenient(s.output, s.output_name, &bench.environment_before);
  for (const LigerRowError& e : parsed.errors) out.rejected.push_back({s.output_name + ":" + std::to_string(e.line), e.message});
  for (const LigerRow& row : parsed.rows) {
    std::string where = s.output_name + ":" + std::to_string(row.line);
    out.bundles.push_back(Bundle::from_json(liger_bundle(row, &bench.environment_before), Location{where, ""}));
    out.wheres.push_back(where);
  }
}

// tritonbench's --output-json: a bundle per input and backend, as `import
// tritonbench` reads it with the captured environment. A text that is no
// such JSON is one rejected item.
void tritonbench_rows(const BenchResult& bench, const BenchItemResult& s, const std::string& mode, Rows& out) {
  HarnessOptions options;
  options.environment = &bench.environment_before;
  options.op = s.name;
  options.mode = mode.empty() ? "fwd" : mode;  // run.py's default: the file must be of the mode that ran
  options.file_digest = Digest::of(s.output).hex();
  HarnessImport imported;
  try {
    imported = import_tritonbench(parse_json(s.output, s.output_name), s.output_name, options);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kInvalidInput) throw;
    out.rejected.push_back({s.output_name, e.what()});
    return;
  }
  for (const HarnessError& e : imported.errors) out.rejected.push_back({e.where, e.message});
  for (HarnessRecord& r : imported.records) {
    out.bundles.push_back(std::move(r.bundle));
    out.wheres.push_back(std::move(r.where));
  }
}

Rows rows_of(const BenchResult& bench, const Opts& o) {
  Rows out;
  for (const BenchItemResult& s : bench.items) {
    if (!s.succeeded) continue;
    ++out.scripts_ok;
    if (o.format == "liger")
      liger_rows(bench, s, out);
    else
      tritonbench_rows(bench, s, o.mode, out);
  }
  return out;
}

// What the items are called: Liger's scripts, tritonbench's operators.
const char* item_noun(const Opts& o, bool plural) {
  if (o.format == "liger") return plural ? "scripts" : "script";
  return plural ? "operators" : "operator";
}

Json scripts_json(const Opts& o, const BenchResult& bench) {
  Json list = Json::array();
  for (const BenchItemResult& s : bench.items) {
    Json item = Json::object();
    item.set(item_noun(o, false), s.name);
    item.set("succeeded", s.succeeded);
    item.set("outcome", s.outcome);
    item.set("seconds", s.seconds);
    if (!s.succeeded) item.set("stderrTail", s.stderr_tail);
    list.push_back(std::move(item));
  }
  return list;
}

void print_summary(const Globals& g, const Opts& o, const BenchResult& bench, const Rows& rows,
                   const std::optional<AddReport>& added, std::size_t rerun_count, std::size_t left_out,
                   std::size_t reproduced, std::size_t disputed, Json rerun_list) {
  if (g.json) {
    Json out = Json::object();
    out.set(item_noun(o, true), scripts_json(o, bench));
    out.set("environment", bench.environment_before);
    out.set("rows", Json(static_cast<long long>(rows.bundles.size())));
    out.set("leftOut", Json(static_cast<long long>(left_out)));
    out.set("added", Json(static_cast<long long>(added ? added->added.size() : 0)));
    out.set("present", Json(static_cast<long long>(added ? added->present.size() : 0)));
    out.set("commit", added && added->commit ? Json(*added->commit) : Json());
    out.set("reruns", Json(Json::Object{{"reproduced", Json(static_cast<long long>(reproduced))},
                                        {"disputed", Json(static_cast<long long>(disputed))},
                                        {"tolerance", Json(o.tolerance)},
                                        {"list", std::move(rerun_list)}}));
    print_json(out);
  } else if (!g.quiet) {
    std::printf("%zu rows from %zu of %zu %s: %zu new runs", rows.bundles.size(), rows.scripts_ok,
                bench.items.size(), item_noun(o, true), rows.bundles.size() - rerun_count - left_out);
    if (added && added->commit) std::printf(" (commit %s)", added->commit->substr(0, 12).c_str());
    if (o.rerun)
      std::printf("; %zu controlled reruns: %zu reproduced within %s, %zu disputed", rerun_count, reproduced,
                  percent(o.tolerance).c_str(), disputed);
    std::printf("\n");
  }
}

// The controller's key for --rerun, checked before minutes of benchmarks, not after.
std::shared_ptr<const SshPrivateKey> controller_key(const Store& store, const Opts& o, const std::string& key_path) {
  if (key_path.empty())
    throw InvalidInput("bench " + o.format + " --rerun: controlled reruns must be signed: pass --sign KEY");
  auto key = std::make_shared<const SshPrivateKey>(read_private_key(key_path));
  const std::vector<AllowedSigner> trust = load_trust(store);
  const SigningTime now = signing_time(static_cast<std::int64_t>(std::time(nullptr)));
  SignerLookup found = lookup_signer(trust, key->public_key(), "git", &now);
  if (!found.signer)
    throw InvalidInput(key_path + ": key " + key->public_key().fingerprint() + " is not a controller of this store" +
                       (found.refused.empty() ? "" : " (" + found.refused + ")") +
                       "; add it with `kistore trust add PRINCIPAL KEY.pub`");
  return key;
}

int run_bench(Globals& g, const Opts& o) {
  if (auto problem = tolerance_problem(o.tolerance)) throw InvalidInput("--tolerance: " + *problem);
  if (!(o.timeout >= 1 && o.timeout <= 86400)) throw InvalidInput("--timeout: expected seconds from 1 to 86400");
  const std::string& checkout = o.format == "liger" ? o.liger_dir : o.tritonbench_dir;
  if (checkout.empty())
    throw InvalidInput("bench " + o.format + ": --" + o.format + " DIR is required: the " +
                       (o.format == "liger" ? "Liger-Kernel" : "tritonbench") + " checkout to run");
  if (o.format == "liger" && !o.tritonbench_dir.empty())
    throw InvalidInput("bench liger: --tritonbench is for bench tritonbench");
  if (o.format != "liger" && !o.liger_dir.empty())
    throw InvalidInput("bench tritonbench: --liger is for bench liger");
  if (o.format == "liger" && !o.mode.empty()) throw InvalidInput("bench liger: --mode is for bench tritonbench");
  Store store = open_store(g);
  std::string key_path = g.sign_key.empty() ? store.setting("signkey").value_or("") : g.sign_key;
  std::shared_ptr<const SshPrivateKey> key = o.rerun ? controller_key(store, o, key_path) : nullptr;
  BenchOptions bo;
  bo.checkout = checkout;
  bo.items = o.items;
  if (!o.python.empty()) bo.python = o.python, bo.python_given = true;
  bo.time_limit = std::chrono::seconds(static_cast<long long>(o.timeout));
  bo.keep_scratch = o.keep_scratch;
  bo.process = process_context(o.process);
  bo.python_path = python_path_of(o.process);
  if (!g.quiet)
    bo.progress = [](const std::string& line) { std::fprintf(stderr, "bench: %s\n", shown_message(line).c_str()); };
  BenchResult bench = o.format == "liger" ? run_liger_benchmarks(bo) : run_tritonbench_benchmarks(bo, o.mode);
  for (const std::string& n : bench.notes) note(g, "warning: " + n);
  if (o.keep_scratch) note(g, "bench: scratch folder kept: " + bench.scratch);
  report_failures(g, bench);
  const std::string command = "bench " + o.format;
  if (!bench.environment_changes.empty()) {
    std::string what;
    for (const std::string& c : bench.environment_changes) what += (what.empty() ? "" : "; ") + c;
    throw InvalidInput(command + ": the environment changed while the benchmarks ran (" + what +
                       "): their rows are not comparable with either; nothing was added");
  }
  Rows rows = rows_of(bench, o);
  for (const InputError& e : rows.rejected)
    std::fprintf(stderr, "warning: row left out: %s\n", shown_message(e.message).c_str());
  if (rows.bundles.empty()) {
    if (g.json)
      print_json(Json(Json::Object{{item_noun(o, true), scripts_json(o, bench)}, {"added", Json(0)}, {"commit", Json()}}));
    throw InvalidInput(rows.scripts_ok == 0 ? command + ": no " + item_noun(o, false) + " succeeded; nothing was added"
                                            : command + ": the " + item_noun(o, true) +
                                                  " wrote no usable row; nothing was added");
  }

  // Which rows rerun a stored run (decided on the store as it was).
  std::vector<std::pair<std::size_t, Digest>> reruns;
  std::size_t left_out = 0;  // rows that would rerun a run another row reruns too
  std::vector<AddedDocument> docs;
  {
    Snapshot snap = store.snapshot();
    std::map<std::string, std::size_t> rerun_of;  // a stored run -> the first row that reruns it
    std::set<std::string> twice;                  // stored runs two rows would rerun
    for (std::size_t i = 0; i < rows.bundles.size(); ++i) {
      // A row the store holds already (the same measurement again) is
      // present, whichever run of its group a rerun would name.
      const bool stored = snap.has_object(rows.bundles[i].run().digest());
      std::optional<Digest> target = o.rerun && !stored ? stored_run_for(snap, rows.bundles[i].run()) : std::nullopt;
      if (target) {
        if (auto [first, fresh] = rerun_of.emplace(target->str(), i); !fresh) {
          twice.insert(target->str());
          std::fprintf(stderr, "warning: row left out: %s: it reruns the run %s, as %s does; neither is used\n",
                       shown_message(rows.wheres[i]).c_str(), target->str().c_str(),
                       shown_message(rows.wheres[first->second]).c_str());
        }
        reruns.emplace_back(i, *target);
        continue;
      }
      for (const Document& d : rows.bundles[i].documents())
        docs.push_back({&d, rows.wheres[i], "/" + std::string(role_name(d.kind()))});
    }
    // Two rows of one bench that measure the same workload and implementation
    // (an output that holds an input twice, as x_4096 and x_4096.0) would
    // give one run two signed verdicts, the last one standing: neither is.
    left_out = std::erase_if(reruns, [&](const std::pair<std::size_t, Digest>& r) { return twice.count(r.second.str()) > 0; });
  }
  std::optional<AddReport> added;
  if (!docs.empty()) {
    AddOptions opts;
    opts.op = "import";
    for (const BenchItemResult& s : bench.items)
      if (s.succeeded) opts.inputs.push_back(s.name);
    opts.summary = command + ": " + std::to_string(rows.bundles.size() - reruns.size() - left_out) +
                   " runs measured on " +
                   bench.environment_before.find("spec")->find("hardware")->find("product")->as_string();
    opts.commit.author = g.author;
    opts.commit.time = g.commit_time;
    opts.commit.sign = signer_for(g, &store);
    added = add_documents(store, docs, opts);
  }
  std::size_t reproduced = 0, disputed = 0;
  Json rerun_list = Json::array();
  RerunOptions ro;
  ro.tolerance = o.tolerance;
  ro.key = key;
  ro.key_source = key_path;
  ro.author = g.author;
  ro.time = g.commit_time;
  for (const auto& [i, target] : reruns) {
    InputItem item{Location{rows.wheres[i], ""}, rows.bundles[i]};
    RerunResult r = record_rerun(store, target.str(), item, ro);
    (r.level == Level::kReproduced ? reproduced : disputed)++;
    rerun_list.push_back(Json(Json::Object{{"run", Json(r.run.str())}, {"rerun", Json(r.rerun.str())},
                                           {"level", Json(std::string(level_name(r.level)))},
                                           {"difference", Json(r.difference)}, {"where", Json(rows.wheres[i])}}));
  }
  print_summary(g, o, bench, rows, added, reruns.size(), left_out, reproduced, disputed, std::move(rerun_list));
  return rows.scripts_ok == bench.items.size() ? kOk : kProblems;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("bench", "Run a project's own benchmarks here and add what they measured");
  app->footer(kFooter);
  auto o = std::make_shared<Opts>();
  app->add_option("FORMAT", o->format, "The benchmark suite: liger or tritonbench")
      ->required()
      ->choices({"liger", "tritonbench"});
  app->add_option("ITEM", o->items,
                  "liger: scripts of DIR/benchmark/scripts (e.g. benchmark_geglu.py); tritonbench: operators "
                  "(e.g. softmax)")
      ->required();
  app->add_option("--liger", o->liger_dir, "bench liger: the Liger-Kernel checkout")->type_name("DIR");
  app->add_option("--tritonbench", o->tritonbench_dir, "bench tritonbench: the tritonbench checkout")->type_name("DIR");
  app->add_option("--mode", o->mode, "bench tritonbench: fwd (default), bwd, fwd_bwd or fwd_no_grad")
      ->type_name("MODE");
  app->add_flag("--rerun", o->rerun, "Rows that match a stored run become signed controlled reruns of it");
  app->add_option("--tolerance", o->tolerance, "For --rerun: largest relative difference that reproduces, in (0, 1]");
  app->add_option("--timeout", o->timeout, "Seconds each script or operator may run (default 1200)")->type_name("SECONDS");
  app->add_option("--python", o->python, "The Python interpreter (default: python3 on PATH)")->type_name("PY");
  app->add_flag("--keep-scratch", o->keep_scratch, "Leave the scratch folder (its path is shown)");
  add_process_options(app, o->process);
  app->add_option("--author", g.author, "Commit author as \"Name <email>\" (default: KISTORE_AUTHOR, git config)");
  app->add_option("--sign", g.sign_key, "Sign the commits with this Ed25519 OpenSSH private key")->type_name("KEY");
  return Command{app, [&g, o]() -> int { return run_bench(g, *o); }};
});

}  // namespace
}  // namespace kistore::cli
