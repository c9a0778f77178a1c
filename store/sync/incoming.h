// The checks of what a pull brings in (SPEC §2 "Hostile input", §3 sync),
// private to store/ (pull.cc).
//
// Each commit new to the store is checked against its first parent, in time
// proportional to what it changes (one diff of raw trees, layout_trees.h):
//
//   - objects are only added: an object path that is removed or changed
//     (history-rewritten), that is not a layout path (layout), or whose frame
//     does not decode, hash to the path's digest, validate and be in RFC 8785
//     form (object_facts, refs/index.h, deep) is refused;
//   - index entries agree with their objects: a new run comes with its group
//     entry, one level and its source entry (unless an earlier run claimed
//     that source id, as add allows); an attestation with its entry under its
//     subject; entries are never removed (index-removed), except a level that
//     moves; nothing outside the layout is written; no entry is a submodule
//     link;
//   - levels are a function of the signed history (SPEC §1,
//     store/history/level_audit.h): every run whose level entry differs from any
//     parent's, and at a merge every run with a valid rerun commit on either
//     side since the merge base, has at the commit exactly the entry that
//     function gives there, evidence included (level-unjustified otherwise).
//     So an unsigned commit or merge cannot restore, change or duplicate a
//     level, and a rerun commit that changes two runs' levels sets neither;
//   - a merge commit keeps every object of every parent, and what it takes
//     from a parent other than the first is that parent's (checked on its
//     own side); against each such parent too, it drops or changes no
//     dictionary, drops no index entry (but a level that moves, and a source
//     id an earlier claim blocks) and keeps its format.
//
// Every problem is collected (up to kMaxProblems), each naming the commit;
// the problem kinds are those of verify (refs/problem.h). A check that
// cannot read what it must (a tree or blob the fetch did not bring) throws:
// Error(kCorruption) or Error(kIO).
//
// Thread-safety: one thread.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "objects/ssh_signature.h"
#include "refs/index.h"
#include "refs/problem.h"
#include "store/core/dictionaries.h"
#include "store/core/index_diff.h"
#include "store/core/layout_trees.h"
#include "store/git/commit_graph.h"
#include "store/history/level_audit.h"

namespace kistore {

class IncomingChecker {
 public:
  // A refused pull lists at most this many problems.
  static constexpr std::size_t kMaxProblems = 50;

  // Checks commits of `trees.repo()`, judging levels with `levels` (an audit
  // of the same repository, with the trust list); both must outlive the checker.
  IncomingChecker(const LayoutTrees& trees, LevelAudit& levels);

  // Checks commit `id` against its first parent, adding to problems().
  void check_commit(const git_oid& id);

  const std::vector<Problem>& problems() const { return problems_; }
  std::vector<Problem> take_problems() { return std::move(problems_); }
  bool full() const { return problems_.size() >= kMaxProblems; }
  // Objects the checked commits added (valid or not).
  std::size_t new_objects() const { return new_objects_; }
  // Called with (paths checked, paths changed) while a commit is checked.
  std::function<void(std::size_t, std::size_t)> progress;

 private:
  void problem(ProblemKind kind, std::string path, const std::string& detail);
  bool inherited(const git::TreeDelta& d) const;
  bool from_a_parent(const git::TreeDelta& d) const;
  void check_other_parent(std::size_t n, const git_oid& other);
  const git_oid* parent() const { return parent_ ? &*parent_ : nullptr; }
  void check_delta(const git::TreeDelta& d);
  void check_new_object(const git::TreeDelta& d);
  void check_dictionary(const git::TreeDelta& d);
  bool check_format();
  const std::set<Digest>& reruns_in_tree();
  void check_entry(const git::TreeDelta& d);
  void check_metadata_entry(const std::string& path, const Digest& digest, const std::string& bytes);
  void check_rerun_entry(const std::string& path, const Digest& run, const Digest& rerun, const std::string& bytes);
  void check_group_entry(const std::string& path, const Digest& run, const std::string& bytes);
  void check_attestation_entry(const std::string& path, const Digest& run, const Digest& attestation,
                               const std::string& bytes);
  void check_source_entry(const std::string& path, const std::string& bytes);
  void check_level_entry(const std::string& path, const Digest& run, Level level, const std::string& bytes);
  void check_level_removal(const git::TreeDelta& d);
  void check_levels();
  // Format 3 (refs/layout.h): every family's lines that the commit changes,
  // its tree the trie of its lines, and each new line against the objects.
  void check_lines();
  void check_index_files();
  void check_trie_edits(Family family, const std::vector<CheckedFactChange>& changes);
  void check_line(Family family, const FactChange& change, const std::optional<IndexFact>& after);
  bool line_inherited(Family family, const FactChange& change) const;
  bool grouped_rerun(const IndexFact& fact, const std::string& where);
  void check_pending_lines();
  std::vector<const ObjectFacts*> pending_lines_;  // new objects whose lines check_pending_lines looks up
  // What the commit changes of a family's lines (diff_incoming), read once
  // for check_pending_lines and check_index_files; `error` where the files
  // do not read as lines.
  struct FamilyChanges {
    std::vector<CheckedFactChange> changes;
    std::optional<std::string> error;
  };
  const FamilyChanges& changes_of(Family family);
  std::map<Family, FamilyChanges> family_changes_;  // of the commit being checked
  void expect_entry(const std::string& path, const std::string& bytes, const std::string& what, ProblemKind missing,
                    ProblemKind mismatch);
  std::string facts_key(const git_oid& blob, const std::string& path) const;
  const ObjectFacts& facts_of(const git_oid& blob, const std::string& path);
  void prefetch_facts(const std::vector<git::TreeDelta>& deltas);
  static constexpr std::size_t kPrefetchAtLeast = 64;  // fewer new objects are checked on one thread
  const ObjectFacts* object_in_tree(const Digest& d);
  int level_count(const Digest& run);
  const ObjectFacts* run_for(const Digest& run, const std::string& path, ProblemKind mismatch);

  const LayoutTrees& trees_;
  git::CommitGraph& commits_;  // trees_'s
  LevelAudit& levels_;
  std::vector<Problem> problems_;
  std::size_t new_objects_ = 0;
  std::unordered_map<std::string, ObjectFacts> facts_;  // by blob id and path
  // The commit being checked.
  std::optional<git::CommitInfo> commit_;
  std::string commit_id_;
  git_oid tree_{};
  Format format_ = kCurrentFormat;  // of the commit's tree
  std::optional<std::set<Digest>> reruns_in_tree_;  // reruns_in_tree(), once per commit
  std::optional<git_oid> parent_;  // the first parent's tree
  struct InTree {  // what object_in_tree and level_count found, by digest bytes
    std::unordered_map<std::string, const ObjectFacts*> objects;
    std::unordered_map<std::string, int> level_counts;
  } in_tree_;
  std::unique_ptr<DictionaryCache> dictionaries_;  // of the commit's tree
  std::vector<git_oid> others_;    // the other parents' trees
};

}  // namespace kistore
