// What the importers of benchmark harnesses' JSON outputs share: reading a
// parsed file as hostile input with errors that name a JSON pointer, and
// building the KernelIndex bundle of one measured run.
//
// Each harness (store/ingest/import_nvbench.h, import_kernelbench.h,
// import_tritonbench.h, import_flashinfer.h) maps its own records onto the
// documents; this file holds what they must do alike, so that a user sees the
// same message shapes and the same statuses whichever harness a file came from:
//   - a message is "<source>: <JSON pointer>: expected <what>, found <what>",
//     where <source> is the file, or "file:line" for a JSON Lines record;
//   - a run's spec.status is one of kRunStatuses; only "passed" is a run the
//     harness vouched for, and spec.correctness says whether and how the
//     harness checked the output (SPEC §1: a run that is not passed is
//     `reported`, and ranks after every correct run).
// It takes values and gives values: no files, no clock, no store.
//
// Thread-safety: plain values; all functions are reentrant.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "objects/document.h"
#include "objects/json.h"
#include "objects/shown_text.h"

namespace kistore {

// One bundle made from one record of a harness's file, and where it came
// from ("file: /pointer" or "file:line"), for messages and the add report.
// Its documents are made (objects/document.h: validated, canonicalized and
// hashed) by the importer, once: what adds them takes their digests as made.
struct HarnessRecord {
  std::string where;
  Bundle bundle;
};

// A record that could not be mapped: where, and the whole message.
struct HarnessError {
  std::string where;
  std::string message;
};

struct HarnessImport {
  std::vector<HarnessRecord> records;  // in file order
  std::vector<HarnessError> errors;    // in file order
};

// Where an importer hands each record and each error as soon as it has made
// it, in file order, so that the caller may add the records a batch at a
// time: what is held then is one batch, not the whole file.
struct HarnessSink {
  std::function<void(HarnessRecord&&)> record;
  std::function<void(HarnessError&&)> error;
};

// A sink that appends to `out` (which must outlive it).
HarnessSink collect_into(HarnessImport& out);

// What a user may pass besides the files.
struct HarnessOptions {
  // The ExecutionEnvironment document of the machine the file was measured
  // on (`kistore capture`), or null. Where the file names its GPU, that name
  // must be the document's spec.hardware.product.
  const Json* environment = nullptr;
  // KernelBench eval results: the level (1-3) and the run's name, which the
  // harness keeps in the results' folder name rather than in the file.
  std::optional<int> level;
  std::string run_name;
  // The file's sha256 (hex), for harnesses whose records carry no time or id
  // of their own: it keeps two runs of one benchmark apart in externalIds.
  std::string file_digest;
  // tritonbench: the operator and mode (fwd, bwd, fwd_bwd, fwd_no_grad) the
  // user ran, for its CSV, which names neither. Empty: not given (the CSV
  // then needs op, and mode is tritonbench's default, fwd). Where the file
  // names them (the JSON's keys), a given one must be the file's.
  std::string op;
  std::string mode;
};

// The statuses an importer gives a run. "passed": the harness measured it and,
// where it checks outputs, found them correct. "incorrect": it ran and its
// outputs were wrong. "compile_error", "runtime_error", "timeout": it did not
// run to the end. "skipped": the harness chose not to run it.
inline constexpr std::string_view kRunStatuses[] = {"passed",        "incorrect", "compile_error",
                                                    "runtime_error", "timeout",   "skipped"};

// A position in a parsed file: the value there and its JSON pointer. Every
// accessor checks the type it needs and throws Error(kInvalidInput)
// "<source>: <pointer>: expected ..., found ..." otherwise. It refers to its
// source's text and to its value, which must outlive it and every JsonAt
// got from it (an importer reads a value many times: a copy of the file name
// each time cost an allocation). Its pointer is spelled out only when asked
// for (a message, where()): a JsonAt keeps the containers it was reached
// through, since making the pointer of every value read cost an importer
// about a fifth of its allocations.
class JsonAt {
 public:
  JsonAt(std::string_view source, const Json& value, std::string pointer = "")
      : source_(source), value_(&value), base_(std::move(pointer)) {}

  const Json& value() const { return *value_; }
  std::string pointer() const;  // the constructor's, then a token per step from there
  std::string where() const;    // "<source>: <pointer>" ("/" for the root)

  JsonAt member(std::string_view name) const;                  // required
  // A member of this object got by iterating object(): no lookup, so that a
  // loop over an object of n members costs n, not n^2 (a tritonbench or
  // KernelBench file holds thousands).
  JsonAt member(const Json::Member& m) const;
  std::optional<JsonAt> find(std::string_view name) const;     // absent or null -> nullopt
  JsonAt at(std::size_t index) const;                          // of an array
  const Json::Object& object() const;
  const Json::Array& array() const;
  const std::string& string() const;
  // A name that may become a path segment: 1-255 bytes, no control
  // characters, not "." or "..", no "/" unless allow_slash.
  const std::string& name(bool allow_slash = false) const;
  bool boolean() const;
  double number() const;                 // a finite JSON number
  double number_in(double low, double high) const;  // low <= x <= high
  long long integer(long long low, long long high) const;  // an integral number in range
  // A number written as a JSON string, as nvbench and tritonbench do
  // ("0.0010034715849794225"); finite, within [low, high].
  double number_string(double low, double high) const;

  [[noreturn]] void fail(std::string_view expected) const;  // found: this value
  [[noreturn]] void fail(std::string_view expected, std::string_view found) const;

 private:
  // The JsonAt of `child`, a member or element of this value.
  JsonAt step(const Json& child) const;

