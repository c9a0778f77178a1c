#include "store/store_shape.h"

#include <git2.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "objects/error.h"
#include "store/git.h"

namespace kistore {
namespace {

constexpr std::array<std::string_view, 6> kIndexFolders = {"attestations", "groups",  "levels",
                                                           "metadata",     "reruns",  "sources"};

bool is_tree(const git_tree_entry* e) { return git_tree_entry_type(e) == GIT_OBJECT_TREE; }

std::string short_branch(const std::string& branch) {
  constexpr std::string_view heads = "refs/heads/";
  return branch.starts_with(heads) ? branch.substr(heads.size()) : branch;
}

// The first entry of `tree` (at `dir`, "" or ending in "/") that `allowed`
// refuses, as "dir/name", or "".
template <typename Allowed>
std::string first_foreign(const git_tree* tree, const std::string& dir, Allowed allowed) {
  for (std::size_t i = 0, n = git_tree_entrycount(tree); i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(tree, i);
    if (!allowed(std::string_view(git_tree_entry_name(e)), e))
      return dir + git_tree_entry_name(e) + (is_tree(e) ? "/" : "");
  }
  return "";
}

bool kistore_name(std::string_view n) { return n == "FORMAT" || n == "objects" || n == "refs" || n == "dictionaries"; }

git::Tree subtree(git_repository* repo, const git_tree* root, const char* name) {
  const git_tree_entry* e = git_tree_entry_byname(root, name);
  if (!e || !is_tree(e)) return nullptr;
  git_tree* t = nullptr;
  git::check(git_tree_lookup(&t, repo, git_tree_entry_id(e)), std::string("reading the tree ") + name);
  return git::Tree(t);
}

std::string unborn_reason(git_repository* repo, const std::string& branch) {
  if (branch != "refs/heads/main")
    return "its HEAD names the branch " + short_branch(branch) + ", which has no commits (a new store's branch is main)";
  // A branch or tag is the user's work; remote-tracking refs and kistore's
  // own (a pull's bookkeeping) are not.
  std::string found;
  for (const char* glob : {"refs/heads/*", "refs/tags/*"}) {
    git_reference_iterator* it = nullptr;
    git::check(git_reference_iterator_glob_new(&it, repo, glob), "listing references");
    const char* name = nullptr;
    if (git_reference_next_name(&name, it) == 0) found = name;
    git_reference_iterator_free(it);
    git_error_clear();
    if (!found.empty()) break;
  }
  if (!found.empty()) return "its branch main has no commits, but it holds " + found;
  return "";
}

}  // namespace

StoreShape store_shape(git_repository* repo, const std::string& branch) {
  git_reference* ref = nullptr;
  int rc = git_reference_lookup(&ref, repo, branch.c_str());
  if (rc == GIT_ENOTFOUND) {
    git_error_clear();
    std::string why = unborn_reason(repo, branch);
    return {why, why};
  }
  git::check(rc, "reading " + branch);
  git::Reference owned_ref(ref);
  const std::string name = short_branch(branch);
  git_commit* commit = nullptr;
  if (git_commit_lookup(&commit, repo, git_reference_target(ref)) != 0) {
    git_error_clear();
    std::string why = "its branch " + name + " does not name a commit";
    return {why, why};
  }
  git::Commit owned_commit(commit);
  git_tree* raw = nullptr;
  git::check(git_commit_tree(&raw, commit), "reading the tree of " + branch);
  git::Tree root(raw);
  if (git_tree_entrycount(root.get()) == 0) {
    std::string why = "its branch " + name + " holds an empty tree";
    return {why, why};
  }
  std::string foreign = first_foreign(root.get(), "", [&](std::string_view n, const git_tree_entry* e) {
    return kistore_name(n) && (n == "FORMAT" ? !is_tree(e) && git_tree_entry_filemode(e) == GIT_FILEMODE_BLOB : is_tree(e));
  });
  bool has_kistore_name = !first_foreign(root.get(), "", [&](std::string_view n, const git_tree_entry*) {
                             return !kistore_name(n);
                           }).empty();
  if (!has_kistore_name) {
    std::string why = "its branch " + name + " holds " + foreign + " and nothing of kistore's";
    return {why, why};
  }
  if (foreign.empty()) {
    if (git::Tree objects = subtree(repo, root.get(), "objects"))
      foreign = first_foreign(objects.get(), "objects/", [](std::string_view n, const git_tree_entry* e) {
        return n == "sha256" && is_tree(e);
      });
  }
  if (foreign.empty()) {
    if (git::Tree refs = subtree(repo, root.get(), "refs"))
      foreign = first_foreign(refs.get(), "refs/", [](std::string_view n, const git_tree_entry* e) {
        return is_tree(e) && std::find(kIndexFolders.begin(), kIndexFolders.end(), n) != kIndexFolders.end();
      });
  }
  if (foreign.empty()) return {};
  return {"", "its branch " + name + " holds " + foreign + ", which is not kistore's"};
}

std::optional<Problem> not_a_store(git_repository* repo, const git_oid& commit, const std::string& branch) {
  git_commit* c = nullptr;
  if (git_commit_lookup(&c, repo, &commit) != 0) return git_error_clear(), std::nullopt;
  git::Commit owned_commit(c);
  git_tree* raw = nullptr;
  if (git_commit_tree(&raw, c) != 0) return git_error_clear(), std::nullopt;
  git::Tree root(raw);
  std::string names;
  std::size_t n = git_tree_entrycount(root.get());
  for (std::size_t i = 0; i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(root.get(), i);
    if (kistore_name(git_tree_entry_name(e))) return std::nullopt;
    if (i < 3) names += std::string(i ? ", " : "") + git_tree_entry_name(e) + (is_tree(e) ? "/" : "");
  }
  if (n > 3) names += " and " + std::to_string(n - 3) + " more";
  return Problem{ProblemKind::kLayout, branch,
                 "not a kistore store: the remote's " + short_branch(branch) + " holds " +
                     (n ? names : std::string("an empty tree")) +
                     " and nothing of kistore's (FORMAT, objects/, refs/); pull and clone take only stores "
                     "(made by kistore init, add and push)"};
}

}  // namespace kistore
