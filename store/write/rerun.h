// Recording a controlled rerun (SPEC §1, "Evidence levels"): the one way a
// run's level becomes `reproduced` or `disputed`.
//
// A controller (a key in the store's trust list, store/history/trust.h) reran run R
// and publishes the result as a run document, alone or in its bundle. It is a
// controlled rerun of R only when it has R's comparison key and R's
// implementationDigest: the same code, timed the same way, on the same GPU,
// on the same workload; anything else is refused. Its primary measurement is
// compared with R's: within the tolerance (relative to R's value) R is
// `reproduced`, else `disputed`. The rerun's documents (new to the store),
// the removal of R's old level entry and R's new one (naming the rerun as
// its evidence), and the rerun's entry under refs/reruns/<R>/ (verdict and
// ratio; the rerun is not a member of R's group) are one commit, signed by
// the controller, with trailer `Kistore-Op: rerun`.
//
// For `kistore rerun`, which reads the key and the rerun's file and prints
// the result; the rules are all here.
//
// Thread-safety: as Store.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "objects/input.h"
#include "objects/ssh_signature.h"
#include "refs/level.h"
#include "store/core/store.h"

namespace kistore {

inline constexpr double kDefaultRerunTolerance = 0.10;

struct RerunOptions {
  // The largest relative difference |rerun − run| / |run| of the primary
  // values that still reproduces: a finite number in (0, 1].
  double tolerance = kDefaultRerunTolerance;
  // The controller's key: it signs the commit and must be in the store's
  // trust list. Required.
  std::shared_ptr<const SshPrivateKey> key;
  std::string key_source;  // where the key came from (its file), for messages
  std::string author;      // as CommitOptions::author
  std::optional<std::int64_t> time;  // as CommitOptions::time
};

struct RerunResult {
  Digest run;    // the run that was rerun
  Digest rerun;  // the rerun's run document
  Level level;   // kReproduced or kDisputed: the run's level now
  double difference = 0;  // |rerun − run| / |run| of the primary values
  std::optional<std::string> commit;  // the commit made
};

// Why `tolerance` cannot be a rerun's tolerance ("expected a finite number
// in (0, 1] …, found nan"), or nullopt when it can. Never throws.
std::optional<std::string> tolerance_problem(double tolerance);

// Records `rerun` (one item of a parsed input file: a bundle, or a run
// document whose protocol, environment and workload the store has) as a
// controlled rerun of the run that `run_ref` names (a full digest or a
// unique prefix of 8+ hex digits), in one signed commit.
//
// Throws Error(kInvalidInput), naming the input file and JSON pointer where
// one is at fault, and writes nothing, when: the tolerance is not valid
// (tolerance_problem); there is no key, or it is not a controller's; RUN is
// malformed, ambiguous or not in the store, or is not a run; the item is not
// a run or a bundle; the rerun is RUN itself; it has another comparison key
// (/spec) or another implementationDigest (/spec/implementationDigest,
// expected and found named); RUN has no primary measurement (or one of 0);
// the rerun's primary measurement is missing or in another unit; the rerun
// is already in the store. Errors of
// add_documents (store/write/add.h) and Store::commit pass through.
RerunResult record_rerun(Store& store, std::string_view run_ref, const InputItem& rerun,
                         const RerunOptions& options);

}  // namespace kistore
