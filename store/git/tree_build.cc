// TreeStream and build_tree (store/git/objwrite.h): new trees from a base tree and
// changed paths in path order.
//
// The paths arrive sorted bytewise, which is git's order folder by folder (a
// folder's name sorts as if it ended in "/", and its paths do carry that
// "/"). So one pass suffices: a stack of the folders on the current path,
// each with its base tree's entries not yet copied and the entries written so
// far. A change first closes the folders it is not under, opens those it is
// under, copies the base entries that sort before its name and then writes
// its own entry. A folder is written when the stream leaves it.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "objects/error.h"
#include "store/git/objwrite.h"
#include "store/git/packread.h"
#include "store/git/raw_tree.h"

namespace kistore::git {

namespace {

// A big change's trees are stored, not deflated: reading them back (verify,
// a merge) then costs no inflate, and their hex names and ids deflate by
// a fifth at best. A small change's few trees (one add rewrites a dozen
// folders of up to 256 entries each) are deflated: a fifth of an add's bytes.
constexpr int kBigChangeTreeLevel = 0;
constexpr int kSmallChangeTreeLevel = 6;

void append_entry(std::string& text, const char* mode, std::string_view name, const unsigned char* id) {
  text += mode;
  text += ' ';
  text += name;
  text += '\0';
  text.append(reinterpret_cast<const char*>(id), 20);
}

}  // namespace

struct TreeStream::Impl {
  struct Folder {
    std::string dir;  // "" for the root, else "a/b/" (with its "/")
    std::shared_ptr<const RawTree> base;
    std::string_view rest;  // base entries not yet copied (inside base)
    std::string text;       // the new tree's entries so far
    // Base entries of a name already replaced by a change of another kind
    // (a blob where the base has a folder), which come later in git's order
    // and must not be copied then.
    std::vector<std::string> skip;
    // The last name written by a change, and whether it was a blob or a
    // folder given whole: no later change may go beneath it.
    // A removal followed by paths beneath its name makes a new folder there,
    // without the old one's entries.
    std::string last_name;
    bool last_whole = false;
    bool last_removed = false;
  };

  Impl(git_repository* repo, const git_oid* base, ObjectWriter& out, int tree_level)
      : odb(open_odb(repo)), out(out), tree_level(tree_level), packs(git_repository_path(repo)),
        trees(odb.get(), {&packs}) {
    Folder root;
    if (base) open_base(root, *base, "");
    stack.push_back(std::move(root));
  }

  void open_base(Folder& f, const git_oid& id, const std::string& where) {
    f.base = trees.tree(id, where);
    f.rest = f.base->bytes();
  }

  // Copies the base entries of `f` that sort before (name, tree), and takes
  // out the base entry called `name` whatever its kind; returns it when it
  // is a tree (the base of a folder of that name).
  std::optional<git_oid> copy_before(Folder& f, std::string_view name, bool tree) {
    std::optional<git_oid> base_tree;
    RawEntry e;
    while (!f.rest.empty()) {
      std::string_view scan = f.rest;
      next_entry(scan, e);
      if (e.name == name) {  // replaced by this change, whatever its kind
        if (e.tree()) base_tree = e.oid();
        f.rest = scan;
        continue;
      }
      if (compare_entries(e.name, e.tree(), name, tree) > 0) break;
      f.rest = scan;
      if (!take_skipped(f, e.name)) f.text.append(e.bytes);
    }
    // A blob that replaces a base folder of its name: that folder sorts
    // after it (as "name/"), past entries such as "name-x" still to come.
    if (!tree && f.base && !f.rest.empty())
      if (auto later = f.base->find(name); later && later->tree()) f.skip.emplace_back(name);
    return base_tree;
  }

  // Whether `name` is one of f's base entries already replaced by a change of
  // another kind (Folder::skip); it is then struck off, as it comes once.
  static bool take_skipped(Folder& f, std::string_view name) {
    auto it = std::find(f.skip.begin(), f.skip.end(), name);
    if (it == f.skip.end()) return false;
    f.skip.erase(it);
    return true;
  }

