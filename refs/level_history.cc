#include "refs/level_history.h"

#include <algorithm>

namespace kistore {
namespace {

RerunCommitCheck invalid(std::string why) { return RerunCommitCheck{std::nullopt, std::move(why)}; }

std::string verdict_name(Verdict v) { return std::string(level_name(level_of(v))); }

}  // namespace

Level level_of(Verdict verdict) { return verdict == Verdict::kReproduced ? Level::kReproduced : Level::kDisputed; }

std::optional<Verdict> verdict_of(Level level) {
  if (level == Level::kReproduced) return Verdict::kReproduced;
  if (level == Level::kDisputed) return Verdict::kDisputed;
  return std::nullopt;
}

RerunCommitCheck check_rerun_commit(const std::string& commit, const Digest& run, const RerunCommitFacts& facts) {
  if (facts.op.empty()) return invalid("has no Kistore-Op trailer");
  if (facts.op != "rerun") return invalid("is not a rerun commit (Kistore-Op: " + facts.op + ")");
  if (!facts.signed_by_controller) return invalid("is not signed by a trusted controller");
  const AddedRerun* added = nullptr;
  std::size_t of_run = 0;
  for (const AddedRerun& a : facts.reruns_added)
    if (a.run == run) ++of_run, added = &a;
  if (of_run == 0) return invalid("adds no rerun of this run");
  if (of_run > 1) return invalid("adds " + std::to_string(of_run) + " reruns of this run");
  if (!added->document_stored)
    return invalid("adds the rerun entry of " + added->rerun.str() + " but not its document");
  auto change = facts.level_changes.find(run);
  if (change == facts.level_changes.end()) return invalid("does not change this run's level");
  if (facts.level_changes.size() > 1)
    return invalid("changes the levels of " + std::to_string(facts.level_changes.size()) + " runs");
  if (!change->second) return invalid("leaves this run without a single level entry");
  const LevelEntryValue& entry = *change->second;
  if (entry.level != level_of(added->verdict))
    return invalid("sets the level " + std::string(level_name(entry.level)) + ", but its rerun says " +
                   verdict_name(added->verdict));
  if (entry.evidence != added->rerun)
    return invalid("names evidence " + (entry.evidence ? entry.evidence->str() : std::string("null")) +
                   " (expected the rerun it adds, " + added->rerun.str() + ")");
  return RerunCommitCheck{RerunCommit{commit, added->verdict, added->rerun}, ""};
}

LevelDecision decide_level(Level default_level, const std::vector<RerunCommit>& valid, const IsAncestor& is_ancestor) {
  std::vector<RerunCommit> commits = valid;
  auto by_id = [](const RerunCommit& a, const RerunCommit& b) {
    if (a.commit != b.commit) return a.commit < b.commit;
    if (a.verdict != b.verdict) return a.verdict < b.verdict;
    return a.evidence < b.evidence;
  };
  std::sort(commits.begin(), commits.end(), by_id);
  commits.erase(std::unique(commits.begin(), commits.end()), commits.end());

  LevelDecision out{LevelEntryValue{default_level, std::nullopt}, {}};
  for (const RerunCommit& c : commits) {
    bool superseded = std::any_of(commits.begin(), commits.end(), [&](const RerunCommit& other) {
      return other.commit != c.commit && is_ancestor(c.commit, other.commit);
    });
    if (!superseded) out.deciding.push_back(c);
  }
  if (commits.empty()) return out;
  // Git's ancestry is acyclic, so some commit always decides; should an oracle
  // say otherwise, let every commit decide, so that a dispute is never lost.
  if (out.deciding.empty()) out.deciding = commits;
  bool all_reproduced = std::all_of(out.deciding.begin(), out.deciding.end(),
                                    [](const RerunCommit& c) { return c.verdict == Verdict::kReproduced; });
  Verdict verdict = all_reproduced ? Verdict::kReproduced : Verdict::kDisputed;
  out.entry.level = level_of(verdict);
  for (const RerunCommit& c : out.deciding)
    if (c.verdict == verdict && (!out.entry.evidence || c.evidence < *out.entry.evidence))
      out.entry.evidence = c.evidence;
  return out;
}

std::optional<std::string> evidence_problem(const LevelEntryValue& entry, const std::set<Digest>& stored_reruns) {
  if (!verdict_of(entry.level)) {
    if (entry.evidence)
      return "names evidence " + entry.evidence->str() + " for the default level " +
             std::string(level_name(entry.level));
    return std::nullopt;
  }
  if (!entry.evidence) return "names no evidence for the level " + std::string(level_name(entry.level));
  if (!stored_reruns.count(*entry.evidence))
    return "names evidence " + entry.evidence->str() + ", which is not a stored rerun of this run";
  return std::nullopt;
}

}  // namespace kistore
