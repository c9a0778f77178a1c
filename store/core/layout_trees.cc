#include "store/core/layout_trees.h"

#include <map>

#include "refs/index_plan.h"

#include <cstdint>

#include "objects/error.h"
#include "refs/layout.h"
#include "store/git/objwrite.h"

namespace kistore {
namespace {

constexpr Level kLevels[] = {Level::kDisputed, Level::kReported, Level::kSourceNative, Level::kReproduced};

// Where a source id's own segments start: after "refs/sources/".
constexpr std::size_t kSourcesPrefix = 13;

}  // namespace

LayoutTrees::LayoutTrees(git_repository* repo, bool check_ids)
    : repo_(repo), own_commits_(git::repository_commits(repo)), commits_(own_commits_.get()), odb_(std::in_place, repo),
      packs_(std::make_unique<git::PackReader>(git::gitdir(repo))),
      reader_(std::make_unique<git::TreeReader>(odb_->get(), git::TreeReader::Options{packs_.get(), check_ids, /*keep=*/true})),
      check_ids_(check_ids) {}

LayoutTrees::LayoutTrees(git::CommitGraph& commits, bool check_ids)
    : commits_(&commits), reader_(commits.trees({nullptr, check_ids, /*keep=*/true})), check_ids_(check_ids) {}

std::optional<std::string> LayoutTrees::stored_blob(const git_oid& id) const {
  if (!packs_) return std::nullopt;
  std::string out;
  git_object_t type = GIT_OBJECT_INVALID;
  if (!packs_->read(id, type, out) || type != GIT_OBJECT_BLOB) return std::nullopt;
  if (check_ids_) {
    git_oid actual = git::object_id(GIT_OBJECT_BLOB, out);
    if (!git::same_id(actual, id))
      throw Error(ErrorCode::kCorruption, "the blob " + git::oid_str(id) + " holds content with another id");
  }
  return out;
}

LayoutTrees::~LayoutTrees() = default;

std::string LayoutTrees::blob(const git_oid& id) const {
  for (const auto& recent : recent_)
    if (recent && git::same_id(recent->first, id)) return recent->second;
  std::string bytes;
  if (std::optional<std::string> stored = stored_blob(id)) {
    bytes = std::move(*stored);
  } else if (repo_) {
    bytes = git::blob_bytes(repo_, id);
  } else {
    std::optional<std::string> read = commits_->blob(id, SIZE_MAX);
    if (!read) throw Error(ErrorCode::kIO, "reading blob " + git::oid_str(id) + ": the object is not a blob");
    bytes = std::move(*read);
  }
  if (bytes.size() <= kRecentBlobBytes) recent_[recent_next_++ % kRecentBlobs].emplace(id, bytes);
  return bytes;
}

std::shared_ptr<const TrieFileLines> LayoutTrees::index_file(const git_oid& id, const std::string& path,
                                                             const std::string& where) const {
  for (const auto& p : parsed_)
    if (p && git::same_id(p->id, id) && p->where == where) return p->lines;
  std::shared_ptr<const TrieFileLines> lines = parse_trie_file(blob(id), path, where);
  parsed_[parsed_next_++ % kParsedFiles] = ParsedFile{id, where, lines};
  return lines;
}

std::optional<git_oid> LayoutTrees::entry(const git_oid* root, const std::string& path) const {
  return reader_->blob_at(root, path);
}

std::optional<std::string> LayoutTrees::read(const git_oid* root, const std::string& path) const {
  auto id = entry(root, path);
  if (!id) return std::nullopt;
  return blob(*id);
}

std::optional<Format> LayoutTrees::format_of(const git_oid* root) const {
  if (!root) return kCurrentFormat;
  if (auto it = formats_.find(*root); it != formats_.end()) return it->second;
  auto bytes = read(root, std::string(kFormatPath));
  std::optional<Format> f = bytes ? parse_format_bytes(*bytes) : Format::k1;
  formats_.emplace(*root, f);
  return f;
}

std::optional<LevelState> LayoutTrees::level_of(const git_oid* root, const Digest& run) const {
  const Format f = format_of(root).value_or(kCurrentFormat);
  for (Level l : kLevels)
    if (auto id = entry(root, level_path(f, l, run))) return LevelState{l, *id};
  return std::nullopt;
}

int LayoutTrees::level_count(const git_oid* root, const Digest& run) const {
  const Format f = format_of(root).value_or(kCurrentFormat);
  int n = 0;
  for (Level l : kLevels) n += entry(root, level_path(f, l, run)).has_value();
  return n;
}

bool LayoutTrees::source_blocked(const git_oid* root, const std::string& path) const {
  if (reader_->tree_at(root, path)) return true;
  for (std::size_t slash = path.find('/', kSourcesPrefix); slash != std::string::npos; slash = path.find('/', slash + 1))
    if (entry(root, path.substr(0, slash))) return true;
  return false;
}

std::vector<git::TreeDelta> LayoutTrees::diff(const git_oid* from, const git_oid* to, const std::string& dir,
                                              git::DiffSides sides) const {
  std::vector<git::TreeDelta> out;
  reader_->diff(from, to, dir, [&](const git::TreeDelta& d) { out.push_back(d); }, sides);
  return out;
}

namespace {

// refs/<family>/ below one root, read through a TreeReader.
class TreeTrie : public TrieReader {
 public:
  TreeTrie(const LayoutTrees& trees, const git::TreeReader& reader, const git_oid* root, Family family)
      : trees_(trees), reader_(reader), root_(root), dir_("refs/" + std::string(family_name(family))) {}
  std::vector<Entry> list(const std::string& path) override {
    std::vector<Entry> out;
    std::optional<git_oid> id = folder(path);
    if (!id) return out;
    std::string_view rest = reader_.tree(*id, full(path))->bytes();
    for (git::RawEntry e; git::next_entry(rest, e);) {
      out.push_back(Entry{std::string(e.name), e.tree()});
      // A lookup goes down from here: each step is one entry of the folder
      // listed before it, not a walk from the root.
      (e.tree() ? folders_ : files_)[join(path, e.name)] = e.oid();
    }
    return out;
  }
  std::string read(const std::string& path) override {
    std::optional<std::string> bytes = trees_.read(root_, full(path));
    if (!bytes) throw Corruption(full(path) + ": expected an index file, found none");
    return *std::move(bytes);
  }
  std::string where(const std::string& path) const override { return full(path); }
  std::shared_ptr<const TrieFileLines> lines(const std::string& path) override {
    std::optional<git_oid> id;
    if (auto it = files_.find(path); it != files_.end()) id = it->second;
    else if (root_) id = trees_.entry(root_, full(path));
    if (!id) throw Corruption(full(path) + ": expected an index file, found none");
    return trees_.index_file(*id, path, full(path));
  }

