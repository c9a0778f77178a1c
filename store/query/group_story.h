// A comparison group's history: every commit that changed the group, newest
// first, and what it changed there. What `kistore log --group KEY` shows.
//
// A commit belongs to a group's story when, against its first parent, it
// changed the group's folder (refs/groups/<key>/ in either format: a run
// entered or left the group) or an index entry of one of its members: a
// level entry, an attestation or a rerun (what `log --run` follows,
// run_story_paths). The members are every run the group's folder ever named.
// Each commit's tree is compared with its parent's only along the group's
// folder and its members' entry paths, by tree id (store/git/raw_tree.h, equal
// subtrees skipped), so a commit that left them alone costs a few lookups and
// the cost of the story follows the number of commits, of members and the
// size of their changes, not the size of the store (a bulk add that indexes
// 100,000 other runs costs what it did to the members).
//
// For each commit of the story, the index is read as that commit and its
// first parent had it (Store::snapshot_at), and the two are compared with the
// queries every reader uses; nothing here ranks runs or decides a level:
//   - runs added and removed, by digest (an upgrade, which renames every
//     path, adds and removes none);
//   - rank changes: rank_group (refs/rank.h) over group_members of both
//     trees, where the group's folder changed (nothing else moves a rank);
//   - level changes: recorded_level of both trees, and the evidence the new
//     level entry names (a rerun for reproduced and disputed);
//   - attestations and controlled reruns indexed under a member.
//
// Thread-safety: as Store.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "store/history/history.h"
#include "store/query/query.h"

namespace kistore {

// A run that entered the group (as the commit's tree has it) or left it (as
// its parent's tree had it).
struct GroupRunChange {
  Digest run;
  std::string implementation;          // implementation_name, from the store's head
  std::optional<Measurement> primary;  // its group entry; nullopt when that does not parse
  int rank = 0;                        // 0: unrankable there
  std::optional<Level> level;          // recorded_level there
};

// A member ranked in both trees whose rank the commit moved.
struct GroupRankChange {
  Digest run;
  std::string implementation;
  int from = 0, to = 0;  // 0: unrankable
};

// A member whose level entry the commit changed (its level, or the evidence
// it names). A run that entered the group in the same commit has its level
// in its GroupRunChange instead.
struct GroupLevelChange {
  Digest run;
  std::string implementation;
  std::optional<Level> from, to;   // nullopt: no entry (or several) in that tree
  std::optional<Digest> evidence;  // the evidence the new entry names
};

struct GroupAttestationChange {
  Digest run;
  std::string implementation;
  Digest attestation;
  bool added = true;  // false: the commit removed it
};

struct GroupRerunChange {
  Digest run;
  std::string implementation;
  RerunInfo rerun;  // as the tree that holds the entry records it
  bool added = true;
};

// One commit of the story and what it changed in the group.
struct GroupStoryEntry {
  LogEntry commit;
  std::vector<GroupRunChange> added;     // by rank in the commit's tree, unrankable last
  std::vector<GroupRunChange> removed;   // by digest
  std::vector<GroupRankChange> ranks;    // by the rank the commit gave
  std::vector<GroupLevelChange> levels;  // by digest, as are the two below
  std::vector<GroupAttestationChange> attestations;
  std::vector<GroupRerunChange> reruns;
  std::size_t members = 0;  // the group's runs in the commit's tree
  std::size_t ranked = 0;   // how many of them rank: the M of "rank N of M"
};

struct GroupStoryQuery {
  std::size_t limit = 0;  // 0: every commit of the story
  std::string op;         // keep only commits of this Kistore-Op
};

// The story of the group `key`, newest first (read_history's order), each
// commit compared with its first parent as above. An unknown key gives an
// empty story (callers resolve KEY first: resolve_group_ref). Error(kIO) when
// a commit or tree of the history cannot be read; errors of Snapshot reads
// pass through.
std::vector<GroupStoryEntry> read_group_story(const Store& store, const Digest& key, const GroupStoryQuery& query);

// What an entry changed, one line each, in the words `log --group` uses; a
// run is named by the first 12 hex digits of its digest and its
// implementation, as `rank` prints them (the structs above hold the digests):
//   "c887b4dc6eb6 fastest: added, 1.000 ms, source-native, rank 1 of 5"
//   "fe4cf9df9ebc liger: removed, was rank 2"
//   "73b4fa90990f huggingface: rank 2 → 3"
//   "628643ba9218 liger_tiled: level source-native → reproduced (rerun 588a4b483894)"
//   "628643ba9218 liger_tiled: attested by e98b06ea8c3b"
//   "628643ba9218 liger_tiled: rerun 588a4b483894 recorded (reproduced, ratio 1.017)"
// An entry that changed none of these (an upgrade renames the group's paths)
// gives "no change to the group's runs, ranks or levels". `value_text` writes
// a primary value in its unit as the terminal shows it (cli's human_value:
// "1.000 ms" for 1000000 ns). Never fails.
std::vector<std::string> group_story_texts(const GroupStoryEntry& entry,
                                           const std::function<std::string(double, const std::string&)>& value_text);

}  // namespace kistore
