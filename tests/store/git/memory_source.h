// An in-memory git object source for unit tests (as libgit2's own tests use
// fake object-database backends): objects and commits built in memory, fed
// to the walk that checks what a pull brings (store/git/incoming_walk.h)
// through the same ObjectSource interface the real sources implement, with
// no repository, no git and no server.
//
// It keeps the real sources' contract: an object is found under the id its
// bytes hash to, or under a forged one (put_as) whose bytes hash to another,
// which read() refuses as the real sources do; objects can be marked as the
// store's (in_store); read() counts what it served.
#pragma once

#include <git2.h>

#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "store/git/git.h"
#include "store/git/incoming_walk.h"
#include "store/git/objwrite.h"

namespace kistore::test_support {

class MemorySource final : public git::ObjectSource {
 public:
  // Stores `bytes` as a `type` under the id they hash to, and returns it.
  git_oid add(git_object_t type, std::string bytes) {
    git_oid id = git::object_id(type, bytes);
    objects_[id] = {type, std::move(bytes)};
    return id;
  }
  // Stores `bytes` under `id`, whatever they hash to (a forgery).
  void put_as(const git_oid& id, git_object_t type, std::string bytes) { objects_[id] = {type, std::move(bytes)}; }
  void remove(const git_oid& id) { objects_.erase(id); }
  // The store holds `id` (the walk stops there).
  void mark_stored(const git_oid& id) { stored_.insert(id); }

  // A tree of `entries` ("mode name" -> id), written in the order given.
  git_oid tree(const std::vector<std::pair<std::string, git_oid>>& entries) {
    std::string raw;
    for (const auto& [mode_name, id] : entries) {
      raw += mode_name;
      raw.push_back('\0');
      raw.append(reinterpret_cast<const char*>(id.id), GIT_OID_RAWSZ);
    }
    return add(GIT_OBJECT_TREE, raw);
  }
  git_oid blob(const std::string& text) { return add(GIT_OBJECT_BLOB, text); }
  git_oid commit(const git_oid& tree, const std::vector<git_oid>& parents, const std::string& message = "m") {
    std::string text = "tree " + git::oid_str(tree) + "\n";
    for (const git_oid& p : parents) text += "parent " + git::oid_str(p) + "\n";
    text += "author A <a@example.org> 1700000000 +0000\ncommitter A <a@example.org> 1700000000 +0000\n\n" + message + "\n";
    return add(GIT_OBJECT_COMMIT, text);
  }

  // The object `id` as stored, whatever its bytes hash to; false when absent.
  bool get(const git_oid& id, git_object_t& type, std::string& bytes) const {
    auto it = objects_.find(id);
    if (it == objects_.end()) return false;
    type = it->second.type;
    bytes = it->second.bytes;
    return true;
  }

  std::optional<git::ObjectRefusal> read(const git_oid& id, git_object_t type, git::ObjectBytes* out) override {
    ++reads;
    auto it = objects_.find(id);
    if (it == objects_.end())
      return git::ObjectRefusal{ProblemKind::kObjectCorrupt, "has no " + type_name(type) + " " + git::oid_str(id)};
    if (it->second.type != type)
      return git::ObjectRefusal{ProblemKind::kObjectCorrupt,
                                git::oid_str(id) + " is a " + type_name(it->second.type) + ", not a " + type_name(type)};
    git_oid actual = git::object_id(type, it->second.bytes);
    if (!git_oid_equal(&actual, &id))
      return git::ObjectRefusal{ProblemKind::kObjectCorrupt, git::oid_str(id) + " holds bytes whose id is " + git::oid_str(actual)};
    if (out) *out = std::make_shared<const std::string>(it->second.bytes);
    return std::nullopt;
  }
  bool in_store(const git_oid& id) override { return stored_.count(id) > 0; }
  std::optional<git::ObjectRefusal> stored_as(const git_oid& id, git_object_t type) override {
    auto it = objects_.find(id);
    if (it != objects_.end() && it->second.type != type)
      return git::ObjectRefusal{ProblemKind::kObjectCorrupt, "the store's " + git::oid_str(id) + " is no " + type_name(type)};
    return std::nullopt;
  }

  std::size_t reads = 0;

 private:
  static std::string type_name(git_object_t t) { return git_object_type2string(t); }
  struct Object {
    git_object_t type;
    std::string bytes;
  };
  std::unordered_map<git_oid, Object, git::OidHash, git::OidEq> objects_;
  std::unordered_set<git_oid, git::OidHash, git::OidEq> stored_;
};

}  // namespace kistore::test_support
