// The file gate (store/edge/files.h) and BeneathDir (beneath.h) on a broken
// disk: every write, fsync, create, close, rename and mkdir they make is
// failed in turn (full disk, EIO, a short write then a full disk, a failed
// fsync), and each failure must be Error(kIO) naming the path, leaving the
// folder byte for byte as it was; a short write alone must change nothing
// in the result.
#include "store/edge/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "objects/error.h"
#include "store/edge/beneath.h"
#include "store/edge/interrupt.h"
#include "tests/store/faulty_files.h"
#include "tests/store/support.h"

namespace kistore {
namespace {
using namespace test_support;
namespace fs = std::filesystem;

// Bytes that a write takes in more than one piece when it is cut short.
std::string bytes_of(std::size_t n, char seed) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + i * 7 % 251);
  return s;
}

TEST_CASE("file gate: ScopedFileSystem puts a FileSystem in use and back", "[files]") {
  CHECK(&file_system() == &posix_file_system());
  {
    FaultyFileSystem counter;
    ScopedFileSystem use(counter);
    CHECK(&file_system() == &counter);
    TempDir tmp;
    replace_file(tmp.path + "/a", "bytes", "test");
    CHECK(counter.count(Call::kCreate) == 1);
    CHECK(counter.count(Call::kWrite) == 1);
    CHECK(counter.count(Call::kSync) == 2);  // the file, then its folder
    CHECK(counter.count(Call::kRename) == 1);
  }
  CHECK(&file_system() == &posix_file_system());
}

TEST_CASE("file gate: write_all goes on through short writes", "[files]") {
  TempDir tmp;
  const std::string path = tmp.path + "/f";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  REQUIRE(fd >= 0);
  const std::string bytes = bytes_of(100000, 'a');
  for (int round = 0; round < 3; ++round) {
    FaultyFileSystem faulty(Call::kWrite, 1, Fault::kShortWrite);
    ScopedFileSystem use(faulty);
    write_all(fd, bytes, path);
    CHECK(faulty.fired());
    CHECK(faulty.count(Call::kWrite) >= 2);
  }
  ::close(fd);
  CHECK(read_file(path) == bytes + bytes + bytes);
}

TEST_CASE("file gate: a NewFile that is not placed leaves nothing", "[files]") {
  TempDir tmp;
  {
    NewFile f(tmp.path, "test", 0644);
    f.write("half");
    CHECK(fs::exists(f.path()));
    CHECK(fs::path(f.path()).filename().string().starts_with("tmp_test_kistore_" + std::to_string(::getpid()) + "_"));
  }
  CHECK(fs::is_empty(tmp.path));
  NewFile g(tmp.path, "test", 0444);
  g.write("whole");
  g.seal();
  CHECK(g.place(tmp.path + "/name"));
  NewFile h(tmp.path, "test", 0444);
  h.seal();
  CHECK_FALSE(h.place(tmp.path + "/name", /*keep_existing=*/true));  // kept; the temporary file goes
  CHECK(listing(tmp.path).size() == 1);
  CHECK(read_file(tmp.path + "/name") == "whole");
}

// What an interruption removes (store/edge/interrupt.h): each temporary file
// and folder from its creation until it is placed, renamed or removed.
TEST_CASE("file gate: temporary files and folders are tracked until placed or removed", "[files][interrupt]") {
  TempDir tmp;
  const std::size_t at_start = tracked_temporaries();
  {
    NewFile f(tmp.path, "test", 0644);
    CHECK(tracked_temporaries() == at_start + 1);
  }  // not placed: removed, and no longer tracked
  CHECK(tracked_temporaries() == at_start);
  NewFile g(tmp.path, "test", 0444);
  g.write("whole");
  g.seal();
  CHECK(tracked_temporaries() == at_start + 1);
  CHECK(g.place(tmp.path + "/name"));
  CHECK(tracked_temporaries() == at_start);  // placed: the store's now, never removed by an interruption
  std::string tmpl = tmp.path + "/raw_XXXXXX";
  int fd = create_temp_file(tmpl, 0600);
  ::close(fd);
  CHECK(tracked_temporaries() == at_start + 1);
  rename_file(tmpl, tmp.path + "/raw");
  CHECK(tracked_temporaries() == at_start);
  std::string folder = make_temp_folder(tmp.path + "/dir_XXXXXX");
  CHECK(tracked_temporaries() == at_start + 1);
  {
    TemporaryPaths made;
    made.add(tmp.path + "/site");
    CHECK(tracked_temporaries() == at_start + 2);
  }
  CHECK(tracked_temporaries() == at_start + 1);
  untrack_temporary(folder);
  CHECK(tracked_temporaries() == at_start);
}

