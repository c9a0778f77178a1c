#include "store/git/raw_tree.h"

#include <algorithm>
#include <cstring>

#include "store/git/packread.h"

namespace kistore::git {

int compare_entries(std::string_view a, bool a_tree, std::string_view b, bool b_tree) {
  std::size_t n = std::min(a.size(), b.size());
  if (int c = n ? std::memcmp(a.data(), b.data(), n) : 0) return c;
  unsigned char ca = a.size() > n ? a[n] : a_tree ? '/' : '\0';
  unsigned char cb = b.size() > n ? b[n] : b_tree ? '/' : '\0';
  return ca < cb ? -1 : ca > cb ? 1 : 0;
}

git_oid RawEntry::oid() const {
  git_oid out;
  std::memcpy(out.id, id, GIT_OID_RAWSZ);
  return out;
}

namespace {

[[noreturn]] void malformed(const char* why) {
  throw Error(ErrorCode::kCorruption, std::string("a tree object is malformed: ") + why);
}

}  // namespace

bool next_entry(std::string_view& rest, RawEntry& e) {
  if (rest.empty()) return false;
  std::size_t at = 0;
  std::uint32_t mode = 0;
  while (at < rest.size() && rest[at] >= '0' && rest[at] <= '7') {
    mode = mode * 8 + static_cast<std::uint32_t>(rest[at] - '0');
    if (mode > 0xffff) malformed("a mode over 0177777");
    ++at;
  }
  if (at == 0) malformed("an entry does not start with an octal mode");
  if (at == rest.size() || rest[at] != ' ') malformed("no space after an entry's mode");
  std::size_t name = at + 1;
  std::size_t nul = rest.find('\0', name);
  if (nul == std::string_view::npos) malformed("an entry's name has no end");
  if (nul == name) malformed("an entry has an empty name");
  if (nul - name > 0xffff) malformed("an entry's name is over 65,535 bytes");
  if (rest.size() - (nul + 1) < GIT_OID_RAWSZ) malformed("an entry's id is cut short");
  e.mode = mode;
  e.name = rest.substr(name, nul - name);
  e.id = reinterpret_cast<const unsigned char*>(rest.data() + nul + 1);
  e.bytes = rest.substr(0, nul + 1 + GIT_OID_RAWSZ);
  rest.remove_prefix(e.bytes.size());
  return true;
}

void check_tree_id(std::string_view data, const git_oid& id, const std::string& where) {
  git_oid actual;
  if (git_odb_hash(&actual, data.data(), data.size(), GIT_OBJECT_TREE) < 0 || !git_oid_equal(&actual, &id))
    throw Error(ErrorCode::kCorruption, where + ": the tree object " + oid_str(id) + " holds content with another id");
}

// ---- RawTree ----------------------------------------------------------------

RawTree::RawTree(std::string stored) : stored_(std::move(stored)), data_(stored_) {}

RawTree::~RawTree() = default;

RawTree::RawTree(OdbObject object) : object_(std::move(object)) {
  data_ = {static_cast<const char*>(git_odb_object_data(object_.get())), git_odb_object_size(object_.get())};
}

void RawTree::build_index() const {
  if (data_.size() > 0xffffffffu) throw Error(ErrorCode::kCorruption, "a tree object is over 4 GiB");
  index_.reserve(data_.size() / 90 + 1);  // a blob entry of the index is about 90 bytes
  std::string_view rest = data_;
  for (RawEntry e; next_entry(rest, e);)
    index_.push_back({static_cast<std::uint32_t>(e.name.data() - data_.data()), static_cast<std::uint16_t>(e.name.size()),
                      static_cast<std::uint16_t>(e.mode)});
  // git's order is by name except around '/': sort only when it differs.
  auto by_name = [this](const Slot& a, const Slot& b) {
    return data_.substr(a.name, a.name_size) < data_.substr(b.name, b.name_size);
  };
  if (!std::is_sorted(index_.begin(), index_.end(), by_name)) std::sort(index_.begin(), index_.end(), by_name);
  indexed_ = true;
}

std::optional<RawEntry> RawTree::find(std::string_view name) const {
  // A small tree (a fanned-out leaf folder holds a few entries) is scanned:
  // cheaper than building its index.
  if (!indexed_ && data_.size() <= kScanBytes) {
    std::optional<RawEntry> found;
    std::string_view rest = data_;
    for (RawEntry e; next_entry(rest, e);)  // to the end: a malformed tree throws, as build_index
      if (!found && e.name == name) found = e, found->bytes = {};
    return found;
  }
  if (!indexed_) build_index();
  auto it = std::lower_bound(index_.begin(), index_.end(), name, [this](const Slot& s, std::string_view n) {
    return data_.substr(s.name, s.name_size) < n;
  });
  if (it == index_.end() || data_.substr(it->name, it->name_size) != name) return std::nullopt;
  RawEntry e;
  e.name = data_.substr(it->name, it->name_size);
  e.mode = it->mode;
  e.id = reinterpret_cast<const unsigned char*>(data_.data() + it->name + it->name_size + 1);
  return e;
}

// ---- TreeReader ---------------------------------------------------------------

namespace {

std::string where_of(std::string_view path) { return path.empty() ? std::string("the root") : std::string(path); }

std::string join(const std::string& prefix, std::string_view name) {
  std::string out = prefix;
  if (!out.empty()) out += '/';
  out += name;
  return out;
}

}  // namespace

TreeReader::TreeReader(git_odb* odb, Options options) : odb_(odb), options_(options) {}
TreeReader::TreeReader(ObjectLoader load, Options options) : load_(std::move(load)), options_(options) {}

std::shared_ptr<const RawTree> TreeReader::tree(const git_oid& id, std::string_view where) const {
  if (options_.keep)
    if (auto it = kept_.find(id); it != kept_.end()) return it->second;
  std::shared_ptr<const RawTree> out;
  std::string stored;
  git_object_t type = GIT_OBJECT_INVALID;
  if (options_.packs && options_.packs->read(id, type, stored) && type == GIT_OBJECT_TREE) {
    out = std::make_shared<const RawTree>(std::move(stored));
  } else if (load_) {
    std::string why;
    if (!load_(id, type, stored, why))
      throw Error(ErrorCode::kCorruption,
                  "reading the tree " + (where.empty() ? std::string("at the root") : std::string(where)) + ": " + why);
    if (type != GIT_OBJECT_TREE) throw Error(ErrorCode::kCorruption, where_of(where) + ": " + oid_str(id) + " is not a tree");
    out = std::make_shared<const RawTree>(std::move(stored));
  } else {
    git_odb_object* o = nullptr;
    if (int rc = git_odb_read(&o, odb_, &id); rc < 0)
      check(rc, "reading the tree " + (where.empty() ? std::string("at the root") : std::string(where)),
            ErrorCode::kCorruption);
    OdbObject owned(o);
    if (git_odb_object_type(o) != GIT_OBJECT_TREE)
      throw Error(ErrorCode::kCorruption, where_of(where) + ": " + oid_str(id) + " is not a tree");
    out = std::make_shared<const RawTree>(std::move(owned));
  }
  if (options_.check_ids) check_tree_id(out->bytes(), id, where_of(where));
  if (options_.keep) kept_.emplace(id, out);
  return out;
}

std::optional<TreeReader::Found> TreeReader::lookup(const git_oid& root, std::string_view path) const {
  git_oid at = root;
  std::size_t start = 0;
  for (;;) {
    std::size_t slash = path.find('/', start);
    std::string_view name = path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    std::shared_ptr<const RawTree> folder = tree(at, path.substr(0, start ? start - 1 : 0));
    std::optional<RawEntry> e = folder->find(name);  // points into `folder`
    if (!e) return std::nullopt;
    if (slash == std::string_view::npos) return Found{e->oid(), e->mode};
    if (!e->tree()) return std::nullopt;
    at = e->oid();
    start = slash + 1;
  }
}

std::optional<git_oid> TreeReader::blob_at(const git_oid* root, std::string_view path) const {
  if (!root) return std::nullopt;
  std::optional<Found> e = lookup(*root, path);
  if (!e || mode_is_tree(e->mode) || mode_is_link(e->mode)) return std::nullopt;
  return e->id;
}

std::optional<git_oid> TreeReader::tree_at(const git_oid* root, std::string_view dir) const {
  if (!root) return std::nullopt;
  if (dir.empty()) return *root;
  std::optional<Found> e = lookup(*root, dir);
  if (!e || !mode_is_tree(e->mode)) return std::nullopt;
  return e->id;
}

namespace {
// Error(kCorruption) when the folder `dir` ('/'-separated, "" the root) is
// more than kMaxTreeDepth folders deep: walks stop there rather than recurse
// as deep as a tree goes (a store's trees never do; pull and verify report
// such a tree as a layout problem first, incoming_walk.h).
void check_depth(std::string_view dir) {
  if (dir.empty() || static_cast<std::size_t>(std::count(dir.begin(), dir.end(), '/')) < kMaxTreeDepth) return;
  throw Error(ErrorCode::kCorruption, std::string(dir.substr(0, 120)) + (dir.size() > 120 ? "…" : "") +
                                          ": more than " + std::to_string(kMaxTreeDepth) + " folders deep");
}
}  // namespace

// The merge walk of two trees in git's order.
struct TreeReader::Diff {
  const TreeReader& reader;
  const std::function<void(const TreeDelta&)>& fn;
  DiffSides sides;
  const std::function<void(const std::string&, const git_oid&)>& on_new_tree;

