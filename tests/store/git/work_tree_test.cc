// kistore's checkout into a plain clone (store/git/work_tree.h) and the index
// file it reads and writes (store/git/index_file.h), against stock git: the
// index git writes is read and rendered back byte for byte, and after a
// checkout git sees the work tree at the new commit.
#include "store/git/work_tree.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "store/git/git.h"
#include "store/git/index_file.h"
#include "tests/store/support.h"

namespace kistore::git {
namespace {
using namespace test_support;

// A work tree at `dir` with 40 files in a few folders, committed (the index
// as git add left it: no extension), and a second commit on top that
// changes, adds and removes files; the branch and work tree at the first.
struct Clone {
  TempDir tmp;
  std::string dir = tmp.path + "/wt", git;
  std::string first, second;
  Clone() {
    git = git_env(tmp) + "git -C " + quote(dir) + " ";
    must("mkdir -p " + quote(dir) + " && " + git + "init -q -b main");
    for (int i = 0; i < 40; ++i) {
      const std::string folder = dir + "/objects/" + std::to_string(i % 4) + "/" + std::to_string(i % 7);
      std::filesystem::create_directories(folder);
      write_file(folder + "/f" + std::to_string(i), "file " + std::to_string(i) + "\n");
    }
    write_file(dir + "/FORMAT", "3\n");
    must(git + "add -A && " + git + "commit -q -m one");
    first = trim(must(git + "rev-parse HEAD"));
    write_file(dir + "/objects/0/0/f0", "changed\n");
    std::filesystem::remove(dir + "/objects/1/1/f1");
    std::filesystem::create_directories(dir + "/objects/9/9");
    write_file(dir + "/objects/9/9/new", "new\n");
    must(git + "add -A && " + git + "commit -q -m two");
    second = trim(must(git + "rev-parse HEAD"));
    must(git + "reset -q --hard " + first + " && " + git + "status --porcelain");
  }
  // The branch moves to the second commit, as kistore's write moves it.
  WorkTreeCheckout move_and_check_out(std::string& why) {
    must(git + "update-ref refs/heads/main " + second);
    ensure_init();
    git_repository* r = nullptr;
    REQUIRE(git_repository_open(&r, dir.c_str()) == 0);
    Repository repo(r);
    return checkout_changes(repo.get(), parse_oid(first), parse_oid(second), why);
  }
  // The look made ahead at the checkout from the first commit to the
  // second (git::look_ahead), the branch still at the first.
  CheckoutLookPtr look_ahead() {
    ensure_init();
    git_repository* r = nullptr;
    REQUIRE(git_repository_open(&r, dir.c_str()) == 0);
    Repository repo(r);
    std::optional<WorkTreeSite> site = checkout_site(repo.get(), "refs/heads/main");
    REQUIRE(site);
    CheckoutLookPtr look = git::look_ahead(*site, dir + "/.git", parse_oid(first), parse_oid(second));
    REQUIRE(look);
    return look;
  }
  // The branch moves to the second commit and sync_work_tree checks it out
  // with `ahead`; "" when the work tree and index hold it, else why not.
  std::string move_and_sync(CheckoutLook* ahead) {
    must(git + "update-ref refs/heads/main " + second);
    git_repository* r = nullptr;
    REQUIRE(git_repository_open(&r, dir.c_str()) == 0);
    Repository repo(r);
    const git_oid from = parse_oid(first);
    return sync_work_tree(repo.get(), "refs/heads/main", &from, ahead);
  }
  bool in_step() {
    return sh(git + "diff-index --quiet HEAD --").rc == 0 &&
           trim(must(git + "ls-files -s")) ==
               trim(must(git + "ls-tree -r HEAD | sed 's/ blob \\([0-9a-f]*\\)\\t/ \\1 0\\t/'")) &&
           must(git + "status --porcelain --untracked-files=all").empty();
  }
};

TEST_CASE("parse_index reads the index git writes; render_index writes it back byte for byte") {
  Clone c;
  for (const char* version : {"2", "3", "4"}) {
    INFO("version " << version);
    must(c.git + "update-index --index-version " + version);
    const std::string bytes = read_file(c.dir + "/.git/index");
    std::string why;
    std::optional<IndexFile> index = parse_index(bytes, why);
    REQUIRE(index);
    CHECK(index->version == (std::string(version) == "3" ? 2u : std::stoul(version)));  // git writes 3 only for extended entries
    CHECK(index->entries.size() == 41);
    CHECK(index->entries.front().path == "FORMAT");
    // Byte for byte up to git's extensions (a rendering has none).
    const std::string rendered = render_index(index->version, index->entries);
    CHECK(bytes.compare(0, rendered.size() - 20, rendered, 0, rendered.size() - 20) == 0);
    // What git reads back from a rendering is the same list.
    const std::string listed = must(c.git + "ls-files -s --debug");
    write_file(c.dir + "/.git/index", render_index(index->version, index->entries));
    CHECK(must(c.git + "ls-files -s --debug") == listed);
  }
}

TEST_CASE("parse_index refuses what is not a whole index") {
  Clone c;
  const std::string bytes = read_file(c.dir + "/.git/index");
  std::string why;
  CHECK_FALSE(parse_index(bytes.substr(0, bytes.size() - 1), why));
  std::string flipped = bytes;
  flipped[40] ^= 1;
  CHECK_FALSE(parse_index(flipped, why));
  CHECK(why == "its checksum does not match its content");
  CHECK_FALSE(parse_index("DIRC", why));
  std::string v5 = bytes;
  v5[7] = 5;
  CHECK_FALSE(parse_index(v5, why));
}

TEST_CASE("checkout_changes writes what the commit changed and git sees the work tree in step") {
  Clone c;
  std::string why;
  CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kDone);
  INFO(why);
  CHECK(read_file(c.dir + "/objects/0/0/f0") == "changed\n");
  CHECK(read_file(c.dir + "/objects/9/9/new") == "new\n");
  CHECK_FALSE(std::filesystem::exists(c.dir + "/objects/1/1/f1"));
  CHECK(c.in_step());
  CHECK_FALSE(std::filesystem::exists(c.dir + "/.git/index.lock"));
}

TEST_CASE("checkout_changes lets a file and a folder trade places") {
  // An index file that fans out into a folder as the store grows, and back.
  TempDir tmp;
  const std::string dir = tmp.path + "/wt", git = git_env(tmp) + "git -C " + quote(dir) + " ";
  must("mkdir -p " + quote(dir + "/refs/back") + " && " + git + "init -q -b main");
  write_file(dir + "/refs/fan", "one file\n");
  write_file(dir + "/refs/back/a", "a\n");
  write_file(dir + "/refs/back/b", "b\n");
  must(git + "add -A && " + git + "commit -q -m one");
  const std::string first = trim(must(git + "rev-parse HEAD"));
  must("rm -r " + quote(dir + "/refs/fan") + " " + quote(dir + "/refs/back") + " && mkdir " + quote(dir + "/refs/fan"));
  write_file(dir + "/refs/fan/0", "zero\n");
  write_file(dir + "/refs/back", "a file again\n");
  must(git + "add -A && " + git + "commit -q -m two");
  const std::string second = trim(must(git + "rev-parse HEAD"));
  must(git + "reset -q --hard " + first + " && " + git + "update-ref refs/heads/main " + second);
  ensure_init();
  git_repository* r = nullptr;
  REQUIRE(git_repository_open(&r, dir.c_str()) == 0);
  Repository repo(r);
  std::string why;
  CHECK(checkout_changes(repo.get(), parse_oid(first), parse_oid(second), why) == WorkTreeCheckout::kDone);
  INFO(why);
  CHECK(read_file(dir + "/refs/fan/0") == "zero\n");
  CHECK(read_file(dir + "/refs/back") == "a file again\n");
  CHECK(must(git + "status --porcelain --untracked-files=all").empty());
  CHECK(sh(git + "diff-index --quiet HEAD --").rc == 0);
}

TEST_CASE("checkout_changes keeps a version-4 index at version 4") {
  Clone c;
  must(c.git + "update-index --index-version 4");
  std::string why;
  CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kDone);
  CHECK(read_file(c.dir + "/.git/index")[7] == 4);
  CHECK(c.in_step());
}

