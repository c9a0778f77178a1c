#include "store/edge/tempfiles.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <ctime>
#include <cstring>
#include <optional>

#include "objects/error.h"

namespace kistore {
namespace {

constexpr std::string_view kMarker = "_kistore_";
constexpr std::time_t kLegacyStaleSeconds = 3600;

// The writer's pid in "tmp_<kind>_kistore_<pid>_XXXXXX", nullopt for a
// pid-less name; false in `ours` when the name is not a kistore temp file.
std::optional<long> writer_pid(std::string_view name, bool& ours) {
  ours = false;
  if (!name.starts_with("tmp_")) return std::nullopt;
  std::size_t at = name.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  ours = true;
  std::string_view rest = name.substr(at + kMarker.size());
  std::size_t underscore = rest.find('_');
  if (underscore == std::string_view::npos || underscore == 0) return std::nullopt;
  long pid = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + underscore, pid);
  if (ec != std::errc() || end != rest.data() + underscore || pid <= 0) return std::nullopt;
  return pid;
}

bool process_is_gone(long pid) {
  // EPERM: the process exists (another user's): not gone.
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

std::string temp_file_template(std::string_view dir, std::string_view kind) {
  std::string out(dir);
  if (!out.empty() && out.back() != '/') out += '/';
  out += "tmp_";
  out += kind;
  out += kMarker;
  out += std::to_string(::getpid());
  out += "_XXXXXX";
  return out;
}

std::size_t sweep_stale_temp_files(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return 0;
  std::size_t removed = 0;
  const std::time_t now = std::time(nullptr);
  while (const dirent* e = ::readdir(d)) {
    bool ours = false;
    std::optional<long> pid = writer_pid(e->d_name, ours);
    if (!ours) continue;
    std::string path = dir + "/" + e->d_name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    bool stale = pid ? (*pid != ::getpid() && process_is_gone(*pid)) : now - st.st_mtime > kLegacyStaleSeconds;
    if (stale && ::unlink(path.c_str()) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

}  // namespace kistore
