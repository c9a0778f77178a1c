// The level of a run as a function of the signed history (SPEC §1 "Evidence
// levels"), in one place, so that `verify`, `pull` and every query that shows
// a level agree on it.
//
// The store layer extracts facts from commits (trailer, signature state, what
// the commit changed against its first parent) and the ancestry between
// commits; the rules here turn those facts into decisions:
//   1. check_rerun_commit: is one commit a *valid rerun commit* for a run?
//   2. decide_level: given every valid rerun commit for a run in a commit's
//      history, what level (and evidence) must that commit's tree record?
//   3. evidence_problem: does a level entry's evidence name a stored rerun of
//      its run (and only when the level needs one)?
// Nothing here reads git: commits are opaque ids, ancestry is a callback.
//
// Why the newest decide: ancestry, not walk order or commit time (both of which
// a merge or a forged date can arrange), says which verdict came after which.
// An unsigned merge whose second parent is an old signed rerun does not bring
// that rerun back: the old commit is an ancestor of the later signed verdict,
// so it no longer decides.
//
// Thread-safety: pure functions (decide_level calls `is_ancestor` from the
// calling thread only).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "objects/digest.h"
#include "refs/level.h"

namespace kistore {

// What a controlled rerun says about its run.
enum class Verdict { kReproduced, kDisputed };

// The level a verdict sets: reproduced or disputed.
Level level_of(Verdict verdict);
// The verdict a level is, for the two levels a rerun can set; nullopt for the
// default levels (reported, source-native).
std::optional<Verdict> verdict_of(Level level);

// A run's level entry as a tree holds it: refs/levels/<level>/<run> with
// {"evidence": digest or null}.
struct LevelEntryValue {
  Level level = Level::kReported;
  std::optional<Digest> evidence;
  bool operator==(const LevelEntryValue&) const = default;
};

// A rerun entry a commit adds: refs/reruns/<run>/<rerun> with {"level": verdict}.
struct AddedRerun {
  Digest run;
  Digest rerun;
  Verdict verdict = Verdict::kReproduced;
  bool document_stored = false;  // objects/sha256/<rerun> is in the commit's tree
};

// What the store layer knows about one commit, against its first parent.
struct RerunCommitFacts {
  std::string op;                    // the Kistore-Op trailer's value; "" when absent
  bool signed_by_controller = false;  // the caller checked the signature against the allowed signers
  // Every run whose level entry differs from the first parent's tree (added,
  // removed, moved to another level, or other bytes), mapped to its entry in the
  // commit's tree: nullopt when the run has no entry there, or more than one.
  std::map<Digest, std::optional<LevelEntryValue>> level_changes;
  // Every refs/reruns/… entry the commit adds, for any run.
  std::vector<AddedRerun> reruns_added;
};

// A valid rerun commit for a run: what decide_level weighs.
struct RerunCommit {
  std::string commit;  // the commit's id, as the ancestry callback knows it
  Verdict verdict = Verdict::kReproduced;
  Digest evidence;     // the rerun the commit adds
  bool operator==(const RerunCommit&) const = default;
};

// The answer of check_rerun_commit: exactly one of the two is set.
struct RerunCommitCheck {
  std::optional<RerunCommit> valid;
  std::string invalid;  // why not, for a message: "changes the levels of 2 runs"
};

// Whether `commit`, with these facts, is a valid rerun commit for `run`: its
// trailer is `Kistore-Op: rerun`; it is signed by a controller; it adds exactly
// one rerun entry for `run`, whose document it stores; it changes `run`'s level
// entry and no other run's; and the entry it writes is the rerun's verdict,
// with the added rerun as evidence (in its own tree that commit is the newest
// valid rerun commit, so §1 gives exactly that entry). A commit is valid for at
// most one run: the one whose level it changes. Never fails: an invalid commit
// is an answer, with the first rule it breaks, e.g.
//   "is not a rerun commit (Kistore-Op: add)", "has no Kistore-Op trailer",
//   "is not signed by a trusted controller", "adds no rerun of this run",
//   "adds 2 reruns of this run", "adds the rerun entry of sha256:… but not its document",
//   "does not change this run's level", "changes the levels of 2 runs",
//   "leaves this run without a single level entry",
//   "sets the level reproduced, but its rerun says disputed",
//   "names evidence sha256:… (expected the rerun it adds, sha256:…)".
RerunCommitCheck check_rerun_commit(const std::string& commit, const Digest& run, const RerunCommitFacts& facts);

// True when commit `ancestor` is a proper ancestor of commit `descendant`
// (reachable from it through parents, merges' included); false for the same id.
using IsAncestor = std::function<bool(const std::string& ancestor, const std::string& descendant)>;

// The level a tree must record for a run, and what justifies it.
struct LevelDecision {
  LevelEntryValue entry;              // the level and the evidence its entry must name
  std::vector<RerunCommit> deciding;  // the newest valid rerun commits, by commit id; empty: the default
};

// The level of a run in the tree of a commit C. `valid` holds every valid
// rerun commit for the run reachable from C (C included), in any order;
// duplicates count once. With none, the default level and evidence null. Else
// the newest decide: those that are an ancestor of no other in `valid`. One
// gives its verdict; several (concurrent) give reproduced only if all say
// reproduced, else disputed. The evidence is the smallest rerun digest among
// the deciding commits whose verdict is the level, so that both sides of a
// merge write the same entry. Calls `is_ancestor` O(n²) times for n commits (a
// run has few reruns). Never fails.
LevelDecision decide_level(Level default_level, const std::vector<RerunCommit>& valid, const IsAncestor& is_ancestor);

// What is wrong with a level entry's evidence, or nullopt when nothing is:
// a default level (reported, source-native) names no evidence; reproduced and
// disputed name one of `stored_reruns`, the digests of the run's rerun entries
// whose documents the tree stores. E.g. "names evidence sha256:…, which is not
// a stored rerun of this run", "names no evidence for the level reproduced",
// "names evidence sha256:… for the default level source-native".
std::optional<std::string> evidence_problem(const LevelEntryValue& entry, const std::set<Digest>& stored_reruns);

}  // namespace kistore
