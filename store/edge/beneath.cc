#include "store/edge/beneath.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "objects/error.h"
#include "store/edge/files.h"

namespace kistore {
namespace {

std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    std::size_t slash = path.find('/', start);
    out.push_back(path.substr(start, slash == path.npos ? path.npos : slash - start));
    if (slash == path.npos) return out;
    start = slash + 1;
  }
}

// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) file_system().close(fd);
  }
};

constexpr int kWalk = 0, kMake = 1;
constexpr int kMissing = -1, kNotFolder = -2;

}  // namespace

std::string check_relative_path(std::string_view path) {
  if (path.empty()) return "is empty";
  if (path.front() == '/') return "is absolute";
  if (path.find('\0') != path.npos) return "holds a NUL byte";
  for (std::string_view c : components(path)) {
    if (c.empty()) return "has an empty component";
    if (c == ".") return "has a \".\" component";
    if (c == "..") return "has a \"..\" component";
  }
  return "";
}

BeneathDir BeneathDir::open(const std::string& dir, bool create) {
  if (create) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw IOError(dir + ": cannot create the folder: " + ec.message());
  }
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    struct stat st;
    if ((err == ELOOP || err == ENOTDIR) && ::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      throw InvalidInput(dir + ": is a symbolic link; name the folder itself, not a link to it");
    if (err == ENOTDIR) throw InvalidInput(dir + ": not a folder (expected a folder, found a file)");
    throw IOError(dir + ": cannot open the folder: " + std::strerror(err));
  }
  return BeneathDir(fd, dir);
}

BeneathDir::BeneathDir(BeneathDir&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) { other.fd_ = -1; }

BeneathDir::~BeneathDir() {
  if (fd_ >= 0) file_system().close(fd_);
}

std::string BeneathDir::shown(std::string_view rel) const {
  std::string out = path_;
  if (!out.empty() && out.back() != '/') out += '/';
  return out + std::string(rel);
}

