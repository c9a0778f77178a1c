#include "store/sync/merge.h"

#include <map>
#include <set>

#include "refs/index.h"
#include "refs/index_lines.h"
#include "store/core/index_diff.h"
#include "store/core/index_trees.h"
#include "refs/layout.h"
#include "store/git/git.h"
#include "objects/error.h"
#include "store/git/commit_graph.h"

namespace kistore {
namespace {

using Delta = git::TreeDelta;

// The time of the oldest commit reachable from `head` that introduced each of
// `paths` with the blob the tree at `head` has. One walk for all paths.
std::map<std::string, std::int64_t> introduced_times(const LayoutTrees& trees, const CommitId& head,
                                                     const std::map<std::string, git_oid>& paths) {
  std::map<std::string, std::int64_t> out;
  if (paths.empty()) return out;
  git::CommitGraph& commits = trees.commits();
  const std::string why = commits.walk({{head}, {}, git::WalkOrder::kAny, "walking history"}, [&](const CommitId& id) {
    const git::CommitInfo c = commits.read(id);
    std::optional<git_oid> parent;
    if (!c.parents.empty()) parent = commits.read(c.parents.front()).tree;
    for (const auto& [path, blob] : paths) {
      auto now = trees.entry(&c.tree, path);
      if (!now || !git::same_id(*now, blob)) continue;
      auto before = trees.entry(parent ? &*parent : nullptr, path);
      if (before && git::same_id(*before, blob)) continue;
      auto [it, fresh] = out.emplace(path, c.committer_time);
      if (!fresh) it->second = std::min(it->second, c.committer_time);
    }
    return true;
  });
  if (!why.empty()) throw Error(ErrorCode::kIO, "walking history: " + why);
  return out;
}

constexpr Level kAllLevels[] = {Level::kDisputed, Level::kReported, Level::kSourceNative, Level::kReproduced};

// What both formats' merges share: the three trees, the change being made,
// and its message.
class MergeSides {
 public:
  MergeSides(const LayoutTrees& trees, const CommitId& local, const CommitId& incoming, MergeOutcome& outcome)
      : trees_(trees), local_(local), incoming_(incoming), outcome_(outcome) {
    git::CommitGraph& commits = trees.commits();
    if (std::optional<CommitId> base = commits.merge_base(local_, incoming_)) base_tree_ = commits.read(*base).tree;
    in_tree_ = commits.read(incoming_).tree;
    local_tree_ = commits.read(local_).tree;
  }

 protected:
  ChangeSet finish_change(const std::string& remote) {
    std::size_t n = outcome_.new_documents;
    change_.op = "merge";
    change_.summary = "merge: " + std::to_string(n) + " document" + (n == 1 ? "" : "s") + " from " + remote;
    change_.body = "Merged " + incoming_.hex() + " from remote " + remote + ".";
    for (const std::string& note : outcome_.notes) change_.body += "\n" + note;
    change_.extra_parents.push_back(incoming_);
    return std::move(change_);
  }
  const git_oid* base() const { return base_tree_ ? &*base_tree_ : nullptr; }

  const LayoutTrees& trees_;
  CommitId local_, incoming_;
  MergeOutcome& outcome_;
  std::optional<git_oid> base_tree_;
  git_oid in_tree_{}, local_tree_{};
  ChangeSet change_;
};

// One merge, step by step: the incoming side's changes since the merge base,
// then the claims both sides made differently, then the levels.
class Merge : public MergeSides {
 public:
  using MergeSides::MergeSides;

