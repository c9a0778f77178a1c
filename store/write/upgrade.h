// Turning a format-1 or format-2 store into format 3 (SPEC §2, `kistore upgrade`).
//
// For the `upgrade` command. Format 3 holds the same evidence as the older
// formats, written as JSON Lines files in a trie (refs/index_trie.h) instead
// of one blob per fact. The upgrade rewrites only the index, in one commit
// (Kistore-Op: upgrade) on the store's branch: no object is added, changed
// or removed, so the objects/ subtree keeps its git id, and every run's
// level, attestations, source ids and metadata read the same after it.
//
// Format 1 kept controlled reruns among their run's group; they leave it for
// refs/reruns. Which runs are reruns: those that a valid rerun commit of the
// history adds as a rerun of a run (store/history/level_audit.h, judged
// against the store's trust list): the same reruns that justify the levels
// `verify` accepts. A rerun commit that no controller of this store signed
// moves nothing (its run stays a member of its group, and verify reports the
// level it set, as before).
//
// Thread-safety: as Store.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "refs/index_trie.h"
#include "store/core/store.h"

namespace kistore {

struct UpgradeResult {
  Format from = kCurrentFormat;   // the format the store had
  std::optional<std::string> commit;  // the upgrade commit; nullopt when it was already current
  std::size_t entries = 0;        // index entries read
  std::size_t files = 0;          // index files written
  std::size_t reruns = 0;         // format 1's reruns moved from their group to refs/reruns/
};

// Upgrades the store's branch to format 3 with one commit made with
// `options` (its `upgrade` flag is set here). A store already of format 3,
// or empty, is left as it is (commit nullopt). Errors of Store::commit pass
// through (Error(kIO) for a store of an unknown format or not kistore's);
// Error(kIO) when the history cannot be read.
UpgradeResult upgrade_store(Store& store, CommitOptions options);

// A controlled rerun that a valid rerun commit adds, and its verdict:
// (run, rerun) -> reproduced or disputed.
using ValidReruns = std::map<std::pair<Digest, Digest>, Level>;
// The reruns the history of `head` adds, judged under the store's trust list
// (store/history/level_audit.h). Error(kIO) when the history cannot be read.
ValidReruns valid_reruns(const Store& store, const Snapshot& head);

// Format 3's index (SPEC §2, refs/index_lines.h) of a format-1 or format-2
// tree: what the switch to format 3 writes in one commit.
struct Format3Index {
  std::map<Family, std::vector<KeyedLine>> lines;  // by family, in key order
  std::size_t entries = 0;        // old index entries read
  std::size_t reruns = 0;         // format 1's reruns moved out of their groups
  std::size_t claims_added = 0;   // upstream ids format 2 could not index as paths
};
// Reads every entry below refs/ of `head` as the fact it stands for
// (refs/index_facts.h: a default level stands for none), takes format 1's
// `reruns` out of their groups and into refs/reruns (with the ratio of their
// primary measurements; a pair with none stays out of both, as upgrade_store
// does), and claims for the first run in digest order each upstream id that
// no entry claims (format 2 could not write an id that another id's path
// blocked; format 3 keys ids by hash and has no such limit). Error(kCorruption)
// naming the path for an entry that is not what its path holds or a path
// outside the format's index; errors of Snapshot reads pass through.
Format3Index format3_index(const Snapshot& head, const ValidReruns& reruns);
// The change that replaces `head`'s refs/ with `index`'s files
// (build_trie, refs/index_trie.h) and FORMAT with "kistore 3\n", no object
// touched (Kistore-Op: upgrade). `files`, when given, is set to the number
// of index files.
ChangeSet format3_change(const Format3Index& index, Format from, std::size_t* files = nullptr);

}  // namespace kistore
