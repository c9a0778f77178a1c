// Running another program (store/edge/process.h): exit codes, output, limits.
#include "store/edge/process.h"

#include <catch2/catch.hpp>

#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace kistore {
namespace {

ProcessResult sh(const std::string& script, std::chrono::milliseconds limit = std::chrono::milliseconds(0)) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.cwd = "/";
  spec.time_limit = limit;
  spec.stderr_tail = 16;
  spec.env = {{"KISTORE_PROCESS_TEST", "set"}};
  return run_process(spec);
}

TEST_CASE("process: output, exit code, environment and working folder", "[process]") {
  ProcessResult r = sh("echo out; echo err >&2; echo $KISTORE_PROCESS_TEST; exit 3");
  CHECK(r.started);
  CHECK(r.out == "out\nset\n");
  CHECK(r.err_tail == "err\n");
  REQUIRE(r.exit_code);
  CHECK(*r.exit_code == 3);
  CHECK_FALSE(r.succeeded());
  CHECK(r.outcome() == "exit 3");

  ProcessSpec spec;
  spec.argv = {"pwd"};
  spec.search_path = {"/usr/bin", "/bin"};
  spec.cwd = "/";
  CHECK(run_process(spec).out == "/\n");
}

TEST_CASE("process: the environment is exactly the spec's, nothing inherited", "[process]") {
  ::setenv("KISTORE_PROCESS_INHERITED", "leaked", 1);
  ProcessSpec spec;
  spec.argv = {"/usr/bin/env"};
  spec.cwd = "/";
  spec.env = {{"ONLY", "this"}};
  ProcessResult r = run_process(spec);
  ::unsetenv("KISTORE_PROCESS_INHERITED");
  CHECK(r.out == "ONLY=this\n");
}

TEST_CASE("process: a working folder is required, and absolute", "[process]") {
  ProcessSpec spec;
  spec.argv = {"/bin/true"};
  CHECK_THROWS_WITH(run_process(spec), Catch::Contains("expected an absolute working folder"));
  spec.cwd = "relative";
  CHECK_THROWS_WITH(run_process(spec), Catch::Contains("found \"relative\""));
}

TEST_CASE("process: a name is looked up in absolute folders only", "[process]") {
  // A decoy in a folder named by a relative entry ("", ".", "bin") never runs.
  std::string tmpl = (std::filesystem::temp_directory_path() / "kistore-process-XXXXXX").string();
  REQUIRE(mkdtemp(tmpl.data()));
  const std::filesystem::path dir = tmpl;
  auto script = [](const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p) << "#!/bin/sh\n" << text << "\n";
    std::filesystem::permissions(p, std::filesystem::perms::owner_all);
  };
  std::filesystem::create_directories(dir / "good");
  script(dir / "kistore-decoy-tool", "echo decoy");
  script(dir / "good" / "kistore-decoy-tool", "echo good");
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  ProcessSpec spec;
  spec.argv = {"kistore-decoy-tool"};
  spec.cwd = dir.string();
  for (const auto& path : std::vector<std::vector<std::string>>{{"", (dir / "good").string()},
                                                               {".", (dir / "good").string()},
                                                               {"good", ".", (dir / "good").string()}}) {
    spec.search_path = path;
    CHECK(run_process(spec).out == "good\n");
  }
  spec.search_path = {"", ".", "good"};
  ProcessResult r = run_process(spec);
  CHECK(r.not_found);
  CHECK(r.start_error ==
        "kistore-decoy-tool: not found on PATH (kistore looks in absolute folders only; it skipped \"\", \".\", "
        "\"good\")");
  CHECK(find_program("kistore-decoy-tool", {"", "."}) == std::nullopt);
  CHECK(find_program("./kistore-decoy-tool", {}) == (dir / "kistore-decoy-tool").string());  // an explicit path
  std::filesystem::current_path(before);
  std::filesystem::remove_all(dir);
}

TEST_CASE("process: Python isolated, and a working folder removed after", "[process]") {
  CHECK(isolated_python("python3", {"-c", "x"}) == std::vector<std::string>{"python3", "-I", "-B", "-c", "x"});
  std::string path;
  {
    WorkFolder work(std::filesystem::temp_directory_path().string(), "test");
    path = work.path();
    CHECK(std::filesystem::is_directory(path));
    std::ofstream(path + "/file") << "x";
  }
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK_THROWS_WITH(WorkFolder("relative", "test"), Catch::Contains("absolute"));
}

TEST_CASE("process: stdin is /dev/null, or the file the spec names", "[process]") {
  ProcessResult none = sh("cat; echo end");
  CHECK(none.out == "end\n");
  WorkFolder work(std::filesystem::temp_directory_path().string(), "test");
  std::ofstream(work.path() + "/in") << "request\n";
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "cat; echo end"};
  spec.cwd = "/";
  spec.stdin_file = work.path() + "/in";
  ProcessResult fed = run_process(spec);
  CHECK(fed.succeeded());
  CHECK(fed.out == "request\nend\n");
  spec.stdin_file = work.path() + "/missing";
  ProcessResult missing = run_process(spec);
  CHECK_FALSE(missing.started);
  CHECK(missing.out.empty());
}

