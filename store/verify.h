// Offline verification of a whole store (SPEC §3 "verify").
//
// Reads every object and index entry of the branch head, and the history, and
// reports every problem found, not only the first: objects that are not
// valid zstd frames or whose bytes do not hash to their path, paths outside
// the layout, index entries that disagree with what the objects imply,
// level entries that are not what the signed history gives (SPEC §1: the
// level, and the exact entry with its evidence, that store/level_audit.h
// decides at the head, naming a stored rerun of the run), and history that
// lost objects. Read-only.
//
// Thread-safety: as Store.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "objects/ssh_signature.h"
#include "refs/problem.h"
#include "store/store.h"

namespace kistore {

struct VerifyReport {
  std::size_t objects = 0;
  std::vector<Problem> problems;
  std::vector<Problem> warnings;
  bool ok() const { return problems.empty(); }
};

struct VerifyOptions {
  bool deep = false;  // also check each object is in JCS form and validates
  // The controllers whose signed rerun commits give levels (SPEC §1,
  // store/level_audit.h): normally the store's trust list (load_trust).
  // Empty: no level other than a run's default is justified.
  std::vector<AllowedSigner> trust;
  std::function<void(std::size_t done, std::size_t total)> progress;
};

VerifyReport verify_store(const Store& store, const VerifyOptions& options);

}  // namespace kistore
