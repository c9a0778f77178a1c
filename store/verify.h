// Offline verification of a whole store (SPEC §3 "verify").
//
// Reads every object and index entry of the branch head, and the history, and
// reports every problem found, not only the first: objects that are not
// valid zstd frames or whose bytes do not hash to their path, paths outside
// the layout, index entries that disagree with what the objects imply,
// levels no signed rerun justifies, and history that lost objects. Read-only.
//
// Thread-safety: as Store.
#pragma once

#include <functional>
#include <string>
#include <vector>

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
  // Decides whether a level other than a run's default is justified: given
  // the run, its level entry's path and bytes, returns "" if justified, else
  // why not. Null: no level other than the default is justified.
  std::function<std::string(const Digest& run, const std::string& level)> justify_level;
  std::function<void(std::size_t done, std::size_t total)> progress;
};

VerifyReport verify_store(const Store& store, const VerifyOptions& options);

}  // namespace kistore
