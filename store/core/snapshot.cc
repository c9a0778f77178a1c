// Snapshot (store/core/store.h): path lookups over raw trees read through the
// store's objects (store/git/repo_objects.h), and, where those cannot be read,
// the same answers through libgit2's trees (store/git/libgit2_trees.h), which
// then say what is wrong.
#include "store/core/store.h"

#include <algorithm>
#include <cstring>

#include "objects/blob.h"
#include "objects/error.h"
#include "refs/layout.h"
#include "store/core/dictionaries.h"
#include "store/core/index_trees.h"
#include "store/git/git.h"
#include "store/git/libgit2_trees.h"
#include "store/git/parallel_blob_walk.h"
#include "store/git/raw_tree.h"
#include "store/git/repo_objects.h"

namespace kistore {

// ---- Snapshot -------------------------------------------------------------

Snapshot::Snapshot(std::shared_ptr<git::RepoObjects> objects, const git_oid* tree, std::string commit_id)
    : objects_(std::move(objects)),
      tree_(tree ? std::make_shared<const git_oid>(*tree) : nullptr),
      commit_id_(std::move(commit_id)) {}

git_repository* Snapshot::repo() const { return objects_->repo(); }

namespace {

// Splits "a/b/c" into ("a/b", "c").
std::pair<std::string_view, std::string> split_path(std::string_view path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {std::string_view(), std::string(path)};
  return {path.substr(0, slash), std::string(path.substr(slash + 1))};
}

}  // namespace

std::shared_ptr<const git::RawTree> Snapshot::load_tree(const git_oid& id, const std::string& where) const {
  git_object_t type = GIT_OBJECT_INVALID;
  std::string bytes;
  objects_->read(id, type, bytes, "reading the tree " + (where.empty() ? std::string("at the root") : where));
  if (type != GIT_OBJECT_TREE)
    throw Corruption((where.empty() ? std::string("the root") : where) + ": " + git::oid_str(id) + " is not a tree");
  return std::make_shared<const git::RawTree>(std::move(bytes));
}

const git::RawTree* Snapshot::raw_tree_index(std::string_view dir) const {
  if (!tree_) return nullptr;
  std::string key(dir);
  if (auto it = raw_.find(key); it != raw_.end()) return it->second.get();
  git_oid id;
  bool found = false;
  if (dir.empty()) {
    id = *tree_;
    found = true;
  } else {
    std::size_t slash = dir.rfind('/');
    std::string_view parent = slash == std::string_view::npos ? std::string_view() : dir.substr(0, slash);
    std::string_view name = slash == std::string_view::npos ? dir : dir.substr(slash + 1);
    bool is_tree = false;
    found = find_entry(parent, name, id.id, &is_tree) && is_tree;
  }
  std::shared_ptr<const git::RawTree> tree = found ? load_tree(id, key) : nullptr;
  const git::RawTree* out = tree.get();
  raw_[key] = std::move(tree);
  return out;
}

bool Snapshot::find_entry(std::string_view dir, std::string_view name, unsigned char id[20], bool* is_tree) const {
  const git::RawTree* t = raw_tree_index(dir);
  if (!t) return false;
  std::optional<git::RawEntry> e;
  try {
    e = t->find(name);
  } catch (const Error& error) {
    throw Corruption((dir.empty() ? std::string("the root") : std::string(dir)) + ": " + error.what());
  }
  if (!e) return false;
  std::memcpy(id, e->id, 20);
  if (!is_tree) return true;
  *is_tree = e->tree();
  return !e->link();  // a submodule link names a commit elsewhere: no blob, no tree here
}

std::optional<std::string> Snapshot::read(std::string_view path) const {
  auto [dir, name] = split_path(path);
  git_oid id;
  bool is_tree = false;
  if (!find_entry(dir, name, id.id, &is_tree) || is_tree) return std::nullopt;
  git_object_t type = GIT_OBJECT_INVALID;
  std::string bytes;
  objects_->read(id, type, bytes, "reading " + std::string(path));
  if (type != GIT_OBJECT_BLOB) return std::nullopt;  // a submodule link, say
  return bytes;
}

CommitId Snapshot::commit() const {
  std::optional<CommitId> id = CommitId::parse(commit_id_);
  if (!id) throw Error(ErrorCode::kIO, commit_id_.empty() ? "the store has no commit yet" : "not a git object id: \"" + commit_id_ + "\"");
  return *id;
}

Format Snapshot::format() const {
  if (format_) return *format_;
  if (empty()) return *(format_ = kCurrentFormat);
  auto bytes = read(kFormatPath);
  if (!bytes) return *(format_ = Format::k1);
  if (auto f = parse_format_bytes(*bytes)) return *(format_ = *f);
  throw IOError("the store's " + unknown_format_problem(*bytes));
}

bool Snapshot::exists(std::string_view path) const {
  auto [dir, name] = split_path(path);
  unsigned char id[20];
  return find_entry(dir, name, id, nullptr);
}

std::vector<std::string> Snapshot::list(std::string_view dir) const {
  std::vector<std::string> out;
  try {
    const git::RawTree* t = raw_tree_index(dir);
    if (!t) return out;
    std::string_view rest = t->bytes();
    for (git::RawEntry e; git::next_entry(rest, e);) out.emplace_back(e.name);
    return out;
  } catch (const Error&) {
    return list_libgit2(dir);  // libgit2 says what is wrong, as it always did
  }
}

std::vector<Snapshot::Entry> Snapshot::entries(std::string_view dir) const {
  std::vector<Entry> out;
  const git::RawTree* t = raw_tree_index(dir);
  if (!t) return out;
  std::string_view rest = t->bytes();
  try {
    for (git::RawEntry e; git::next_entry(rest, e);) {
      git_oid id = e.oid();
      out.push_back(Entry{std::string(e.name), e.tree(), git::oid_str(id)});
    }
  } catch (const Error& error) {
    throw Corruption((dir.empty() ? std::string("the root") : std::string(dir)) + ": " + error.what());
  }
  return out;
}

std::vector<std::string> Snapshot::list_libgit2(std::string_view dir) const {
  if (!tree_) return {};
  return git::folder_names(repo(), *tree_, dir);
}

void Snapshot::walk(std::string_view dir, const std::function<void(const std::string&, std::string_view)>& fn,
                    const std::function<void(const std::string&)>& other) const {
  if (!tree_) return;
  git::walk_tree_blobs(repo(), tree_id(), dir, fn, other);
}

void Snapshot::walk_parallel(
    std::string_view dir, unsigned threads, const std::function<void(std::size_t)>& count,
    const std::function<void(std::size_t, const std::string&, const std::string_view*, const std::string&)>& fn,
    const std::function<void(const std::string&)>& other, const std::function<bool(const std::string&)>& self_checked,
    const std::function<void(std::size_t, std::size_t)>& progress, bool trees_checked) const {
  git::walk_blobs_parallel(repo(), tree_id(), dir, threads, {count, fn, other, self_checked, progress}, trees_checked);
}

bool Snapshot::has_object(const Digest& d) const { return exists(object_path(d)); }

DictionaryLookup Snapshot::dictionaries() const {
  if (!dictionaries_)
    // Reads through a Snapshot of its own on the same objects and tree, not
    // through this one, so that the cache stays valid when this is moved.
    dictionaries_ = std::make_shared<DictionaryCache>(
        [objects = objects_, tree = tree_, commit = commit_id_](const std::string& path) {
          return Snapshot(objects, tree.get(), commit).read(path);
        });
  return dictionaries_->lookup();
}

std::string Snapshot::object_bytes(const Digest& d) const {
  std::string path = object_path(d);
  auto frame = read(path);
  if (!frame) throw NotFound(d.str() + ": no such object in the store");
  std::string bytes = decode_object(*frame, path, dictionaries());
  Digest actual = Digest::of(bytes);
  if (actual != d)
    throw Corruption(path + ": object hash mismatch - expected " + d.str() + " but got " + actual.str());
  return bytes;
}

std::optional<Json> Snapshot::metadata(const Digest& d) const {
  if (format() == Format::k3) {
    std::optional<IndexFact> fact = find_fact(*this, Family::kMetadata, d.hex());
    if (!fact) return std::nullopt;
    return parse_json(std::get<MetadataFact>(*fact).metadata, "the metadata line of " + d.str());
  }
  std::string path = metadata_path(format(), d);
  auto bytes = read(path);
  if (!bytes) return std::nullopt;
  return parse_json(*bytes, path);
}

Document Snapshot::document(const Digest& d, bool with_metadata) const {
  std::string bytes = object_bytes(d);
  try {
    return Document::from_canonical(bytes, with_metadata ? metadata(d) : std::nullopt, Location{object_path(d), ""});
  } catch (const Error& e) {
    throw Corruption(std::string("stored object is not a valid document: ") + e.what());
  }
}

std::vector<Digest> Snapshot::object_digests() const {
  // Three levels: ab / cd / <60 hex>. Names are read from the trees alone,
  // and the trees are not kept (a million objects have 65,536 folders).
  std::vector<Digest> out;
  try {
    const git::RawTree* root = raw_tree_index("objects/sha256");
    if (!root) return out;
    std::string_view ra = root->bytes();
    for (git::RawEntry a; git::next_entry(ra, a);) {
      if (!a.tree()) continue;
      std::string path_a = "objects/sha256/" + std::string(a.name);
      std::shared_ptr<const git::RawTree> ta = load_tree(a.oid(), path_a);
      std::string_view rb = ta->bytes();
      for (git::RawEntry b; git::next_entry(rb, b);) {
        if (!b.tree()) continue;
        std::shared_ptr<const git::RawTree> tb = load_tree(b.oid(), path_a + "/" + std::string(b.name));
        std::string_view rc = tb->bytes();
        for (git::RawEntry c; git::next_entry(rc, c);)
          if (auto d = Digest::parse_hex(std::string(a.name) + std::string(b.name) + std::string(c.name)))
            out.push_back(*d);
      }
    }
    return out;
  } catch (const Error&) {
    return object_digests_libgit2();  // libgit2 says what is wrong, as it always did
  }
}

std::vector<Digest> Snapshot::object_digests_libgit2() const {
  std::vector<Digest> out;
  git::for_each_nested_name(repo(), tree_id(), "objects/sha256", "reading objects", [&](const std::string& hex) {
    if (auto d = Digest::parse_hex(hex)) out.push_back(*d);
  });
  return out;
}

Digest Snapshot::resolve(std::string_view ref) const {
  std::optional<std::string> parsed = parse_hex_ref(ref);
  if (!parsed)
    throw InvalidInput("REF \"" + std::string(ref) +
                       "\": expected a digest (sha256:<64 hex>) or a prefix of at least 8 hex digits (as kistore ls "
                       "prints them)");
  std::string_view hex = *parsed;
  std::string dir = "objects/sha256/" + std::string(hex.substr(0, 2)) + "/" + std::string(hex.substr(2, 2));
  std::vector<Digest> matches;
  for (const std::string& name : list(dir)) {
    std::string full = std::string(hex.substr(0, 4)) + name;
    if (full.compare(0, hex.size(), hex) == 0)
      if (auto d = Digest::parse_hex(full)) matches.push_back(*d);
  }
  if (matches.empty()) throw NotFound("REF \"" + std::string(ref) + "\": no object in the store matches");
  if (matches.size() > 1) {
    std::string names;
    for (const Digest& d : matches) names += "\n  " + d.str();
    throw InvalidInput("REF \"" + std::string(ref) + "\" is ambiguous; it matches:" + names);
  }
  return matches.front();
}

}  // namespace kistore
