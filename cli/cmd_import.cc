#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>

#include "cli/common.h"
#include "cli/report.h"
#include "cli/import_input.h"
#include "objects/digest_stream.h"
#include "objects/parallel.h"
#include "objects/serial_worker.h"
#include "store/ingest/csv.h"
#include "store/write/add.h"
#include "store/write/bulk_add.h"
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
  if (base.size() > 4 && base.substr(base.size() - 4) == ".zst") base.resize(base.size() - 4);  // kept compressed
  if (base == "eval_results.json" && slash != std::string::npos && slash > 0) {
    std::string dir = path.substr(0, slash);
    std::size_t s2 = dir.rfind('/');
    std::string parent = s2 == std::string::npos ? dir : dir.substr(s2 + 1);
    if (!parent.empty() && parent != "." && parent != "..") return parent;
  }
  if (base.size() > 5 && base.substr(base.size() - 5) == ".json") base.resize(base.size() - 5);
  return base.empty() ? "run" : base;
}

// How many bundles are handed to the bulk add at once: a batch is what the
// command holds, whatever the size of the files (as `kistore add` holds 512
// lines: cli/input_batches.h).
constexpr std::size_t kBatchBundles = 1024;

// The bundles of every file, a batch at a time, into one bulk add
// (store/write/bulk_add.h): memory stays bounded by the batch and the largest
// JSON text, not by the input. Without --keep-going, the first rejection
// stops the writing (the pack written so far is removed) but not the reading,
// so that every error is reported; nothing is written then.
class ImportWriter {
 public:
  ImportWriter(const Globals& g, const std::vector<std::string>& files, bool keep_going, Progress& reading)
      : g_(g), files_(files), keep_going_(keep_going), reading_(reading) {}

  void reject(std::string where, std::string message) {
    rejected_.push_back({std::move(where), std::move(message)});
    if (!keep_going_) {
      bulk_.reset();
      pending_.clear();
      wheres_.clear();
    }
  }

  // `b`'s documents were made by the importer (store/ingest/harness_import.h's
  // BundleMaker), each validated, canonicalized and hashed once: the bulk add
  // stores their canonical bytes under the digests made from them.
  void bundle(Bundle&& b, std::string&& where) {
    ++read_;
    if (!rejected_.empty() && !keep_going_) return;  // nothing will be written: only errors are looked for
    pending_.push_back(std::move(b));
    wheres_.push_back(std::move(where));
    if (pending_.size() >= kBatchBundles) flush();
  }

  void flush() {
    reading_.update(read_, 0);
    if (pending_.empty()) return;
    if (!bulk_) {
      store_.emplace(open_store(g_));
      BulkAddOptions opts;
      opts.op = "import";
      opts.inputs = files_;
      opts.list_limit = kListLimit;
      opts.commit.author = g_.author;
      opts.commit.time = g_.commit_time;
      opts.commit.sign = signer_for(g_, &*store_);
      bulk_ = std::make_unique<BulkAdd>(*store_, std::move(opts));
    }
    std::vector<AddedDocument> docs;
    for (std::size_t i = 0; i < pending_.size(); ++i)
      for (const Document& d : pending_[i].documents())
        docs.push_back({&d, wheres_[i], std::string("/").append(role_name(d.kind()))});
    bulk_->add(docs);
    pending_.clear();
    wheres_.clear();
  }

  // Commits (or, after a rejection without --keep-going, reports); the exit code.
  int finish() {
    flush();
    reading_.finish();
    if (!rejected_.empty() && !keep_going_) {
      print_rejections(g_, rejected_);
      return kUsage;
    }
    if (!store_) store_.emplace(open_store(g_));  // nothing to add: still a store error if there is none
    BulkAddReport report;
    if (bulk_) report = bulk_->commit();
    bulk_.reset();
    print_add_report(g_, report, rejected_);
    // With --keep-going the good rows were written: exit 2 means nothing was.
    return kOk;
  }


 private:
  const Globals& g_;
  const std::vector<std::string>& files_;
  bool keep_going_;
  Progress& reading_;
  std::vector<InputError> rejected_;
  std::optional<Store> store_;
  std::unique_ptr<BulkAdd> bulk_;
  std::vector<Bundle> pending_;
  std::vector<std::string> wheres_;
  std::size_t read_ = 0;
};

// The rest of a file that is read a record at a time, as whole lines: `on_lines`
// gets each block of complete lines and the number of the first. A line
// longer than one JSON text may be (kMaxInputBytes) is rejected and skipped
// without being held.
// An ImportWriter on a thread of its own (objects/serial_worker.h): the
// importer reads and maps the next records while the last ones are checked,
// compressed and written. The writer gets the same calls in the same order
// as without the thread, so the store's bytes, the report and the errors are
// the same; what is in flight is a few groups of records. Without a second
// core to use (worker_threads(): one, as under a small address-space limit)
// the calls are made at once, in this thread.
class ImportStream {
 public:
  ImportStream(const Globals& g, const std::vector<std::string>& files, bool keep_going, Progress& reading)
      : writer_(g, files, keep_going, reading) {
    if (worker_threads() > 1) try {
        worker_.emplace(kGroupsInFlight);
      } catch (const std::system_error&) {
      }
  }

