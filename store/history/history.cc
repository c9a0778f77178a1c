#include "store/history/history.h"

#include <algorithm>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <variant>

#include "objects/error.h"
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

// Whether `pattern` (git::PathPatterns) reaches below refs/<family>/.
bool reaches(const std::string& pattern, Family family) {
  const std::string dir = "refs/" + std::string(family_name(family)) + "/";
  return pattern.starts_with(dir) || dir.starts_with(pattern) || pattern.starts_with("refs/*/") || pattern == "refs";
}

}  // namespace

struct CommitChanges::State {
  State(git::CommitGraph& c, const std::vector<std::string>& patterns)
      : commits(c),
        paths(patterns.empty() ? std::vector<std::string>{"refs/", "objects/"} : patterns),
        trees(c.trees(git::TreeReader::Options{})) {
    for (Family f : kFamilies)
      if (patterns.empty() || std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return reaches(p, f); }))
        families.push_back(f);
  }

  // What a commit of format 3 changed against its first parent (`from`):
  // FORMAT, dictionaries and objects as paths; the index as the lines it
  // changed in the families the paths reach, each named by format 2's path
  // of its fact (a line changed in place, at another level say, is a removal
  // and an addition). Against a parent of an older format (the upgrade), the
  // parent's entries all go and every line comes.
  std::vector<PathChange> format3_changes(const git_oid* from, bool from_format3, const git_oid& to) {
    std::vector<PathChange> out;
    trees->diff(from, &to, git::PathPatterns({std::string(kFormatPath), "dictionaries/", "objects/"}),
                [&](const git::TreeDelta& d) { out.push_back({static_cast<char>(d.status), d.path}); });
    // The upgrade from an older format: an entry whose fact a line carries
    // at the same path is unchanged (format3_index carries every fact over).
    std::set<std::string> gone;
    if (from && !from_format3)
      trees->diff(from, nullptr, git::PathPatterns({"refs/"}), [&](const git::TreeDelta& d) { gone.insert(d.path); });
    if (!layout) layout = std::make_unique<LayoutTrees>(commits);
    const git_oid* base = from_format3 ? from : nullptr;
    for (Family family : families) {
      auto path_of = [&](const std::string& line) { return entry_path_of(parse_line(family, line, family_dir(family), 1)); };
      for (const FactChange& c : diff_facts(*layout, base, &to, family)) {
        const std::string before = c.before ? path_of(*c.before) : "", after = c.after ? path_of(*c.after) : "";
        if (c.before && c.after && before == after) {
          out.push_back({'M', before});
          continue;
        }
        if (c.before) out.push_back({'D', before});
        if (c.after && !gone.erase(after)) out.push_back({'A', after});
      }
    }
    // A default level has no line (SPEC §2): its old entry is no change either.
    for (const std::string& path : gone) {
      std::optional<LevelEntryPath> level = parse_level_path(Format::k2, path);
      if (!level) level = parse_level_path(Format::k1, path);
      if (!level || level->level == Level::kReproduced || level->level == Level::kDisputed) out.push_back({'D', path});
    }
    return out;
  }

  git::CommitGraph& commits;
  const git::PathPatterns paths;
  std::vector<Family> families;  // the index families the paths reach
  std::unique_ptr<git::TreeReader> trees;
  std::unique_ptr<LayoutTrees> layout;  // format 3's index files, when a commit has them
  std::unordered_map<git_oid, bool, git::OidHash, git::OidEq> format3;  // format3_tree, by FORMAT blob
};

CommitChanges::CommitChanges(git::CommitGraph& commits, const std::vector<std::string>& paths)
    : s_(std::make_unique<State>(commits, paths)) {}
CommitChanges::~CommitChanges() = default;

std::vector<PathChange> CommitChanges::of(const std::string& id) {
  std::optional<CommitId> commit = CommitId::parse(id);
  if (!commit) throw IOError("reading commit \"" + id + "\": not a commit id");
  return of(s_->commits.read(*commit));
}

std::vector<PathChange> CommitChanges::of(const git::CommitInfo& c) {
  std::optional<git_oid> parent_tree;
  if (!c.parents.empty()) parent_tree = s_->commits.read(c.parents[0]).tree;
  const git_oid* from = parent_tree ? &*parent_tree : nullptr;
  std::vector<PathChange> out;
  if (format3_tree(*s_->trees, s_->commits, c.tree, s_->format3)) {
    const bool from3 = from && format3_tree(*s_->trees, s_->commits, *from, s_->format3);
    for (PathChange& change : s_->format3_changes(from, from3, c.tree))
      if (s_->paths.matches(change.path)) out.push_back(std::move(change));
  } else {
    // Raw trees compared along the paths only (store/git/raw_tree.h): a few
    // lookups per path, not a walk of the whole tree.
    s_->trees->diff(from, &c.tree, s_->paths, [&](const git::TreeDelta& d) { out.push_back({static_cast<char>(d.status), d.path}); });
  }
  return out;
}

std::vector<LogEntry> read_history(const Store& store, const LogQuery& query) {
  Snapshot snap = store.snapshot();
  if (snap.empty()) return {};
  std::unique_ptr<git::CommitGraph> commits = git::repository_commits(store.repo());
  return read_history(*commits, snap.commit(), query);
}

std::vector<LogEntry> read_history(git::CommitGraph& commits, const CommitId& head, const LogQuery& query) {
  std::vector<LogEntry> out;
  std::optional<CommitChanges> changes_of;
  if (!query.paths.empty() || query.with_changes) changes_of.emplace(commits, query.paths);
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
    if (changes_of) {
      changes = changes_of->of(c);
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