  // Steps kept before the pointer is spelled out into base_ (deeper than any
  // harness's file but a hostile one).
  static constexpr std::size_t kSteps = 12;
  std::string_view source_;
  const Json* value_;
  std::string base_;  // the pointer of the value steps_[0] is (value_ when depth_ is 0)
  std::size_t depth_ = 0;
  // The containers from base_'s value down to value_'s: value_ is a member
  // or element of steps_[depth_ - 1], which is one of steps_[depth_ - 2]...
  std::array<const Json*, kSteps> steps_;
};

// "a string \"abc\"", "the number 1e+300", "null", "an object", "an array of 3".
std::string describe_json(const Json& value);

// The largest time an importer takes, in seconds (a day): anything longer is
// not a kernel's latency but a corrupt or hostile file, and would lose
// precision or overflow in nanoseconds.
inline constexpr double kMaxSeconds = 86400;

// Lowercase ASCII letters and digits, every other run of characters one "-".
std::string harness_slug(std::string_view s);

// A member of json_object's list. Its value is moved into the object made: a
// std::initializer_list<Json::Member> (whose elements are const) would copy
// every nested value once more at each level of a document built in one
// expression, which cost an importer a tenth of its time.
struct JsonMember {
  std::string_view name;
  mutable Json value;
};
// The object of `members`, in that order, each value moved out of the list.
Json json_object(std::initializer_list<JsonMember> members);

// An object built one member at a time from an input's names (nvbench's
// summaries and axes, FlashInfer-Bench's libs and axes, tritonbench's
// metrics), in time linear in its members: Json::set looks each name up in
// order, which made 200,000 summaries of one nvbench state (10 MB, under a
// JSON text's limit) take minutes. set() replaces a member of the same name,
// as Json::set does; contains() says whether one was set.
class ObjectBuilder {
 public:
  bool contains(std::string_view name) const { return place_of(name) != kAbsent; }
  void set(std::string_view name, Json value);
  // The object, members in the order first set; the builder is left empty.
  Json take();

 private:
  static constexpr std::size_t kIndexAbove = 16;
  static constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);
  std::size_t place_of(std::string_view name) const;  // kAbsent when not set
  Json::Object members_;
  std::unordered_map<std::string, std::size_t> at_;  // name -> place, made once kIndexAbove members are set
};

// A KernelIndex document {apiVersion, kind, spec, metadata}.
Json harness_document(std::string_view kind, Json spec, Json metadata);

// {"metric", "statistic", "unit", "value"}.
Json harness_measurement(std::string_view metric, std::string_view statistic, std::string_view unit,
                         double value);

// An ExecutionEnvironment for a GPU named by its harness. The architecture
// comes from the file where it says (nvbench's sm_version), else from the
// table of known GPUs; nullopt when neither knows it (the caller then asks
// for --environment).
std::optional<Json> gpu_environment(std::string_view product, std::string_view architecture,
                                    std::string_view harness, Json extra_hardware);
std::optional<std::string> known_gpu_architecture(std::string_view product);
std::string known_gpu_names();

// The environment a record gets: `options.environment` (whose product must be
// `product`, else `at` fails naming both) or gpu_environment(); without
// either, `at` fails with a message that says how to get one.
Json record_environment(const JsonAt& at, std::string_view product, std::string_view architecture,
                        std::string_view harness, const HarnessOptions& options,
                        Json extra_hardware = Json::object());

// The message for a file that names no GPU at all and got no --environment.
std::string environment_needed(std::string_view source, std::string_view harness);

// Makes the bundle {run, protocol, environment, workload, implementation} of
// one record from its documents' JSON. Each document is made once
// (Document::from_json: validated, canonicalized, hashed), the run's four
// digests are set in run_spec from the documents made, and a document equal
// to one of the last few of its role (the protocol and environment that every
// run of a file shares) is taken as made before (DocumentCache). The bundle
// is the one Bundle::from_json would make of the same JSON, and a document
// that does not validate throws the same Error(kInvalidInput), "<where>:
// /protocol/spec/...: expected ...".
//
// A document may also be given as made before (Document::from_json of the
// same JSON): what every record of a file shares, made once for the file,
// is then neither built, compared nor made again for each record.
//
// Thread-safety: one thread uses a BundleMaker.
using BundlePart = std::variant<Json, Document>;
class BundleMaker {
 public:
  Bundle make(std::string_view where, Json run_spec, Json run_metadata, BundlePart protocol, BundlePart environment,
              BundlePart workload, BundlePart implementation);

 private:
  DocumentCache protocol_, environment_, workload_, implementation_;
};

// What mapping one record came to: its bundle, its rejection, or nothing
// (a record that measures nothing, such as a workload-only trace).
using RecordOutcome = std::variant<std::monostate, HarnessRecord, HarnessError>;

// Maps records 0 .. n-1 with map(i, maker) on up to two cores and hands the
// outcomes to `sink` in record order: the sink gets the same calls, in the
// same order, as mapping one record after another would make. `map` must
// only read what the records share and write nothing but its outcome; it
// gets a BundleMaker of its own part (a part a core, each with its maker;
// a part takes the window's next kMapBlock neighbouring records while any are
// left, so that what neighbours share is made about once a block, and a core
// the writer holds for a while leaves its share to the other). An exception other than
// a rejection is rethrown in its record's place, after the outcomes before
// it were handed over, as one record after another would. What is held at
// once is one window (kMapWindow records), not the file.
inline constexpr std::size_t kMapWindow = 512;
inline constexpr std::size_t kMapBlock = 16;
void map_in_order(std::size_t n, const std::function<RecordOutcome(std::size_t, BundleMaker&)>& map,
                  const HarnessSink& sink);

// Error texts (compiler output, tracebacks) are kept, but not without bound:
// cut at this many characters, with "…" (objects/shown_text.h's cut_text).
inline constexpr std::size_t kMaxErrorChars = 4000;

}  // namespace kistore