TEST_CASE("checkout_changes declines or refuses, writing nothing, where git's safe checkout would refuse or differ") {
  Clone c;
  std::string why;
  // A change of the user's at a path the commit changes: refused, as git
  // refuses a fast-forward over local changes (not handed to libgit2).
  const std::string kept =
      "; nothing written to the work tree, as git refuses a fast-forward over local changes: commit, stash or move "
      "the change, and the next kistore command finishes the checkout";
  SECTION("a file the user changed at a path the commit changes") {
    write_file(c.dir + "/objects/0/0/f0", "mine\n");
    CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kRefused);
    CHECK(why == c.dir + "/objects/0/0/f0: has changes not committed" + kept);
    CHECK(read_file(c.dir + "/objects/0/0/f0") == "mine\n");
    CHECK(read_file(c.dir + "/objects/1/1/f1") == "file 1\n");  // nothing else written either (f1 is removed by the commit)
  }
  SECTION("a change of the same size") {
    write_file(c.dir + "/objects/0/0/f0", "file X\n");
    CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kRefused);
    CHECK(read_file(c.dir + "/objects/0/0/f0") == "file X\n");
  }
  SECTION("an untracked file where a file is to be added") {
    std::filesystem::create_directories(c.dir + "/objects/9/9");
    write_file(c.dir + "/objects/9/9/new", "mine\n");
    CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kRefused);
    CHECK(why == c.dir + "/objects/9/9/new: is in the way (untracked, not in the commit before)" + kept);
    CHECK(read_file(c.dir + "/objects/9/9/new") == "mine\n");
  }
  SECTION("a link planted where a folder is to be made") {
    std::filesystem::create_directories(c.tmp.path + "/outside");
    std::filesystem::create_directories(c.dir + "/objects/9");
    std::filesystem::create_directory_symlink(c.tmp.path + "/outside", c.dir + "/objects/9/9");
    CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kRefused);
    CHECK(why == c.dir + "/objects/9/9: a link or a file stands where a folder goes (planted?); nothing written to the work tree");
    CHECK(std::filesystem::is_empty(c.tmp.path + "/outside"));
  }
  SECTION("a link planted in place of a folder that holds files the commit changes") {
    std::filesystem::create_directories(c.tmp.path + "/outside");
    std::filesystem::rename(c.dir + "/objects/0/0", c.tmp.path + "/moved");
    std::filesystem::create_directory_symlink(c.tmp.path + "/outside", c.dir + "/objects/0/0");
    CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kRefused);
    CHECK(std::filesystem::is_empty(c.tmp.path + "/outside"));
  }
  SECTION("a link at a file's place") {
    std::filesystem::remove(c.dir + "/objects/0/0/f0");
    std::filesystem::create_symlink(c.tmp.path + "/victim", c.dir + "/objects/0/0/f0");
    CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kRefused);
    CHECK(why == c.dir + "/objects/0/0/f0: is a link; nothing written to the work tree");
    CHECK_FALSE(std::filesystem::exists(c.tmp.path + "/victim"));
  }
  SECTION("a change staged at a path the commit changes") {
    write_file(c.dir + "/objects/0/0/f0", "staged\n");
    must(c.git + "add objects/0/0/f0");
    CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kRefused);
    CHECK(why == "objects/0/0/f0: the index does not hold what the commit before holds (a change staged)" + kept);
    CHECK(read_file(c.dir + "/objects/0/0/f0") == "staged\n");
  }
  SECTION("a sparse checkout") {
    must(c.git + "config core.sparseCheckout true");
    CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kDeclined);
    CHECK(why == "core.sparseCheckout is on");
    CHECK(read_file(c.dir + "/objects/0/0/f0") == "file 0\n");
  }
  SECTION("the user's own attributes (~/.config/git/attributes), which may convert bytes") {
    ensure_init();
    git_buf before = GIT_BUF_INIT;
    REQUIRE(git_libgit2_opts(GIT_OPT_GET_SEARCH_PATH, GIT_CONFIG_LEVEL_XDG, &before) == 0);
    const std::string previous(before.ptr ? before.ptr : "", before.size);
    git_buf_dispose(&before);
    const std::string xdg = c.tmp.path + "/xdg";
    std::filesystem::create_directories(xdg);
    write_file(xdg + "/attributes", "* text eol=crlf\n");
    REQUIRE(git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_XDG, xdg.c_str()) == 0);
    const WorkTreeCheckout got = c.move_and_check_out(why);
    git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_XDG, previous.c_str());
    CHECK(got == WorkTreeCheckout::kDeclined);
    CHECK(why == xdg + "/attributes exists");
  }
  SECTION("an index with a conflict") {
    const std::string blob = trim(must(c.git + "hash-object -w objects/2/2/f2"));
    must("printf '100644 " + blob + " 2\\tobjects/2/2/zz\\n' | " + c.git + "update-index --index-info");
    CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kDeclined);
    CHECK(why == c.dir + "/.git/index: objects/2/2/zz is in conflict");
  }
  CHECK_FALSE(std::filesystem::exists(c.dir + "/.git/index.lock"));
}

