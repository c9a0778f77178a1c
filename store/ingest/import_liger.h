// The Liger-Kernel importer: benchmark tables → KernelIndex bundles.
//
// Liger-Kernel publishes its benchmark results as CSV tables (benchmark/data/
// all_benchmark_data*.csv, one row per kernel × provider × pass × metric ×
// x value × extra config × GPU). This file reads those tables (RFC 4180, with
// store/ingest/csv.h) and turns one row into one bundle {run, protocol, environment,
// workload, implementation}, following the pattern of the documents
// KernelIndex derives from the same rows (the seed fixture is reproduced
// exactly: its protocol and environment byte for byte, its run's status,
// timing, measurements and sourceNative member for member). It is the mapping
// `kistore import liger` uses; the command reads the files and adds the
// bundles (store/write/add.h).
//
// An importer, not part of the document layer: it knows one source's names
// (store/ingest/liger_tables.h) and produces documents that objects/ then validates.
// It takes bytes and gives values: no files, no clock, no store.
//
// Every error is Error(kInvalidInput) whose message is
// "<source>:<line>: <what was expected>, found <what>", where <line> is the
// 1-based line of the CSV file on which the offending row starts.
//
// Thread-safety: plain values; all functions are reentrant.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "objects/json.h"
#include "store/ingest/csv.h"
#include "store/ingest/harness_import.h"

