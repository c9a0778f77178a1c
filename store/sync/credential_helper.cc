#include "store/sync/credential_helper.h"

#include <unistd.h>

#include <cctype>

#include "store/edge/files.h"

namespace kistore {
namespace {

bool sendable(std::string_view value) { return value.find_first_of(std::string_view("\n\0", 2)) == std::string_view::npos; }

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string GitCredentialHelpers::describe(const std::string& url) {
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos || lowercase(url.substr(0, scheme_end)) != "https" || !sendable(url)) return "";
  const std::size_t authority = scheme_end + 3;
  std::size_t path_at = url.find('/', authority);
  std::string host = url.substr(authority, path_at == std::string::npos ? std::string::npos : path_at - authority);
  if (const std::size_t at = host.rfind('@'); at != std::string::npos) host = host.substr(at + 1);  // no user:password
  if (host.empty()) return "";
  std::string path = path_at == std::string::npos ? "" : url.substr(path_at + 1);
  if (const std::size_t query = path.find_first_of("?#"); query != std::string::npos) path.resize(query);
  std::string out = "protocol=https\nhost=" + host + "\n";
  if (!path.empty()) out += "path=" + path + "\n";
  return out;
}

std::optional<std::string> GitCredentialHelpers::run(const char* action, const std::string& input, std::string* why) const {
  auto fail = [&](const std::string& what) -> std::optional<std::string> {
    if (why) *why = what;
    return std::nullopt;
  };
  const std::optional<std::string> git = find_program("git", process_.search_path);
  if (!git) return fail("git was not found on PATH");
  if (process_.temp_parent.empty()) return fail("no folder for git's input");
  WorkFolder work(process_.temp_parent, "credential");
  std::string file = work.path() + "/input-XXXXXX";
  const int fd = create_temp_file(file, 0600, "git credential's input");
  try {
    write_all(fd, input, file);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  ProcessSpec spec = process_spec(process_, {*git, "credential", action});
  spec.cwd = work.path();
  spec.stdin_file = file;
  spec.env.emplace_back("GIT_TERMINAL_PROMPT", "0");
  spec.time_limit = std::chrono::seconds(30);
  spec.stdout_limit = 64u << 10;
  const ProcessResult ran = run_process(spec);
  if (!ran.started) return fail("git credential " + std::string(action) + " could not start: " + ran.start_error);
  if (!ran.succeeded()) return fail("git credential " + std::string(action) + ": " + ran.outcome());
  return ran.out;
}

std::optional<HelperCredential> GitCredentialHelpers::fill(const std::string& url, const std::string& user,
                                                          std::string* why) const {
  std::string input = describe(url);
  if (input.empty() || !sendable(user)) return std::nullopt;
  if (!user.empty()) input += "username=" + user + "\n";
  input += "\n";
  const std::optional<std::string> out = run("fill", input, why);
  if (!out) return std::nullopt;
  HelperCredential c;
  bool has_password = false;
  std::string_view rest = *out;
  while (!rest.empty()) {
    const std::size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (line.starts_with("username=")) c.username = line.substr(9);
    if (line.starts_with("password=")) c.password = line.substr(9), has_password = true;
  }
  if (!has_password || c.password.empty()) {
    if (why) *why = "git's credential helpers hold no password for it";
    return std::nullopt;
  }
  if (c.username.empty()) c.username = user;
  return c;
}

void GitCredentialHelpers::approve(const std::string& url, const HelperCredential& c) const {
  std::string input = describe(url);
  if (input.empty() || !sendable(c.username) || !sendable(c.password)) return;
  (void)run("approve", input + "username=" + c.username + "\npassword=" + c.password + "\n\n", nullptr);
}

void GitCredentialHelpers::reject(const std::string& url, const HelperCredential& c) const {
  std::string input = describe(url);
  if (input.empty() || !sendable(c.username) || !sendable(c.password)) return;
  (void)run("reject", input + "username=" + c.username + "\npassword=" + c.password + "\n\n", nullptr);
}

}  // namespace kistore