  // What the remote added since the merge base, where the local side lacks
  // it. A level entry of a run no valid rerun commit is about, on either
  // side, is the run's default on both: the remote's is taken where the
  // local side has no level for the run at all (it lacks the run).
  void take_incoming(const std::set<Digest>& rerun_runs) {
    for (const Delta& d : trees_.diff(base(), &in_tree_)) {
      if (d.path.starts_with("refs/levels/")) {
        std::optional<LevelEntryPath> p = parse_level_path(Format::k2, d.path);
        if (d.status == Delta::kRemoved || !p || rerun_runs.count(p->run)) continue;  // settle_levels
        if (!trees_.level_of(&local_tree_, p->run)) change_.links.emplace(d.path, git::oid_str(d.new_id));
        continue;
      }
      if (d.status == Delta::kRemoved) continue;  // a union: what one side dropped, the other keeps
      auto mine = trees_.entry(&local_tree_, d.path);
      if (!mine && d.path.starts_with("refs/sources/") && trees_.source_blocked(&local_tree_, d.path)) {
        outcome_.notes.push_back(d.path + ": the store already holds other source ids in its way; kept the local ones");
        continue;
      }
      if (!mine) {
        change_.links.emplace(d.path, git::oid_str(d.new_id));
        if (d.path.starts_with("objects/")) ++outcome_.new_documents;
        continue;
      }
      if (git::same_id(*mine, d.new_id)) continue;
      if (d.path.starts_with("refs/metadata/") || d.path.starts_with("refs/sources/")) {
        claims_local_.emplace(d.path, *mine);
        claims_incoming_.emplace(d.path, d.new_id);
      } else if (!d.path.starts_with("objects/")) {
        outcome_.notes.push_back(d.path + ": the two sides differ; kept the local entry");
      }
      // objects/: both sides hold the same document (its bytes hash to the
      // path on both sides, checked); keep the local frame.
    }
  }

  // Metadata and source ids both sides have, differently: the earliest stays
  // (by the commit that introduced it; a tie keeps the local one).
  void settle_claims() {
    if (claims_local_.empty()) return;
    auto t_local = introduced_times(trees_, local_, claims_local_);
    auto t_in = introduced_times(trees_, incoming_, claims_incoming_);
    for (const auto& [path, blob] : claims_incoming_) {
      auto l = t_local.find(path), i = t_in.find(path);
      bool theirs = l != t_local.end() && i != t_in.end() && i->second < l->second;
      std::string what = path.starts_with("refs/sources/") ? "source id claim" : "metadata";
      if (theirs) change_.links.emplace(path, git::oid_str(blob));
      outcome_.notes.push_back(path + ": the two sides differ; " +
                               (theirs ? "the remote's " + what + " is older and replaces the local one"
                                       : "kept the local " + what + ", which is as old or older"));
    }
  }

  // Levels are what the signed history of both sides gives, for every run a
  // valid rerun commit on either side is about (take_incoming took the
  // others' defaults).
  void settle_levels(LevelAudit& levels, const std::set<Digest>& rerun_runs) {
    for (const Digest& run : rerun_runs) {
      LevelDecision d = levels.decide({local_, incoming_}, run, Level::kReported);
      if (d.deciding.empty()) {
        // Not a run of either side's tree (a rerun commit's run is in its
        // tree): take the remote's entries where the local side has none.
        if (!trees_.level_of(&local_tree_, run))
          for (Level l : kAllLevels)
            if (auto id = trees_.entry(&in_tree_, level_path(Format::k2, l, run)))
              change_.links.emplace(level_path(Format::k2, l, run), git::oid_str(*id));
        continue;
      }
      write_level(run, d);
    }
  }

  // The local tree's entries for `run` replaced by the one `d` gives.
  void write_level(const Digest& run, const LevelDecision& d) {
    const std::string want = level_entry(d.entry.evidence);
    bool have = false;
    for (Level l : kAllLevels) {
      auto id = trees_.entry(&local_tree_, level_path(Format::k2, l, run));
      if (!id) continue;
      if (l != d.entry.level) change_.removals.push_back(level_path(Format::k2, l, run));
      else if (trees_.blob(*id) == want) have = true;
    }
    if (!have) change_.upserts[level_path(Format::k2, d.entry.level, run)] = want;
    auto theirs = trees_.level_of(&in_tree_, run), mine = trees_.level_of(&local_tree_, run);
    if (theirs && mine && theirs->level != mine->level) {
      std::string by;
      for (const RerunCommit& c : d.deciding) by += (by.empty() ? "" : ", ") + c.commit.substr(0, 12);
      outcome_.notes.push_back("run " + run.str() + ": the two sides differ (local " +
                               std::string(level_name(mine->level)) + ", remote " + std::string(level_name(theirs->level)) +
                               "); the signed history gives " + std::string(level_name(d.entry.level)) +
                               " (rerun commit" + (d.deciding.size() > 1 ? "s " : " ") + by + ")");
    }
  }