TEST_CASE("checkout_changes waits for git's index.lock, then refuses with nothing written") {
  Clone c;
  write_file(c.dir + "/.git/index.lock", "");
  std::string why;
  // Refused, not declined: libgit2's checkout would write the files, then
  // fail on the lock, leaving the work tree ahead of the index.
  CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kRefused);
  CHECK(why.find("index.lock: git holds the index") != std::string::npos);
  CHECK(read_file(c.dir + "/objects/0/0/f0") == "file 0\n");  // nothing written
  CHECK_FALSE(std::filesystem::exists(c.dir + "/objects/9/9/new"));
  CHECK(std::filesystem::exists(c.dir + "/.git/index.lock"));  // git's, not kistore's to remove
  std::filesystem::remove(c.dir + "/.git/index.lock");
  CHECK(sh("ls " + quote(c.dir + "/.git") + " | grep -c tmp_index").out == "0\n");
}

TEST_CASE("checkout_changes refuses a FIFO where a file goes, as it refuses a link") {
  Clone c;
  std::filesystem::create_directories(c.dir + "/objects/9/9");
  REQUIRE(::mkfifo((c.dir + "/objects/9/9/new").c_str(), 0644) == 0);
  std::string why;
  // libgit2's checkout, which a decline hands over to, opens it for writing
  // and blocks for ever.
  CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kRefused);
  CHECK(why == c.dir + "/objects/9/9/new: is neither a file nor a folder (a FIFO, socket or device); nothing written "
                       "to the work tree");
  CHECK(read_file(c.dir + "/objects/0/0/f0") == "file 0\n");
}

