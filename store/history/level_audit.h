// The level of a run as its store's signed history gives it (SPEC §1
// "Evidence levels"): the adapter between refs/level_history.h's pure rules
// and one git repository judged against one list of controllers.
//
// For everything that states or checks a level: `verify` (every run at the
// head), `pull` (every commit that comes in, and the merge it makes), and the
// readers (rank, show, ls) that must not show as trusted a level whose
// justification does not hold under the current trust list. One
// implementation, so that they cannot disagree.
//
// How it reads the history:
//   - one walk of commit messages from each commit asked about (a commit
//     already walked is not walked again) finds the rerun commits: those with
//     trailer `Kistore-Op: rerun`; no other commit's tree is read;
//   - for each rerun commit, once, the facts that check_rerun_commit weighs:
//     its signature judged against the controllers (store/history/audit.h); the runs
//     whose refs/levels entry differs from the first parent's (only the
//     refs/levels and objects subtrees are compared); the reruns it adds;
//   - ancestry through the door's descends_from, cached per pair.
// So the cost follows the number of commits (a message each) and of rerun
// commits (two small diffs each), not the size of the store's tree.
//
// What "adds a rerun of R" means, in both formats: the commit adds a run
// object that R's new level entry names as evidence and that has R's
// comparison key and implementationDigest (store/write/rerun.h's rule for a
// controlled rerun). Format 1 indexes that rerun in its group like any run;
// format 2 indexes it under refs/reruns/<R>/ (which verify and pull check
// against the objects); the rule reads neither, so one history judges the
// same on both sides of an upgrade. Trees of either format are read, each by
// its own FORMAT; level_changes across an upgrade compares what the entries
// say (level and bytes), not their paths.
//
// Errors: functions that read history throw Error(kIO) when a commit or tree
// of it cannot be read. Objects that do not decode are no error here: they
// are simply no rerun (verify and pull report them on their own).
//
// Thread-safety: one thread at a time; the audit borrows the repository (or
// the CommitGraph), which must outlive it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "objects/commit_id.h"
#include "objects/ssh_signature.h"
#include "refs/level_history.h"
#include "store/history/audit.h"
#include "store/core/store.h"
#include "store/git/commit_graph.h"

namespace kistore {

// What the history says about the level entry a tree records for a run.
struct LevelJudgement {
  LevelDecision decision;  // what the tree must record
  bool agrees = false;     // the recorded entry is exactly decision.entry
  // When it does not agree: a few words for a reader ("signer not trusted",
  // "unsigned rerun", "no signed rerun", "the signed history says disputed"),
  // and the full story for verify and pull: "expected disputed
  // {"evidence":"sha256:…"} (decided by rerun commit <id>), found reproduced
  // {"evidence":"sha256:…"}; rerun commit <id> is no valid rerun commit for
  // this run: is not signed by a trusted controller (unsigned)", with full
  // commit ids.
  std::string why;
  std::string detail;
};

class LevelAudit {
 public:
  // `trust`: the controllers whose signed rerun commits count. The history
  // is read through `commits` (store/git/commit_graph.h), which must outlive
  // the audit; the other two open the door over the repository themselves.
  LevelAudit(git::CommitGraph& commits, std::vector<AllowedSigner> trust);
  LevelAudit(git_repository* repo, std::vector<AllowedSigner> trust);
  LevelAudit(const Store& store, std::vector<AllowedSigner> trust);
  ~LevelAudit();
  LevelAudit(const LevelAudit&) = delete;
  LevelAudit& operator=(const LevelAudit&) = delete;

  // Reads the history reachable from commit `tip`: one walk of commit
  // messages, and the facts of each rerun commit not seen before. Questions
  // about commits in it then walk nothing. Every question below walks what it
  // needs by itself; this only lets a caller (pull) choose the order: the
  // store's head first, then what came in.
  void walk(const CommitId& tip);

  // The level the tree of a commit must record for `run` (whose default level
  // is `default_level`): decide_level over the valid rerun commits for `run`
  // reachable from `commit` (itself included).
  LevelDecision decide(const CommitId& commit, const Digest& run, Level default_level);
  // The same for a commit not made yet whose parents are `parents` (a merge
  // being built): the valid rerun commits reachable from any of them.
  LevelDecision decide(const std::vector<CommitId>& parents, const Digest& run, Level default_level);

  // Judges `recorded` (the run's single level entry in the tree of `commit`,
  // nullopt when it has none or several) against decide(commit, ...).
  LevelJudgement judge(const CommitId& commit, const Digest& run, Level default_level,
                       const std::optional<LevelEntryValue>& recorded);

  // Every run whose refs/levels entries differ between the trees of commits
  // `from` (nullopt: the empty tree) and `to`: only the refs/levels subtrees
  // are compared, skipping equal folders.
  // With `theirs_only`, only the runs whose entries `from` holds and `to`
  // lacks or holds otherwise: the trees only `to` has are not read (a merge
  // against a small parent costs that parent).
  std::set<Digest> level_changes(const std::optional<CommitId>& from, const CommitId& to, bool theirs_only = false);
  // The run's level entry in the tree of `commit`: nullopt when it has none,
  // several, or one whose bytes are not exactly what refs/index.h writes.
  std::optional<LevelEntryValue> entry_at(const CommitId& commit, const Digest& run);
  // The run's default level, from its object in the tree of `commit`;
  // nullopt when that tree holds no valid run document under that digest.
  std::optional<Level> default_level_at(const CommitId& commit, const Digest& run);

  // The runs that have a valid rerun commit reachable from one of `tips` but
  // from none of `bases` (a merge's first parent; empty: the whole history).
  // Costs the rerun commits once each commit below has been seen, not the
  // history: every merge of a pull may ask.
  std::set<Digest> runs_rerun_since(const std::vector<CommitId>& tips, const std::vector<CommitId>& bases);

  // Every commit reachable from `tip` whose trailer is Kistore-Op: rerun, and
  // for the run it is valid for, what it says; each listed before its
  // ancestors.
  // For tests and `log`.
  struct RerunCommitAudit {
    std::string commit;
    SignatureStatus signature;
    RerunCommitFacts facts;
    std::map<Digest, RerunCommitCheck> checks;  // per run whose level it changes
    std::optional<std::pair<Digest, RerunCommit>> valid;  // the run it is a valid rerun commit for
  };
  std::vector<const RerunCommitAudit*> rerun_commits(const CommitId& tip);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The value a level entry's bytes encode, or nullopt when they are not
// exactly the JCS {"evidence": digest or null} that refs/index.h's
// level_entry writes. Never throws.
std::optional<LevelEntryValue> parse_level_entry(std::string_view bytes);

}  // namespace kistore
