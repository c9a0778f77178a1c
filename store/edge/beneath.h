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
