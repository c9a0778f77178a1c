// Reading a store's git repository without libgit2, private to store/.
//
// libgit2's process-wide initialisation costs more than a whole query:
// Debian's libgit2 1.5 is built with mbedTLS and parses the system's CA
// bundle in git_libgit2_init(), with no switch to skip it. The read-only
// commands (rank, show, cat, ls, groups) need no transport, so Store::open
// finds the repository, its HEAD, its branch and the objects it reads here,
// and opens libgit2 only when a caller first needs it (store/git/repo_objects.h).
//
// Everything here answers only what it can answer completely for a plain
// repository as git and kistore leave it: a bare folder or a work tree's
// .git folder, owned by this user, with no repository extension, include,
// alternate object folder, shallow file or promisor remote; HEAD a symbolic ref; the branch a loose ref or a
// line of packed-refs; objects loose (zlib) or in packs (whole, deflated or
// deltas). For anything else it says "cannot tell" (nullopt or false) and
// the caller asks libgit2, so that behaviour and messages stay libgit2's;
// it never returns wrong data: loose objects are re-hashed, pack entries
// must inflate to exactly their declared size (zlib's Adler-32 checks each
// stream).
//
// Thread-safety: the free functions are reentrant; a NativeObjects may be
// read from any thread after construction.
#pragma once

#include <git2.h>

#include <optional>
#include <string>
#include <string_view>

#include "store/git/packread.h"

namespace kistore::git {

// Where the repository at `dir` keeps its files and which branch its HEAD
// names.
struct NativeRepo {
  std::string gitdir;  // absolute, without symbolic links, ending in '/' (as git_repository_path)
  std::string branch;  // "refs/heads/main"
};

// The repository at `dir` (as git_repository_open_ext with NO_SEARCH would
// find it: `dir` itself when bare, else dir/.git), when it is one this file
// reads completely (see above); nullopt otherwise, libgit2 then decides.
std::optional<NativeRepo> locate_repository(const std::string& dir);

enum class RefState { kFound, kAbsent, kUnknown };
// The id the reference `name` (a full name, not symbolic) points at: its
// loose file, else its line in packed-refs. kAbsent when neither holds it;
// kUnknown when either cannot be read or holds what this reader does not
// read (a symbolic ref, a peeled or malformed line).
RefState read_ref(const std::string& gitdir, const std::string& name, git_oid& out);

// The tree id of a commit object's bytes: its first line "tree <40 hex>",
// and author and committer lines in its header. False otherwise.
bool commit_tree_id(std::string_view commit, git_oid& tree);

// 40 lowercase or uppercase hex digits into `out`; false otherwise.
bool parse_hex_id(std::string_view hex, git_oid& out);

// The objects of one repository, loose and packed.
class NativeObjects {
 public:
  // Maps the packs under `gitdir` (ending in '/') once; packs written
  // later are not seen (read says false for their objects).
  explicit NativeObjects(std::string gitdir);

  // Sets `type` and replaces `out` with the object `id` when it is a loose
  // object that inflates completely and hashes to `id`, or a pack entry
  // PackReader::read_any reads; false otherwise (absent here, damaged, a
  // form not read here).
  bool read(const git_oid& id, git_object_t& type, std::string& out) const;

 private:
  bool read_loose(const git_oid& id, git_object_t& type, std::string& out) const;
  std::string gitdir_;
  PackReader packs_;
};

}  // namespace kistore::git
