#include "store/git/incoming_walk.h"

#include <dirent.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "objects/error.h"
#include "store/git/git.h"
#include "store/git/raw_tree.h"

namespace kistore::git {

std::uint64_t max_object_bytes(const PackLimits& limits, git_object_t type) {
  switch (type) {
    case GIT_OBJECT_BLOB: return limits.max_blob_bytes;
    case GIT_OBJECT_TREE: return limits.max_tree_bytes;
    case GIT_OBJECT_COMMIT: return limits.max_commit_bytes;
    default: return 0;
  }
}

namespace {

std::string type_name(git_object_t type) { return git_object_type2string(type); }
std::string short_hex(const git_oid& id) { return oid_str(id).substr(0, 12); }

ObjectRefusal too_large(const git_oid& id, git_object_t type, std::uint64_t size, std::uint64_t max) {
  return {ProblemKind::kObjectCorrupt, "the " + type_name(type) + " " + oid_str(id) + " is " + std::to_string(size) +
                                  " bytes; the limit for a " + type_name(type) + " is " + std::to_string(max)};
}

ObjectRefusal wrong_type(const git_oid& id, git_object_t type, git_object_t found) {
  return {ProblemKind::kObjectCorrupt, "object " + oid_str(id) + " is a " + type_name(found) + ", where its referrer says " +
                             type_name(type)};
}

std::optional<ObjectRefusal> check_id(const git_oid& id, git_object_t type, std::string_view bytes) {
  git_oid actual = object_id(type, bytes);
  if (git_oid_equal(&actual, &id)) return std::nullopt;
  return ObjectRefusal{ProblemKind::kObjectCorrupt, "the " + type_name(type) + " stored as " + oid_str(id) +
                                                  " holds bytes whose id is " + oid_str(actual) +
                                                  ": it is not the object its id names"};
}

// "tree <hex>\n", then "parent <hex>\n" lines, then "author ": what a commit
// starts with. Only lowercase hex, as git writes it.
bool parse_commit(std::string_view text, git_oid& tree, std::vector<git_oid>& parents) {
  auto id_line = [&](std::string_view key, git_oid& id) {
    if (!text.starts_with(key) || text.size() < key.size() + 41 || text[key.size() + 40] != '\n') return false;
    std::string_view hex = text.substr(key.size(), 40);
    if (hex.find_first_not_of("0123456789abcdef") != std::string_view::npos) return false;
    git_oid_fromstrn(&id, hex.data(), 40);
    text.remove_prefix(key.size() + 41);
    return true;
  };
  if (!id_line("tree ", tree)) return false;
  git_oid parent;
  while (id_line("parent ", parent)) parents.push_back(parent);
  return text.starts_with("author ");
}

// One entry of a tree's bytes, "<mode> <name>\0<20-byte id>", parsed here
// rather than by libgit2 so that the mode is seen as written.
struct Entry {
  std::string_view mode, name, bytes;  // bytes: the whole entry
  const unsigned char* id = nullptr;
  bool tree = false;  // mode 40000
};

// Reads the entry at the start of `rest` and advances; false at the end.
// Throws Error(kCorruption) when the bytes are no entry.
bool next_entry(std::string_view& rest, Entry& e) {
  if (rest.empty()) return false;
  std::size_t space = rest.find(' ');
  std::size_t nul = space == std::string_view::npos ? space : rest.find('\0', space);
  if (space == 0 || space > 6 || nul == std::string_view::npos || nul + 21 > rest.size())
    throw Corruption("a tree object is malformed");
  e.mode = rest.substr(0, space);
  e.name = rest.substr(space + 1, nul - space - 1);
  e.id = reinterpret_cast<const unsigned char*>(rest.data() + nul + 1);
  e.bytes = rest.substr(0, nul + 21);
  e.tree = e.mode == "40000";
  rest.remove_prefix(nul + 21);
  return true;
}

struct NewCommit {
  git_oid id, tree;
  std::optional<git_oid> first_parent;
};

class Walker {
 public:
  Walker(ObjectSource& source, std::size_t max_problems, const std::function<void(std::size_t)>& progress)
      : source_(source), max_problems_(max_problems), progress_(progress) {}

  WalkResult shape(const git_oid& tree, const std::string& label) {
    commit_ = label;
    commit_label_ = false;
    walk_tree(nullptr, tree, "", 0);
    return std::move(result_);
  }

