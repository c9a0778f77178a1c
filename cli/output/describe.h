// How commands describe runs: the stored bundle, level, rank, attestations,
// and the text forms of values and groups.
//
// For show and rank; the rules behind what is shown (levels, ranking, which
// group a REF names) are store/query/query.h's. Presentation only: these read a
// Snapshot and format what they find. Errors are those of the Snapshot reads
// (Error(kCorruption) for a damaged object). Thread-safety: as Snapshot.
#pragma once

#include "cli/output/workload_text.h"
#include "store/query/query.h"

namespace kistore {
class LevelAudit;
}

namespace kistore::cli {

// A level as readers show it: the level the signed history gives under the
// current trust list (store/query/query.h, level_standing), e.g. "reported", and
// beside it the stored entry when that differs: "reported (stored:
// reproduced, not justified by the trust list: signer not trusted)".
std::string level_text(const LevelStanding& standing);
// "stored: reproduced, not justified by the trust list: signer not trusted",
// or "" when the stored entry is the level.
std::string stored_text(const LevelStanding& standing);
// Sets "level" (always the level level_standing gives) in `out`; for a level
// whose history was read, "verified" (the stored entry is that level's), and
// when it is not, "storedLevel" (the entry the trust list does not justify)
// and "why".
void set_level_json(Json& out, const LevelStanding& standing);

// A run's controlled reruns beside it: [{"run","level","ratio"}] (ratio
// null when the entry cannot be read), and one line of text for one:
// "rerun reproduced  x1.017  588a4b483894".
Json reruns_json(const std::vector<RerunInfo>& reruns);
std::string rerun_text(const RerunInfo& rerun);

// {run, protocol, environment, workload?, implementation?} with metadata, for
// the documents the store has.
Json stored_bundle(const Snapshot& snap, const Document& run);

// {"level","verified"?,"storedLevel"?,"why"?,"rank","of","group","attestations","reruns"} for a run;
// `audit` judges its level (level_standing).
Json run_evidence_json(const Snapshot& snap, AuditOnDemand& audit, const Document& run);
// The same as text lines: "level: source-native\nrank: 3 of 4 in group sha256:…\n…",
// with a line per rerun.
std::string run_evidence_text(const Snapshot& snap, AuditOnDemand& audit, const Document& run);

}  // namespace kistore::cli

namespace kistore::cli {

// "2.606 ms" for 2606080 ns; other units as given ("812.5 MB").
std::string human_value(double value, const std::string& unit);

// The run's p20-p80 spread of its primary metric, as "a–b", or "".
std::string spread_text(const Document& run, const std::string& unit);
// The same as numbers in `unit` (p20, p80); nullopt when the run lacks either.
std::optional<std::pair<double, double>> spread_values(const Document& run, const std::string& unit);

// What a group compares, from one of its runs: definition, workload, pass, GPU.
// Its strings come from documents many runs and groups share: each is cut
// (objects/shown_text.h: cut_text, and cut_json for the parameters), as every
// reader shows it once per group or per run.
struct GroupLabel {
  std::string benchmark;   // sourceNative.benchmark or the workload's definition
  std::string definition;  // the workload's definition, if stored
  Json parameters;         // the workload's parameters as stored, or null
  std::string gpu;         // the environment's hardware.product, if stored
  std::string pass;        // the protocol's metadata title or name, if stored
};
GroupLabel group_label(const Snapshot& snap, const Document& run);
// The same from the run's documents already read (nullopt where the store
// holds none); of the protocol only the metadata is used. Never fails.
GroupLabel group_label(const Document& run, const std::optional<Document>& workload,
                       const std::optional<Document>& environment, const std::optional<Document>& protocol);

}  // namespace kistore::cli