  bool want_added() const { return sides != DiffSides::kRemovedOrChanged; }
  bool want_removed() const { return sides != DiffSides::kAddedOrChanged; }

  void leaf(TreeDelta::Status status, const std::string& path, const RawEntry* a, const RawEntry* b) {
    TreeDelta d{status, path};
    if (a) d.old_id = a->oid(), d.old_mode = a->mode;
    if (b) d.new_id = b->oid(), d.new_mode = b->mode;
    fn(d);
  }

  // An entry only one side has: a leaf, or a whole subtree.
  void one_side(const RawEntry& e, bool added, const std::string& path) {
    if (added ? !want_added() : !want_removed()) return;
    if (!e.tree()) return leaf(added ? TreeDelta::kAdded : TreeDelta::kRemoved, path, added ? nullptr : &e, added ? &e : nullptr);
    git_oid id = e.oid();
    if (added && on_new_tree) on_new_tree(path, id);
    walk(added ? nullptr : &id, added ? &id : nullptr, path);
  }

  void walk(const git_oid* from, const git_oid* to, const std::string& dir) {
    check_depth(dir);
    std::shared_ptr<const RawTree> a = from ? reader.tree(*from, dir) : nullptr;
    std::shared_ptr<const RawTree> b = to ? reader.tree(*to, dir) : nullptr;
    std::string_view ra = a ? a->bytes() : std::string_view(), rb = b ? b->bytes() : std::string_view();
    RawEntry ea, eb;
    bool has_a = next_entry(ra, ea), has_b = next_entry(rb, eb);
    while (has_a || has_b) {
      int c = !has_a ? 1 : !has_b ? -1 : compare_entries(ea.name, ea.tree(), eb.name, eb.tree());
      if (c < 0) {
        one_side(ea, false, join(dir, ea.name));
        has_a = next_entry(ra, ea);
        continue;
      }
      if (c > 0) {
        one_side(eb, true, join(dir, eb.name));
        has_b = next_entry(rb, eb);
        continue;
      }
      bool same_id = std::memcmp(ea.id, eb.id, GIT_OID_RAWSZ) == 0;
      if (ea.tree()) {
        if (!same_id) {
          std::string path = join(dir, eb.name);
          git_oid old_id = ea.oid(), new_id = eb.oid();
          if (on_new_tree && want_added()) on_new_tree(path, new_id);
          walk(&old_id, &new_id, path);
        }
      } else if (!same_id || ea.mode != eb.mode) {
        leaf(TreeDelta::kModified, join(dir, eb.name), &ea, &eb);
      }
      has_a = next_entry(ra, ea);
      has_b = next_entry(rb, eb);
    }
  }
};

void TreeReader::diff(const git_oid* from, const git_oid* to, std::string_view dir,
                      const std::function<void(const TreeDelta&)>& fn, DiffSides sides,
                      const std::function<void(const std::string&, const git_oid&)>& on_new_tree) const {
  std::optional<git_oid> a = tree_at(from, dir), b = tree_at(to, dir);
  if (a && b && git_oid_equal(&*a, &*b)) return;
  Diff walk{*this, fn, sides, on_new_tree};
  walk.walk(a ? &*a : nullptr, b ? &*b : nullptr, std::string(dir));
}

PathPatterns::PathPatterns(const std::vector<std::string>& patterns) {
  for (std::string_view p : patterns) {
    bool folder = p.empty() || p.back() == '/';
    Node* node = &root_;
    for (std::size_t start = 0; start < p.size();) {
      std::size_t slash = std::min(p.find('/', start), p.size());
      if (slash > start) node = &node->children[std::string(p.substr(start, slash - start))];
      start = slash + 1;
    }
    node->below = true;
    if (!folder && node != &root_) node->entry = true;
  }
}

namespace {

bool matches_below(const PathPatterns::Node& node, std::string_view rest);

bool matches_child(const PathPatterns::Node& node, std::string_view name, std::string_view rest) {
  for (std::string_view key : {name, std::string_view("*")})
    if (auto it = node.children.find(key); it != node.children.end())
      if (it->second.below || matches_below(it->second, rest)) return true;
  return false;
}

bool matches_below(const PathPatterns::Node& node, std::string_view rest) {
  if (rest.empty()) return false;
  const std::size_t slash = rest.find('/');
  const std::string_view name = rest.substr(0, slash);
  return matches_child(node, name, slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1));
}

}  // namespace

