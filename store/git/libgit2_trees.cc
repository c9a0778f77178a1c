#include "store/git/libgit2_trees.h"

#include <algorithm>

namespace kistore::git {
namespace {

std::vector<TreeItem> items_of(const git_tree* tree) {
  std::vector<TreeItem> out;
  for (std::size_t i = 0, n = git_tree_entrycount(tree); i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(tree, i);
    out.push_back({git_tree_entry_name(e), git_tree_entry_type(e) == GIT_OBJECT_TREE,
                   static_cast<std::uint32_t>(git_tree_entry_filemode(e))});
  }
  return out;
}

Tree lookup_tree(git_repository* repo, const git_oid& id, const std::string& what) {
  git_tree* t = nullptr;
  check(git_tree_lookup(&t, repo, &id), what);
  return Tree(t);
}

// The tree at `dir` below `root` (root itself for ""), or null.
Tree subtree(git_repository* repo, const git_oid* root_id, std::string_view dir) {
  if (!root_id) return nullptr;
  Tree root = lookup_tree(repo, *root_id, "reading the head tree");
  if (dir.empty()) return root;
  git_tree_entry* raw = nullptr;
  std::string p(dir);
  int rc = git_tree_entry_bypath(&raw, root.get(), p.c_str());
  if (rc == GIT_ENOTFOUND) return nullptr;
  check(rc, "reading " + p);
  TreeEntry entry(raw);
  if (git_tree_entry_type(raw) != GIT_OBJECT_TREE) return nullptr;
  return lookup_tree(repo, *git_tree_entry_id(raw), "reading " + p);
}

void walk_tree(git_repository* repo, git_tree* tree, const std::string& prefix,
               const std::function<void(const std::string&, std::string_view)>& fn,
               const std::function<void(const std::string&)>& other) {
  std::size_t n = git_tree_entrycount(tree);
  for (std::size_t i = 0; i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(tree, i);
    std::string path = prefix.empty() ? git_tree_entry_name(e) : prefix + "/" + git_tree_entry_name(e);
    if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
      Tree sub = lookup_tree(repo, *git_tree_entry_id(e), "reading " + path);
      walk_tree(repo, sub.get(), path, fn, other);
    } else if (git_tree_entry_type(e) == GIT_OBJECT_BLOB) {
      git_blob* blob = nullptr;
      check(git_blob_lookup(&blob, repo, git_tree_entry_id(e)), "reading " + path);
      Blob owned(blob);
      fn(path, std::string_view(static_cast<const char*>(git_blob_rawcontent(blob)), git_blob_rawsize(blob)));
    } else if (other) {
      other(path);
    }
  }
}

}  // namespace

std::vector<TreeItem> tree_items(git_repository* repo, const git_oid& tree, const std::string& what) {
  return items_of(lookup_tree(repo, tree, what).get());
}

std::optional<std::vector<TreeItem>> find_tree_items(git_repository* repo, const git_oid& tree) {
  git_tree* t = nullptr;
  if (git_tree_lookup(&t, repo, &tree) != 0) return git_error_clear(), std::nullopt;
  Tree owned(t);
  return items_of(t);
}

std::optional<std::vector<TreeItem>> folder_items(git_repository* repo, const git_oid& tree, const char* name,
                                                  const std::string& what) {
  Tree root = lookup_tree(repo, tree, what);
  const git_tree_entry* e = git_tree_entry_byname(root.get(), name);
  if (!e || git_tree_entry_type(e) != GIT_OBJECT_TREE) return std::nullopt;
  return items_of(lookup_tree(repo, *git_tree_entry_id(e), std::string("reading the tree ") + name).get());
}

std::optional<git_oid> find_commit_tree(git_repository* repo, const git_oid& commit) {
  git_commit* c = nullptr;
  if (git_commit_lookup(&c, repo, &commit) != 0) return git_error_clear(), std::nullopt;
  Commit owned(c);
  return *git_commit_tree_id(c);
}

std::vector<std::string> folder_names(git_repository* repo, const git_oid& root, std::string_view dir) {
  std::vector<std::string> out;
  Tree at = lookup_tree(repo, root, "reading the head tree");
  for (std::size_t start = 0; start < dir.size();) {
    std::size_t slash = std::min(dir.find('/', start), dir.size());
    std::string name(dir.substr(start, slash - start));
    const git_tree_entry* e = git_tree_entry_byname(at.get(), name.c_str());
    if (!e || git_tree_entry_type(e) != GIT_OBJECT_TREE) return out;
    at = lookup_tree(repo, *git_tree_entry_id(e), "reading " + std::string(dir.substr(0, slash)));
    start = slash + 1;
  }
  std::size_t n = git_tree_entrycount(at.get());
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.emplace_back(git_tree_entry_name(git_tree_entry_byindex(at.get(), i)));
  return out;
}

void walk_tree_blobs(git_repository* repo, const git_oid* root, std::string_view dir,
                     const std::function<void(const std::string&, std::string_view)>& fn,
                     const std::function<void(const std::string&)>& other) {
  Tree t = subtree(repo, root, dir);
  if (t) walk_tree(repo, t.get(), std::string(dir), fn, other);
}

void for_each_nested_name(git_repository* repo, const git_oid* root, std::string_view dir, const std::string& what,
                          const std::function<void(const std::string&)>& fn) {
  Tree top = subtree(repo, root, dir);
  if (!top) return;
  for (std::size_t i = 0, n = git_tree_entrycount(top.get()); i < n; ++i) {
    const git_tree_entry* a = git_tree_entry_byindex(top.get(), i);
    if (git_tree_entry_type(a) != GIT_OBJECT_TREE) continue;
    Tree ta = lookup_tree(repo, *git_tree_entry_id(a), what);
    for (std::size_t j = 0, m = git_tree_entrycount(ta.get()); j < m; ++j) {
      const git_tree_entry* b = git_tree_entry_byindex(ta.get(), j);
      if (git_tree_entry_type(b) != GIT_OBJECT_TREE) continue;
      Tree tb = lookup_tree(repo, *git_tree_entry_id(b), what);
      for (std::size_t k = 0, o = git_tree_entrycount(tb.get()); k < o; ++k) {
        const git_tree_entry* c = git_tree_entry_byindex(tb.get(), k);
        fn(std::string(git_tree_entry_name(a)) + git_tree_entry_name(b) + git_tree_entry_name(c));
      }
    }
  }
}

}  // namespace kistore::git
