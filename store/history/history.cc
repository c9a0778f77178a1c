#include "store/history/history.h"

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
  Snapshot snap = store.snapshot();
  if (snap.empty()) return {};
  std::unique_ptr<git::CommitGraph> commits = git::repository_commits(store.repo());
  return read_history(*commits, snap.commit(), query);
}

std::vector<LogEntry> read_history(git::CommitGraph& commits, const CommitId& head, const LogQuery& query) {
  std::vector<LogEntry> out;
  const git::PathPatterns paths(query.paths.empty() ? std::vector<std::string>{"refs/", "objects/"} : query.paths);
  const std::unique_ptr<git::TreeReader> trees = commits.trees(git::TreeReader::Options{});
  // A commit below that cannot be read ends the history read so far (libgit2
  // then yields none): what is shown is what could be read.
  commits.walk({{head}, {}, git::WalkOrder::kTimeTopological}, [&](const CommitId& id) {
    git::CommitInfo c = commits.read(id);
    std::string op = commit_op(c.message);
    if (!query.op.empty() && op != query.op) return true;
    std::vector<std::string> parents;
    for (const CommitId& p : c.parents) parents.push_back(p.hex());
    if (query.keep && !query.keep(id.hex(), parents)) return true;
    std::vector<PathChange> changes;
    if (!query.paths.empty() || query.with_changes) {
      std::optional<git_oid> parent_tree;
      if (!c.parents.empty()) parent_tree = commits.read(c.parents[0]).tree;
      changes = changes_between(*trees, parent_tree ? &*parent_tree : nullptr, c.tree, paths);
      if (!query.paths.empty() && changes.empty()) return true;
    }
    LogEntry e;
    e.id = id.hex();
    e.parents = std::move(parents);
    e.time = c.author_time;
    e.offset_minutes = c.author_offset_minutes;
    e.committer_time = c.committer_time;
    e.author = c.author_name + " <" + c.author_email + ">";
    e.op = op;
    e.summary = std::move(c.summary);
    e.message = std::move(c.message);
    e.changes = std::move(changes);
    git::CommitSignature sig = commits.signature(id);
    e.signature = std::move(sig.signature);
    e.signed_payload = std::move(sig.payload);
    out.push_back(std::move(e));
    return !(query.limit && out.size() >= query.limit);
  });
  return out;
}

}  // namespace kistore
