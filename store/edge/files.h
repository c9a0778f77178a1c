// The file gate: every file kistore writes is made, written, synced, renamed
// and removed through this module, and through the one FileSystem it holds.
//
// Two levels:
//
//   - FileSystem, the seam: the handful of system calls kistore's writers
//     make (openat, write, pwrite, fsync, close, renameat, unlinkat,
//     mkdirat), each with the system call's own contract (-1 and errno on
//     failure). The process holds one, PosixFileSystem unless a test put
//     another in place (ScopedFileSystem); a test wraps the real one
//     (FileSystemWrapper) to fail a chosen call with a full disk, an I/O
//     error, a short write or a failed sync, as LevelDB's tests wrap its
//     Env (db/db_test.cc, SpecialEnv). Reads are not part of it.
//   - The writers' tools, built on it: write_all (through short writes and
//     EINTR), sync_file, sync_folder, make_folder, create_temp_file,
//     make_temp_folder, and NewFile, the one way a file of the store comes
//     to be: written under a temporary name beside its place, synced, and
//     renamed to its name (LevelDB's SetCurrentFile, git's tmp-objdir),
//     removed if anything on the way fails.
//
// Their common contract: a failure is Error(kIO) (exit 3) whose message
// starts with the path of the file or folder that failed, then what was
// being done and the system's reason ("<path>: cannot write: No space left
// on device"), and a writer that fails leaves no file it made behind (no
// temporary file, no half-written file). A temporary file is created with
// O_CREAT | O_EXCL | O_NOFOLLOW: never an existing file, never through a
// link. BeneathDir (beneath.h) walks untrusted folders relative to a
// descriptor on top of the same seam.
//
// Cost: one virtual call per system call (the call itself costs a hundred
// times more); nothing here allocates per write.
//
// Thread-safety: the FileSystem in use is read with an atomic load and may
// be swapped while no writer runs (a test's ScopedFileSystem); the
// PosixFileSystem is stateless, so writers in any number of threads and
// processes may use the gate at once. A NewFile belongs to one thread.
#pragma once

#include <sys/types.h>

#include <optional>

#include <cstddef>
#include <string>
#include <string_view>

namespace kistore {

// The system calls by which kistore changes the file system. Each has the
// contract of the call it is named for (man 2 openat, ...): its result, or
// -1 with errno set. `dir` is a folder's descriptor or AT_FDCWD.
class FileSystem {
 public:
  virtual ~FileSystem() = default;
  virtual int open_at(int dir, const char* name, int flags, mode_t mode) = 0;
  virtual ssize_t write(int fd, const void* data, std::size_t n) = 0;
  virtual ssize_t pwrite(int fd, const void* data, std::size_t n, off_t at) = 0;
  virtual int sync(int fd) = 0;  // fsync
  virtual int close(int fd) = 0;
  // renameat; with `no_replace`, fails with EEXIST when something is at
  // `to` (renameat2's RENAME_NOREPLACE, checked by hand where the file
  // system lacks it).
  virtual int rename_at(int from_dir, const char* from, int to_dir, const char* to, bool no_replace) = 0;
  virtual int unlink_at(int dir, const char* name, int flags) = 0;
  virtual int mkdir_at(int dir, const char* name, mode_t mode) = 0;
};

// The real one: each function is the system call.
class PosixFileSystem final : public FileSystem {
 public:
  int open_at(int dir, const char* name, int flags, mode_t mode) override;
  ssize_t write(int fd, const void* data, std::size_t n) override;
  ssize_t pwrite(int fd, const void* data, std::size_t n, off_t at) override;
  int sync(int fd) override;
  int close(int fd) override;
  int rename_at(int from_dir, const char* from, int to_dir, const char* to, bool no_replace) override;
  int unlink_at(int dir, const char* name, int flags) override;
  int mkdir_at(int dir, const char* name, mode_t mode) override;
};

// Hands every call to `target` (which must outlive it): a fault injector
// derives from it and overrides the calls it fails (LevelDB's EnvWrapper).
class FileSystemWrapper : public FileSystem {
 public:
  explicit FileSystemWrapper(FileSystem& target) : target_(target) {}
  FileSystem& target() const { return target_; }
  int open_at(int dir, const char* name, int flags, mode_t mode) override {
    return target_.open_at(dir, name, flags, mode);
  }
  ssize_t write(int fd, const void* data, std::size_t n) override { return target_.write(fd, data, n); }
  ssize_t pwrite(int fd, const void* data, std::size_t n, off_t at) override {
    return target_.pwrite(fd, data, n, at);
  }
  int sync(int fd) override { return target_.sync(fd); }
  int close(int fd) override { return target_.close(fd); }
  int rename_at(int from_dir, const char* from, int to_dir, const char* to, bool no_replace) override {
    return target_.rename_at(from_dir, from, to_dir, to, no_replace);
  }
  int unlink_at(int dir, const char* name, int flags) override { return target_.unlink_at(dir, name, flags); }
  int mkdir_at(int dir, const char* name, mode_t mode) override { return target_.mkdir_at(dir, name, mode); }