  WalkResult run(const git_oid& head) {
    std::vector<NewCommit> found = find_commits(head);
    std::reverse(found.begin(), found.end());  // parents before children, for a linear history
    std::unordered_map<git_oid, git_oid, OidHash, OidEq> tree_of;
    for (const NewCommit& c : found) tree_of.emplace(c.id, c.tree);
    for (const NewCommit& c : found) {
      if (full()) break;
      result_.commits.push_back(c.id);
      commit_ = short_hex(c.id);
      std::optional<git_oid> base;
      if (c.first_parent) {
        if (auto it = tree_of.find(*c.first_parent); it != tree_of.end()) base = it->second;
        else base = store_tree(*c.first_parent);
      }
      walk_tree(base ? &*base : nullptr, c.tree, "", 0);
    }
    return std::move(result_);
  }

 private:
  bool full() const { return result_.problems.size() >= max_problems_; }

  void problem(ProblemKind kind, const std::string& path, const std::string& detail,
               WalkFault fault = WalkFault::kUnreadable) {
    if (full()) return;
    result_.problems.push_back({kind, path.empty() ? std::string("(the root folder)") : path,
                                (commit_label_ ? "commit " : "") + commit_ + ": " + detail});
    result_.faults.push_back(fault);
  }

  void counted() {
    if (++result_.objects % 1024 == 0 && progress_) progress_(result_.objects);
  }

  // Every commit from `head` down to those the store has, in the order
  // found (children before parents along each line).
  std::vector<NewCommit> find_commits(const git_oid& head) {
    std::vector<NewCommit> found;
    std::vector<git_oid> todo{head};
    std::unordered_set<git_oid, OidHash, OidEq> seen;
    ObjectBytes text;
    while (!todo.empty() && !full()) {
      git_oid id = todo.back();
      todo.pop_back();
      if (!seen.insert(id).second) continue;
      commit_ = short_hex(id);
      if (source_.in_store(id)) {
        if (auto refused = source_.stored_as(id, GIT_OBJECT_COMMIT))
          problem(ProblemKind::kHistoryMissing, oid_str(id), refused->detail);
        continue;
      }
      if (auto refused = source_.read(id, GIT_OBJECT_COMMIT, &text)) {
        problem(ProblemKind::kHistoryMissing, oid_str(id), refused->detail);
        continue;
      }
      counted();
      NewCommit c{id, {}, std::nullopt};
      std::vector<git_oid> parents;
      if (!parse_commit(*text, c.tree, parents)) {
        problem(ProblemKind::kHistoryMissing, oid_str(id), "the commit does not start with its tree, parents and author",
                WalkFault::kBadCommit);
        continue;
      }
      if (!parents.empty()) c.first_parent = parents.front();
      for (auto it = parents.rbegin(); it != parents.rend(); ++it) todo.push_back(*it);
      found.push_back(c);
    }
    return found;
  }

  // The tree of a commit the store has.
  std::optional<git_oid> store_tree(const git_oid& commit) {
    ObjectBytes text;
    if (source_.read(commit, GIT_OBJECT_COMMIT, &text)) return std::nullopt;
    git_oid tree;
    std::vector<git_oid> parents;
    if (!parse_commit(*text, tree, parents)) return std::nullopt;
    return tree;
  }

