#include "store/edge/files.h"
#include "store/edge/interrupt.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <mutex>
#include <random>

#include "objects/error.h"
#include "store/edge/tempfiles.h"

namespace kistore {

// ---- The seam ------------------------------------------------------------------

int PosixFileSystem::open_at(int dir, const char* name, int flags, mode_t mode) {
  return ::openat(dir, name, flags, mode);
}

ssize_t PosixFileSystem::write(int fd, const void* data, std::size_t n) { return ::write(fd, data, n); }

ssize_t PosixFileSystem::pwrite(int fd, const void* data, std::size_t n, off_t at) {
  return ::pwrite(fd, data, n, at);
}

int PosixFileSystem::sync(int fd) { return ::fsync(fd); }

int PosixFileSystem::close(int fd) { return ::close(fd); }

int PosixFileSystem::rename_at(int from_dir, const char* from, int to_dir, const char* to, bool no_replace) {
  if (!no_replace) return ::renameat(from_dir, from, to_dir, to);
  int rc = ::renameat2(from_dir, from, to_dir, to, RENAME_NOREPLACE);
  if (rc == 0 || (errno != EINVAL && errno != ENOSYS)) return rc;
  // A file system without RENAME_NOREPLACE: look first (a race with another
  // writer placing the same name can then replace its file, which holds the
  // same bytes wherever kistore asks for no_replace: names are checksums).
  struct stat st;
  if (::fstatat(to_dir, to, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    errno = EEXIST;
    return -1;
  }
  return ::renameat(from_dir, from, to_dir, to);
}

int PosixFileSystem::unlink_at(int dir, const char* name, int flags) { return ::unlinkat(dir, name, flags); }

int PosixFileSystem::mkdir_at(int dir, const char* name, mode_t mode) { return ::mkdirat(dir, name, mode); }

namespace {

PosixFileSystem the_posix_file_system;
std::atomic<FileSystem*> current{&the_posix_file_system};

std::string why(int err) { return std::strerror(err); }

// The folder part of a path, for messages about making a file in it.
std::string folder_of(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// Six characters for a temporary name (as mkstemp's), different per call.
void fill_unique(char* six) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  thread_local std::uint64_t state = [] {
    std::random_device rd;
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return (std::uint64_t{rd()} << 32 | rd()) ^ static_cast<std::uint64_t>(ts.tv_nsec) ^
           (static_cast<std::uint64_t>(::getpid()) << 40);
  }();
  // splitmix64
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  for (int i = 0; i < 6; ++i, z /= 62) six[i] = kChars[z % 62];
}

constexpr int kAttempts = 100;

}  // namespace

FileSystem& posix_file_system() { return the_posix_file_system; }

FileSystem& file_system() { return *current.load(std::memory_order_acquire); }

ScopedFileSystem::ScopedFileSystem(FileSystem& fs) : previous_(current.exchange(&fs, std::memory_order_acq_rel)) {}

ScopedFileSystem::~ScopedFileSystem() { current.store(previous_, std::memory_order_release); }

// ---- The writers' tools ----------------------------------------------------------

void write_all(int fd, std::string_view bytes, const std::string& path) {
  FileSystem& fs = file_system();
  while (!bytes.empty()) {
    ssize_t w = fs.write(fd, bytes.data(), bytes.size());
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw IOError(path + ": cannot write: " + why(errno));
    if (w == 0) throw IOError(path + ": cannot write: the file system took no bytes");
    bytes.remove_prefix(static_cast<std::size_t>(w));
  }
}

void pwrite_all(int fd, std::string_view bytes, off_t at, const std::string& path) {
  FileSystem& fs = file_system();
  while (!bytes.empty()) {
    ssize_t w = fs.pwrite(fd, bytes.data(), bytes.size(), at);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw IOError(path + ": cannot write: " + why(errno));
    if (w == 0) throw IOError(path + ": cannot write: the file system took no bytes");
    bytes.remove_prefix(static_cast<std::size_t>(w));
    at += w;
  }
}

void sync_file(int fd, const std::string& path) {
  if (file_system().sync(fd) != 0) throw IOError(path + ": cannot sync: " + why(errno));
}

void sync_folder(const std::string& dir) {
  FileSystem& fs = file_system();
  int fd = fs.open_at(AT_FDCWD, dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd < 0) throw IOError(dir + ": cannot open to sync: " + why(errno));
  int rc = fs.sync(fd);
  int err = errno;
  fs.close(fd);
  if (rc != 0) throw IOError(dir + ": cannot sync: " + why(err));
}

// ---- A shared repository ---------------------------------------------------------

namespace {

struct Shared {
  std::string dir;    // the repository's folder, ending in '/'
  std::string value;  // core.sharedRepository
};
std::mutex shared_mutex;
std::optional<Shared> shared_rule;  // set by share_under

// git_config_perm: 0 for none, a positive tweak (0660, 0664) that is added,
// a negative one (an octal mode) that replaces; nullopt for a bad value.
std::optional<int> shared_perm(const std::string& value) {
  std::string v;
  for (char c : value) v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "umask" || v == "false" || v == "no" || v == "off" || v == "0") return 0;
  if (v == "group" || v == "true" || v == "yes" || v == "on" || v == "1") return 0660;
  if (v == "all" || v == "world" || v == "everybody" || v == "2") return 0664;
  if (v.size() < 2 || v[0] != '0' || v.find_first_not_of("01234567") != std::string::npos) return std::nullopt;
  const int mode = static_cast<int>(std::strtol(v.c_str(), nullptr, 8));
  if ((mode & 0600) != 0600) return std::nullopt;  // the owner keeps read and write
  return -(mode & 0666);
}

// The shared folder's rule for `path`: its value, or nullopt outside it.
std::optional<std::string> rule_for(const std::string& path) {
  std::lock_guard lock(shared_mutex);
  if (!shared_rule || !path.starts_with(shared_rule->dir)) return std::nullopt;
  return shared_rule->value;
}

}  // namespace

std::optional<mode_t> shared_mode(mode_t mode, bool folder, const std::string& value) {
  const std::optional<int> perm = shared_perm(value);
  if (!perm) return std::nullopt;
  if (*perm == 0) return mode;
  int tweak = *perm < 0 ? -*perm : *perm;
  if (!(mode & S_IWUSR)) tweak &= ~0222;
  if (mode & S_IXUSR) tweak |= (tweak & 0444) >> 2;  // read bits to execute bits
  mode_t out = *perm < 0 ? (mode & ~0777) | tweak : mode | tweak;
  if (folder) out |= ((out & 0444) >> 2) | S_ISGID;
  return out;
}

void share_under(const std::string& gitdir, const std::string& value) {
  if (!shared_perm(value))
    throw InvalidInput(gitdir + ": config core.sharedRepository: expected umask, group, all or an octal mode "
                       "such as 0660, found \"" + value + "\"");
  std::lock_guard lock(shared_mutex);
  if (*shared_perm(value) == 0) {
    shared_rule.reset();
    return;
  }
  shared_rule = Shared{gitdir.ends_with('/') ? gitdir : gitdir + "/", value};
}

void adjust_shared(const std::string& path) {
  if (const std::optional<std::string> value = rule_for(path)) adjust_shared_by(path, *value);
}

void adjust_shared_by(const std::string& path, const std::string& value) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) return;
  const std::optional<mode_t> mode = shared_mode(st.st_mode & 07777, S_ISDIR(st.st_mode), value);
  if (mode && *mode != (st.st_mode & 07777)) ::chmod(path.c_str(), *mode);
}

