#include "store/core/store_shape.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <vector>

#include "objects/error.h"
#include "store/git/git.h"
#include "store/git/libgit2_trees.h"
#include "store/git/raw_tree.h"
#include "store/git/store_repo.h"

namespace kistore {
namespace {

constexpr std::array<std::string_view, 6> kIndexFolders = {"attestations", "groups",  "levels",
                                                           "metadata",     "reruns",  "sources"};

// One entry of a tree, as the rule sees it.
struct Entry {
  std::string name;
  bool tree = false;
  bool plain_blob = false;  // mode 100644, as libgit2 normalises it
};
using Entries = std::vector<Entry>;

std::string short_branch(const std::string& branch) {
  constexpr std::string_view heads = "refs/heads/";
  return branch.starts_with(heads) ? branch.substr(heads.size()) : branch;
}

// The first entry (at `dir`, "" or ending in "/") that `allowed` refuses,
// as "dir/name", or "".
template <typename Allowed>
std::string first_foreign(const Entries& entries, const std::string& dir, Allowed allowed) {
  for (const Entry& e : entries)
    if (!allowed(e)) return dir + e.name + (e.tree ? "/" : "");
  return "";
}

bool kistore_name(std::string_view n) { return n == "FORMAT" || n == "objects" || n == "refs" || n == "dictionaries"; }

Entries entries_of(const std::vector<git::TreeItem>& items) {
  Entries out;
  for (const git::TreeItem& e : items) out.push_back({e.name, e.tree, !e.tree && e.filemode == git::kModeBlob});
  return out;
}

Entries entries_of(const git::RawTree& tree) {
  Entries out;
  std::string_view rest = tree.bytes();
  for (git::RawEntry e; git::next_entry(rest, e);) {
    // libgit2 reads any regular file mode without execute bits as 100644.
    bool blob = !e.tree() && !e.link() && (e.mode & 0170000) == 0100000 && !(e.mode & 0111);
    out.push_back({std::string(e.name), e.tree(), blob});
  }
  return out;
}

// The rule for a branch with commits, over its root and the folders
// objects/ and refs/ (read only when the root passes).
StoreShape judge(const Entries& root, const std::function<std::optional<Entries>(const char*)>& subtree,
                 const std::string& name) {
  if (root.empty()) {
    std::string why = "its branch " + name + " holds an empty tree";
    return {why, why};
  }
  std::string foreign = first_foreign(root, "", [&](const Entry& e) {
    return kistore_name(e.name) && (e.name == "FORMAT" ? !e.tree && e.plain_blob : e.tree);
  });
  bool has_kistore_name = !first_foreign(root, "", [&](const Entry& e) { return !kistore_name(e.name); }).empty();
  if (!has_kistore_name) {
    std::string why = "its branch " + name + " holds " + foreign + " and nothing of kistore's";
    return {why, why};
  }
  if (foreign.empty()) {
    if (std::optional<Entries> objects = subtree("objects"))
      foreign = first_foreign(*objects, "objects/", [](const Entry& e) { return e.name == "sha256" && e.tree; });
  }
  if (foreign.empty()) {
    if (std::optional<Entries> refs = subtree("refs"))
      foreign = first_foreign(*refs, "refs/", [](const Entry& e) {
        return e.tree && std::find(kIndexFolders.begin(), kIndexFolders.end(), e.name) != kIndexFolders.end();
      });
  }
  if (foreign.empty()) return {};
  return {"", "its branch " + name + " holds " + foreign + ", which is not kistore's"};
}

std::string unborn_reason(git_repository* repo, const std::string& branch) {
  if (branch != "refs/heads/main")
    return "its HEAD names the branch " + short_branch(branch) + ", which has no commits (a new store's branch is main)";
  // A branch or tag is the user's work; remote-tracking refs and kistore's
  // own (a pull's bookkeeping) are not.
  for (const char* glob : {"refs/heads/*", "refs/tags/*"})
    if (std::optional<std::string> found = git::first_ref_matching(repo, glob))
      return "its branch main has no commits, but it holds " + *found;
  return "";
}

}  // namespace

StoreShape store_shape(git_repository* repo, const std::string& branch) {
  std::optional<git_oid> target = git::ref_id(repo, branch, "reading " + branch);
  // The first commit of another writer may land between the lookup and the
  // listing of references (which then finds main itself): look again.
  for (int again = 0; !target; ++again) {
    std::string why = unborn_reason(repo, branch);
    if (why.empty() || again == 3) return {why, why};
    target = git::ref_id(repo, branch, "reading " + branch);
  }
  const std::string name = short_branch(branch);
  std::optional<git_oid> tree = git::find_commit_tree(repo, *target);
  // Another writer's commit, in a pack it wrote just before moving the
  // branch: an object database that listed the pack folder in the same
  // second may not see that pack yet. Look once more after a refresh.
  if (!tree && git::refresh_objects(repo)) tree = git::find_commit_tree(repo, *target);
  if (!tree) {
    std::string why = "its branch " + name + " does not name a commit";
    return {why, why};
  }
  const std::string what = "reading the tree of " + branch;
  return judge(entries_of(git::tree_items(repo, *tree, what)),
               [&](const char* folder) -> std::optional<Entries> {
                 std::optional<std::vector<git::TreeItem>> items = git::folder_items(repo, *tree, folder, what);
                 if (!items) return std::nullopt;
                 return entries_of(*items);
               },
               name);
}

StoreShape store_shape(const git::RawTree& root, const std::function<const git::RawTree*(const char*)>& subtree,
                       const std::string& branch) {
  return judge(entries_of(root), [&](const char* folder) -> std::optional<Entries> {
                 const git::RawTree* t = subtree(folder);
                 if (!t) return std::nullopt;
                 return entries_of(*t);
               },
               short_branch(branch));
}

std::optional<Problem> not_a_store(git_repository* repo, const git_oid& commit, const std::string& branch) {
  std::optional<git_oid> tree = git::find_commit_tree(repo, commit);
  std::optional<std::vector<git::TreeItem>> items;
  if (tree) items = git::find_tree_items(repo, *tree);
  if (!items) return std::nullopt;
  std::string names;
  const Entries entries = entries_of(*items);
  const std::size_t n = entries.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (kistore_name(entries[i].name)) return std::nullopt;
    if (i < 3) names += std::string(i ? ", " : "") + entries[i].name + (entries[i].tree ? "/" : "");
  }
  if (n > 3) names += " and " + std::to_string(n - 3) + " more";
  return Problem{ProblemKind::kLayout, branch,
                 "not a kistore store: the remote's " + short_branch(branch) + " holds " +
                     (n ? names : std::string("an empty tree")) +
                     " and nothing of kistore's (FORMAT, objects/, refs/); kistore pulls from, clones and pushes "
                     "to only a store (made by kistore init, add and push) or an empty repository"};
}

void lead_with(std::optional<Problem> summary, std::vector<Problem>& problems) {
  if (!summary) return;
  if (problems.size() > 2) problems.resize(2);
  problems.insert(problems.begin(), std::move(*summary));
}

}  // namespace kistore