  // Checks the tree `to` at `dir` (`depth` folders below the root) and what
  // it holds that `from` (the first parent's tree there, or null) does not,
  // in one merge walk over both trees' bytes.
  void walk_tree(const git_oid* from, const git_oid& to, const std::string& dir, unsigned depth) {
    if (full() || (from && git_oid_equal(from, &to))) return;
    if (source_.in_store(to)) {  // the store's trees are trusted, once they are trees
      if (auto refused = source_.stored_as(to, GIT_OBJECT_TREE)) problem(refused->kind, dir, refused->detail);
      return;
    }
    auto [walked, fresh] = walked_.emplace(to, depth);
    if (!fresh) {
      if (walked->second >= depth) return;  // checked as deep already, and deeper is stricter
      walked->second = depth;
    } else {
      counted();
    }
    ObjectBytes mine, base;
    if (auto refused = source_.read(to, GIT_OBJECT_TREE, &mine)) return problem(refused->kind, dir, refused->detail);
    if (from && source_.read(*from, GIT_OBJECT_TREE, &base)) base.reset();  // its own walk reports it
    std::string_view rest = *mine, base_rest = base ? std::string_view(*base) : std::string_view();
    Entry e, old, previous;
    bool has_old = next_base(base_rest, old), first = true;
    try {
      while (next_entry(rest, e)) {
        if (full()) return;
        if (!first && compare_entries(previous.name, previous.tree, e.name, e.tree) >= 0)
          return problem(ProblemKind::kObjectCorrupt, dir, "the tree " + oid_str(to) + " lists \"" + std::string(e.name) +
                                                  "\" out of order or twice (git sorts a tree's entries by name)",
                         WalkFault::kTreeOrder);
        previous = e, first = false;
        while (has_old && compare_entries(old.name, old.tree, e.name, e.tree) < 0) has_old = next_base(base_rest, old);
        bool same_name = has_old && old.name == e.name && old.tree == e.tree;
        if (same_name && old.bytes == e.bytes) continue;  // same name, mode and id
        check_entry(e, same_name ? &old : nullptr, dir, depth);
      }
      if (first)
        problem(ProblemKind::kLayout, dir,
                "an empty folder (the tree " + oid_str(to) + " has no entry); a store holds none, and git keeps none in a "
                "work tree",
                WalkFault::kEmptyTree);
    } catch (const Error&) {
      problem(ProblemKind::kObjectCorrupt, dir, "the tree " + oid_str(to) + " is malformed", WalkFault::kTreeFormat);
    }
  }

  // The next entry of a base tree; a malformed base ends it (what it held
  // is then checked as new).
  static bool next_base(std::string_view& rest, Entry& e) {
    try {
      return next_entry(rest, e);
    } catch (const Error&) {
      rest = {};
      return false;
    }
  }

  void check_entry(const Entry& e, const Entry* old, const std::string& dir, unsigned depth) {
    std::string path = dir.empty() ? std::string(e.name) : dir + "/" + std::string(e.name);
    if (e.name.empty() || e.name == "." || e.name == ".." || e.name.find('/') != std::string_view::npos)
      return problem(ProblemKind::kLayout, path, "the tree at " + (dir.empty() ? std::string("the root") : dir) +
                                       " has an entry named \"" + std::string(e.name) + "\", which is no file name",
                     WalkFault::kBadName);
    std::string_view mode = e.mode;
    if (mode != "100644" && mode != "40000")
      return problem(ProblemKind::kLayout, path,
                     "mode " + std::string(mode) + " at " + path + (mode == "100755"   ? " (an executable)"
                                                                    : mode == "120000" ? " (a symbolic link)"
                                                                    : mode == "160000" ? " (a submodule)"
                                                                                       : "") +
                         "; only 100644 (files) and 040000 (folders) belong in a store",
                     mode == "160000" ? WalkFault::kSubmodule : WalkFault::kBadMode);
    git_oid id;
    std::memcpy(id.id, e.id, GIT_OID_RAWSZ);
    if (e.tree) {
      if (depth + 1 > kMaxTreeDepth) {
        result_.too_deep = true;
        return problem(ProblemKind::kLayout, path, path.substr(0, 120) + (path.size() > 120 ? "…" : "") + " is " +
                                                  std::to_string(depth + 1) + " folders deep; the limit is " +
                                                  std::to_string(kMaxTreeDepth),
                       WalkFault::kTooDeep);
      }
      git_oid old_id;
      if (old) std::memcpy(old_id.id, old->id, GIT_OID_RAWSZ);
      return walk_tree(old ? &old_id : nullptr, id, path, depth + 1);
    }
    if (!commit_label_) return;  // the shape of a tree (check_tree_shape): its blobs are the caller's to read
    if (!blobs_.insert(id).second) return;
    counted();
    if (auto refused = source_.read(id, GIT_OBJECT_BLOB, nullptr)) problem(refused->kind, path, refused->detail);
  }

