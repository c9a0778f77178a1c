#include "cli/process_env.h"

#include <cstdlib>
#include <filesystem>
#include <map>

#include "objects/error.h"
#include "objects/json.h"

namespace kistore::cli {
namespace {

namespace fs = std::filesystem;

// Passed as they are (see the header for why each).
constexpr const char* kPassed[] = {"HOME",   "TMPDIR",  "LANG", "LC_ALL", "LC_CTYPE", "CUDA_VISIBLE_DEVICES",
                                   "CUDA_DEVICE_ORDER"};
// Lists of folders: passed with their absolute entries only.
constexpr const char* kFolderLists[] = {"PATH", "LD_LIBRARY_PATH"};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t colon = list.find(':', start);
    out.push_back(list.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}

std::string absolute_entries(const std::string& list) {
  std::string out;
  for (const std::string& dir : split(list))
    if (!dir.empty() && dir.front() == '/') out += (out.empty() ? "" : ":") + dir;
  return out;
}

bool is_folder_list(const std::string& name) {
  for (const char* n : kFolderLists)
    if (name == n) return true;
  return false;
}

}  // namespace

const char* const kProcessHelp =
    "Programs are started with a fixed argument list, in a fresh folder kistore makes (never the\n"
    "current one), with an environment of PATH and LD_LIBRARY_PATH (absolute entries only), HOME,\n"
    "TMPDIR, LANG, LC_ALL, LC_CTYPE, CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER alone, and Python\n"
    "isolated (`python3 -I -B`: neither the current folder, the user's site-packages nor any\n"
    "PYTHON* variable counts). nvidia-smi and python3 are looked up in PATH's absolute folders\n"
    "only. Pass anything else explicitly: --env NAME=VALUE for another variable (e.g.\n"
    "TRITON_CACHE_DIR; PYTHON* names are refused: the isolated Python ignores them), and\n"
    "--pythonpath DIR for a folder Python should import from, as PYTHONPATH would.";

void add_process_options(CommandSpec* app, ProcessOptions& o) {
  app->add_option("--env", o.env, "Pass this variable to the programs kistore starts (repeatable)")
      ->type_name("NAME=VALUE")
      ->one_per_use();
  app->add_option("--pythonpath", o.python_path, "Put this folder first on Python's import path (repeatable)")
      ->type_name("DIR")
      ->one_per_use();
}

ProcessContext process_context(const ProcessOptions& o) {
  std::map<std::string, std::string> env;
  for (const char* name : kPassed)
    if (const char* v = std::getenv(name)) env[name] = v;
  for (const char* name : kFolderLists)
    if (const char* v = std::getenv(name)) env[name] = v;
  for (const std::string& item : o.env) {
    std::size_t eq = item.find('=');
    std::string name = item.substr(0, eq == std::string::npos ? 0 : eq);
    bool ok = eq != std::string::npos && !name.empty() && !(name[0] >= '0' && name[0] <= '9');
    for (char c : name)
      ok = ok && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
    if (!ok)
      throw InvalidInput("--env " + quoted_excerpt(item) +
                         ": expected NAME=VALUE with NAME of letters, digits and _, found no such NAME");
    if (name.rfind("PYTHON", 0) == 0)
      throw InvalidInput("--env " + quoted_excerpt(item) +
                         ": expected a variable other than PYTHON*, found " + name +
                         " (Python runs isolated and ignores it; for import folders pass --pythonpath DIR)");
    env[name] = item.substr(eq + 1);
  }
  ProcessContext context;
  if (auto path = env.find("PATH"); path != env.end()) context.search_path = split(path->second);
  for (auto& [name, value] : env) {
    if (is_folder_list(name)) value = absolute_entries(value);
    context.env.emplace_back(name, value);
  }
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec || tmp.empty()) tmp = "/tmp";
  context.temp_parent = fs::absolute(tmp).lexically_normal().string();
  if (context.temp_parent.size() > 1 && context.temp_parent.back() == '/') context.temp_parent.pop_back();
  return context;
}

std::vector<std::string> python_path_of(const ProcessOptions& o) {
  std::vector<std::string> out;
  for (const std::string& dir : o.python_path) {
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec))
      throw InvalidInput("--pythonpath " + quoted_excerpt(dir) + ": expected a folder, found none");
    out.push_back(fs::absolute(dir).lexically_normal().string());
  }
  return out;
}

}  // namespace kistore::cli