TEST_CASE("checkout_changes declines under a .gitattributes of the work tree, untracked or staged") {
  {
    Clone c;
    write_file(c.dir + "/.gitattributes", "* text eol=crlf\n");  // untracked, above every changed path
    std::string why;
    CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kDeclined);
    CHECK(why == c.dir + "/.gitattributes: its attributes may change the bytes git's checkout writes");
  }
  {
    Clone c;
    write_file(c.dir + "/objects/0/0/.gitattributes", "* ident\n");  // in a changed file's folder
    std::string why;
    CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kDeclined);
    CHECK(why == c.dir + "/objects/0/0/.gitattributes: its attributes may change the bytes git's checkout writes");
  }
  {
    Clone c;
    write_file(c.dir + "/objects/.gitattributes", "* ident\n");
    must(c.git + "add objects/.gitattributes");
    std::filesystem::remove(c.dir + "/objects/.gitattributes");  // staged only
    std::string why;
    CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kDeclined);
    CHECK(why.find("objects/.gitattributes is staged") != std::string::npos);
  }
}

TEST_CASE("checkout_changes refuses an index that is a FIFO, without waiting on it") {
  Clone c;
  std::filesystem::remove(c.dir + "/.git/index");
  REQUIRE(::mkfifo((c.dir + "/.git/index").c_str(), 0644) == 0);
  std::string why;
  CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kRefused);
  CHECK(why.find("/.git/index: is not a file") != std::string::npos);
  CHECK(read_file(c.dir + "/objects/0/0/f0") == "file 0\n");
}

