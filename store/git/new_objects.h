// The git objects a range of commits brings, and reading them once, for
// sending them elsewhere (push, and a fetch from a repository on this
// machine), private to store/.
//
// NewObjects lists every object reachable from a head that given commits do
// not already bring, each once: each new commit, its tree, and what its tree
// holds that its first parent's lacks (a diff of raw trees that skips equal
// subtrees, raw_tree.h). Cost follows what is new, not the size of the trees
// (libgit2 1.5's packbuilder walks the whole tree of every commit it hides).
// Objects are then read as stored (through the pack reader first), to be
// written into a pack at the level kistore stores them (objwrite.h: commits
// and index files deflated, documents and trees in zlib's stored format).
//
// Errors: Error(kIO) when the history cannot be walked or an object read;
// Error(kCorruption) for an object of another type than its tree says.
//
// Thread-safety: one thread; must not outlive the repository.
#pragma once

#include <git2.h>

#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

#include "store/git/git.h"
#include "store/git/packread.h"

namespace kistore {

class NewObjects {
 public:
  struct Object {
    git_oid id;
    git_object_t type;
  };

  // What `head` in `repo` brings beyond the commits `have` (those of them
  // the repository holds; the others are ignored).
  NewObjects(git_repository* repo, const git_oid& head, const std::vector<git_oid>& have);
  ~NewObjects();  // out of line: its owners call no libgit2
  NewObjects(const NewObjects&) = delete;
  NewObjects& operator=(const NewObjects&) = delete;

  const std::vector<Object>& objects() const { return objects_; }
  std::size_t size() const { return objects_.size(); }

  // Calls write(object, bytes, level) for each object in order, and
  // progress(done, total) (may be empty) every 1,024 objects and at the end.
  void read(const std::function<void(const Object&, std::string_view, int)>& write,
            const std::function<void(std::size_t, std::size_t)>& progress) const;

 private:
  void list(const git_oid& head, const std::vector<git_oid>& have);

  git_repository* repo_;
  git::Odb odb_;  // one handle for listing and reading
  git::PackReader packs_;
  std::vector<Object> objects_;
};

}  // namespace kistore