  void reject(std::string where, std::string message) {
    if (!worker_) return writer_.reject(std::move(where), std::move(message));
    Op& op = ops_.emplace_back(Op::kReject);
    op.where = std::move(where);
    op.message = std::move(message);
  }
  void bundle(Bundle&& bundle, std::string where) {
    if (!worker_) return writer_.bundle(std::move(bundle), std::move(where));
    Op& op = ops_.emplace_back(Op::kBundle);
    op.bundle = std::move(bundle);
    op.where = std::move(where);
    if (++bundles_ >= kGroupBundles) post();
  }
  // Hands over what the importer has made so far, for writing.
  void flush() {
    if (!worker_) return writer_.flush();
    ops_.emplace_back(Op::kFlush);
    post();
  }
  int finish() {
    if (worker_) {
      post();
      worker_->wait();
      worker_.reset();
    }
    return writer_.finish();
  }
  // After the importer threw: what it handed over is written first (as it
  // was before the throw without the thread), and an exception of that
  // writing, which came first, is thrown instead of the importer's.
  void abandon() {
    if (!worker_) return;
    post();
    worker_->wait();
  }

  HarnessSink sink() {
    return {[this](HarnessRecord&& r) { bundle(std::move(r.bundle), std::move(r.where)); },
            [this](HarnessError&& e) { reject(std::move(e.where), std::move(e.message)); }};
  }

 private:
  // Bundles a group holds: a few a batch, so that the writer starts early.
  static constexpr std::size_t kGroupBundles = 256;
  // Groups handed over and not yet taken (SerialWorker's bound): enough that
  // the writer has work while the importer reads and parses its next file
  // (nvbench: some 40 ms of a 12 MB file, in which the writer writes ~1,000
  // bundles), with what is held bounded by ~1,500 bundles. With 2 the writer
  // went idle at every file: 20,000 nvbench runs took 1.39-1.60 s, 1.25-1.34
  // s with 6 (docs/benchmarks.md).
  static constexpr std::size_t kGroupsInFlight = 6;
  struct Op {
    enum What { kBundle, kReject, kFlush } what;
    explicit Op(What w) : what(w) {}
    Bundle bundle;
    std::string where, message;
  };
  void post() {
    if (ops_.empty()) return;
    auto ops = std::make_shared<std::vector<Op>>(std::move(ops_));
    ops_.clear();
    bundles_ = 0;
    worker_->post([this, ops] {
      for (Op& op : *ops) switch (op.what) {
          case Op::kBundle: writer_.bundle(std::move(op.bundle), std::move(op.where)); break;
          case Op::kReject: writer_.reject(std::move(op.where), std::move(op.message)); break;
          case Op::kFlush: writer_.flush(); break;
        }
    });
  }
  ImportWriter writer_;
  std::vector<Op> ops_;
  std::size_t bundles_ = 0;
  std::optional<SerialWorker> worker_;  // last: gone (its thread ended) before the writer
};

void read_lines(ImportInput& in, const std::function<void(std::string_view, std::size_t)>& on_lines,
                ImportStream& out) {
  std::string block;
  std::size_t first_line = 1;
  std::string chunk(std::size_t{1} << 20, '\0');
  bool skipping = false;  // inside an over-long line
  while (true) {
    std::size_t n = in.read(chunk.data(), chunk.size());
    std::string_view got(chunk.data(), n);
    if (skipping) {
      std::size_t nl = got.find('\n');
      if (nl == std::string_view::npos && n) continue;
      skipping = false;
      ++first_line;
      got.remove_prefix(nl == std::string_view::npos ? got.size() : nl + 1);
    }
    block.append(got);
    std::size_t last = block.rfind('\n');
    if (n == 0) last = block.empty() ? std::string::npos : block.size() - 1;
    if (last != std::string::npos) {
      std::string_view lines(block.data(), last + 1);
      on_lines(lines, first_line);
      first_line += static_cast<std::size_t>(std::count(lines.begin(), lines.end(), '\n'));
      block.erase(0, last + 1);
    }
    if (n == 0) break;
    if (block.size() > kMaxInputBytes) {
      std::string where = in.path() + ":" + std::to_string(first_line);
      out.reject(where, where + ": expected a line of at most " + std::to_string(kMaxInputBytes) +
                            " bytes (one JSON text), found a longer one");
      block.clear();
      skipping = true;
    }
  }
}