TEST_CASE("checkout_changes refuses a FIFO where libgit2's checkout would read attributes or ignored paths") {
  for (const char* where : {"/.gitattributes", "/objects/0/0/.gitattributes", "/.git/info/attributes", "/.gitignore",
                            "/objects/9/9/.gitignore", "/.git/info/exclude"}) {
    INFO(where);
    Clone c;
    std::filesystem::create_directories(std::filesystem::path(c.dir + where).parent_path());
    std::filesystem::remove(c.dir + where);  // git init's info/exclude
    REQUIRE(::mkfifo((c.dir + where).c_str(), 0644) == 0);
    std::string why;
    CHECK(c.move_and_check_out(why) == WorkTreeCheckout::kRefused);
    CHECK(why.find(std::string(where) + ": is not a file") != std::string::npos);
    CHECK(read_file(c.dir + "/objects/0/0/f0") == "file 0\n");
  }
}

TEST_CASE("a checkout looked at ahead is written from that look when nothing moved since") {
  Clone c;
  CheckoutLookPtr look = c.look_ahead();
  CHECK(c.move_and_sync(look.get()).empty());
  CHECK(written_from(*look));
  CHECK(read_file(c.dir + "/objects/0/0/f0") == "changed\n");
  CHECK(read_file(c.dir + "/objects/9/9/new") == "new\n");
  CHECK_FALSE(std::filesystem::exists(c.dir + "/objects/1/1/f1"));
  CHECK(c.in_step());
  CHECK(sh(c.git + "rev-parse -q --verify refs/kistore/checkout-owed").rc != 0);
}

