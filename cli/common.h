// Shared pieces of the command line: global options, output, exit codes,
// reading inputs, progress. One command per cli/cmd_*.cc file; each registers
// itself with register_command, declaring its arguments with cli/args.h, and
// runs only when its subcommand was given.
#pragma once

#include <functional>
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/args.h"
#include "objects/error.h"
#include "objects/input.h"
#include "objects/json.h"
#include "store/core/store.h"

namespace kistore::cli {

// What every command may use: the global options, the options several
// commands share (--author, --sign), and what the environment adds to them
// (read_environment). store/ reads no environment variable: what it needs
// comes from here.
struct Globals {
  std::string store_dir;  // --store, else $KISTORE_DIR, else ".kistore"
  bool store_named = false;  // by --store or $KISTORE_DIR: open_store then looks nowhere else
  bool json = false;
  bool quiet = false;
  bool no_progress = false;
  std::string format;  // a listing command's --format: "", "text", "tsv" or "json" (cli/table.h)
  std::string author;  // --author, else $KISTORE_AUTHOR; empty: git's identity or kistore's
  std::string sign_key;
  std::optional<std::int64_t> commit_time;  // $KISTORE_DATE (seconds since 1970): fixed commit times
};

// Completes `g` from the environment after the command line was parsed:
// KISTORE_DIR when --store was not given (else ".kistore", where init and
// clone make a store; the others look upward, see open_store), KISTORE_AUTHOR
// when --author was not, KISTORE_DATE. Error(kInvalidInput) naming the
// variable when KISTORE_DATE is not a whole number of seconds.
void read_environment(Globals& g);

// Exit codes (SPEC §3). The mapping from ErrorCode lives in exit_code.cc alone.
enum ExitCode { kOk = 0, kProblems = 1, kUsage = 2, kStoreError = 3, kRemoteError = 4 };
int exit_code_for(ErrorCode code);

using Runner = std::function<int()>;
struct Command {
  CommandSpec* app;
  Runner run;
};
// Registry filled by each cmd_*.cc at static-initialisation time: a
// registrar declares its command under `root` and returns how to run it.
using Registrar = std::function<Command(CommandSpec& root, Globals& globals)>;
bool register_command(Registrar r);
std::vector<Registrar>& registrars();

// The store named by --store / KISTORE_DIR; when neither names one, the
// .kistore folder of the current directory or of its nearest parent that
// has one, as git finds .git (store_folder). Error(kIO) as Store::open.
Store open_store(const Globals& g);
// The same for commands that only read (rank, show, cat, ls, groups):
// libgit2 is started only if something needs it (Store::Use::kReading).
Store open_store_for_reading(const Globals& g);

// Reads a file ("-" is stdin) whole; Error(kIO) naming the path when it
// cannot be read. The 16 MiB limit applies to each JSON text (the parser's),
// so a JSON Lines file may be larger than one document may be: at most
// `max_bytes` (4 GiB unless the caller reads one JSON text), else
// Error(kInvalidInput) once that many bytes were read, whatever the input (a
// pipe, a FIFO, /dev/zero), having held no more; `bound_why`, when given,
// says in that message what the bound is.
std::string read_input_file(const std::string& path, std::uintmax_t max_bytes = std::uintmax_t{4} << 30,
                            std::string_view bound_why = {});

// The folder open_store opens: g.store_dir when named; else ".kistore" when
// the current directory holds one, else the absolute path of the nearest
// parent's .kistore, else ".kistore" (and Store::open says there is none).
std::string store_folder(const Globals& g);

// Expands PATH... (files, folders read recursively for *.json and *.jsonl in
// sorted order, "-" for stdin) and parses each into `out`, all at once (for
// commands whose input is small: digest, attest, rerun; add streams through
// cli/input_batches.h, the same reader). Error(kInvalidInput) for a path that
// does not exist, Error(kIO) for one that cannot be read.
void parse_paths(const std::vector<std::string>& paths, ParsedInput& out);

// Output helpers.
void print_json(const Json& value);  // canonical JSON and a newline on stdout
// A listing's output: with --json, {"<key>": list} (print_json); else `text`
// as it is (already escaped for the terminal). Returns kOk.
int print_listing(const Globals& g, const char* key, Json list, const std::string& text);
// {"code":N,"message":"…"}: what an error document's "error" member holds
// (SPEC §3), the message exact.
Json error_member(int exit_code, std::string_view message);
// An error that ends a command with `exit_code`: "error: <message>" on stderr
// (escaped for a terminal), and with `json` also the one document
// {"error":{"code":N,"message":"…"}} on stdout. Never fails.
void print_error(bool json, int exit_code, std::string_view message);
void note(const Globals& g, const std::string& line);  // stderr unless --quiet

// A progress bar on stderr: only on a terminal, without --no-progress/--quiet/--json,
// and only once work has run for about a second.
// "512 B", "3.4 KiB", "12.0 MiB", "1.2 GiB".
std::string size_text(std::uint64_t bytes);

// "adding [#####.........] 13,261/262,538 documents, 12,040/s, 0:21 left, 12.0 MiB (3.1 MiB/s)":
// what is done, of what total when it is known, in what unit, how fast, and how long is left.
class Progress {
 public:
  Progress(const Globals& g, std::string label, std::string unit);
  ~Progress();
  // done of total items (total 0: not known, no bar and no time left), and
  // bytes moved so far when that applies (0: not shown). Drawn at most every
  // 100 ms, and once more when done reaches total.
  void update(std::size_t done, std::size_t total, std::uint64_t bytes = 0);
  // A new stage of the same work ("indexing" after "adding"): its own label,
  // unit and rate, on the same line.
  void stage(std::string label, std::string unit);
  void finish();

 private:
  bool enabled_;
  std::string label_, unit_;
  long long start_ms_;
  long long stage_ms_;
  long long delay_ms_ = 1000;  // shown only for work that lasts longer (KISTORE_PROGRESS_DELAY_MS)
  long long last_ms_ = 0;
  bool drawn_ = false;
};

// For a command that parses and frees millions of small JSON values (import,
// a bulk add): glibc's fast bins off, so that a free goes to tcache or
// coalesces at once instead of piling up for malloc_consolidate to sweep at
// every larger request (5.6 % of an nvbench import's CPU), and freed memory
// kept for reuse up to 256 MiB instead of given back and faulted in again.
// 7-10 % of a 20,000-run import's wall time (docs/benchmarks.md, "Importers").
void tune_allocator_for_bulk_work();

// 1234567 -> "1,234,567".
std::string count_text(std::uint64_t n);

// Signing hook for --sign KEY / setting sign.key: an empty function if neither
// names a key. Error(kInvalidInput) for a key that cannot be used.
std::function<std::string(std::string_view)> signer_for(const Globals& g, Store* store);


}  // namespace kistore::cli
