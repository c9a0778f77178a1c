// What the index means: comparison keys, primary measurements, and the index
// entries a document implies (SPEC §1 "Comparison key", §2 refs/).
//
// The index under refs/ is derived data: everything here is computed from a
// document alone, so `verify` can recompute it and `add` can write it
// incrementally, one document at a time, without reading the rest of the store.
// object_facts is the one reading of a stored object that `verify` and
// `pull` both check the index against.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "objects/blob.h"
#include "objects/digest.h"
#include "objects/document.h"
#include "objects/json.h"
#include "refs/layout.h"
#include "refs/level.h"
#include "refs/problem.h"

namespace kistore {

// The digest of {"apiVersion":..., "kind":"ComparisonKey", "spec":
// {"environmentDigest":E, "protocolDigest":P, "workloadDigest":W}} with E, P, W
// taken from a run's spec. Runs are comparable only when their keys are equal.
Digest comparison_key(const Json& run_spec);

struct Measurement {
  std::string metric;
  std::string statistic;
  std::string unit;
  double value = 0;
  // {"metric","statistic","unit","value"}; parse is the inverse (nullopt if malformed).
  Json to_json() const;
  static std::optional<Measurement> from_json(const Json& json);
  friend bool operator==(const Measurement&, const Measurement&) = default;
};

// The run's primary measurement: spec.timing.latencyNs[primaryStatistic] (unit
// "ns", metric "latency") when the timing names one, else the first entry of
// spec.measurements whose statistic is "median"; nullopt when neither exists.
std::optional<Measurement> primary_measurement(const Json& run_spec);

// The bytes of refs/groups/<key>/<run>: JCS of the primary measurement, or of
// {"metric":null,"statistic":null,"unit":null,"value":null} for a run without one.
std::string group_entry(const Json& run_spec);
// The same bytes for a primary measurement (or none): also the value of a
// format-3 group line's members.
std::string group_entry(const std::optional<Measurement>& primary);

// The bytes of refs/levels/<level>/<run>: JCS {"evidence": digest or null}.
std::string level_entry(const std::optional<Digest>& evidence);

// The bytes of refs/reruns/<run>/<rerun>: JCS {"level": "reproduced" or
// "disputed", "ratio": the rerun's primary value over the run's}.
std::string rerun_entry(Level verdict, double ratio);
// The rerun's primary value over the run's, when both have one in the same
// unit and the run's is not 0; nullopt otherwise.
std::optional<double> rerun_ratio(const Json& run_spec, const Json& rerun_spec);

// The bytes of refs/attestations/<run>/<attestation>: JCS {"author","type"}.
std::string attestation_entry(const Json& attestation_spec);
// The same bytes for an author and a type (a format-3 attestation line's members).
std::string attestation_entry(std::string_view author, std::string_view type);

struct IndexEntry {
  std::string path;
  std::string bytes;
};

// Every entry a newly added document implies in format `f`, beside its
// object and metadata: a run's group, default level and source entries; an
// attestation's entry under its subject. Throws Error(kInvalidInput) (naming
// `where`) when the run's source id cannot be a path.
std::vector<IndexEntry> index_entries(Format f, const Document& doc, std::string_view where,
                                      std::string_view pointer = "");

// Why the bytes of the metadata entry at `path` are not the JCS of a JSON
// object (metadata-invalid), or nullopt when they are.
std::optional<Problem> metadata_problem(std::string_view path, std::string_view bytes);

// How far object_facts examines an object.
enum class ObjectCheck {
  kShallow,  // decode, rehash, and parse as JSON naming a known kind, with a spec (verify)
  kDeep,     // also validate it as its kind and require RFC 8785 bytes (verify --deep, pull)
};

// What one stored object implies for the index (SPEC §2).
// The documents a run names, by role (its spec's <role>Digest members that
// are digests): a fixed array, as verify holds one for every run of a store.
struct References {
  static constexpr std::array<std::string_view, 4> kRoles{"protocol", "environment", "workload", "implementation"};
  std::array<std::optional<Digest>, 4> by_role;  // in kRoles' order

  // Sets the digest of `role`, one of kRoles (any other is ignored).
  void set(std::string_view role, const Digest& d) {
    for (std::size_t i = 0; i < kRoles.size(); ++i)
      if (kRoles[i] == role) by_role[i] = d;
  }
  std::optional<Digest> find(std::string_view role) const {
    for (std::size_t i = 0; i < kRoles.size(); ++i)
      if (kRoles[i] == role) return by_role[i];
    return std::nullopt;
  }
  // fn(role, digest) for each role present, in kRoles' order.
  template <typename F>
  void for_each(F&& fn) const {
    for (std::size_t i = 0; i < kRoles.size(); ++i)
      if (by_role[i]) fn(kRoles[i], *by_role[i]);
  }
};

struct ObjectFacts {
  std::optional<Digest> digest;    // the digest its path names; nullopt when the path is not an object path
  std::optional<Problem> problem;  // why the object implies nothing; nullopt when it is usable
  Kind kind = Kind::kRun;
  // Runs: where the group entry must be and its bytes, the default level,
  // the source entry's path (with spec.sourceNative) and the digests the
  // run names by role ("protocol", "environment", "workload", "implementation").
  std::string group_path, group_bytes;
  Level default_level = Level::kReported;
  std::optional<std::string> source_path;  // format 3: the upstream id's key (refs/index_lines.h source_key)
  References references;
  std::optional<Digest> key;           // the comparison key
  std::optional<Measurement> primary;  // the primary measurement
  // Attestations: the run attested and the bytes of its entry under it ("" when
  // a shallow check meets a spec without author or type).
  std::optional<Digest> subject;
  std::string attestation_bytes;

  bool valid() const { return digest && !problem; }
};

// Why the rerun entry `bytes` under `run` for `rerun` (both valid run
// facts) does not hold: the rerun is the run itself, has another comparison
// key or implementation, has no primary measurement in the run's unit, or
// the bytes are not exactly rerun_entry(reproduced or disputed, the ratio of
// their primary values). nullopt when it holds.
std::optional<std::string> rerun_entry_problem(const ObjectFacts& run, const ObjectFacts& rerun, std::string_view bytes);

// Reads the object at `path` (objects/sha256/...) from its stored zstd
// `frame` and says what it implies in a tree of format `f`, or why it implies nothing (`problem`,
// about `path`): layout (not an object path), object-corrupt (not a valid
// frame), object-hash-mismatch (its bytes hash to another digest; the detail
// names both), object-invalid (not a document of a known kind with a spec;
// deep: one that does not validate; a run whose source id cannot be a path),
// object-not-canonical (deep: not in RFC 8785 form). A frame that names a
// zstd dictionary decodes with dictionaries(id) (objects/blob.h); one the
// store lacks, or a damaged one, is object-corrupt. Never throws for bad
// input.
ObjectFacts object_facts(Format f, std::string_view path, std::string_view frame, ObjectCheck check,
                         const DictionaryLookup& dictionaries = nullptr);

}  // namespace kistore
