#include "store/history.h"

#include "store/git.h"

namespace kistore {
namespace {

std::vector<PathChange> changes_between(git_repository* repo, git_tree* from, git_tree* to,
                                        const std::vector<std::string>& paths) {
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  std::vector<char*> specs;
  for (const std::string& p : paths) specs.push_back(const_cast<char*>(p.c_str()));
  opts.pathspec = {specs.data(), specs.size()};
  git_diff* raw = nullptr;
  git::check(git_diff_tree_to_tree(&raw, repo, from, to, &opts), "comparing trees");
  git::Diff diff(raw);
  std::vector<PathChange> out;
  for (std::size_t i = 0, n = git_diff_num_deltas(raw); i < n; ++i) {
    const git_diff_delta* d = git_diff_get_delta(raw, i);
    char status = d->status == GIT_DELTA_ADDED ? 'A' : d->status == GIT_DELTA_DELETED ? 'D' : 'M';
    out.push_back({status, status == 'D' ? d->old_file.path : d->new_file.path});
  }
  return out;
}

}  // namespace

std::vector<LogEntry> read_history(const Store& store, const LogQuery& query) {
  std::vector<LogEntry> out;
  Snapshot snap = store.snapshot();
  if (snap.empty()) return out;
  git_repository* repo = store.repo();
  git_revwalk* raw = nullptr;
  git::check(git_revwalk_new(&raw, repo), "walking history");
  git::Revwalk walk(raw);
  git_revwalk_sorting(raw, GIT_SORT_TIME | GIT_SORT_TOPOLOGICAL);
  git_oid head;
  git_oid_fromstr(&head, snap.commit_id().c_str());
  git::check(git_revwalk_push(raw, &head), "walking history");
  git_oid id;
  while (git_revwalk_next(&id, raw) == 0) {
    git_commit* c = nullptr;
    git::check(git_commit_lookup(&c, repo, &id), "reading commit " + git::oid_str(id));
    git::Commit commit(c);
    std::string message = git_commit_message(c) ? git_commit_message(c) : "";
    std::string op = commit_op(message);
    if (!query.op.empty() && op != query.op) continue;
    std::vector<std::string> parents;
    for (unsigned i = 0; i < git_commit_parentcount(c); ++i)
      parents.push_back(git::oid_str(*git_commit_parent_id(c, i)));
    if (query.keep && !query.keep(git::oid_str(id), parents)) continue;
    std::vector<PathChange> changes;
    if (!query.paths.empty() || query.with_changes) {
      git_tree* tree = nullptr;
      git::check(git_commit_tree(&tree, c), "reading tree");
      git::Tree owned_tree(tree);
      git::Tree parent_tree;
      if (git_commit_parentcount(c) > 0) {
        git_commit* p = nullptr;
        git::check(git_commit_parent(&p, c, 0), "reading parent");
        git::Commit parent(p);
        git_tree* pt = nullptr;
        git::check(git_commit_tree(&pt, p), "reading parent tree");
        parent_tree.reset(pt);
      }
      changes = changes_between(repo, parent_tree.get(), tree, query.paths.empty() ? std::vector<std::string>{"refs/", "objects/"} : query.paths);
      if (!query.paths.empty() && changes.empty()) continue;
    }
    LogEntry e;
    e.id = git::oid_str(id);
    e.parents = std::move(parents);
    const git_signature* author = git_commit_author(c);
    e.time = author->when.time;
    e.offset_minutes = author->when.offset;
    e.author = std::string(author->name) + " <" + author->email + ">";
    e.op = op;
    e.summary = git_commit_summary(c) ? git_commit_summary(c) : "";
    e.message = message;
    e.changes = std::move(changes);
    git::commit_signature(repo, id, e.signature, e.signed_payload);
    out.push_back(std::move(e));
    if (query.limit && out.size() >= query.limit) break;
  }
  return out;
}

}  // namespace kistore
