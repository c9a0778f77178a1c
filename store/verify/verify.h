// Offline verification of a whole store (SPEC §3 "verify").
//
// Reads every object and index entry of the branch head, and the history, and
// reports every problem found, not only the first: objects that are not
// valid zstd frames or whose bytes do not hash to their path, paths outside
// the layout, index entries that disagree with what the objects imply,
// level entries that are not what the signed history gives (SPEC §1: the
// level, and the exact entry with its evidence, that store/history/level_audit.h
// decides at the head, naming a stored rerun of the run), and history that
// lost objects. Read-only.
// What each object implies is read by object_facts (refs/index.h), the same
// reading pull checks incoming objects with, and problems are named by the
// same kinds (refs/problem.h). For `kistore verify` (cli/cmd_verify.cc).
//
// Thread-safety: as Store (verify_store reads on every core internally,
// each thread through its own repository handle).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "objects/ssh_signature.h"
#include "refs/problem.h"
#include "store/core/store.h"

namespace kistore {

// What verify found: problems (the store does not verify) and warnings.
struct VerifyReport {
  std::size_t objects = 0;
  std::vector<Problem> problems;
  std::vector<Problem> warnings;
  bool ok() const { return problems.empty(); }
};

// How verify runs.
struct VerifyOptions {
  bool deep = false;  // also check each object is in JCS form and validates
  // The controllers whose signed rerun commits give levels (SPEC §1,
  // store/history/level_audit.h): normally the store's trust list (load_trust).
  // Empty: no level other than a run's default is justified.
  std::vector<AllowedSigner> trust;
  std::function<void(std::size_t done, std::size_t total)> progress;
  bool timing = false;  // each phase's time on stderr (bench/: KISTORE_VERIFY_TIMING, read by cli/)
};

// Verifies `store`'s branch head and history. A fault in the store's content
// is a problem in the report, never an exception; Error(kCorruption) only
// when a tree of the head cannot be read at all (the walk cannot go on), and
// Error(kIO) when the repository fails.
VerifyReport verify_store(const Store& store, const VerifyOptions& options);

}  // namespace kistore
