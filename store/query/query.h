// Reading the index of a snapshot: a run's level, its group, its attestations.
//
// For the commands that query a store (show, rank, ls, log, groups) and for
// the writers that decide from what the index says (rerun). These read refs/
// only (plus the objects they name where needed); they do not scan the
// store, so each costs the size of one group or one run's entries, not of the
// store. Entries that do not parse are skipped: verify is what reports them.
//
// Thread-safety: as Snapshot (one thread at a time per Snapshot).
#pragma once

#include <memory>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "objects/ssh_signature.h"
#include "refs/level_history.h"
#include "refs/rank.h"
#include "store/core/store.h"

namespace kistore {

class LevelAudit;  // store/history/level_audit.h

// The run's level as the index records it; nullopt if none is recorded.
// Never throws for a missing entry; a damaged tree throws as Snapshot::read.
std::optional<Level> recorded_level(const Snapshot& snap, const Digest& run);

// The run's level from its rerun entries and its own document: reproduced
// or disputed when refs/levels/ says so (small folders: only reruns write
// them), else the run's default level (SPEC §1), which is all any other
// level entry may say (verify checks that it does). Reads neither of the
// big default-level folders.
Level run_level(const Snapshot& snap, const Document& run);

// The level of a run, as every reader shows it (SPEC §1: one level, a
// function of the signed history under the reader's trust list, and
// `verify`, `pull` and every query agree on it). `level` is what
// store/history/level_audit.h decides for the snapshot's commit, the level `verify`
// expects; `stored` is what the snapshot's index records. Where the two
// differ (a rerun signed by a key since removed from the trust list, or no
// longer valid at its commit's time), readers show `level` and put `stored`
// beside it as an entry the trust list does not justify, never as the level.
//
// Cost: a run with no rerun entries whose index records its default level
// (most runs) is at its default level, with no history read and no
// signature checked; only a run with reruns or a non-default entry pays for
// the history (once per AuditOnDemand).
struct LevelStanding {
  Level level = Level::kReported;   // the level: the one to show, rank and filter by
  Level stored = Level::kReported;  // as the index records it
  bool checked = false;             // the history was read (the run has reruns or a non-default entry)
  bool justified = true;            // the stored entry is exactly what the history gives
  std::string why;                  // when not justified: "signer not trusted", "no signed rerun", …
};

// A LevelAudit of `store` under `trust`, made when first asked for: most
// runs stand at their default level, which needs no history, and the
// history is read through libgit2, whose start-up costs more than a query
// (store/git/repo_objects.h). Belongs to the store's thread.
class AuditOnDemand {
 public:
  AuditOnDemand(const Store& store, std::vector<AllowedSigner> trust);
  ~AuditOnDemand();
  // The audit, made on the first call. Errors as LevelAudit's constructor.
  LevelAudit& operator*();

 private:
  const Store& store_;
  std::vector<AllowedSigner> trust_;
  std::unique_ptr<LevelAudit> audit_;
};

// The one function behind every reader's level (rank, show, compare, export,
// site, ls, log --run). `has_reruns`: whether the run has rerun entries
// (reruns_of), when the caller has read them; else they are read here.
// Throws as LevelAudit when the history cannot be read, as Snapshot::read
// for a damaged tree.
LevelStanding level_standing(const Snapshot& snap, AuditOnDemand& audit, const Document& run,
                             std::optional<bool> has_reruns = std::nullopt);
// The same through a LevelAudit already made (tests, verify's own walk).
LevelStanding level_standing(const Snapshot& snap, LevelAudit& audit, const Document& run,
                             std::optional<bool> has_reruns = std::nullopt);

// The run's level entry as the index records it (either format): its level
// and evidence; nullopt when it records none (format 3: a run at its default
// has no line) or the entry does not parse. A damaged tree throws as
// Snapshot::read.
std::optional<LevelEntryValue> recorded_entry(const Snapshot& snap, const Digest& run);

// The members of the group `key`, from refs/groups/<key>/ and the levels.
// With `levels` false, each member's level is left at kReported for the
// caller to set (run_level).
std::vector<GroupMember> group_members(const Snapshot& snap, const Digest& key, bool levels = true);

// Digests of the attestations indexed under `run`.
std::vector<Digest> attestations_of(const Snapshot& snap, const Digest& run);

// A controlled rerun of a run, as refs/reruns/<run>/<rerun> records it.
struct RerunInfo {
  Digest rerun;
  Level verdict = Level::kDisputed;  // reproduced or disputed
  double ratio = 0;                  // the rerun's primary value over the run's
  bool readable = false;             // false: the entry's bytes are not {"level","ratio"} (verify says why)
};
// The reruns indexed under `run` (format 2; none in format 1, whose reruns
// are not indexed apart), in path order. An entry whose bytes do not parse
// is listed as not readable; a damaged tree throws as Snapshot::read.
std::vector<RerunInfo> reruns_of(const Snapshot& snap, const Digest& run);

// The digests named below `dir` (refs/groups, refs/levels/<level>): fanned
// out in format 2, flat in format 1; names of neither form are skipped (verify
// reports them). With a `prefix` (lowercase hex), only the digests whose hex
// starts with it; in format 2 it reads only the folders the prefix names. A
// damaged tree throws as Snapshot::list.
std::vector<Digest> digests_below(const Snapshot& snap, std::string_view dir, std::string_view prefix = "");

// Every group key in the store.
std::vector<Digest> group_keys(const Snapshot& snap);

// What a REF given to `rank` names: a group, or a run and so its group.
struct GroupRef {
  Digest key;
  std::optional<Digest> run;  // set when REF named a run
};
// REF: a group key or a run, each as a full digest or a unique prefix of 8+
// hex digits (with or without "sha256:"); group keys are tried first.
// Error(kInvalidInput) when REF is malformed, matches several groups (naming
// up to 5), is an ambiguous run prefix, or names a document that is not a run;
// Error(kNotFound) when it matches nothing.
GroupRef resolve_group_ref(const Snapshot& snap, std::string_view ref);

// The runs whose level entry is under refs/levels/<level>/, in path order.
std::vector<Digest> runs_at_level(const Snapshot& snap, Level level);

// The paths whose change tells part of a run's story (its object, its level
// entries at any level, its attestations and reruns), in both formats, for
// LogQuery::paths (store/history/history.h: "*" any one name, "…/" a folder's
// contents; git's pathspecs too). Never fails.
std::vector<std::string> run_story_paths(const Digest& run);

// A display name for a run's implementation: the Implementation document's
// spec.name if the store has it, else the run's metadata name, else "?";
// cut after kShownChars characters with "…" (objects/shown_text.h): every
// reader shows it once per run, and one document is shared by many runs.
// `names`, where given, keeps the names read by Implementation document, so
// that the runs sharing one read and parse it once.
using ImplementationNames = std::map<Digest, std::optional<std::string>>;
std::string implementation_name(const Snapshot& snap, const Document& run, ImplementationNames* names = nullptr);

}  // namespace kistore
