// The merge of a remote's history into the store's (SPEC §3 sync), private
// to store/ (pull.cc): what the merge commit changes in the local head's
// tree, after the incoming commits passed the checks (incoming.h).
//
// Objects, attestations and groups are a union. Metadata, and a source id
// that both sides gave to different runs, keep the earliest: by the time of
// the commit that introduced each (a tie keeps the local one; add's "first
// claim stays"); a source id that other local ids block keeps the local
// ones. A run's level is what the signed history of both sides gives (SPEC
// §1, store/history/level_audit.h): two controllers' concurrent reruns give
// `reproduced` only if both reproduced, else `disputed`, so both sides of a
// sync end with the same entry. Every such decision is a note.
// The merge commit has two parents (Kistore-Op: merge).
//
// Errors: Error(kIO) or Error(kCorruption) when a commit, tree or blob
// cannot be read.
//
// Thread-safety: one thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "store/core/layout_trees.h"
#include "store/history/level_audit.h"
#include "objects/commit_id.h"
#include "store/core/store.h"

namespace kistore {

// What a merge decided, beside the change itself.
struct MergeOutcome {
  std::vector<std::string> notes;  // metadata, source id and level conflicts and how they were settled
  std::size_t new_documents = 0;   // objects the local branch gains
};

// The merge of the commit `incoming` (from remote `remote`, for messages)
// into the commit `head`, as a change to head's tree; nullopt when
// head already contains it. A function of its inputs alone, so that
// Store::commit may call it again on a newer head; `outcome` is replaced on
// each call. `trees` and `levels` read the same repository (the incoming
// commits walked), through any door (trees.commits()).
std::optional<ChangeSet> build_merge(const LayoutTrees& trees, LevelAudit& levels, const CommitId& head,
                                     const CommitId& incoming, const std::string& remote, MergeOutcome& outcome);

}  // namespace kistore