TEST_CASE("a checkout looked at ahead never overwrites what the user did after the look") {
  Clone c;
  CheckoutLookPtr look = c.look_ahead();
  std::string why;
  SECTION("a file to modify, changed after the look: looked at again, the user's change kept") {
    write_file(c.dir + "/objects/0/0/f0", "mine\n");
    why = c.move_and_sync(look.get());
    CHECK_FALSE(written_from(*look));
    CHECK(why.find("objects/0/0/f0: has changes not committed; nothing written") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(c.dir + "/objects/9/9/new"));  // nothing written at all
    CHECK(sh(c.git + "rev-parse -q --verify refs/kistore/checkout-owed").rc == 0);
    CHECK(read_file(c.dir + "/objects/0/0/f0") == "mine\n");
  }
  SECTION("a file to remove, changed after the look: kept") {
    write_file(c.dir + "/objects/1/1/f1", "mine too\n");
    why = c.move_and_sync(look.get());
    CHECK_FALSE(written_from(*look));
    CHECK(read_file(c.dir + "/objects/1/1/f1") == "mine too\n");
  }
  SECTION("a change staged after the look: the index changed, looked at again, the staged change kept") {
    write_file(c.dir + "/objects/0/0/f0", "staged\n");
    must(c.git + "add objects/0/0/f0");
    why = c.move_and_sync(look.get());
    CHECK_FALSE(written_from(*look));
    CHECK(read_file(c.dir + "/objects/0/0/f0") == "staged\n");
    CHECK(must(c.git + "diff --cached --name-only") .find("objects/0/0/f0") != std::string::npos);
  }
  SECTION("a file put where one is to be added, after the look: kept, the checkout owed") {
    std::filesystem::create_directories(c.dir + "/objects/9/9");
    write_file(c.dir + "/objects/9/9/new", "mine\n");
    why = c.move_and_sync(look.get());
    CHECK(written_from(*look));
    CHECK(why.find("objects/9/9/new: something was put there while kistore wrote the work tree") != std::string::npos);
    CHECK(read_file(c.dir + "/objects/9/9/new") == "mine\n");
    CHECK(sh(c.git + "rev-parse -q --verify refs/kistore/checkout-owed").rc == 0);
  }
  SECTION("a link planted where a folder is to be made, after the look: nothing written through it") {
    std::filesystem::create_directories(c.tmp.path + "/outside");
    std::filesystem::create_directory_symlink(c.tmp.path + "/outside", c.dir + "/objects/9");
    why = c.move_and_sync(look.get());
    CHECK(written_from(*look));
    CHECK(why.find("objects/9: is a symbolic link or not a folder") != std::string::npos);
    CHECK(std::filesystem::is_empty(c.tmp.path + "/outside"));
    CHECK(sh(c.git + "rev-parse -q --verify refs/kistore/checkout-owed").rc == 0);
  }
  SECTION("a link planted in place of a folder holding a file to modify, after the look: nothing written through it") {
    std::filesystem::create_directories(c.tmp.path + "/outside");
    std::filesystem::rename(c.dir + "/objects/0/0", c.tmp.path + "/moved");
    std::filesystem::create_directory_symlink(c.tmp.path + "/outside", c.dir + "/objects/0/0");
    why = c.move_and_sync(look.get());
    CHECK_FALSE(written_from(*look));
    CHECK(why.find("objects/0/0: a link or a file stands where a folder goes") != std::string::npos);
    CHECK(std::filesystem::is_empty(c.tmp.path + "/outside"));
  }
  CHECK_FALSE(why.empty());
  CHECK_FALSE(std::filesystem::exists(c.dir + "/.git/index.lock"));
}

TEST_CASE("a look made ahead at another checkout than the one made is not used") {
  Clone c;
  CheckoutLookPtr look = c.look_ahead();
  // Another commit lands first: the branch moves from the first to a third.
  write_file(c.dir + "/objects/3/3/third", "third\n");
  must(c.git + "add -A && " + c.git + "commit -q -m three && " + c.git + "reset -q --hard " + c.first);
  c.second = trim(must(c.git + "rev-parse main@{1}"));
  CHECK(c.move_and_sync(look.get()).empty());
  CHECK_FALSE(written_from(*look));
  CHECK(read_file(c.dir + "/objects/3/3/third") == "third\n");
  CHECK(read_file(c.dir + "/objects/0/0/f0") == "file 0\n");
  CHECK(c.in_step());
}

TEST_CASE("a look ahead that is told to stop ends with none, and the checkout looks for itself") {
  Clone c;
  ensure_init();
  git_repository* r = nullptr;
  REQUIRE(git_repository_open(&r, c.dir.c_str()) == 0);
  Repository repo(r);
  std::optional<WorkTreeSite> site = checkout_site(repo.get(), "refs/heads/main");
  REQUIRE(site);
  const std::atomic<bool> stop{true};
  CHECK_FALSE(git::look_ahead(*site, c.dir + "/.git", parse_oid(c.first), parse_oid(c.second), &stop));
  CHECK(c.move_and_sync(nullptr).empty());
  CHECK(c.in_step());
  // A checkout owed is made first, from where it was left: no look ahead then.
  must(c.git + "update-ref refs/kistore/checkout-owed " + c.first);
  CHECK_FALSE(checkout_site(repo.get(), "refs/heads/main"));
}

}  // namespace
}  // namespace kistore::git
