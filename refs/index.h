// What the index means: comparison keys, primary measurements, and the index
// entries a document implies (SPEC §1 "Comparison key", §2 refs/).
//
// The index under refs/ is derived data: everything here is computed from a
// document alone, so `verify` can recompute it and `add` can write it
// incrementally, one document at a time, without reading the rest of the store.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "objects/digest.h"
#include "objects/document.h"
#include "objects/json.h"
#include "refs/level.h"

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
};

// The run's primary measurement: spec.timing.latencyNs[primaryStatistic] (unit
// "ns", metric "latency") when the timing names one, else the first entry of
// spec.measurements whose statistic is "median"; nullopt when neither exists.
std::optional<Measurement> primary_measurement(const Json& run_spec);

// The bytes of refs/groups/<key>/<run>: JCS of the primary measurement, or of
// {"metric":null,"statistic":null,"unit":null,"value":null} for a run without one.
std::string group_entry(const Json& run_spec);

// The bytes of refs/levels/<level>/<run>: JCS {"evidence": digest or null}.
std::string level_entry(const std::optional<Digest>& evidence);

// The bytes of refs/attestations/<run>/<attestation>: JCS {"author","type"}.
std::string attestation_entry(const Json& attestation_spec);

struct IndexEntry {
  std::string path;
  std::string bytes;
};

// Every entry a newly added document implies, beside its object and metadata:
// a run's group, default level and source entries; an attestation's entry
// under its subject. Throws Error(kInvalidInput) (naming `where`) when the
// run's source id cannot be a path.
std::vector<IndexEntry> index_entries(const Document& doc, std::string_view where, std::string_view pointer = "");

}  // namespace kistore
