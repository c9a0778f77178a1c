#include "store/history/history.h"

#include "store/git/git.h"
#include "store/git/raw_tree.h"

namespace kistore {
namespace {

// What a commit changed below `paths`, against its first parent: raw trees
// compared along the paths only (store/git/raw_tree.h), so a commit costs a few
// lookups per path, not a walk of the whole tree, and a run's story costs
// the length of the history, not the size of the store.
std::vector<PathChange> changes_between(const git::TreeReader& trees, const git_oid* from, const git_oid& to,
                                        const git::PathPatterns& paths) {
  std::vector<PathChange> out;
  trees.diff(from, &to, paths, [&](const git::TreeDelta& d) { out.push_back({static_cast<char>(d.status), d.path}); });
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
  const git::PathPatterns paths(query.paths.empty() ? std::vector<std::string>{"refs/", "objects/"} : query.paths);
  git::Odb odb = git::open_odb(repo);
  const git::TreeReader trees(odb.get(), git::TreeReader::Options{});
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
      std::optional<git_oid> parent_tree;
      if (git_commit_parentcount(c) > 0) {
        git_commit* p = nullptr;
        git::check(git_commit_parent(&p, c, 0), "reading parent");
        git::Commit parent(p);
        parent_tree = *git_commit_tree_id(p);
      }
      changes = changes_between(trees, parent_tree ? &*parent_tree : nullptr, *git_commit_tree_id(c), paths);
      if (!query.paths.empty() && changes.empty()) continue;
    }
    LogEntry e;
    e.id = git::oid_str(id);
    e.parents = std::move(parents);
    const git_signature* author = git_commit_author(c);
    e.time = author->when.time;
    e.offset_minutes = author->when.offset;
    e.committer_time = git_commit_time(c);
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
