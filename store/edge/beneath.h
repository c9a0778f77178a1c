// Files written, read and removed beneath one folder, and never outside it:
// the one gate through which a command that writes a folder of files (the
// static site, and whatever writes a folder next) touches it.
//
// The folder is opened once (O_DIRECTORY | O_NOFOLLOW: the folder itself may
// not be a symbolic link); every path below it is relative, walked one
// component at a time with openat(O_DIRECTORY | O_NOFOLLOW), so that no
// component, planted as a link to a folder elsewhere ("runs" -> ~/), is ever
// followed, and every file is made, opened, renamed or removed relative to
// its parent's descriptor (openat with O_NOFOLLOW, renameat, unlinkat). A
// path is refused before any of that when it is absolute, empty, or has an
// empty, "." or ".." component (check_relative_path).
//
// What it never does: follow a link (a link at a file's place is replaced by
// a rename, never written through, and never read or removed as the file),
// write or remove anything outside the folder, remove a folder (but an
// empty one that create or replace made on the way to a file it then failed
// to write: a failed write leaves the folder as it found it).
//
// Every change goes through the file gate (files.h: file_system()), so a
// test can fail any write, close or rename of it; reads and the walk's
// opens of folders do not.
//
// Thread-safety: a BeneathDir may be used from several threads at once
// (every call opens its own descriptors; the folder's is only read).
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kistore {

// Empty when `path` names a place beneath a folder ("runs/abc.html"); else
// why not, in words ("is absolute", "has a \"..\" component", ...).
std::string check_relative_path(std::string_view path);

class BeneathDir {
 public:
  // Opens the folder `dir`, created first (with its parents) when
  // `create` and it is missing. Error(kInvalidInput) naming `dir` when it is
  // a symbolic link; Error(kIO) when it cannot be made or opened.
  static BeneathDir open(const std::string& dir, bool create);

  BeneathDir(BeneathDir&& other) noexcept;
  BeneathDir& operator=(BeneathDir&&) = delete;
  BeneathDir(const BeneathDir&) = delete;
  ~BeneathDir();

  const std::string& path() const { return path_; }

  // Makes the folder `rel` and those above it beneath this one where
  // missing. Error(kInvalidInput) for a path check_relative_path refuses,
  // and naming the component when one is a link or not a folder; Error(kIO)
  // naming it when it cannot be made. create and replace make the folders
  // above their file the same way.
  void make_dirs(std::string_view rel) const;

  enum class Entry { kMissing, kFile, kLink, kOther };
  // What is at `rel`, not following a link there; a folder above it that is
  // missing gives kMissing, one that is a link or not a folder kOther.
  // Error(kInvalidInput) for a refused path.
  Entry entry(std::string_view rel) const;

  // Makes the file `rel` holding `bytes`, when nothing is there yet (a link
  // counts as something): false, writing nothing, when something is.
  // Error(kIO) naming the file when it cannot be made or written (then it
  // is removed, with the folders made for it). The file is not synced: what
  // a BeneathDir writes (a site) is made again from the store.
  bool create(std::string_view rel, std::string_view bytes) const;

  // Puts `bytes` at `rel` through a temporary file "<rel>.tmp" beside it and
  // a rename, so that a reader never sees half a file; whatever was at `rel`
  // (a file, or a link, which is replaced and never written through) is
  // gone. Error(kIO) naming the file; the old file is then untouched and
  // the temporary file and folders made for it removed.
  void replace(std::string_view rel, std::string_view bytes) const;

  // The bytes of the regular file `rel`, at most `max_bytes` of them:
  // nullopt when it is missing, a link or not a regular file; Error(kIO)
  // naming it when it cannot be read or is longer.
  std::optional<std::string> read(std::string_view rel, std::size_t max_bytes) const;

  // Removes the regular file `rel`; never a link, a folder or anything else
  // (false then, and when it is missing). Error(kIO) naming it when unlinkat
  // fails otherwise.
  bool remove_file(std::string_view rel) const;

  // Removes the folders above the file `rel` that are empty, deepest first
  // (as git does when a checkout removes the last file of a folder); a
  // folder that holds anything, or is a link, stays. Never fails.
  void remove_empty_folders_above(std::string_view rel) const noexcept { unmake_dirs(rel, 0); }

  // One folder beneath this one, held open: for a writer that changes many
  // files in few folders (a checkout), which then walks to each folder once.
  // Its calls take a plain name (no '/'), and keep the rules above: a link
  // is never followed, written through, read or removed as a file.
  class Folder {
   public:
    enum class State { kPresent, kMissing, kNotFolder };
    Folder(Folder&& other) noexcept : fd_(other.fd_), state_(other.state_), shown_(std::move(other.shown_)) {
      other.fd_ = -1;
    }
    Folder(const Folder&) = delete;
    Folder& operator=(const Folder&) = delete;
    Folder& operator=(Folder&&) = delete;
    ~Folder();

    // kMissing: a folder on the way is missing; kNotFolder: one is a link or
    // not a folder. Only a kPresent folder has files.
    State state() const { return state_; }
    // lstat of `name`: false when there is nothing (or the folder is not present).
    bool status(const std::string& name, struct stat& st) const;
    // As BeneathDir::create, and the new file's status (fstat after the
    // last write) in `st`.
    bool create(const std::string& name, std::string_view bytes, struct stat& st) const;
    // The folder `name` in this one, made when missing and `make` (this one
    // must then be present), as folder() walks: never through a link.
    Folder sub(const std::string& name, bool make) const;
    // As sub(name, true), for a folder that is expected to be missing (a
    // checkout saw it missing a moment ago): mkdirat first, then the open
    // (O_NOFOLLOW: a link planted meanwhile is refused, never followed).
    // One system call fewer than sub's open, fail, make, open again.
    Folder make_sub(const std::string& name) const;
    // As BeneathDir::remove_file and read.
    bool remove_file(const std::string& name) const;
    std::optional<std::string> read(const std::string& name, std::size_t max_bytes) const;

   private:
    friend class BeneathDir;
    Folder(int fd, State state, std::string shown) : fd_(fd), state_(state), shown_(std::move(shown)) {}
    std::string shown(const std::string& name) const { return shown_ + name; }
    int fd_ = -1;
    State state_;
    std::string shown_;  // the folder's path, ending in '/'
  };
  // The folder `rel` ("" for this one), walked without following a link;
  // with `make`, missing folders are made (then Error(kInvalidInput) naming
  // a component that is a link or not a folder, Error(kIO) when one cannot
  // be made). Error(kInvalidInput) for a path check_relative_path refuses.
  Folder folder(std::string_view rel, bool make) const;

 private:
  BeneathDir(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  // A descriptor of the folder holding `rel` (the caller closes it; -1 when
  // a folder on the way is missing and not `make`), and the last component.
  // `first_made`, when given, receives the index of the first component
  // that was made (npos when none was).
  int parent_of(std::string_view rel, std::string& leaf, bool make, std::size_t* first_made = nullptr) const;
  // Removes the empty folders of `rel` from component `first_made` down.
  void unmake_dirs(std::string_view rel, std::size_t first_made) const noexcept;
  std::string shown(std::string_view rel) const;

  int fd_ = -1;
  std::string path_;
};

}  // namespace kistore