  ChangeSet finish(const std::string& remote) { return finish_change(remote); }

 private:
  std::map<std::string, git_oid> claims_local_, claims_incoming_;
};

// Format 3 (refs/layout.h): the same merge, fact by fact. Objects and
// dictionaries the remote added are taken as they are (links); of each
// family, the lines the remote added or changed since the merge base are
// put where the local side lacks them; metadata and upstream-id claims both
// sides made differently keep the earlier (by the commit that introduced
// each line; a tie keeps the local one); a run's level is the signed
// history's, written as a line only where it is not the run's default. The
// lines become the trie of their union by the same plan every writer uses,
// so the merged tree is the one a single store with both sides' facts holds.
class Merge3 : public MergeSides {
 public:
  using MergeSides::MergeSides;

  void take_incoming(const std::set<Digest>& rerun_runs) {
    for (const Delta& d : trees_.diff(base(), &in_tree_)) {
      if (d.status == Delta::kRemoved || d.path.starts_with("refs/") || d.path == kFormatPath) continue;
      if (trees_.entry(&local_tree_, d.path)) continue;  // objects: the same document on both sides; keep the local frame
      change_.links.emplace(d.path, git::oid_str(d.new_id));
      if (d.path.starts_with("objects/")) ++outcome_.new_documents;
    }
    // A merge base of an older format (two upgrades made apart): every line
    // of the remote is new against it.
    const git_oid* lines_base = base() && trees_.format_of(base()) == Format::k3 ? base() : nullptr;
    for (Family family : kFamilies) {
      // Both trees' lines were checked: the base's as the store took it, the
      // remote's by the incoming check that comes before any merge. The local
      // line of a key is what the local side changed it to since the base,
      // else the base's: the two diffs joined by key, with no lookup a key.
      const std::vector<FactChange> local_changes = diff_lines(trees_, lines_base, &local_tree_, family);
      auto local = local_changes.begin();
      for (const FactChange& c : diff_lines(trees_, lines_base, &in_tree_, family)) {
        if (!c.after) continue;  // a union: what one side dropped, the other keeps
        if (family == Family::kLevels && rerun_runs.count(*Digest::parse_hex(c.key))) continue;  // settle_levels
        while (local != local_changes.end() && local->key < c.key) ++local;
        const std::optional<std::string>& mine = local != local_changes.end() && local->key == c.key ? local->after : c.before;
        if (!mine) {
          changes_.put_line(family, c.key, *c.after);
        } else if (*mine != *c.after) {
          if (family == Family::kMetadata || family == Family::kSources) claims_.push_back({family, c.key, *mine, *c.after});
          else outcome_.notes.push_back(family_dir(family) + " @" + c.key + ": the two sides differ; kept the local line");
        }
      }
    }
  }

  // Metadata and claims both sides have, differently: the earliest stays.
  void settle_claims() {
    for (const Claim& claim : claims_) {
      const auto t_local = introduced(local_, claim.family, claim.key, claim.local);
      const auto t_in = introduced(incoming_, claim.family, claim.key, claim.incoming);
      const bool theirs = t_local && t_in && *t_in < *t_local;
      const std::string what = claim.family == Family::kSources ? "source id claim" : "metadata";
      if (theirs) changes_.put(parse_line(claim.family, claim.incoming, family_dir(claim.family), 0));
      outcome_.notes.push_back(family_dir(claim.family) + " @" + claim.key + ": the two sides differ; " +
                               (theirs ? "the remote's " + what + " is older and replaces the local one"
                                       : "kept the local " + what + ", which is as old or older"));
    }
  }

