// The audit history: the commits of the store's branch, newest first.
//
// Each entry carries what a reader of the audit trail needs: who and when,
// the operation (the Kistore-Op trailer), the summary, the signature and the
// exact bytes it signs (so the caller can check it against its trust list),
// and, on request, what the commit changed below refs/ and objects/.
//
// Thread-safety: as Store.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "objects/commit_id.h"
#include "store/core/store.h"
#include "store/git/commit_graph.h"

namespace kistore {

struct PathChange {
  char status;  // 'A' added, 'D' deleted, 'M' modified
  std::string path;
};

struct LogEntry {
  std::string id;
  std::vector<std::string> parents;
  std::int64_t time = 0;  // seconds since the epoch
  int offset_minutes = 0;
  // The committer's time, seconds since the epoch: what a signature's key is
  // judged at (valid-after/valid-before), as git verify-commit does.
  std::int64_t committer_time = 0;
  std::string author;  // "Name <email>"
  std::string op;
  std::string summary;
  std::string message;
  std::string signature;       // armored, empty if unsigned
  std::string signed_payload;  // the commit bytes the signature covers
  // Filled when requested. A commit of format 3 (refs/layout.h) names each
  // index line it changed by format 2's path of its fact, so that a story
  // reads the same across the upgrade.
  std::vector<PathChange> changes;
};

struct LogQuery {
  std::size_t limit = 0;         // 0: all
  std::string op;                // keep only this Kistore-Op
  // Keep only commits changing these, against their first parent: paths as
  // git::PathPatterns takes them (store/git/raw_tree.h: a folder ends in "/", a
  // name "*" is any one name), which for literal paths are git's pathspecs.
  // Each commit costs lookups along these paths, not the size of its tree.
  std::vector<std::string> paths;
  bool with_changes = false;     // fill LogEntry::changes (against the first parent)
  // Keep only commits for which this says true, given the commit's id and its
  // parents' (after `op`, before `paths`): for readers that judge a commit by
  // its trees themselves (store/query/group_story.h). Its errors pass through.
  std::function<bool(const std::string& commit, const std::vector<std::string>& parents)> keep;
};

// What commits changed against their first parent, below chosen paths, in
// any format: a format-3 commit's index lines are named by format 2's path of
// each fact, as in LogEntry::changes. For readers that judge a commit by
// what it changed (store/query/group_story.h); read_history is one. A change
// costs what the commit changed along the paths, not the size of its tree.
class CommitChanges {
 public:
  // `paths` as LogQuery::paths; empty: refs/ and objects/. `commits` must
  // outlive this.
  CommitChanges(git::CommitGraph& commits, const std::vector<std::string>& paths);
  ~CommitChanges();
  CommitChanges(const CommitChanges&) = delete;
  CommitChanges& operator=(const CommitChanges&) = delete;
  // What `commit` changed along the paths. Error(kIO) or Error(kCorruption)
  // when a commit or tree along them cannot be read.
  std::vector<PathChange> of(const git::CommitInfo& commit);
  // The same for the commit named by `id` (40 hex digits).
  std::vector<PathChange> of(const std::string& id);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The commits `query` keeps, newest first. Error(kIO) when a commit cannot be
// read; Error(kCorruption) when a tree along `paths` cannot (store/git/raw_tree.h).
std::vector<LogEntry> read_history(const Store& store, const LogQuery& query);
// The same for the commits of `commits` reachable from `head` (tests read a
// repository made in memory).
std::vector<LogEntry> read_history(git::CommitGraph& commits, const CommitId& head, const LogQuery& query);

}  // namespace kistore