bool PathPatterns::matches(std::string_view path) const { return root_.below || matches_below(root_, path); }

// The walk of two trees along patterns: at each folder only the names the
// patterns give (every name for "*"), the whole diff where a pattern ends.
struct TreeReader::PatternDiff {
  const TreeReader& reader;
  std::vector<TreeDelta>& out;
  std::function<void(const TreeDelta&)> keep = [this](const TreeDelta& d) { out.push_back(d); };

  void walk(const git_oid* from, const git_oid* to, const PathPatterns::Node& node, const std::string& dir) {
    if (from && to && git_oid_equal(from, to)) return;
    if (node.below) {
      Diff whole{reader, keep, DiffSides::kBoth, nullptr};
      return whole.walk(from, to, dir);
    }
    check_depth(dir);
    std::shared_ptr<const RawTree> a = from ? reader.tree(*from, dir) : nullptr;
    std::shared_ptr<const RawTree> b = to ? reader.tree(*to, dir) : nullptr;
    for (const auto& [name, child] : node.children) {
      if (name != "*") {
        visit(a.get(), b.get(), name, child, dir);
        continue;
      }
      std::vector<std::string> names;
      for (const RawTree* t : {a.get(), b.get()}) {
        std::string_view rest = t ? t->bytes() : std::string_view();
        for (RawEntry e; next_entry(rest, e);) names.emplace_back(e.name);
      }
      std::sort(names.begin(), names.end());
      names.erase(std::unique(names.begin(), names.end()), names.end());
      for (const std::string& n : names) visit(a.get(), b.get(), n, child, dir);
    }
  }