  void settle_levels(LevelAudit& levels, const std::set<Digest>& rerun_runs) {
    for (const Digest& run : rerun_runs) {
      std::optional<Level> fallback = levels.default_level_at(local_, run);
      if (!fallback) fallback = levels.default_level_at(incoming_, run);
      LevelDecision d = levels.decide({local_, incoming_}, run, fallback.value_or(Level::kReported));
      const std::optional<std::string> mine = trees_.index_line(&local_tree_, Family::kLevels, run.hex());
      const std::optional<std::string> theirs = trees_.index_line(&in_tree_, Family::kLevels, run.hex());
      if (d.deciding.empty() && !fallback) {
        // Not a run of either side's tree: the remote's line where the local side has none.
        if (theirs && !mine) changes_.put(parse_line(Family::kLevels, *theirs, "refs/levels", 0));
        continue;
      }
      std::optional<std::string> want;
      if (d.entry.evidence) want = render_line(LevelFact{run, d.entry.level, *d.entry.evidence});
      if (want && want != mine) changes_.put(parse_line(Family::kLevels, *want, "refs/levels", 0));
      if (!want && mine) changes_.remove(Family::kLevels, run.hex());
      if (mine && theirs && *mine != *theirs) {
        std::string by;
        for (const RerunCommit& c : d.deciding) by += (by.empty() ? "" : ", ") + c.commit.substr(0, 12);
        outcome_.notes.push_back("run " + run.str() + ": the two sides differ; the signed history gives " +
                                 std::string(level_name(d.entry.level)) + (by.empty() ? "" : " (rerun commits " + by + ")"));
      }
    }
  }

  ChangeSet finish(const std::string& remote) {
    apply_index_changes(trees_, &local_tree_, changes_, change_);
    return finish_change(remote);
  }

 private:
  struct Claim {
    Family family;
    std::string key, local, incoming;
  };
  // The time of the oldest commit reachable from `head` whose tree has
  // `line` for `key` and whose first parent's does not.
  std::optional<std::int64_t> introduced(const CommitId& head, Family family, const std::string& key,
                                         const std::string& line) const {
    std::optional<std::int64_t> out;
    git::CommitGraph& commits = trees_.commits();
    const std::string why = commits.walk({{head}, {}, git::WalkOrder::kAny, "walking history"}, [&](const CommitId& id) {
      const git::CommitInfo c = commits.read(id);
      // Trees of an older format have no lines: the upgrade introduced them.
      auto line_in = [&](const git_oid& tree) -> std::optional<std::string> {
        if (trees_.format_of(&tree) != Format::k3) return std::nullopt;
        return trees_.index_line(&tree, family, key);
      };
      if (line_in(c.tree) != line) return true;
      std::optional<git_oid> parent;
      if (!c.parents.empty()) parent = commits.read(c.parents.front()).tree;
      if (parent && line_in(*parent) == line) return true;
      out = out ? std::min(*out, c.committer_time) : c.committer_time;
      return true;
    });
    if (!why.empty()) throw Error(ErrorCode::kIO, "walking history: " + why);
    return out;
  }

  IndexChanges changes_;
  std::vector<Claim> claims_;
};

}  // namespace

std::optional<ChangeSet> build_merge(const LayoutTrees& trees, LevelAudit& levels, const CommitId& local,
                                     const CommitId& incoming, const std::string& remote, MergeOutcome& outcome) {
  outcome = MergeOutcome{};
  if (local == incoming || trees.commits().descends_from(local, incoming).value_or(false))
    return std::nullopt;  // someone merged it already
  // Every run a valid rerun commit of either history is about: few (each is
  // a controller's signed commit).
  const std::set<Digest> rerun_runs = levels.runs_rerun_since({local, incoming}, {});
  const git_oid local_tree = trees.commits().read(local).tree;
  if (trees.format_of(&local_tree) == Format::k3) {
    Merge3 merge(trees, local, incoming, outcome);
    merge.take_incoming(rerun_runs);
    merge.settle_claims();
    merge.settle_levels(levels, rerun_runs);
    return merge.finish(remote);
  }
  Merge merge(trees, local, incoming, outcome);
  merge.take_incoming(rerun_runs);
  merge.settle_claims();
  merge.settle_levels(levels, rerun_runs);
  return merge.finish(remote);
}

}  // namespace kistore