// True for a FlashInfer-Bench definition or solution file: one JSON object over
// several lines (so its first line is no JSON text, as a trace file's is),
// which describes code and measures nothing (import_flashinfer.h).
bool flashinfer_description(const std::string& file) {
  ImportInput in(file, kMaxImportFileBytes, "the limit of a file read a line at a time");
  std::string head(std::size_t{1} << 16, '\0');
  head.resize(in.read(head.data(), head.size()));
  std::string_view first(head);
  first = first.substr(0, first.find('\n'));
  if (first.find_first_not_of(" \t\r") == std::string_view::npos) return false;
  try {
    parse_json(first, in.path());
    return false;  // a JSON Lines file
  } catch (const Error&) {
  }
  try {
    ImportInput whole(file, kMaxInputBytes, "a JSON text's limit, SPEC §2");
    return is_flashinfer_description(parse_json(whole.read_all(), whole.path()));
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kInvalidInput) throw;
    return false;  // read as JSON Lines, whose errors say what is wrong
  }
}

// The bundles of one harness file, or its rejections, into `out`.
void read_harness_file(const std::string& format, const std::string& file, HarnessOptions options,
                       ImportStream& out) {
  HarnessSink sink = out.sink();
  if (format == "flashinfer-bench") {
    if (flashinfer_description(file)) return;
    ImportInput in(file, kMaxImportFileBytes, "the limit of a file read a line at a time");
    read_lines(in, [&](std::string_view lines, std::size_t first) {
      import_flashinfer_lines(lines, in.path(), first, options, sink);
      out.flush();
    }, out);
    return;
  }
  if (format == "tritonbench") {
    ImportInput probe(file, kMaxImportFileBytes, "the limit of a CSV file");
    if (probe.first_byte() != '{') {  // tritonbench's --output CSV; its JSON is one object
      // The externalId names the file's digest: one pass to hash, one to read.
      options.file_digest = digest_of_stream([&](char* b, std::size_t n) { return probe.read(b, n); }).hex();
      probe.rewind();
      CsvReader reader([&](char* b, std::size_t n) { return probe.read(b, n); }, probe.path(), ';');
      HarnessSink flushing = sink;
      std::size_t since = 0;
      flushing.record = [&](HarnessRecord&& r) {
        sink.record(std::move(r));
        if (++since % kBatchBundles == 0) out.flush();
      };
      import_tritonbench_csv(reader, probe.path(), options, flushing);
      return;
    }
  }
  ImportInput in(file, kMaxInputBytes, "a JSON text's limit, SPEC §2");
  std::string text = in.read_all();
  options.file_digest = Digest::of(text).hex();
  if (options.run_name.empty()) {
    options.run_name = default_run_name(file);
    // It becomes part of KernelBench's documents, which are UTF-8 text.
    if (const std::size_t bad = first_invalid_utf8(options.run_name);
        format == "kernelbench" && bad != std::string_view::npos)
      throw InvalidInput(file + ": expected a run name in UTF-8 text (taken from the path: pass --run-name NAME), found " +
                         describe_utf8_fault(options.run_name, bad));
  }
  Json root = parse_json(text, in.path());
  text = std::string();
  if (format == "nvbench") import_nvbench(root, in.path(), options, sink);
  else if (format == "tritonbench") import_tritonbench(root, in.path(), options, sink);
  else import_kernelbench(root, in.path(), options, sink);
}