bool make_folder(const std::string& path, mode_t mode) {
  if (file_system().mkdir_at(AT_FDCWD, path.c_str(), mode) == 0) {
    adjust_shared(path);
    return true;
  }
  if (errno == EEXIST) return false;
  throw IOError(path + ": cannot create the folder: " + why(errno));
}

bool make_tracked_folder(const std::string& path, mode_t mode) {
  FileSystem& fs = file_system();
  if (make_tracked(path, [&] { return fs.mkdir_at(AT_FDCWD, path.c_str(), mode) == 0; })) return true;
  if (errno == EEXIST) return false;
  throw IOError(path + ": cannot create the folder: " + why(errno));
}

void remove_quietly(const std::string& path) {
  const int saved = errno;
  file_system().unlink_at(AT_FDCWD, path.c_str(), 0);
  untrack_temporary(path);
  errno = saved;
}

void remove_empty_folder_quietly(const std::string& path) {
  const int saved = errno;
  file_system().unlink_at(AT_FDCWD, path.c_str(), AT_REMOVEDIR);
  errno = saved;
}

void rename_file(const std::string& from, const std::string& to) {
  if (file_system().rename_at(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), false) != 0)
    throw IOError(to + ": cannot move " + from + " into place: " + why(errno));
  untrack_temporary(from);
}

