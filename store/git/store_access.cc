#include "store/git/store_access.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "objects/error.h"

namespace kistore {
namespace {

constexpr const char* kNoStore =
    ": no store here (create one with `kistore init`, or name one with --store or KISTORE_DIR)";

// "nobody (uid 65534)", or "uid 65534" for a user without a name.
std::string user_text(uid_t uid) {
  std::string id = "uid " + std::to_string(uid);
  if (const passwd* pw = ::getpwuid(uid); pw && pw->pw_name && *pw->pw_name) return pw->pw_name + (" (" + id + ")");
  return id;
}

// strerror's text, lower case at the start ("permission denied").
// "evidence (gid 1001)", or "gid 1001" for a group without a name.
std::string group_text(gid_t gid) {
  std::string id = "gid " + std::to_string(gid);
  if (const group* gr = ::getgrgid(gid); gr && gr->gr_name && *gr->gr_name) return gr->gr_name + (" (" + id + ")");
  return id;
}

std::string errno_words(int error) {
  std::string text = std::strerror(error);
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z') text[0] = static_cast<char>(text[0] + 32);
  return text;
}

std::string absolute(const std::string& dir) {
  char* real = ::realpath(dir.c_str(), nullptr);
  if (!real) return dir;
  std::string out = real;
  std::free(real);
  return out;
}

// Whether `path` (a folder) holds what every git directory holds.
bool looks_like_gitdir(const std::string& path) {
  struct stat st {};
  return ::stat((path + "/HEAD").c_str(), &st) == 0 && ::stat((path + "/objects").c_str(), &st) == 0 &&
         S_ISDIR(st.st_mode);
}

}  // namespace

std::string not_opened_message(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == EACCES)
      return dir + ": permission denied: kistore runs as " + user_text(::geteuid()) +
             ", who may not look inside a folder on the way to it; ask its owner for access";
    return dir + kNoStore;
  }
  if (!S_ISDIR(st.st_mode)) return dir + kNoStore;
  std::string gitdir = dir;
  if (struct stat dot{}; ::stat((dir + "/.git").c_str(), &dot) == 0 && S_ISDIR(dot.st_mode)) gitdir = dir + "/.git";
  if (::faccessat(AT_FDCWD, gitdir.c_str(), R_OK | X_OK, AT_EACCESS) != 0 && errno == EACCES)
    return gitdir + ": permission denied: kistore runs as " + user_text(::geteuid()) +
           ", who may not read it; ask its owner, " + user_text(st.st_uid) + ", for read access";
  if (!looks_like_gitdir(gitdir)) return dir + kNoStore;
  struct stat git_st {};
  ::stat(gitdir.c_str(), &git_st);
  uid_t me = ::geteuid();
  uid_t owner = st.st_uid != me ? st.st_uid : git_st.st_uid;
  if (owner == me) return dir + kNoStore;
  return dir + ": a repository owned by " + user_text(owner) + " while kistore runs as " + user_text(me) +
         ": kistore's libgit2 opens only a user's own repositories (git's safe.directory rule); "
         "if you trust it, `git config --global --add safe.directory " +
         absolute(dir) + "` lets kistore open it";
}

void check_write_access(const std::string& gitdir) {
  std::string root = gitdir;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  for (const char* folder : {"", "/objects", "/objects/pack", "/refs/heads", "/logs/refs/heads"}) {
    std::string path = root + folder;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT && *folder != '\0') continue;  // made when first needed, from a writable parent
      throw IOError(path + ": " + errno_words(errno) + "; nothing was written");
    }
    if (::faccessat(AT_FDCWD, path.c_str(), W_OK | X_OK, AT_EACCESS) == 0) continue;
    int error = errno;
    std::string why = error == EROFS ? "the file system is mounted read-only"
                                     : "kistore runs as " + user_text(::geteuid()) + ", who may not create files in it";
    throw IOError(path + ": " + errno_words(error) + ": " + why +
                  "; nothing was written (writing needs write access to the store's folders; "
                  "`kistore clone` makes a copy to write to)");
  }
}

void check_push_access(const std::string& gitdir, const std::string& where) {
  std::string root = gitdir;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  for (const char* folder : {"/objects", "/objects/pack", "/refs/heads", "/logs/refs/heads"}) {
    std::string path = root + folder;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT && std::string_view(folder) != "/objects") continue;  // git makes it when needed
      throw RemoteError("cannot push to " + where + ": " + path + ": " + errno_words(errno) +
                        "; nothing was sent or written");
    }
    if (::faccessat(AT_FDCWD, path.c_str(), W_OK | X_OK, AT_EACCESS) == 0) continue;
    int error = errno;
    std::string why = error == EROFS ? "the file system is mounted read-only"
                                     : "kistore runs as " + user_text(::geteuid()) + ", who may not create files in it";
    if (error != EROFS && (st.st_mode & (S_IWGRP | S_IXGRP)) == (S_IWGRP | S_IXGRP))
      why += " (members of its group, " + group_text(st.st_gid) + ", may write there)";
    throw RemoteError("cannot push to " + where + ": " + path + ": " + errno_words(error) + ": " + why +
                      "; nothing was sent or written");
  }
}

}  // namespace kistore
