#include "store/git/new_objects.h"

#include <optional>
#include <unordered_set>

#include "store/git/objwrite.h"
#include "store/git/raw_tree.h"

namespace kistore {

NewObjects::~NewObjects() = default;

NewObjects::NewObjects(git_repository* repo, const git_oid& head, const std::vector<git_oid>& have)
    : repo_(repo), odb_(git::open_odb(repo)), packs_(git_repository_path(repo)) {
  list(head, have);
}

void NewObjects::list(const git_oid& head, const std::vector<git_oid>& have) {
  git_revwalk* raw_walk = nullptr;
  git::check(git_revwalk_new(&raw_walk, repo_), "walking history");
  git::Revwalk walk(raw_walk);
  git::check(git_revwalk_push(raw_walk, &head), "walking history");
  for (const git_oid& h : have)
    if (git_odb_exists(odb_.get(), &h)) git::check(git_revwalk_hide(raw_walk, &h), "walking history");
  git_error_clear();
  std::unordered_set<git_oid, git::OidHash, git::OidEq> seen;
  auto add = [&](const git_oid& id, git_object_t type) {
    if (seen.insert(id).second) objects_.push_back({id, type});
  };
  // Trees as stored, through the pack reader first, their ids unchecked:
  // they are this repository's own.
  git::TreeReader trees(odb_.get(), {&packs_});
  auto add_blob = [&](const git::TreeDelta& d) {
    if (!git::mode_is_link(d.new_mode) && d.ids_differ()) add(d.new_id, GIT_OBJECT_BLOB);
  };
  auto add_tree = [&](const std::string&, const git_oid& tree) { add(tree, GIT_OBJECT_TREE); };
  git_oid id;
  while (git_revwalk_next(&id, raw_walk) == 0) {
    add(id, GIT_OBJECT_COMMIT);
    git_commit* c = nullptr;
    git::check(git_commit_lookup(&c, repo_, &id), "reading commit " + git::oid_str(id));
    git::Commit commit(c);
    const git_oid* tree = git_commit_tree_id(c);
    add(*tree, GIT_OBJECT_TREE);
    std::optional<git_oid> parent_tree;
    if (git_commit_parentcount(c) > 0) parent_tree = git::commit_tree(repo_, *git_commit_parent_id(c, 0));
    trees.diff(parent_tree ? &*parent_tree : nullptr, tree, "", add_blob, git::DiffSides::kAddedOrChanged, add_tree);
  }
}

void NewObjects::read(const std::function<void(const Object&, std::string_view, int)>& write,
                      const std::function<void(std::size_t, std::size_t)>& progress) const {
  std::size_t done = 0;
  std::string stored;
  // Blobs at the level the store writes them (blob_level), commits at 1, trees stored.
  const auto level_of = [](const Object& object, std::string_view data) {
    return object.type == GIT_OBJECT_BLOB ? git::blob_level(data) : object.type == GIT_OBJECT_COMMIT ? 1 : 0;
  };
  for (const Object& object : objects_) {
    git_object_t type = GIT_OBJECT_INVALID;
    if (packs_.read(object.id, type, stored) && type == object.type) {
      write(object, stored, level_of(object, stored));
    } else {
      git_odb_object* o = nullptr;
      git::check(git_odb_read(&o, odb_.get(), &object.id), "reading object " + git::oid_str(object.id));
      git::OdbObject owned(o);
      if (git_odb_object_type(o) != object.type)
        throw Corruption("object " + git::oid_str(object.id) + " is a " + git_object_type2string(git_odb_object_type(o)) +
                         ", where its tree says " + git_object_type2string(object.type));
      const std::string_view data(static_cast<const char*>(git_odb_object_data(o)), git_odb_object_size(o));
      write(object, data, level_of(object, data));
    }
    if ((++done % 1024 == 0 || done == objects_.size()) && progress) progress(done, objects_.size());
  }
}

}  // namespace kistore
