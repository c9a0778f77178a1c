// Temporary files of kistore's writers (store/edge/tempfiles.h): a crashed
// writer's are swept, a live writer's and other programs' never are.
#include "store/edge/tempfiles.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include <catch2/catch.hpp>
#include <ctime>
#include <filesystem>
#include <string>

#include "tests/store/support.h"

namespace kistore {
namespace {
using namespace test_support;
namespace fs = std::filesystem;

// The pid of a child that has exited and been reaped: no process has it now
// (until the kernel reuses it, which takes a full turn of the pid space).
long dead_pid() {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

void touch(const std::string& path, std::time_t age_seconds = 0) {
  write_file(path, "partial");
  if (age_seconds) {
    struct utimbuf t;
    t.actime = t.modtime = std::time(nullptr) - age_seconds;
    REQUIRE(::utime(path.c_str(), &t) == 0);
  }
}

}  // namespace

TEST_CASE("tempfiles: a template names the kind and this process", "[tempfiles]") {
  CHECK(temp_file_template("/x/objects/pack", "pack") ==
        "/x/objects/pack/tmp_pack_kistore_" + std::to_string(::getpid()) + "_XXXXXX");
  CHECK(temp_file_template("/x/objects/", "obj") == "/x/objects/tmp_obj_kistore_" + std::to_string(::getpid()) + "_XXXXXX");
}

TEST_CASE("tempfiles: the sweep removes dead writers' files and nothing else", "[tempfiles]") {
  TempDir tmp;
  const std::string d = tmp.path;
  const std::string dead = std::to_string(dead_pid());
  const std::string self = std::to_string(::getpid());
  const std::string dead_pack = d + "/tmp_pack_kistore_" + dead + "_a1b2c3";
  const std::string dead_obj = d + "/tmp_obj_kistore_" + dead + "_zzzzzz";
  const std::string live_self = d + "/tmp_pack_kistore_" + self + "_q1q1q1";
  const std::string live_init = d + "/tmp_idx_kistore_1_abcdef";  // pid 1 always runs
  const std::string legacy_old = d + "/tmp_pack_kistore_Ab12Cd";
  const std::string legacy_new = d + "/tmp_obj_kistore_Ef34Gh";
  const std::string gits = d + "/tmp_pack_" + dead + "_x";          // git's own, not kistore's
  const std::string quarantine = d + "/tmp_pack_incoming_ABCDEF";  // a pull's
  const std::string pack = d + "/pack-0123.pack";
  for (const auto* p : {&dead_pack, &dead_obj, &live_self, &live_init, &legacy_new, &gits, &quarantine, &pack})
    touch(*p);
  touch(legacy_old, 2 * 3600);
  fs::create_directory(d + "/tmp_obj_kistore_" + dead + "_dir");  // not a file: left

  CHECK(sweep_stale_temp_files(d) == 3);
  CHECK_FALSE(fs::exists(dead_pack));
  CHECK_FALSE(fs::exists(dead_obj));
  CHECK_FALSE(fs::exists(legacy_old));
  for (const auto* p : {&live_self, &live_init, &legacy_new, &gits, &quarantine, &pack}) {
    INFO(*p);
    CHECK(fs::exists(*p));
  }
  CHECK(fs::is_directory(d + "/tmp_obj_kistore_" + dead + "_dir"));
  CHECK(sweep_stale_temp_files(d + "/missing") == 0);
}

}  // namespace kistore