TEST_CASE("process: stderr keeps its tail, stdout its head", "[process]") {
  ProcessResult r = sh("for i in 1 2 3 4 5 6 7 8 9; do echo line$i >&2; done; head -c 100000 /dev/zero");
  CHECK(r.succeeded());
  CHECK(r.err_tail.size() <= 16);
  CHECK(r.err_tail.substr(r.err_tail.size() - 6) == "line9\n");
  CHECK(r.out.size() == 100000);
  CHECK(last_lines("a\nb\nc\n", 2) == "b\nc");
  CHECK(last_lines("only", 3) == "only");
}

TEST_CASE("process: a time limit ends the program and its children", "[process]") {
  auto start = std::chrono::steady_clock::now();
  ProcessResult r = sh("sleep 30 & sleep 30", std::chrono::milliseconds(300));
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(r.timed_out);
  CHECK_FALSE(r.succeeded());
  CHECK(took < std::chrono::seconds(5));
  CHECK_THAT(r.outcome(), Catch::StartsWith("timed out after"));
}

namespace {
bool alive(pid_t pid) { return kill(pid, 0) == 0; }
pid_t pid_in(const std::filesystem::path& file) {
  std::ifstream in(file);
  long pid = 0;
  in >> pid;
  return static_cast<pid_t>(pid);
}
}  // namespace

TEST_CASE("process: what a program leaves outside its group (setsid) ends with it", "[process]") {
  WorkFolder work(std::filesystem::temp_directory_path().string(), "test");
  const std::filesystem::path dir(work.path());
  // A sleeper in a session of its own whose parent has exited, and one whose
  // parent leads a new session and still waits for it: both outside the
  // program's process group, where a time limit's kill of the group misses them.
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c",
               "setsid sleep 30 & echo $! > orphan; "
               "setsid sh -c 'sleep 30 & echo $! > grandchild; wait' & "
               "while [ ! -s grandchild ]; do sleep 0.01; done"};
  spec.cwd = dir.string();
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.search_path = {"/usr/bin", "/bin"};
  spec.end_what_it_leaves = true;
  ProcessResult r = run_process(spec);
  REQUIRE(r.succeeded());
  const pid_t orphan = pid_in(dir / "orphan"), grandchild = pid_in(dir / "grandchild");
  REQUIRE(orphan > 0);
  REQUIRE(grandchild > 0);
  CHECK_FALSE(alive(orphan));
  CHECK_FALSE(alive(grandchild));
  // And after a time limit.
  spec.argv = {"/bin/sh", "-c", "setsid sleep 30 & echo $! > orphan; sleep 30"};
  spec.time_limit = std::chrono::milliseconds(200);
  r = run_process(spec);
  CHECK(r.timed_out);
  const pid_t left = pid_in(dir / "orphan");
  REQUIRE(left > 0);
  CHECK_FALSE(alive(left));
  // A chain of 150 processes, each in a session of its own and the parent of
  // the next: all ended at once (found through their parents), not one level
  // a pass, which left a hundred running after 500 ms.
  {
    std::ofstream chain_sh(dir / "chain.sh");
    chain_sh << "echo $$ >> chain\n"
                "if [ \"$1\" -gt 0 ]; then setsid /bin/sh chain.sh $(($1 - 1)) & fi\n"
                "exec sleep 30\n";
  }
  spec.argv = {"/bin/sh", "-c",
               "setsid /bin/sh chain.sh 150 & "
               "while [ \"$(wc -l < chain 2>/dev/null || echo 0)\" -lt 151 ]; do sleep 0.02; done"};
  spec.time_limit = std::chrono::milliseconds(0);
  r = run_process(spec);
  REQUIRE(r.succeeded());
  std::ifstream chain(dir / "chain");
  long pid = 0, checked = 0;
  while (chain >> pid) {
    ++checked;
    CHECK_FALSE(alive(static_cast<pid_t>(pid)));
  }
  CHECK(checked == 151);
  // Without end_what_it_leaves (a credential helper's cache daemon), what
  // leaves the group runs on.
  spec.argv = {"/bin/sh", "-c", "setsid sleep 30 & echo $! > orphan"};
  spec.end_what_it_leaves = false;
  r = run_process(spec);
  const pid_t kept = pid_in(dir / "orphan");
  REQUIRE(kept > 0);
  CHECK(alive(kept));
  kill(kept, SIGKILL);
}

TEST_CASE("process: a program that is not there", "[process]") {
  ProcessSpec spec;
  spec.argv = {"kistore-no-such-program"};
  spec.search_path = {"/usr/bin", "/bin"};
  spec.cwd = "/";
  ProcessResult r = run_process(spec);
  CHECK_FALSE(r.started);
  CHECK(r.not_found);
  CHECK(r.start_error == "kistore-no-such-program: not found on PATH");
  spec.argv = {"/nonexistent/prog"};
  CHECK(run_process(spec).not_found);
}

}  // namespace
}  // namespace kistore