 private:
  FileSystem& target_;
};

// The process's PosixFileSystem, and the FileSystem in use now (that one
// unless a ScopedFileSystem is alive).
FileSystem& posix_file_system();
FileSystem& file_system();

// Puts `fs` in use until it goes, then puts back what was in use before.
// For tests: swap only while no writer runs in another thread.
class ScopedFileSystem {
 public:
  explicit ScopedFileSystem(FileSystem& fs);
  ~ScopedFileSystem();
  ScopedFileSystem(const ScopedFileSystem&) = delete;
  ScopedFileSystem& operator=(const ScopedFileSystem&) = delete;

 private:
  FileSystem* previous_;
};

// ---- The writers' tools ------------------------------------------------------

// Writes all of `bytes` to `fd`, through short writes and EINTR. Error(kIO)
// "<path>: cannot write: <why>" when a write fails (or writes nothing);
// `path` names the file. What was written before the failure stays: the
// caller removes the file (NewFile does).
void write_all(int fd, std::string_view bytes, const std::string& path);

// The same at offset `at` of the file (pwrite), leaving its file offset.
void pwrite_all(int fd, std::string_view bytes, off_t at, const std::string& path);

// fsync of `fd`: Error(kIO) "<path>: cannot sync: <why>".
void sync_file(int fd, const std::string& path);

// Makes the entries of folder `dir` (a file renamed into it, a folder made
// in it) durable: fsync of the folder. Error(kIO) naming `dir` when it fails.
void sync_folder(const std::string& dir);

// ---- A shared repository (git's core.sharedRepository) -----------------------
//
// A repository its owner shares with a group (`git init --shared=group`,
// core.sharedRepository) keeps every file and folder it gains writable by
// that group, as git's adjust_shared_perm makes them: folders g+rwxs, files
// the group's bits copied from the user's (a read-only pack stays read-only).
// share_under(gitdir, value) puts that rule on every file and folder the
// writers below make under `gitdir` (the rest of the process's files are
// untouched); value as git reads the setting. Error(kInvalidInput) naming
// the setting for a value git would refuse.
void share_under(const std::string& gitdir, const std::string& value);
// What share_under's rule makes of `path` now (for files another library
// made, such as libgit2's refs): its mode adjusted when it lies under the
// shared folder; nothing otherwise, or when it is gone. Never fails.
void adjust_shared(const std::string& path);
// The same for `path` in another repository, shared by `value` (its
// core.sharedRepository), whatever share_under's folder is: a file libgit2
// wrote into a repository that is not the store (a local remote's HEAD).
// Nothing for a value git refuses, a link, or a path that is gone. Never fails.
void adjust_shared_by(const std::string& path, const std::string& value);
// The mode git gives a file or folder of mode `mode` in a repository shared
// by `value` (core.sharedRepository: umask/false, group/true, all/world/
// everybody, or an octal mode); nullopt for a value git refuses.
std::optional<mode_t> shared_mode(mode_t mode, bool folder, const std::string& value);

// Makes the folder `path` (its parent must exist): true when it was made,
// false when it was there. Error(kIO) "<path>: cannot create the folder:
// <why>".
bool make_folder(const std::string& path, mode_t mode = 0755);

// Removes the file `path`, ignoring failures: for cleaning up after a
// failure, when the first error is the one to report.
void remove_quietly(const std::string& path);

// Removes the folder `path` if it is empty, ignoring failures: for undoing
// a folder made for a file that then failed.
void remove_empty_folder_quietly(const std::string& path);

// Renames the file `from` to `to` (no link at `to` is followed: it is
// replaced). Error(kIO) "<to>: cannot move <from> into place: <why>".
void rename_file(const std::string& from, const std::string& to);

// Creates and opens (read-write) a new file from the template `tmpl`,
// whose last six characters are "XXXXXX" (replaced in `tmpl` with the
// name chosen), as mkstemp does, but with `mode` and O_NOFOLLOW. Error(kIO)
// "<folder>: cannot create <what>: <why>".
int create_temp_file(std::string& tmpl, mode_t mode, std::string_view what = "a file");

// Makes the folder `path` (its parent must exist) and tracks it for an
// interruption to remove, as one step (interrupt.h, make_tracked): true when
// it was made, false when something was there (which is not tracked).
// Error(kIO) as make_folder's. For a command's new folder that a failure
// removes (a clone's): made here, it is known to be the command's own; looked
// for first and made later, one that appeared in between was taken for it.
bool make_tracked_folder(const std::string& path, mode_t mode = 0777);

// Makes a new folder from the template `tmpl` (ending in "XXXXXX", as
// mkdtemp's) and returns its path. Error(kIO) naming the folder above.
std::string make_temp_folder(std::string tmpl);

// A file of the store in the making: created under a temporary name in the
// folder it will be placed in (temp_file_template's name, tempfiles.h, so
// that a crash's leftover is swept), written, sealed (synced and closed),
// then placed (renamed to its name). Until it is placed the file exists
// only under its temporary name, and a NewFile that goes unplaced removes
// it: whatever fails on the way, no temporary or half-written file stays.
//
// Every failure is Error(kIO) naming the file (the temporary file while it
// is written and sealed, the destination when it is placed).
class NewFile {
 public:
  // Creates the temporary file of `kind` ("obj", "pack", ...) in the folder
  // `dir`, with permissions `mode` (less the umask).
  NewFile(const std::string& dir, std::string_view kind, mode_t mode);
  ~NewFile();  // closes and removes the file unless it was placed
  NewFile(const NewFile&) = delete;
  NewFile& operator=(const NewFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }  // the temporary name

  void write(std::string_view bytes) { write_all(fd_, bytes, path_); }
  void pwrite(std::string_view bytes, off_t at) { pwrite_all(fd_, bytes, at, path_); }
  // Syncs and closes the file.
  void seal();
  // Renames the sealed file to `dest` (in the same file system). With
  // `keep_existing`, something already at `dest` stays and the temporary
  // file is removed: false then. Otherwise whatever is at `dest` is
  // replaced (a link there too, never written through). The folder is not
  // synced: sync_folder once all of a change's files are placed.
  bool place(const std::string& dest, bool keep_existing = false);
  // Closes and removes the file now (errors ignored).
  void discard();

 private:
  std::string path_;
  int fd_ = -1;
  bool placed_ = false;
};

// Puts `bytes` at `path` as a NewFile of `kind` in its folder (which must
// exist), then syncs the folder: a reader sees the old file or the new one,
// and after a crash there is one of them. Error(kIO) naming the file; when
// it fails the old file is untouched, except when only the folder's sync
// fails (the new file is in place then, and may not survive a crash).
void replace_file(const std::string& path, std::string_view bytes, std::string_view kind, mode_t mode = 0644);

}  // namespace kistore