int BeneathDir::parent_of(std::string_view rel, std::string& leaf, bool make, std::size_t* first_made) const {
  if (std::string why = check_relative_path(rel); !why.empty())
    throw InvalidInput(shown(rel) + ": expected a path beneath " + path_ + ", found one that " + why);
  std::vector<std::string_view> parts = components(rel);
  leaf = std::string(parts.back());
  if (first_made) *first_made = std::string_view::npos;
  FileSystem& fs = file_system();
  int cur = ::openat(fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cur < 0) throw IOError(path_ + ": cannot open the folder: " + std::strerror(errno));
  std::string walked;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string name(parts[i]);
    walked += (walked.empty() ? "" : "/") + name;
    int next = ::openat(cur, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT && make) {
      if (fs.mkdir_at(cur, name.c_str(), 0777) == 0) {
        if (first_made && *first_made == std::string_view::npos) *first_made = i;
      } else if (errno != EEXIST) {
        const int err = errno;
        fs.close(cur);
        throw IOError(shown(walked) + ": cannot create the folder: " + std::strerror(err));
      }
      next = ::openat(cur, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    const int err = errno;
    fs.close(cur);
    if (next >= 0) {
      cur = next;
      continue;
    }
    if (err == ENOENT && !make) return kMissing;
    if (err == ELOOP || err == ENOTDIR) {
      if (!make) return kNotFolder;
      throw InvalidInput(shown(walked) + ": is a symbolic link or not a folder; expected a folder (files are written only "
                    "beneath " + path_ + ", never through a link)");
    }
    throw IOError(shown(walked) + ": cannot open the folder: " + std::strerror(err));
  }
  return cur;
}

void BeneathDir::unmake_dirs(std::string_view rel, std::size_t first_made) const noexcept {
  if (first_made == std::string_view::npos) return;
  std::vector<std::string_view> parts = components(rel);
  FileSystem& fs = file_system();
  // Deepest first; each walk again from the top, never through a link.
  for (std::size_t j = parts.size() - 1; j-- > first_made;) {
    int cur = ::openat(fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (std::size_t i = 0; cur >= 0 && i < j; ++i) {
      int next = ::openat(cur, std::string(parts[i]).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      fs.close(cur);
      cur = next;
    }
    if (cur < 0) return;
    // Only an empty folder goes: another writer's file in it keeps it.
    fs.unlink_at(cur, std::string(parts[j]).c_str(), AT_REMOVEDIR);
    fs.close(cur);
  }
}

void BeneathDir::make_dirs(std::string_view rel) const {
  std::string leaf;
  const std::string inside = std::string(rel) + "/x";  // every component of `rel` is a folder to walk or make
  Fd parent(parent_of(inside, leaf, kMake));
}

BeneathDir::Entry BeneathDir::entry(std::string_view rel) const {
  std::string leaf;
  Fd parent(parent_of(rel, leaf, kWalk));
  if (parent.fd == kMissing) return Entry::kMissing;
  if (parent.fd == kNotFolder) return Entry::kOther;
  struct stat st;
  if (::fstatat(parent.fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? Entry::kMissing : Entry::kOther;
  if (S_ISLNK(st.st_mode)) return Entry::kLink;
  return S_ISREG(st.st_mode) ? Entry::kFile : Entry::kOther;
}

namespace {

// Makes `name` in the folder `dir` holding `bytes`: false when something is
// there. `shown` names it in errors. With `st`, the file's status after the
// last write goes there.
bool create_at(int dir, const std::string& name, std::string_view bytes, const std::string& shown,
               struct stat* st = nullptr) {
  FileSystem& fs = file_system();
  int fd = fs.open_at(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw IOError(shown + ": cannot create the file: " + std::strerror(errno));
  }
  try {
    write_all(fd, bytes, shown);
    if (st && ::fstat(fd, st) != 0) throw IOError(shown + ": cannot read the file's status: " + std::strerror(errno));
  } catch (...) {
    fs.close(fd);
    fs.unlink_at(dir, name.c_str(), 0);
    throw;
  }
  if (fs.close(fd) != 0) {
    const int err = errno;
    fs.unlink_at(dir, name.c_str(), 0);
    throw IOError(shown + ": cannot write the file: " + std::strerror(err));
  }
  return true;
}

}  // namespace

bool BeneathDir::create(std::string_view rel, std::string_view bytes) const {
  std::string leaf;
  std::size_t made = std::string_view::npos;
  try {
    Fd parent(parent_of(rel, leaf, kMake, &made));
    return create_at(parent.fd, leaf, bytes, shown(rel));
  } catch (...) {
    unmake_dirs(rel, made);
    throw;
  }
}

void BeneathDir::replace(std::string_view rel, std::string_view bytes) const {
  std::string leaf;
  std::size_t made = std::string_view::npos;
  FileSystem& fs = file_system();
  try {
    Fd parent(parent_of(rel, leaf, kMake, &made));
    const std::string tmp = leaf + ".tmp";
    const std::string tmp_shown = shown(rel) + ".tmp";
    if (!create_at(parent.fd, tmp, bytes, tmp_shown)) {  // left by a build that was killed (or a link: removed, not followed)
      fs.unlink_at(parent.fd, tmp.c_str(), 0);
      if (!create_at(parent.fd, tmp, bytes, tmp_shown)) throw IOError(tmp_shown + ": cannot create the file: it exists");
    }
    if (fs.rename_at(parent.fd, tmp.c_str(), parent.fd, leaf.c_str(), false) != 0) {
      const int err = errno;
      fs.unlink_at(parent.fd, tmp.c_str(), 0);
      throw IOError(shown(rel) + ": cannot write the file: " + std::strerror(err));
    }
  } catch (...) {
    unmake_dirs(rel, made);
    throw;
  }
}

namespace {

// The bytes of the regular file `name` in the folder `dir` (as BeneathDir::read).
std::optional<std::string> read_at(int dir, const std::string& name, std::size_t max_bytes, const std::string& shown) {
  Fd file(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (file.fd < 0) {
    if (errno == ENOENT || errno == ELOOP) return std::nullopt;
    throw IOError(shown + ": cannot open the file: " + std::strerror(errno));
  }
  struct stat st;
  if (::fstat(file.fd, &st) != 0) throw IOError(shown + ": cannot read the file: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return std::nullopt;
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes)
    throw IOError(shown + ": expected at most " + std::to_string(max_bytes) + " bytes, found " +
                  std::to_string(st.st_size));
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(file.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IOError(shown + ": cannot read the file: " + std::strerror(errno));
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > max_bytes)
      throw IOError(shown + ": expected at most " + std::to_string(max_bytes) + " bytes, found more");
  }
  return out;
}

// Removes the regular file `name` in the folder `dir` (as BeneathDir::remove_file).
bool remove_at(int dir, const std::string& name, const std::string& shown) {
  struct stat st;
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return false;
  if (file_system().unlink_at(dir, name.c_str(), 0) != 0) {
    if (errno == ENOENT) return false;
    throw IOError(shown + ": cannot remove the file: " + std::strerror(errno));
  }
  return true;
}

}  // namespace

std::optional<std::string> BeneathDir::read(std::string_view rel, std::size_t max_bytes) const {
  std::string leaf;
  Fd parent(parent_of(rel, leaf, kWalk));
  if (parent.fd < 0) return std::nullopt;
  return read_at(parent.fd, leaf, max_bytes, shown(rel));
}

bool BeneathDir::remove_file(std::string_view rel) const {
  std::string leaf;
  Fd parent(parent_of(rel, leaf, kWalk));
  if (parent.fd < 0) return false;
  return remove_at(parent.fd, leaf, shown(rel));
}

BeneathDir::Folder BeneathDir::folder(std::string_view rel, bool make) const {
  std::string leaf;
  std::string shown_dir = shown(rel);
  if (rel.empty()) {
    int fd = ::openat(fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) throw IOError(path_ + ": cannot open the folder: " + std::strerror(errno));
    return Folder(fd, Folder::State::kPresent, path_.empty() || path_.back() == '/' ? path_ : path_ + "/");
  }
  const int fd = parent_of(std::string(rel) + "/x", leaf, make);
  const Folder::State state =
      fd >= 0 ? Folder::State::kPresent : fd == kMissing ? Folder::State::kMissing : Folder::State::kNotFolder;
  return Folder(fd >= 0 ? fd : -1, state, shown_dir + "/");
}

BeneathDir::Folder::~Folder() {
  if (fd_ >= 0) file_system().close(fd_);
}

BeneathDir::Folder BeneathDir::Folder::sub(const std::string& name, bool make) const {
  if (fd_ < 0) {
    if (make) throw IOError(shown(name) + ": cannot create the folder: the folder above is missing");
    return Folder(-1, state_, shown(name) + "/");
  }
  int fd = ::openat(fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && make) {
    if (file_system().mkdir_at(fd_, name.c_str(), 0777) != 0 && errno != EEXIST)
      throw IOError(shown(name) + ": cannot create the folder: " + std::strerror(errno));
    fd = ::openat(fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd >= 0) return Folder(fd, State::kPresent, shown(name) + "/");
  const int err = errno;
  if (err == ENOENT && !make) return Folder(-1, State::kMissing, shown(name) + "/");
  if (err == ELOOP || err == ENOTDIR) {
    if (!make) return Folder(-1, State::kNotFolder, shown(name) + "/");
    throw InvalidInput(shown(name) + ": is a symbolic link or not a folder; expected a folder (files are written only "
                       "beneath the folder, never through a link)");
  }
  throw IOError(shown(name) + ": cannot open the folder: " + std::strerror(err));
}

BeneathDir::Folder BeneathDir::Folder::make_sub(const std::string& name) const {
  if (fd_ < 0) throw IOError(shown(name) + ": cannot create the folder: the folder above is missing");
  // mkdirat never follows a link at `name` (EEXIST then, as for a folder
  // already there): sub's open then judges what stands there.
  if (file_system().mkdir_at(fd_, name.c_str(), 0777) != 0 && errno != EEXIST)
    throw IOError(shown(name) + ": cannot create the folder: " + std::strerror(errno));
  return sub(name, true);
}

bool BeneathDir::Folder::status(const std::string& name, struct stat& st) const {
  return fd_ >= 0 && ::fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

bool BeneathDir::Folder::create(const std::string& name, std::string_view bytes, struct stat& st) const {
  if (fd_ < 0) throw IOError(shown(name) + ": cannot create the file: the folder is missing");
  return create_at(fd_, name, bytes, shown(name), &st);
}

bool BeneathDir::Folder::remove_file(const std::string& name) const {
  return fd_ >= 0 && remove_at(fd_, name, shown(name));
}

std::optional<std::string> BeneathDir::Folder::read(const std::string& name, std::size_t max_bytes) const {
  if (fd_ < 0) return std::nullopt;
  return read_at(fd_, name, max_bytes, shown(name));
}

}  // namespace kistore