  void visit(const RawTree* a, const RawTree* b, std::string_view name, const PathPatterns::Node& node,
             const std::string& dir) {
    std::optional<RawEntry> ea = a ? a->find(name) : std::nullopt, eb = b ? b->find(name) : std::nullopt;
    std::string path = join(dir, name);
    if (node.entry) {
      const RawEntry* la = ea && !ea->tree() ? &*ea : nullptr;
      const RawEntry* lb = eb && !eb->tree() ? &*eb : nullptr;
      if (la || lb) {
        TreeDelta d{!la ? TreeDelta::kAdded : !lb ? TreeDelta::kRemoved : TreeDelta::kModified, path};
        if (la) d.old_id = la->oid(), d.old_mode = la->mode;
        if (lb) d.new_id = lb->oid(), d.new_mode = lb->mode;
        if (!la || !lb || d.ids_differ() || d.old_mode != d.new_mode) out.push_back(std::move(d));
      }
    }
    std::optional<git_oid> ta, tb;
    if (ea && ea->tree()) ta = ea->oid();
    if (eb && eb->tree()) tb = eb->oid();
    if (ta || tb) walk(ta ? &*ta : nullptr, tb ? &*tb : nullptr, node, path);
  }
};

void TreeReader::diff(const git_oid* from, const git_oid* to, const PathPatterns& patterns,
                      const std::function<void(const TreeDelta&)>& fn) const {
  std::vector<TreeDelta> found;
  PatternDiff walk{*this, found};
  walk.walk(from, to, patterns.root_, "");
  // Patterns may overlap ("*" and a name it matches): each path once, and
  // git's order, which for full paths is their bytewise order.
  std::stable_sort(found.begin(), found.end(), [](const TreeDelta& x, const TreeDelta& y) { return x.path < y.path; });
  for (std::size_t i = 0; i < found.size(); ++i)
    if (i == 0 || found[i].path != found[i - 1].path) fn(found[i]);
}

void TreeReader::list(const git_oid& root, const std::string& prefix,
                      const std::function<void(const std::string&, const git_oid&, git_object_t)>& fn,
                      const std::function<bool(const std::string&, const git_oid&)>& on_tree) const {
  check_depth(prefix);
  std::shared_ptr<const RawTree> t = tree(root, prefix);
  std::string_view rest = t->bytes();
  for (RawEntry e; next_entry(rest, e);) {
    std::string path = join(prefix, e.name);
    git_oid id = e.oid();
    if (!e.tree()) fn(path, id, e.type());
    else if (!on_tree || on_tree(path, id)) list(id, path, fn, on_tree);
  }
}

}  // namespace kistore::git