namespace kistore {

// The header a Liger table must have, exactly and in this order.
inline constexpr std::array<std::string_view, 15> kLigerColumns = {
    "kernel_name",  "kernel_provider", "kernel_operation_mode",
    "metric_name",  "metric_unit",     "x_name",
    "x_label",      "x_value",         "y_value_50",
    "y_value_20",   "y_value_80",      "extra_benchmark_config_str",
    "gpu_name",     "timestamp",       "liger_version"};

// One data row of a Liger table, its fields exactly as the CSV holds them
// (unquoted). A LigerRow returned by parse_liger_csv* has been validated, so
// liger_bundle maps it without error; one built by hand is validated again by
// liger_bundle.
struct LigerRow {
  std::string source;  // the file the row came from, for messages
  std::size_t line = 0;  // 1-based line of the file on which the row starts
  std::string kernel_name;
  std::string kernel_provider;
  std::string kernel_operation_mode;  // forward | backward | full | no-grad-forward
  std::string metric_name;            // speed | memory
  std::string metric_unit;            // ms (speed) | MB (memory)
  std::string x_name;
  std::string x_label;
  std::string x_value;
  std::string y_value_50;
  std::string y_value_20;
  std::string y_value_80;
  std::string extra_benchmark_config_str;  // a JSON object
  std::string gpu_name;
  std::string timestamp;  // "YYYY-MM-DD HH:MM:SS"
  std::string liger_version;
};

// Parses a whole Liger table. `source` names the file in messages. Accepts LF
// or CRLF line ends, quoted fields with "" escapes (which may span lines), an
// optional UTF-8 byte order mark, and a final line end or none. Throws
// Error(kInvalidInput) on the first problem: a header other than
// kLigerColumns (the message shows expected and found header), a row with the
// wrong number of fields, malformed quoting, or a row whose values cannot map
// onto a bundle (see liger_bundle).
//
// With an `environment` (an ExecutionEnvironment document, as
// `kistore capture` makes it), a row's gpu_name must be that document's
// spec.hardware.product instead of a GPU of the known table.
std::vector<LigerRow> parse_liger_csv(std::string_view text, std::string_view source,
                                      const Json* environment = nullptr);

// A row that was rejected by parse_liger_csv_lenient.
struct LigerRowError {
  std::size_t line = 0;  // where the row starts in the file
  std::string message;   // the full "<source>:<line>: ..." message
};

struct LigerParse {
  std::vector<LigerRow> rows;           // the good rows, in file order
  std::vector<LigerRowError> errors;    // the bad ones, in file order
};

// The --keep-going form of parse_liger_csv: a bad row is recorded in `errors`
// and skipped, and parsing continues with the next row. Still throws
// Error(kInvalidInput) when the file as a whole is unusable: a wrong header.
// Malformed quoting that runs to the end of the file (an unterminated quoted
// field) is recorded as an error for the row where it starts, and ends the
// parse.
LigerParse parse_liger_csv_lenient(std::string_view text, std::string_view source,
                                   const Json* environment = nullptr);

// The lenient parse, streamed: each good row goes to on_row and each bad one
// to on_error as it is read, so that a caller holds one row at a time (the
// reader may be fed a block at a time: store/ingest/csv.h). Throws as
// parse_liger_csv_lenient does for a wrong header.
void parse_liger_csv_stream(CsvReader& reader, std::string_view source, const Json* environment,
                            const std::function<void(LigerRow&&)>& on_row,
                            const std::function<void(LigerRowError&&)>& on_error);

// The bundle for one row: an object with members run, protocol, environment,
// workload and implementation, each a full document (apiVersion, kind, spec,
// metadata), the run's four digests computed from the documents carried.
// Throws Error(kInvalidInput) naming row.source:row.line when the row's values
// cannot map (unknown pass, metric or GPU, non-numeric or negative y values,
// a bad timestamp, a config that is not a JSON object, ...).
//
// The mapping, in short (the .cc file spells out each table):
//  - speed rows: spec.timing.latencyNs.median and p20/p80 latency
//    measurements in integer nanoseconds (ms × 10^6, rounded to nearest);
//    sourceNative.metrics {ms_20, ms_50, ms_80} keep the CSV's doubles;
//    benchmark "<kernel>/<mode>", externalId
//    "<kernel>/<mode>/<provider>/<gpu slug>/<workload slug>/<timestamp slug>".
//  - memory rows: no timing; measurements memory median, p20, p80 in MB (the
//    median first, so that it is the run's primary measurement);
//    sourceNative.metrics {mb_20, mb_50, mb_80}; benchmark
//    "<kernel>/<mode>/memory" and a "memory" segment after the mode in the
//    externalId, so that speed and memory rows sharing a timestamp differ.
//  - protocol: one per (pass, metric): Liger's harness, do_bench with CUDA
//    events for speed, torch.cuda.max_memory_allocated for memory.
//  - environment: the GPU, from a table of known GPU names (vendor, product,
//    architecture); an unknown GPU is an error naming it.
//  - workload: the kernel's definition (a table of kernel names, falling back
//    to the name itself) and parameters = the extra config with the x
//    variable set (numbers as numbers), so rows of one kernel, workload, pass
//    and GPU share a comparison group.
//  - implementation: name = the provider; project and revision (the Liger
//    release) for Liger's own providers.
//
// With an `environment` (a whole ExecutionEnvironment document, metadata
// included, e.g. captured by `kistore capture` where the rows were measured),
// that document is the bundle's environment and the run's environmentDigest;
// the row's gpu_name must be its spec.hardware.product. Everything else
// (protocol, workload, implementation, the run's measurements and source id)
// is the same as without it, so a captured run and an imported one of the
// same row differ only in their environment (and so in comparison group).
Json liger_bundle(const LigerRow& row, const Json* environment = nullptr);
// The same bundle with its documents made (store/ingest/harness_import.h's
// BundleMaker: each once, the protocol and environment that rows share taken
// as made before); `where` names the row in messages ("file.csv:17").
Bundle liger_documents(const LigerRow& row, const Json* environment, BundleMaker& maker, std::string_view where);

// The workload slug of a row, as used in its externalId and metadata names
// (e.g. "batch2-hidden2048-intermediate4096-seq1024-bf16"). Throws like
// liger_bundle.
std::string liger_workload_slug(const LigerRow& row);

}  // namespace kistore
