// Reading the index of a snapshot: a run's level, its group, its attestations.
//
// These read refs/ only (plus the objects they name where needed); they do
// not scan the store, so each costs the size of one group or one run's
// entries, not of the store.
#pragma once

#include <optional>
#include <vector>

#include "refs/rank.h"
#include "store/store.h"

namespace kistore {

// The run's level as the index records it; nullopt if none is recorded.
std::optional<Level> recorded_level(const Snapshot& snap, const Digest& run);

// The run's level from its rerun entries and its own document: reproduced
// or disputed when refs/levels/ says so (small folders: only reruns write
// them), else the run's default level (SPEC §1), which is all any other
// level entry may say (verify checks that it does). Reads neither of the
// big default-level folders.
Level run_level(const Snapshot& snap, const Document& run);

// The members of the group `key`, from refs/groups/<key>/ and the levels.
// With `levels` false, each member's level is left at kReported for the
// caller to set (run_level).
std::vector<GroupMember> group_members(const Snapshot& snap, const Digest& key, bool levels = true);

// Digests of the attestations indexed under `run`.
std::vector<Digest> attestations_of(const Snapshot& snap, const Digest& run);

// Every group key in the store.
std::vector<Digest> group_keys(const Snapshot& snap);

// A display name for a run's implementation: the Implementation document's
// spec.name if the store has it, else the run's metadata name, else "?".
std::string implementation_name(const Snapshot& snap, const Document& run);

}  // namespace kistore
