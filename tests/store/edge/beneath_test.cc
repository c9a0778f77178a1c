// Writing beneath a folder (store/edge/beneath.h): relative paths only, never
// through a link, never outside the folder.
#include "store/edge/beneath.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "objects/error.h"
#include "tests/store/support.h"

namespace kistore {
namespace {
using namespace test_support;
namespace fs = std::filesystem;

TEST_CASE("check_relative_path refuses what is not beneath a folder") {
  CHECK(check_relative_path("index.html").empty());
  CHECK(check_relative_path("runs/abc.html").empty());
  CHECK(check_relative_path("a..b/c").empty());  // a name with dots is a name
  CHECK(check_relative_path("") == "is empty");
  CHECK(check_relative_path("/etc/passwd") == "is absolute");
  CHECK(check_relative_path("../../victim") == "has a \"..\" component");
  CHECK(check_relative_path("runs/../../x") == "has a \"..\" component");
  CHECK(check_relative_path("./x") == "has a \".\" component");
  CHECK(check_relative_path("runs//x") == "has an empty component");
  CHECK(check_relative_path("runs/") == "has an empty component");
  CHECK(check_relative_path(std::string("a\0b", 3)) == "holds a NUL byte");
}

TEST_CASE("BeneathDir writes, reads and removes files beneath its folder") {
  TempDir tmp;
  const std::string dir = tmp.path + "/site";
  BeneathDir out = BeneathDir::open(dir, true);
  out.make_dirs("runs/deep");
  CHECK(out.create("runs/deep/a.html", "one"));
  CHECK_FALSE(out.create("runs/deep/a.html", "two"));  // something is there: nothing written
  CHECK(read_file(dir + "/runs/deep/a.html") == "one");
  out.replace("runs/deep/a.html", "three");
  CHECK(read_file(dir + "/runs/deep/a.html") == "three");
  CHECK_FALSE(fs::exists(dir + "/runs/deep/a.html.tmp"));
  CHECK(out.read("runs/deep/a.html", 100) == std::optional<std::string>("three"));
  CHECK_THROWS_AS(out.read("runs/deep/a.html", 2), Error);
  CHECK(out.entry("runs/deep/a.html") == BeneathDir::Entry::kFile);
  CHECK(out.entry("runs/deep") == BeneathDir::Entry::kOther);
  CHECK(out.entry("nothing/here") == BeneathDir::Entry::kMissing);
  CHECK(out.create("new/folder/b.json", "{}"));  // folders on the way are made
  CHECK(out.remove_file("runs/deep/a.html"));
  CHECK_FALSE(out.remove_file("runs/deep/a.html"));
  CHECK_FALSE(out.remove_file("runs/deep"));  // never a folder
  CHECK(fs::is_directory(dir + "/runs/deep"));
  for (const char* bad : {"/etc/passwd", "../x", "a/../../x", "", "a//b"}) {
    CHECK_THROWS_AS(out.replace(bad, "x"), Error);
    CHECK_THROWS_AS(out.entry(bad), Error);
    CHECK_THROWS_AS(out.remove_file(bad), Error);
  }
}

TEST_CASE("BeneathDir never follows a link") {
  TempDir tmp;
  const std::string dir = tmp.path + "/site", home = tmp.path + "/home";
  fs::create_directories(dir);
  fs::create_directories(home + "/runs");
  write_file(home + "/victim", "precious");
  write_file(home + "/runs/x.html", "precious too");
  // A link to a file outside at a file's place, and a link to a folder outside at a folder's.
  fs::create_symlink(home + "/victim", dir + "/page.html");
  fs::create_symlink(home + "/runs", dir + "/runs");
  fs::create_symlink(home, dir + "/up");
  BeneathDir out = BeneathDir::open(dir, false);

  CHECK(out.entry("page.html") == BeneathDir::Entry::kLink);
  CHECK(out.entry("runs") == BeneathDir::Entry::kLink);
  CHECK(out.entry("runs/x.html") == BeneathDir::Entry::kOther);  // the way to it is a link
  CHECK(out.read("page.html", 100) == std::nullopt);
  CHECK(out.read("up/victim", 100) == std::nullopt);
  CHECK_FALSE(out.remove_file("page.html"));
  CHECK_FALSE(out.remove_file("runs/x.html"));
  CHECK_FALSE(out.remove_file("up/victim"));
  CHECK_FALSE(out.create("page.html", "evil"));  // a link is something: not written through
  CHECK_THROWS_AS(out.create("runs/y.html", "evil"), Error);
  CHECK_THROWS_AS(out.replace("runs/x.html", "evil"), Error);
  CHECK_THROWS_AS(out.make_dirs("runs/sub"), Error);
  CHECK_THROWS_AS(out.replace("up/victim", "evil"), Error);
  // replace puts a file where the link was: the link goes, its target stays.
  out.replace("page.html", "page");
  CHECK(fs::is_regular_file(fs::symlink_status(dir + "/page.html")));
  CHECK(read_file(dir + "/page.html") == "page");
  CHECK(read_file(home + "/victim") == "precious");
  CHECK(read_file(home + "/runs/x.html") == "precious too");
  CHECK_FALSE(fs::exists(home + "/y.html"));
  CHECK_FALSE(fs::exists(home + "/runs/y.html"));
  CHECK_FALSE(fs::exists(home + "/runs/sub"));
  // A "<name>.tmp" planted as a link is removed, never written through.
  fs::create_symlink(home + "/victim", dir + "/other.html.tmp");
  out.replace("other.html", "other");
  CHECK(read_file(dir + "/other.html") == "other");
  CHECK(read_file(home + "/victim") == "precious");

  // The folder itself may not be a link.
  fs::create_symlink(dir, tmp.path + "/link-to-site");
  CHECK_THROWS_WITH(BeneathDir::open(tmp.path + "/link-to-site", false),
                    Catch::Matchers::Contains("is a symbolic link"));
}

TEST_CASE("BeneathDir::Folder holds one folder open and never follows a link") {
  TempDir tmp;
  const std::string dir = tmp.path + "/tree", home = tmp.path + "/home";
  fs::create_directories(home);
  BeneathDir out = BeneathDir::open(dir, true);
  CHECK(out.folder("a/b", false).state() == BeneathDir::Folder::State::kMissing);
  BeneathDir::Folder b = out.folder("a/b", true);
  REQUIRE(b.state() == BeneathDir::Folder::State::kPresent);
  struct stat st;
  CHECK(b.create("f", "four", st));
  CHECK(st.st_size == 4);
  CHECK_FALSE(b.create("f", "again", st));  // something is there
  CHECK(b.read("f", 100) == std::optional<std::string>("four"));
  BeneathDir::Folder c = b.sub("c", true);
  CHECK(c.create("g", "", st));
  CHECK(fs::is_regular_file(dir + "/a/b/c/g"));
  // A link planted at a folder's place is neither walked nor made through.
  fs::create_directory_symlink(home, dir + "/a/b/link");
  CHECK(b.sub("link", false).state() == BeneathDir::Folder::State::kNotFolder);
  CHECK(b.sub("link", false).sub("x", false).state() == BeneathDir::Folder::State::kNotFolder);
  CHECK(out.folder("a/b/link", false).state() == BeneathDir::Folder::State::kNotFolder);
  CHECK_THROWS_AS(b.sub("link", true), Error);
  // make_sub (a folder expected missing) makes it, takes one already there,
  // and refuses a link planted in its place without making anything through it.
  BeneathDir::Folder made = b.make_sub("m");
  CHECK(made.state() == BeneathDir::Folder::State::kPresent);
  CHECK(made.create("h", "x", st));
  CHECK(fs::is_regular_file(dir + "/a/b/m/h"));
  CHECK(b.make_sub("m").state() == BeneathDir::Folder::State::kPresent);
  CHECK_THROWS_AS(b.make_sub("link"), Error);
  CHECK(fs::is_symlink(dir + "/a/b/link"));
  CHECK_THROWS_AS(b.sub("nowhere", false).make_sub("x"), Error);
  fs::remove_all(dir + "/a/b/m");
  CHECK_THROWS_AS(out.folder("a/b/link/deeper", true), Error);
  CHECK(fs::is_empty(home));
  // A link at a file's place is not removed as the file, nor read.
  fs::create_symlink(home, dir + "/a/b/l2");
  CHECK_FALSE(b.remove_file("l2"));
  CHECK_FALSE(b.read("l2", 100));
  CHECK(b.remove_file("f"));
  // Folders emptied above a removed file go, up to the first that holds something.
  CHECK(c.remove_file("g"));
  out.remove_empty_folders_above("a/b/c/g");
  CHECK_FALSE(fs::exists(dir + "/a/b/c"));
  CHECK(fs::exists(dir + "/a/b"));  // it holds the links
}

}  // namespace
}  // namespace kistore