 private:
  static std::string join(const std::string& dir, std::string_view name) {
    return dir.empty() ? std::string(name) : dir + "/" + std::string(name);
  }
  std::optional<git_oid> folder(const std::string& path) {
    if (!root_) return std::nullopt;
    if (auto it = folders_.find(path); it != folders_.end()) return it->second;
    return reader_.tree_at(root_, full(path));
  }
  std::string full(const std::string& path) const { return path.empty() ? dir_ : dir_ + "/" + path; }
  const LayoutTrees& trees_;
  const git::TreeReader& reader_;
  const git_oid* root_;
  std::string dir_;
  std::map<std::string, git_oid> folders_, files_;  // what the folders listed so far hold, by path
};

}  // namespace

TriePlan LayoutTrees::plan(const git_oid* root, Family family, const TrieChanges& changes) const {
  TreeTrie trie(*this, *reader_, root, family);
  return plan_trie_update(trie, changes);
}

std::optional<std::pair<git_oid, bool>> LayoutTrees::entry_any(const git_oid* root, const std::string& path) const {
  if (!root) return std::nullopt;
  if (auto blob = reader_->blob_at(root, path)) return std::pair{*blob, false};
  if (auto tree = reader_->tree_at(root, path)) return std::pair{*tree, true};
  return std::nullopt;
}

std::optional<std::string> LayoutTrees::index_line(const git_oid* root, Family family, const std::string& key) const {
  if (!root) return std::nullopt;
  TreeTrie trie(*this, *reader_, root, family);
  return find_line(trie, key);
}

}  // namespace kistore
