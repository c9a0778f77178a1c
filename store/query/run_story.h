// Every run's story at once: what `kistore log --run REF` shows for one run
// (its object added, its level entries, attestations and reruns, each with
// the commit that made it), for all runs in one walk of the history.
//
// For the static site (a history on every run page), where one `log --run`
// per run would walk the history thousands of times. The changes that
// belong to a run are those under the paths run_story_paths names
// (store/query/query.h), the paths `log --run` reads, so the two agree.
//
// Thread-safety: as Store.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "store/history/history.h"

namespace kistore {

// One commit in one run's story, and what it changed for that run.
struct StoryEvent {
  std::size_t entry = 0;             // index into RunStories::entries
  std::vector<PathChange> changes;   // below the run's story paths
};

struct RunStories {
  std::vector<LogEntry> entries;  // the whole history, newest first (read_history)
  // The runs' stories, newest first. Keyed by every digest some change names
  // (an object, or the run an index entry is about); look runs up.
  std::map<Digest, std::vector<StoryEvent>> by_run;
};

// Reads the history once with each commit's changes (read_history with
// with_changes) and sorts every change to the run it tells about. Errors as
// read_history (Error(kIO) when a commit cannot be read, Error(kCorruption)
// when a tree cannot).
RunStories read_run_stories(const Store& store);

// What a change means, in the words `log --run` uses: "added sha256:…",
// "entered level reproduced", "left level source-native", "attested by
// sha256:…", "rerun recorded sha256:…"; else "<status> <path>". Never fails.
std::string story_change_text(const PathChange& change);

}  // namespace kistore
