// How commands describe runs: the stored bundle, level, rank, attestations.
#pragma once

#include "cli/common.h"

namespace kistore::cli {

// {run, protocol, environment, workload?, implementation?} with metadata, for
// the documents the store has.
Json stored_bundle(const Snapshot& snap, const Document& run);

// {"level","rank","of","group","attestations"} for a run.
Json run_evidence_json(const Snapshot& snap, const Document& run);
// The same as text lines: "level: source-native\nrank: 3 of 4 in group sha256:…\n…".
std::string run_evidence_text(const Snapshot& snap, const Document& run);

}  // namespace kistore::cli
