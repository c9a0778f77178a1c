// The main of every unit-test binary: Catch2's, run in a process cut off from
// the machine's git configuration and kistore environment, so that a fresh CI
// machine (no identity, no ~/.gitconfig) and a developer's machine (an
// identity, maybe commit.gpgsign or a signing key) see the same tests.
// Tests that shell out to git inherit this environment; tests that want an
// identity pass one (CommitOptions::author, `git -c user.name=...`).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>

int main(int argc, char* argv[]) {
  namespace fs = std::filesystem;
  std::string home = (fs::temp_directory_path() / "kistore-test-home-XXXXXX").string();
  if (!mkdtemp(home.data())) {
    std::perror("mkdtemp");
    return 2;
  }
  setenv("HOME", home.c_str(), 1);
  setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
  setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
  for (const char* name :
       {"XDG_CONFIG_HOME", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "KISTORE_AUTHOR", "KISTORE_DATE", "KISTORE_DIR"})
    unsetenv(name);
  int rc = Catch::Session().run(argc, argv);
  std::error_code ec;
  fs::remove_all(home, ec);
  return rc;
}