TEST_CASE("file gate: a message names the path and the system's reason", "[files]") {
  TempDir tmp;
  FaultyFileSystem faulty(Call::kWrite, 1, Fault::kNoSpace);
  ScopedFileSystem use(faulty);
  try {
    replace_file(tmp.path + "/list", "text", "test");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kIO);  // exit 3 (cli/exit_code.cc)
    CHECK_THAT(e.what(), Catch::StartsWith(tmp.path + "/tmp_test_kistore_"));
    CHECK_THAT(e.what(), Catch::EndsWith(": cannot write: No space left on device"));
  }
  CHECK(fs::is_empty(tmp.path));
}

// ---- Every writer of the gate, under every fault ------------------------------

struct Folder : Scenario {
  TempDir tmp;
  std::string dir = tmp.path + "/out";
  Folder() {
    fs::create_directories(dir + "/runs");
    write_file(dir + "/index.html", "old index");
    write_file(dir + "/runs/a.html", "old a");
  }
  std::string root() const override { return dir; }
};

TEST_CASE("file gate under faults: replace_file replacing a file", "[files][faults]") {
  struct S : Folder {
    void run() override { replace_file(dir + "/index.html", bytes_of(300000, 'i'), "test"); }
  };
  CHECK(sweep_faults([] { return std::make_unique<S>(); }, {.last_sync_may_keep_result = true}) > 5);
}

TEST_CASE("file gate under faults: NewFile placed beside others, then the folder synced", "[files][faults]") {
  struct S : Folder {
    void run() override {
      NewFile f(dir + "/runs", "obj", 0444);
      f.write(bytes_of(5000, 'x'));
      f.pwrite("HEAD", 0);
      f.write(bytes_of(70000, 'y'));
      f.seal();
      f.place(dir + "/runs/b.pack", /*keep_existing=*/true);
      sync_folder(dir + "/runs");
    }
  };
  CHECK(sweep_faults([] { return std::make_unique<S>(); }, {.last_sync_may_keep_result = true}) > 5);
}

TEST_CASE("file gate under faults: BeneathDir::create into folders it makes", "[files][faults][beneath]") {
  struct S : Folder {
    void run() override {
      BeneathDir out = BeneathDir::open(dir, false);
      if (!out.create("runs/new/deeper/b.html", bytes_of(200000, 'b'))) throw std::logic_error("b.html was there");
    }
  };
  CHECK(sweep_faults([] { return std::make_unique<S>(); }) > 5);
}

TEST_CASE("file gate under faults: BeneathDir::replace of a file", "[files][faults][beneath]") {
  struct S : Folder {
    void run() override {
      BeneathDir out = BeneathDir::open(dir, false);
      out.replace("runs/a.html", bytes_of(200000, 'a'));
    }
  };
  CHECK(sweep_faults([] { return std::make_unique<S>(); }) > 5);
}

}  // namespace