// A Liger table, a row at a time.
void read_liger_file(const std::string& file, const Json* env, ImportStream& out) {
  ImportInput in(file, kMaxImportFileBytes, "the limit of a CSV file");
  CsvReader reader([&](char* b, std::size_t n) { return in.read(b, n); }, in.path());
  std::size_t rows = 0;
  BundleMaker maker;
  parse_liger_csv_stream(
      reader, in.path(), env,
      [&](LigerRow&& row) {
        std::string where = in.path() + ":" + std::to_string(row.line);
        Bundle bundle;
        try {
          bundle = liger_documents(row, env, maker, where);
        } catch (const Error& e) {
          if (e.code() != ErrorCode::kInvalidInput) throw;
          out.reject(where, e.what());
          return;
        }
        out.bundle(std::move(bundle), std::move(where));
        if (++rows % kBatchBundles == 0) out.flush();
      },
      [&](LigerRowError&& e) { out.reject(in.path() + ":" + std::to_string(e.line), std::move(e.message)); });
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
      "  tritonbench  tritonbench's --output-json file, or its --output CSV: one run per input and\n"
      "               backend; needs --environment (neither file names the GPU). The CSV names no\n"
      "               operator or mode either: give --op (and --mode unless it was fwd)\n"
      "  kernelbench  KernelBench's eval_results.json (needs --level) or baseline_time_*.json;\n"
      "               samples it found incorrect or that failed to build are kept with that status\n"
      "  flashinfer-bench  FlashInfer-Bench trace files (traces/**/<definition>.jsonl): one run per\n"
      "               trace with a solution; INCORRECT_*, COMPILE_ERROR, RUNTIME_ERROR are kept as such;\n"
      "               workload-only traces, definitions and solutions measure nothing: passed over\n\n"
      "A file may be zstd-compressed (results.json.zst, as `zstd` writes it): kistore sees it by its\n"
      "first bytes, whatever its name, and reads it as if decompressed. A compressed file may not\n"
      "decompress to more than the same file may hold plain (16 MiB for a JSON file, 4 GiB for a CSV\n"
      "or JSON Lines file); one that would is refused, as is a truncated one. Errors name the file\n"
      "and the line or JSON pointer in its decompressed text. A FILE may also be - (standard input),\n"
      "a pipe such as <(zstdcat f.zst), or a FIFO: it is read once, at most 256 MiB, and held.\n\n"
      "--environment FILE: the ExecutionEnvironment document of the machine the results were\n"
      "measured on, as `kistore capture > FILE` printed it there. It becomes every run's environment;\n"
      "where the file names its GPU, that name must be the document's product.\n\n"
      "Examples:\n"
      "  kistore import liger all_benchmark_data.csv\n"
      "  kistore import nvbench results.json results2.json.zst\n"
      "  kistore import kernelbench --level 1 runs/my_run/eval_results.json\n"
      "  kistore import tritonbench --environment env.json softmax.json\n"
      "  kistore import tritonbench --environment env.json --op softmax softmax.csv");
  struct Opts {
    std::string format;
    std::vector<std::string> files;
    bool keep_going = false;
    std::string environment;
    int level = 0;
    std::string run_name;
    std::string op;
    std::string mode;
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
  app->add_option("--op", o->op,
                  "tritonbench: the operator its CSV measured (the --op given to tritonbench's run.py); the CSV "
                  "does not name it. With the JSON, it must be the file's")
      ->type_name("NAME");
  app->add_option("--mode", o->mode,
                  "tritonbench: the mode its CSV measured, fwd (tritonbench's default), bwd, fwd_bwd or "
                  "fwd_no_grad; the CSV does not name it. With the JSON, it must be the file's")
      ->type_name("MODE")
      ->choices({"fwd", "bwd", "fwd_bwd", "fwd_no_grad"});
  app->add_option("--environment", o->environment, "The runs' ExecutionEnvironment document (kistore capture)")
      ->type_name("FILE");
  app->add_flag("--keep-going", o->keep_going, "Import the good rows even if some are malformed");
  app->add_option("--author", g.author, "Commit author as \"Name <email>\" (default: KISTORE_AUTHOR, git config)");
  app->add_option("--sign", g.sign_key, "Sign the commit with this Ed25519 OpenSSH private key")->type_name("KEY");
  return Command{app, [&g, o]() -> int {
    tune_allocator_for_bulk_work();
    std::optional<Json> environment;
    if (!o->environment.empty()) environment = parse_environment_document(read_input_file(o->environment, kMaxInputBytes), o->environment);
    const Json* env = environment ? &*environment : nullptr;
    if (o->level < 0 || o->level > 9)  // 0: not given
      throw InvalidInput("--level: expected a KernelBench level from 1 to 9, found " + std::to_string(o->level));
    if ((!o->op.empty() || !o->mode.empty()) && o->format != "tritonbench")
      throw InvalidInput("--op and --mode: expected only with tritonbench, found them with " + o->format);
    // Both become part of the runs' documents, which are UTF-8 text.
    for (const auto& [option, value] : {std::pair<const char*, const std::string&>{"--run-name", o->run_name},
                                        std::pair<const char*, const std::string&>{"--op", o->op}})
      if (const std::size_t bad = first_invalid_utf8(value); bad != std::string_view::npos)
        throw InvalidInput(std::string(option) + ": expected UTF-8 text, found " + describe_utf8_fault(value, bad));
    Progress reading(g, "reading", "runs");
    ImportStream out(g, o->files, o->keep_going, reading);
    try {
      for (const std::string& file : o->files) {
        if (o->format == "liger") {
          read_liger_file(file, env, out);
        } else {
          HarnessOptions options;
          options.environment = env;
          if (o->level) options.level = o->level;
          options.run_name = o->run_name;
          options.op = o->op;
          options.mode = o->mode;
          read_harness_file(o->format, file, options, out);
        }
        out.flush();
      }
    } catch (...) {
      out.abandon();  // throws the writer's exception, if it had one
      throw;
    }
    return out.finish();
  }};
});

}  // namespace
}  // namespace kistore::cli
