#include "store/history/history.h"

#include <type_traits>
#include <unordered_map>
#include <variant>

#include "refs/index_lines.h"
#include "refs/layout.h"
#include "store/core/index_diff.h"
#include "store/core/index_trees.h"
#include "store/core/layout_trees.h"
#include "store/git/raw_tree.h"

namespace kistore {
namespace {

// Format 2's path of a fact: the name by which a story reads a format-3
// line (refs/layout.h), so that one story reads across the upgrade.
std::string entry_path_of(const IndexFact& fact) {
  return std::visit(
      [](const auto& f) -> std::string {
        using T = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<T, MetadataFact>) return metadata_path(Format::k2, f.document);
        else if constexpr (std::is_same_v<T, GroupFact>) return group_path(Format::k2, f.key, f.run);
        else if constexpr (std::is_same_v<T, LevelFact>) return level_path(Format::k2, f.level, f.run);
        else if constexpr (std::is_same_v<T, RerunFact>) return rerun_path(f.run, f.rerun);
        else if constexpr (std::is_same_v<T, AttestationFact>) return attestation_path(Format::k2, f.run, f.attestation);
        else return "refs/sources/" + source_key(f.source, f.external_id);  // no path of its own in any format
      },
      fact);
}

// Whether the tree's FORMAT names format 3. A history's FORMAT blobs are
// few (one per format): each is read once, in `known`, whatever the number
// of commits.
bool format3_tree(const git::TreeReader& trees, git::CommitGraph& commits, const git_oid& tree,
                  std::unordered_map<git_oid, bool, git::OidHash, git::OidEq>& known) {
  std::optional<git_oid> id = trees.blob_at(&tree, kFormatPath);
  if (!id) return false;
  if (auto it = known.find(*id); it != known.end()) return it->second;
  std::optional<std::string> bytes = commits.blob(*id, kFormat3Bytes.size());
  return known[*id] = bytes && *bytes == kFormat3Bytes;
}

// What a commit of format 3 changed against its first parent (`from`):
// FORMAT, dictionaries and objects as paths; the index as the lines it
// changed, each named by format 2's path of its fact (a line changed in
// place, at another level say, is a removal and an addition). Against a
// parent of an older format (the upgrade), the parent's entries all go and
// every line comes.
std::vector<PathChange> format3_changes(const git::TreeReader& trees, const LayoutTrees& layout, const git_oid* from,
                                        bool from_format3, const git_oid& to) {
  std::vector<PathChange> out;
  trees.diff(from, &to, git::PathPatterns({std::string(kFormatPath), "dictionaries/", "objects/"}),
             [&](const git::TreeDelta& d) { out.push_back({static_cast<char>(d.status), d.path}); });
  if (from && !from_format3)
    trees.diff(from, nullptr, git::PathPatterns({"refs/"}), [&](const git::TreeDelta& d) { out.push_back({'D', d.path}); });
  const git_oid* base = from_format3 ? from : nullptr;
  for (Family family : kFamilies) {
    auto path_of = [&](const std::string& line) { return entry_path_of(parse_line(family, line, family_dir(family), 1)); };
    for (const FactChange& c : diff_facts(layout, base, &to, family)) {
      const std::string before = c.before ? path_of(*c.before) : "", after = c.after ? path_of(*c.after) : "";
      if (c.before && c.after && before == after) {
        out.push_back({'M', before});
        continue;
      }
      if (c.before) out.push_back({'D', before});
      if (c.after) out.push_back({'A', after});
    }
  }
  return out;
}

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
  std::unique_ptr<LayoutTrees> layout;  // format 3's index files, when a commit has them
  std::unordered_map<git_oid, bool, git::OidHash, git::OidEq> format3;  // format3_tree, by FORMAT blob
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
      if (format3_tree(*trees, commits, c.tree, format3)) {
        if (!layout) layout = std::make_unique<LayoutTrees>(commits);
        const bool from3 = parent_tree && format3_tree(*trees, commits, *parent_tree, format3);
        for (PathChange& change : format3_changes(*trees, *layout, parent_tree ? &*parent_tree : nullptr, from3, c.tree))
          if (paths.matches(change.path)) changes.push_back(std::move(change));
      } else {
        changes = changes_between(*trees, parent_tree ? &*parent_tree : nullptr, c.tree, paths);
      }
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
