#include "store/git/native_repo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "objects/sha1.h"

namespace kistore::git {
namespace {

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool is_file(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}
// libgit2 refuses a repository another user owns (safe.directory): leave
// every such case to it.
bool owned_by_me(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && st.st_uid == ::geteuid();
}

// The whole file at `path`, at most `limit` bytes; nullopt when it cannot
// be read or is larger.
std::optional<std::string> slurp(const std::string& path, std::size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) <= limit;
  if (ok) {
    out.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < out.size()) {
      ssize_t n = ::read(fd, out.data() + got, out.size() - got);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    ok = got == out.size();
  }
  ::close(fd);
  if (!ok) return std::nullopt;
  return out;
}

std::string lower_trimmed(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\r') out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return out;
}

// Whether the repository's config holds only what this reader may ignore:
// no [extensions] or [include*] section, a repositoryformatversion of 0 or
// 1, no remote marked promisor (a partial clone: Store::open names it). A
// missing config is libgit2's to judge.
bool plain_config(const std::string& gitdir) {
  std::optional<std::string> text = slurp(gitdir + "config", 1 << 20);
  if (!text) return false;
  std::istringstream lines(*text);
  std::string section;
  for (std::string line; std::getline(lines, line);) {
    std::string l = lower_trimmed(line);
    if (l.empty() || l[0] == '#' || l[0] == ';') continue;
    if (l[0] == '[') {
      section = l;
      if (l.starts_with("[extensions") || l.starts_with("[include")) return false;
      continue;
    }
    if (section.starts_with("[remote") && l.starts_with("promisor")) return false;
    if (section.starts_with("[core") && l.starts_with("repositoryformatversion") &&
        l != "repositoryformatversion=0" && l != "repositoryformatversion=1")
      return false;
  }
  return true;
}

bool plain_ref_name(std::string_view name) {
  if (!name.starts_with("refs/") || name.size() > 200 || name.find("..") != std::string_view::npos ||
      name.back() == '/' || name.find("//") != std::string_view::npos || name.ends_with(".lock"))
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '-' ||
           c == '_' || c == '.';
  });
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool parse_hex_id(std::string_view hex, git_oid& out) {
  if (hex.size() != 2 * GIT_OID_RAWSZ) return false;
  for (std::size_t i = 0; i < GIT_OID_RAWSZ; ++i) {
    int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.id[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return true;
}

std::optional<NativeRepo> locate_repository(const std::string& dir) {
  // An absolute path without symbolic links, as libgit2's repository path.
  char* real = dir.empty() ? nullptr : ::realpath(dir.c_str(), nullptr);
  if (!real) return std::nullopt;
  std::string root = real;
  std::free(real);
  if (root.back() != '/') root += '/';
  std::string gitdir;
  if (is_dir(root + ".git")) {
    if (!owned_by_me(root)) return std::nullopt;
    gitdir = root + ".git/";
  } else if (is_file(root + "HEAD") && is_dir(root + "objects") && is_dir(root + "refs")) {
    gitdir = root;
  } else {
    return std::nullopt;  // not a repository, or a gitdir link: libgit2 says which
  }
  if (!owned_by_me(gitdir) || exists(gitdir + "commondir") || exists(gitdir + "objects/info/alternates") ||
      exists(gitdir + "shallow") ||
      !is_dir(gitdir + "objects") || !is_dir(gitdir + "refs") || !plain_config(gitdir))
    return std::nullopt;
  std::optional<std::string> head = slurp(gitdir + "HEAD", 4096);
  if (!head || !head->starts_with("ref: ")) return std::nullopt;  // detached, or odd: libgit2's message
  std::string_view name = std::string_view(*head).substr(5);
  while (!name.empty() && (name.back() == '\n' || name.back() == '\r' || name.back() == ' ')) name.remove_suffix(1);
  if (!plain_ref_name(name)) return std::nullopt;
  return NativeRepo{gitdir, std::string(name)};
}

RefState read_ref(const std::string& gitdir, const std::string& name, git_oid& out) {
  if (!plain_ref_name(name)) return RefState::kUnknown;
  if (std::optional<std::string> loose = slurp(gitdir + name, 4096)) {
    std::string_view text = *loose;
    if (text.size() == 41 && text[40] == '\n') text.remove_suffix(1);
    return parse_hex_id(text, out) ? RefState::kFound : RefState::kUnknown;
  }
  if (exists(gitdir + name)) return RefState::kUnknown;  // a folder, say: libgit2 explains
  std::optional<std::string> packed = slurp(gitdir + "packed-refs", std::size_t(1) << 30);
  if (!packed) return exists(gitdir + "packed-refs") ? RefState::kUnknown : RefState::kAbsent;
  std::string_view rest = *packed;
  while (!rest.empty()) {
    std::size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (line.empty() || line[0] == '#' || line[0] == '^') continue;
    if (line.size() < 42 || line[40] != ' ') return RefState::kUnknown;
    if (line.substr(41) != name) continue;
    return parse_hex_id(line.substr(0, 40), out) ? RefState::kFound : RefState::kUnknown;
  }
  return RefState::kAbsent;
}

bool commit_tree_id(std::string_view commit, git_oid& tree) {
  if (!commit.starts_with("tree ") || commit.size() < 46 || commit[45] != '\n' ||
      !parse_hex_id(commit.substr(5, 40), tree))
    return false;
  std::string_view header = commit.substr(0, commit.find("\n\n"));
  return header.find("\nauthor ") != std::string_view::npos && header.find("\ncommitter ") != std::string_view::npos;
}

// ---- NativeObjects -------------------------------------------------------------

NativeObjects::NativeObjects(std::string gitdir) : gitdir_(std::move(gitdir)), packs_(gitdir_) {}

bool NativeObjects::read(const git_oid& id, git_object_t& type, std::string& out) const {
  return packs_.read(id, type, out) || packs_.read_any(id, type, out) || read_loose(id, type, out);
}

bool NativeObjects::read_loose(const git_oid& id, git_object_t& type, std::string& out) const {
  char hex[2 * GIT_OID_RAWSZ + 1];
  static constexpr char digits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < GIT_OID_RAWSZ; ++i) {
    hex[2 * i] = digits[id.id[i] >> 4];
    hex[2 * i + 1] = digits[id.id[i] & 15];
  }
  hex[2 * GIT_OID_RAWSZ] = '\0';
  std::string path = gitdir_ + "objects/" + std::string(hex, 2) + "/" + (hex + 2);
  std::optional<std::string> file = slurp(path, std::size_t(1) << 30);
  if (!file || file->empty()) return false;
  // Inflate the whole stream; it may hold no more than deflate's ratio allows.
  const std::size_t bound = file->size() * 1032 + 64;
  std::string all;
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return false;
  z.next_in = reinterpret_cast<unsigned char*>(file->data());
  z.avail_in = static_cast<uInt>(file->size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    std::size_t have = all.size();
    std::size_t grow = std::min<std::size_t>(std::max<std::size_t>(have, 4096), bound + 1 - have);
    if (grow == 0) break;
    all.resize(have + grow);
    z.next_out = reinterpret_cast<unsigned char*>(all.data() + have);
    z.avail_out = static_cast<uInt>(grow);
    rc = inflate(&z, Z_NO_FLUSH);
    all.resize(have + grow - z.avail_out);
  }
  bool ended = rc == Z_STREAM_END && z.avail_in == 0;
  inflateEnd(&z);
  if (!ended) return false;
  // "<type> <size>\0<bytes>", hashed whole to the id.
  std::size_t space = all.find(' '), nul = all.find('\0');
  if (space == std::string::npos || nul == std::string::npos || space > nul || nul - space < 2 || nul - space > 21)
    return false;
  std::string_view name(all.data(), space);
  type = name == "commit" ? GIT_OBJECT_COMMIT
         : name == "tree" ? GIT_OBJECT_TREE
         : name == "blob" ? GIT_OBJECT_BLOB
         : name == "tag"  ? GIT_OBJECT_TAG
                          : GIT_OBJECT_INVALID;
  if (type == GIT_OBJECT_INVALID) return false;
  std::uint64_t size = 0;
  for (std::size_t i = space + 1; i < nul; ++i) {
    if (all[i] < '0' || all[i] > '9' || (i == space + 1 && all[i] == '0' && nul - space > 2)) return false;
    size = size * 10 + static_cast<std::uint64_t>(all[i] - '0');
  }
  if (size != all.size() - nul - 1) return false;
  Sha1 sha;
  sha.init();
  sha.update(all.data(), all.size());
  unsigned char actual[GIT_OID_RAWSZ];
  sha.final(actual);
  if (std::memcmp(actual, id.id, GIT_OID_RAWSZ) != 0) return false;
  out.assign(all, nul + 1, std::string::npos);
  return true;
}

}  // namespace kistore::git
