// Turning a format-1 store into format 2 (SPEC §2, `kistore upgrade`).
//
// For the `upgrade` command. Format 2 names the same evidence at other paths
// (refs/layout.h): every digest-named index folder fans out, FORMAT names
// the format, and controlled reruns leave their run's group for
// refs/reruns/<run>/<rerun>. The upgrade rewrites only the index, in one
// commit (Kistore-Op: upgrade) on the store's branch: no object is added,
// changed or removed, so the objects/ subtree keeps its git id, and every
// run's level, attestations, source ids and metadata read the same after it.
//
// Which runs are reruns: those that a valid rerun commit of the history adds
// as a rerun of a run (store/history/level_audit.h, judged against the store's trust
// list): the same reruns that justify the levels `verify` accepts. A rerun
// commit that no controller of this store signed moves nothing (its run stays
// a member of its group, and verify reports the level it set, as before).
//
// Thread-safety: as Store.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "store/core/store.h"

namespace kistore {

struct UpgradeResult {
  Format from = Format::k2;       // the format the store had
  std::optional<std::string> commit;  // the upgrade commit; nullopt when it was already format 2
  std::size_t entries = 0;        // index entries rewritten
  std::size_t reruns = 0;         // runs moved from their group to refs/reruns/
};

// Upgrades the store's branch to format 2 with one commit made with
// `options` (its `upgrade` flag is set here). A store already of format 2,
// or empty, is left as it is (commit nullopt). Errors of Store::commit pass
// through (Error(kIO) for a store of an unknown format or not kistore's);
// Error(kIO) when the history cannot be read.
UpgradeResult upgrade_store(Store& store, CommitOptions options);

}  // namespace kistore
