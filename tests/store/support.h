// Helpers the store tests share: a temporary folder, running shell commands
// (stock git, zstd, python3) and reading and writing files.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "objects/commit_id.h"

namespace kistore::test_support {

// A fresh folder below the system's temporary folder, removed with its
// contents when the TempDir goes.
struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kistore-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// Environment settings that put stock git on a fixed identity and keep the
// system's and the user's config out, for commands a test runs with sh().
inline const std::string kGitIdentity =
    "GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid GIT_COMMITTER_NAME=t "
    "GIT_COMMITTER_EMAIL=t@example.invalid GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent ";

// `s` as one single-quoted shell word.
inline std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The commit `hex` names (40 lowercase hex digits, as git rev-parse prints).
inline CommitId cid(const std::string& hex) {
  std::optional<CommitId> id = CommitId::parse(hex);
  if (!id) throw std::runtime_error("not a commit id: \"" + hex + "\"");
  return *id;
}

// As kGitIdentity, with HOME the test's own folder and fixed dates, so that
// commits stock git makes in a test have the same ids on every run.
inline std::string git_env(const TempDir& tmp) {
  return "HOME=" + quote(tmp.path) + " GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@example.org "
         "GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@example.org GIT_AUTHOR_DATE='1700000000 +0000' "
         "GIT_COMMITTER_DATE='1700000000 +0000' ";
}

struct Shell {
  int rc;
  std::string out;
};

// Runs `cmd` with /bin/sh, capturing stdout (stderr folded in when asked).
inline Shell sh(const std::string& cmd, bool with_stderr = false) {
  std::string full = cmd + (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(full.c_str(), "r");
  if (!p) throw std::runtime_error("popen failed: " + cmd);
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

inline std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// stdout of a command that must succeed (its stderr is shown only on failure).
inline std::string must(const std::string& cmd) {
  Shell r = sh(cmd, false);
  if (r.rc != 0) {
    INFO(cmd << "\n" << sh(cmd, true).out);
    REQUIRE(r.rc == 0);
  }
  return r.out;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace kistore::test_support