  // Writes the top folder and its entry in the folder above.
  void close_top() {
    Folder f = std::move(stack.back());
    stack.pop_back();
    copy_rest(f);
    if (f.text.empty()) return;
    git_oid id = out.write(GIT_OBJECT_TREE, f.text, tree_level);
    std::string_view name = std::string_view(f.dir).substr(stack.back().dir.size());
    name.remove_suffix(1);
    append_entry(stack.back().text, "40000", name, id.id);
  }

  void copy_rest(Folder& f) {
    RawEntry e;
    while (next_entry(f.rest, e)) {
      if (!take_skipped(f, e.name)) f.text.append(e.bytes);
    }
  }

  void open_folder(std::string_view name) {
    Folder& parent = stack.back();
    if (parent.last_whole && parent.last_name == name)
      throw Error(ErrorCode::kIO, "tree: " + parent.dir + std::string(name) +
                                      " is changed whole and again beneath it");
    std::optional<git_oid> base_tree = copy_before(parent, name, true);
    if (parent.last_removed && parent.last_name == name) base_tree.reset();
    parent.last_name = std::string(name);
    parent.last_whole = false;
    parent.last_removed = false;
    Folder f;
    f.dir = parent.dir + std::string(name) + "/";
    if (base_tree) open_base(f, *base_tree, f.dir.substr(0, f.dir.size() - 1));
    stack.push_back(std::move(f));
  }

  void change(std::string_view path, const PathChange& c) {
    const bool tree = c.blob && c.tree;
    // A folder given whole is named with its "/", so that it comes where git
    // sorts it (after "name-x"); every other change without one.
    if (tree != (!path.empty() && path.back() == '/'))
      throw Error(ErrorCode::kIO, "tree: \"" + std::string(path) + "\" must " + (tree ? "" : "not ") +
                                      "end in \"/\" for this change");
    const std::string_view full = path;
    if (tree) path.remove_suffix(1);
    if (path.empty() || path.front() == '/' || path.back() == '/' || path.find("//") != std::string_view::npos)
      throw Error(ErrorCode::kIO, "tree: not a path: \"" + std::string(full) + "\"");
    if (!last_path.empty() && !(std::string_view(last_path) < full))
      throw Error(ErrorCode::kIO, "tree: path \"" + std::string(full) + "\" comes after \"" + last_path +
                                      "\"; changes must come in increasing order");
    last_path.assign(full);
    while (stack.size() > 1 && !path.starts_with(stack.back().dir)) close_top();
    std::string_view rel = path.substr(stack.back().dir.size());
    for (std::size_t slash; (slash = rel.find('/')) != std::string_view::npos; rel.remove_prefix(slash + 1))
      open_folder(rel.substr(0, slash));
    Folder& f = stack.back();
    copy_before(f, rel, tree);
    if (c.blob) append_entry(f.text, tree ? "40000" : "100644", rel, c.blob->id);
    f.last_name = std::string(rel);
    f.last_whole = c.blob.has_value();
    f.last_removed = !c.blob;
  }

  git_oid finish() {
    while (stack.size() > 1) close_top();
    Folder& root = stack.back();
    copy_rest(root);
    return out.write(GIT_OBJECT_TREE, root.text, tree_level);
  }

  Odb odb;
  ObjectWriter& out;
  int tree_level;
  PackReader packs;
  TreeReader trees;
  std::vector<Folder> stack;
  std::string last_path;
};

TreeStream::TreeStream(git_repository* repo, const git_oid* base, ObjectWriter& out, bool small)
    : impl_(std::make_unique<Impl>(repo, base, out, small ? kSmallChangeTreeLevel : kBigChangeTreeLevel)) {}

TreeStream::~TreeStream() = default;

void TreeStream::change(std::string_view path, const PathChange& change) { impl_->change(path, change); }

git_oid TreeStream::finish() { return impl_->finish(); }

git_oid build_tree(git_repository* repo, const git_oid* base, const std::map<std::string, PathChange>& changes,
                   ObjectWriter& out) {
  TreeStream stream(repo, base, out, changes.size() <= kSmallTreeChange);
  for (const auto& [path, change] : changes) stream.change(path, change);
  return stream.finish();
}

}  // namespace kistore::git
