#include "store/merge.h"

#include <map>
#include <set>

#include "refs/layout.h"
#include "store/git.h"

namespace kistore {
namespace {

using Delta = git::TreeDelta;

// The time of the oldest commit reachable from `head` that introduced each of
// `paths` with the blob the tree at `head` has. One walk for all paths.
std::map<std::string, git_time_t> introduced_times(const LayoutTrees& trees, const git_oid& head,
                                                   const std::map<std::string, git_oid>& paths) {
  std::map<std::string, git_time_t> out;
  if (paths.empty()) return out;
  git_repository* repo = trees.repo();
  git_revwalk* raw = nullptr;
  git::check(git_revwalk_new(&raw, repo), "walking history");
  git::Revwalk walk(raw);
  git_revwalk_sorting(raw, GIT_SORT_TIME);
  git::check(git_revwalk_push(raw, &head), "walking history");
  git_oid id;
  while (git_revwalk_next(&id, raw) == 0) {
    git_commit* c = nullptr;
    git::check(git_commit_lookup(&c, repo, &id), "reading commit");
    git::Commit owned(c);
    git_oid tree = *git_commit_tree_id(c);
    std::optional<git_oid> parent;
    if (git_commit_parentcount(c) > 0) parent = git::commit_tree(repo, *git_commit_parent_id(c, 0));
    for (const auto& [path, blob] : paths) {
      auto now = trees.entry(&tree, path);
      if (!now || !git_oid_equal(&*now, &blob)) continue;
      auto before = trees.entry(parent ? &*parent : nullptr, path);
      if (before && git_oid_equal(&*before, &blob)) continue;
      git_time_t t = git_commit_time(c);
      auto [it, fresh] = out.emplace(path, t);
      if (!fresh) it->second = std::min(it->second, t);
    }
  }
  return out;
}

// The run a refs/levels/<level>/<run> path names, if it does.
std::optional<Digest> level_run(const std::string& path) {
  return Digest::parse_hex(std::string_view(path).substr(path.rfind('/') + 1));
}

// One merge, step by step: the incoming side's changes since the merge base,
// then the claims both sides made differently, then the levels.
class Merge {
 public:
  Merge(const LayoutTrees& trees, const git_oid& local, const git_oid& incoming, MergeOutcome& outcome)
      : trees_(trees), repo_(trees.repo()), local_(local), incoming_(incoming), outcome_(outcome) {
    git_oid base_id;
    bool has_base = git_merge_base(&base_id, repo_, &local_, &incoming_) == 0;
    git_error_clear();
    if (has_base) base_tree_ = git::commit_tree(repo_, base_id);
    in_tree_ = git::commit_tree(repo_, incoming_);
    local_tree_ = git::commit_tree(repo_, local_);
  }

  // What the remote added since the merge base, where the local side lacks it.
  void take_incoming() {
    for (const Delta& d : trees_.diff(base(), &in_tree_)) {
      if (d.path.starts_with("refs/levels/")) {  // settled run by run below
        if (auto run = level_run(d.path)) level_runs_.insert(*run);
        continue;
      }
      if (d.status == Delta::kRemoved) continue;  // a union: what one side dropped, the other keeps
      auto mine = trees_.entry(&local_tree_, d.path);
      if (!mine && d.path.starts_with("refs/sources/") && trees_.source_blocked(&local_tree_, d.path)) {
        outcome_.notes.push_back(d.path + ": the store already holds other source ids in its way; kept the local ones");
        continue;
      }
      if (!mine) {
        change_.upserts.emplace(d.path, git::blob_bytes(repo_, d.new_id));
        if (d.path.starts_with("objects/")) ++outcome_.new_documents;
        continue;
      }
      if (git_oid_equal(&*mine, &d.new_id)) continue;
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
      if (theirs) change_.upserts.emplace(path, git::blob_bytes(repo_, blob));
      outcome_.notes.push_back(path + ": the two sides differ; " +
                               (theirs ? "the remote's " + what + " is older and replaces the local one"
                                       : "kept the local " + what + ", which is as old or older"));
    }
  }

  // Levels follow the side that changed since the merge base.
  void settle_levels() {
    for (const Digest& run : level_runs_) {
      auto in_level = trees_.level_of(&in_tree_, run);
      auto my_level = trees_.level_of(&local_tree_, run);
      auto base_level = trees_.level_of(base(), run);
      if (in_level == my_level || !in_level) continue;
      if (my_level && my_level != base_level) {
        if (in_level != base_level)
          outcome_.notes.push_back("run " + run.str() + ": both sides changed its level; kept the local " +
                                   std::string(level_name(my_level->level)) + " (the remote has " +
                                   std::string(level_name(in_level->level)) + ")");
        continue;
      }
      if (my_level) change_.removals.push_back(level_path(my_level->level, run));
      change_.upserts.emplace(level_path(in_level->level, run), git::blob_bytes(repo_, in_level->id));
    }
  }

  ChangeSet finish(const std::string& remote) {
    std::size_t n = outcome_.new_documents;
    change_.op = "merge";
    change_.summary = "merge: " + std::to_string(n) + " document" + (n == 1 ? "" : "s") + " from " + remote;
    change_.body = "Merged " + git::oid_str(incoming_) + " from remote " + remote + ".";
    for (const std::string& note : outcome_.notes) change_.body += "\n" + note;
    change_.extra_parents.push_back(git::oid_str(incoming_));
    return std::move(change_);
  }

 private:
  const git_oid* base() const { return base_tree_ ? &*base_tree_ : nullptr; }

  const LayoutTrees& trees_;
  git_repository* repo_;
  git_oid local_, incoming_;
  MergeOutcome& outcome_;
  std::optional<git_oid> base_tree_;
  git_oid in_tree_{}, local_tree_{};
  ChangeSet change_;
  std::set<Digest> level_runs_;
  std::map<std::string, git_oid> claims_local_, claims_incoming_;
};

}  // namespace

std::optional<ChangeSet> build_merge(const LayoutTrees& trees, const Snapshot& head, const git_oid& incoming,
                                     const std::string& remote, MergeOutcome& outcome) {
  outcome = MergeOutcome{};
  git_oid local = git::parse_oid(head.commit_id());
  if (git::descends_from(trees.repo(), local, incoming)) return std::nullopt;  // someone merged it already
  Merge merge(trees, local, incoming, outcome);
  merge.take_incoming();
  merge.settle_claims();
  merge.settle_levels();
  return merge.finish(remote);
}

}  // namespace kistore
