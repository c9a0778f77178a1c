// Running another program (store/process.h): exit codes, output, limits.
#include "store/process.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

namespace kistore {
namespace {

ProcessResult sh(const std::string& script, std::chrono::milliseconds limit = std::chrono::milliseconds(0)) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
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
  spec.cwd = "/";
  CHECK(run_process(spec).out == "/\n");
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

TEST_CASE("process: a program that is not there", "[process]") {
  ProcessSpec spec;
  spec.argv = {"kistore-no-such-program"};
  ProcessResult r = run_process(spec);
  CHECK_FALSE(r.started);
  CHECK(r.not_found);
  CHECK(r.start_error == "kistore-no-such-program: not found on PATH");
  spec.argv = {"/nonexistent/prog"};
  CHECK(run_process(spec).not_found);
}

}  // namespace
}  // namespace kistore