int create_temp_file(std::string& tmpl, mode_t mode, std::string_view what) {
  if (tmpl.size() < 6 || tmpl.compare(tmpl.size() - 6, 6, "XXXXXX") != 0)
    throw IOError(tmpl + ": not a temporary file's template (expected it to end in XXXXXX)");
  FileSystem& fs = file_system();
  char* six = tmpl.data() + tmpl.size() - 6;
  for (int i = 0; i < kAttempts; ++i) {
    fill_unique(six);
    int fd = -1;
    // Removed if the command is interrupted (interrupt.h), made and tracked as one step.
    make_tracked(tmpl, [&] {
      fd = fs.open_at(AT_FDCWD, tmpl.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
      return fd >= 0;
    });
    if (fd >= 0) {
      adjust_shared(tmpl);  // before any byte is written: the name it is moved to keeps the mode
      return fd;
    }
    if (errno != EEXIST) throw IOError(folder_of(tmpl) + ": cannot create " + std::string(what) + ": " + why(errno));
  }
  throw IOError(folder_of(tmpl) + ": cannot create " + std::string(what) + ": " + std::to_string(kAttempts) +
                " names tried were taken");
}

std::string make_temp_folder(std::string tmpl) {
  if (tmpl.size() < 6 || tmpl.compare(tmpl.size() - 6, 6, "XXXXXX") != 0)
    throw IOError(tmpl + ": not a temporary folder's template (expected it to end in XXXXXX)");
  FileSystem& fs = file_system();
  char* six = tmpl.data() + tmpl.size() - 6;
  for (int i = 0; i < kAttempts; ++i) {
    fill_unique(six);
    if (make_tracked(tmpl, [&] { return fs.mkdir_at(AT_FDCWD, tmpl.c_str(), 0700) == 0; })) {
      adjust_shared(tmpl);
      return tmpl;
    }
    if (errno != EEXIST) throw IOError(folder_of(tmpl) + ": cannot create a folder: " + why(errno));
  }
  throw IOError(folder_of(tmpl) + ": cannot create a folder: " + std::to_string(kAttempts) + " names tried were taken");
}

// ---- NewFile -----------------------------------------------------------------------

NewFile::NewFile(const std::string& dir, std::string_view kind, mode_t mode) : path_(temp_file_template(dir, kind)) {
  fd_ = create_temp_file(path_, mode);
}

NewFile::~NewFile() {
  if (!placed_) discard();
}

void NewFile::discard() {
  FileSystem& fs = file_system();
  if (fd_ >= 0) fs.close(fd_);
  fd_ = -1;
  if (!placed_ && !path_.empty()) remove_quietly(path_);
  path_.clear();
}

void NewFile::seal() {
  if (fd_ < 0) throw IOError(path_ + ": cannot sync: the file is closed");
  sync_file(fd_, path_);
  int fd = fd_;
  fd_ = -1;
  if (file_system().close(fd) != 0) throw IOError(path_ + ": cannot write: " + why(errno));
}

bool NewFile::place(const std::string& dest, bool keep_existing) {
  if (fd_ >= 0 || path_.empty()) throw IOError(dest + ": cannot move into place: the file is not sealed");
  if (file_system().rename_at(AT_FDCWD, path_.c_str(), AT_FDCWD, dest.c_str(), keep_existing) != 0) {
    if (keep_existing && errno == EEXIST) {
      discard();
      return false;
    }
    throw IOError(dest + ": cannot move " + path_ + " into place: " + why(errno));
  }
  placed_ = true;
  untrack_temporary(path_);
  return true;
}

void replace_file(const std::string& path, std::string_view bytes, std::string_view kind, mode_t mode) {
  NewFile file(folder_of(path), kind, mode);
  file.write(bytes);
  file.seal();
  file.place(path);
  sync_folder(folder_of(path));
}

}  // namespace kistore