  ObjectSource& source_;
  std::size_t max_problems_;
  const std::function<void(std::size_t)>& progress_;
  WalkResult result_;
  std::string commit_;  // the commit being walked, for messages
  bool commit_label_ = true;  // commit_ is a commit's id (else a label of its own)
  std::unordered_map<git_oid, unsigned, OidHash, OidEq> walked_;  // new trees checked, and how deep they were
  std::unordered_set<git_oid, OidHash, OidEq> blobs_;
};

git_odb* odb_of(git_repository* repo, const char* what) {
  git_odb* odb = nullptr;
  check(git_repository_odb(&odb, repo), std::string("opening the object database of ") + what);
  return odb;
}

}  // namespace

WalkResult walk_incoming(ObjectSource& source, const git_oid& head, std::size_t max_problems,
                         const std::function<void(std::size_t)>& progress) {
  return Walker(source, max_problems, progress).run(head);
}

WalkResult check_tree_shape(ObjectSource& source, const git_oid& tree, const std::string& label,
                            std::size_t max_problems) {
  std::function<void(std::size_t)> none;
  return Walker(source, max_problems, none).shape(tree, label);
}

// ---- ObjectReader ----------------------------------------------------------------

ObjectReader::ObjectReader(git_repository* repo, const char* what, const PackLimits& limits)
    : odb_(odb_of(repo, what)), gitdir_(git_repository_path(repo)), packs_(gitdir_), limits_(limits), what_(what) {}

bool ObjectReader::has(const git_oid& id) {
  if (packs_.has(id)) return true;
  if (!loose_) list_loose();
  return loose_->count(id) > 0;
}

// objects/<2 hex>/<38 hex> of the repository and of the object folders its
// objects/info/alternates names (one level, as PackReader).
void ObjectReader::list_loose() {
  loose_.emplace();
  std::vector<std::string> dirs{gitdir_ + "objects"};
  std::ifstream alternates(dirs[0] + "/info/alternates");
  for (std::string line; std::getline(alternates, line);)
    if (!line.empty() && line[0] != '#') dirs.push_back(line[0] == '/' ? line : dirs[0] + "/" + line);
  static const char kHex[] = "0123456789abcdef";
  for (const std::string& dir : dirs)
    for (int b = 0; b < 256; ++b) {
      std::string sub = dir + "/" + kHex[b >> 4] + kHex[b & 15];
      DIR* d = ::opendir(sub.c_str());
      if (!d) continue;
      while (dirent* e = ::readdir(d)) {
        std::string hex = sub.substr(sub.size() - 2) + e->d_name;
        git_oid id;
        if (hex.size() == GIT_OID_HEXSZ && git_oid_fromstrn(&id, hex.data(), hex.size()) == 0) loose_->insert(id);
      }
      ::closedir(d);
    }
}

std::optional<ObjectRefusal> ObjectReader::check_type(const git_oid& id, git_object_t type) {
  std::size_t size = 0;
  git_object_t found = GIT_OBJECT_INVALID;
  if (git_odb_read_header(&size, &found, odb_.get(), &id) < 0) {
    git_error_clear();
    return std::nullopt;
  }
  if (found != type) return wrong_type(id, type, found);
  return std::nullopt;
}

std::optional<ObjectRefusal> ObjectReader::read(const git_oid& id, git_object_t type, std::string& out) {
  std::uint64_t max = max_object_bytes(limits_, type);
  git_object_t found = GIT_OBJECT_INVALID;
  if (!packs_.read(id, found, out, max)) {
    std::size_t size = 0;
    int rc = git_odb_read_header(&size, &found, odb_.get(), &id);
    if (rc < 0) {
      std::string why = last_error();
      git_error_clear();
      if (rc == GIT_ENOTFOUND)
        return ObjectRefusal{ProblemKind::kObjectCorrupt, what_ + " has no " + type_name(type) + " " + oid_str(id)};
      return ObjectRefusal{ProblemKind::kObjectCorrupt, "the " + type_name(type) + " " + oid_str(id) + " of " + what_ +
                                                    " cannot be read: " + why};
    }
    if (found != type) return wrong_type(id, type, found);
    if (size > max) return too_large(id, type, size, max);
    git_odb_object* raw = nullptr;
    if (git_odb_read(&raw, odb_.get(), &id) < 0) {
      std::string why = last_error();
      git_error_clear();
      return ObjectRefusal{ProblemKind::kObjectCorrupt, "the " + type_name(type) + " " + oid_str(id) + " of " + what_ +
                                                    " cannot be read: " + why};
    }
    OdbObject object(raw);
    found = git_odb_object_type(raw);
    out.assign(static_cast<const char*>(git_odb_object_data(raw)), git_odb_object_size(raw));
  }
  if (found != type) return wrong_type(id, type, found);
  if (out.size() > max) return too_large(id, type, out.size(), max);
  return std::nullopt;
}

namespace {
// Reads `id` through `reader` into a new shared string, rehashed unless
// `trusted`.
std::optional<ObjectRefusal> read_shared(ObjectReader& reader, const git_oid& id, git_object_t type, ObjectBytes* out,
                                         bool trusted) {
  auto bytes = std::make_shared<std::string>();
  if (auto refused = reader.read(id, type, *bytes)) return refused;
  if (!trusted)
    if (auto refused = check_id(id, type, *bytes)) return refused;
  *out = std::move(bytes);
  return std::nullopt;
}
}  // namespace

// ---- StoreTreeSource -------------------------------------------------------------

StoreTreeSource::StoreTreeSource(git_repository* store, const PackLimits& limits) : store_(store, "the store", limits) {}

std::optional<ObjectRefusal> StoreTreeSource::read(const git_oid& id, git_object_t type, ObjectBytes* out) {
  if (!out) return std::nullopt;  // blobs: verify reads and checks them itself
  return read_shared(store_, id, type, out, false);
}

// ---- QuarantineSource ----------------------------------------------------------

QuarantineSource::QuarantineSource(git_repository* quarantine, git_repository* store, const PackLimits& limits)
    : store_(store, "the store", limits), quarantine_(quarantine, "the quarantine", limits),
      odb_(odb_of(quarantine, "the quarantine")), limits_(limits) {}

std::optional<ObjectRefusal> QuarantineSource::read(const git_oid& id, git_object_t type, ObjectBytes* out) {
  bool trusted = store_.has(id);
  if (out) {
    if (!trusted && git_odb_exists(odb_.get(), &id) != 1)
      return ObjectRefusal{ProblemKind::kObjectCorrupt, "the remote did not send the " + type_name(type) + " " + oid_str(id)};
    return read_shared(trusted ? store_ : quarantine_, id, type, out, trusted);
  }
  // A blob: only its header (the index checks read it).
  std::size_t size = 0;
  git_object_t found = GIT_OBJECT_INVALID;
  int rc = git_odb_read_header(&size, &found, odb_.get(), &id);
  if (rc == GIT_ENOTFOUND) {
    git_error_clear();
    return ObjectRefusal{ProblemKind::kObjectCorrupt, "the remote did not send the " + type_name(type) + " " + oid_str(id)};
  }
  check(rc, "reading object " + oid_str(id) + " in the quarantine");
  if (found != type) return wrong_type(id, type, found);
  std::uint64_t max = max_object_bytes(limits_, type);
  if (size > max) return too_large(id, type, size, max);
  return std::nullopt;
}

// ---- CopyingSource ---------------------------------------------------------------

QuarantineSource::~QuarantineSource() = default;
CopyingSource::~CopyingSource() = default;

CopyingSource::CopyingSource(git_repository* remote, git_repository* store, PackWriter& out, const PackLimits& limits)
    : remote_(remote, "the remote", limits), store_(store, "the store", limits), out_(out), limits_(limits) {}

std::optional<ObjectRefusal> CopyingSource::read(const git_oid& id, git_object_t type, ObjectBytes* out) {
  if (auto it = kept_.find(id); it != kept_.end()) {
    if (out) *out = it->second;
    return std::nullopt;
  }
  if (out_.has(id) && !out) return std::nullopt;  // a blob copied already
  if (store_.has(id)) return out ? read_shared(store_, id, type, out, true) : store_.check_type(id, type);
  ObjectBytes bytes;
  if (auto refused = read_shared(remote_, id, type, &bytes, false)) return refused;
  if (!out_.has(id)) {
    copied_bytes_ += bytes->size();
    if (copied_bytes_ > limits_.max_inflated_bytes)
      return ObjectRefusal{ProblemKind::kObjectCorrupt, "the objects to copy come to more than " +
                                                 std::to_string(limits_.max_inflated_bytes) + " bytes, the limit of a pull"};
    out_.write(id, type, *bytes, type == GIT_OBJECT_COMMIT ? 1 : 0);
  }
  if (type == GIT_OBJECT_TREE) {
    if (kept_bytes_ + bytes->size() > kKeptBytes) kept_.clear(), kept_bytes_ = 0;
    kept_.emplace(id, bytes);
    kept_bytes_ += bytes->size();
  }
  if (out) *out = std::move(bytes);
  return std::nullopt;
}

}  // namespace kistore::git