TEST_CASE("shared_mode gives the modes git's adjust_shared_perm gives", "[files]") {
  // git 2.39 path.c calc_shared_perm and adjust_shared_perm, value by value.
  CHECK(shared_mode(0644, false, "group") == mode_t(0664));
  CHECK(shared_mode(0644, false, "true") == mode_t(0664));
  CHECK(shared_mode(0444, false, "group") == mode_t(0444));  // a read-only pack stays read-only
  CHECK(shared_mode(0755, true, "group") == mode_t(02775));
  CHECK(shared_mode(0700, true, "group") == mode_t(02770));
  CHECK(shared_mode(0644, false, "all") == mode_t(0664));
  CHECK(shared_mode(0600, false, "everybody") == mode_t(0664));
  CHECK(shared_mode(0755, true, "world") == mode_t(02775));
  CHECK(shared_mode(0644, false, "0640") == mode_t(0640));  // an octal mode replaces
  CHECK(shared_mode(0700, true, "0660") == mode_t(02770));
  CHECK(shared_mode(0644, false, "umask") == mode_t(0644));
  CHECK(shared_mode(0644, false, "false") == mode_t(0644));
  CHECK_FALSE(shared_mode(0644, false, "0400"));  // the owner must keep read and write
  CHECK_FALSE(shared_mode(0644, false, "sometimes"));
  CHECK_FALSE(shared_mode(0644, false, ""));
}

TEST_CASE("share_under: folders and files made under the shared folder get the group's bits, others not", "[files]") {
  const mode_t old_umask = ::umask(022);
  TempDir shared_dir, other_dir;
  share_under(shared_dir.path, "group");
  CHECK(make_folder(shared_dir.path + "/objects"));
  CHECK(make_folder(other_dir.path + "/objects"));
  std::string in = shared_dir.path + "/objects/tmp-XXXXXX", out = other_dir.path + "/objects/tmp-XXXXXX";
  ::close(create_temp_file(in, 0644));
  ::close(create_temp_file(out, 0644));
  share_under(shared_dir.path, "umask");  // the rule off again, for the other tests
  ::umask(old_umask);
  auto mode = [](const std::string& p) {
    struct stat st;
    REQUIRE(::stat(p.c_str(), &st) == 0);
    return st.st_mode & 07777;
  };
  CHECK(mode(shared_dir.path + "/objects") == 02775);
  CHECK(mode(in) == 0664);
  CHECK(mode(other_dir.path + "/objects") == 0755);
  CHECK(mode(out) == 0644);
  CHECK_THROWS_WITH(share_under(shared_dir.path, "sometimes"), Catch::Contains("core.sharedRepository"));
}

TEST_CASE("adjust_shared_by: a file of another shared repository gets its group's bits", "[files]") {
  // A local remote's HEAD, written by libgit2 with the pusher's umask, in a
  // repository shared by a setting that is not the store's.
  TempDir other;
  auto made = [&](const std::string& name, mode_t m) {
    const std::string p = other.path + "/" + name;
    ::close(::open(p.c_str(), O_CREAT | O_WRONLY, 0600));
    REQUIRE(::chmod(p.c_str(), m) == 0);
    return p;
  };
  auto mode = [](const std::string& p) {
    struct stat st;
    REQUIRE(::lstat(p.c_str(), &st) == 0);
    return st.st_mode & 07777;
  };
  const std::string head = made("HEAD", 0644), pack = made("pack", 0444), plain = made("plain", 0644);
  adjust_shared_by(head, "group");
  adjust_shared_by(pack, "group");
  adjust_shared_by(plain, "umask");
  adjust_shared_by(plain, "sometimes");  // a value git refuses: nothing
  adjust_shared_by(other.path + "/gone", "group");
  CHECK(mode(head) == 0664);
  CHECK(mode(pack) == 0444);
  CHECK(mode(plain) == 0644);
  REQUIRE(::symlink("HEAD", (other.path + "/link").c_str()) == 0);
  REQUIRE(::chmod(head.c_str(), 0600) == 0);
  adjust_shared_by(other.path + "/link", "group");  // a link is not followed
  CHECK(mode(head) == 0600);
}

}  // namespace kistore
