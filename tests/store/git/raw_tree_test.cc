// Raw git trees (store/git/raw_tree.h) against stock git: the entry order and
// parsing against `git ls-tree`, malformed trees refused with a reason, the
// diff against `git diff-tree -r`, lookups against `git rev-parse`, and a diff
// that reads only the trees it must.
#include "store/git/raw_tree.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "objects/error.h"
#include "store/git/git.h"
#include "store/git/objwrite.h"
#include "store/git/packread.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;
namespace fs = std::filesystem;

// A bare repository made by stock git, opened through libgit2 as well.
struct Repo {
  TempDir tmp;
  std::string dir = tmp.path + "/r.git";
  git::Repository repo;
  git::Odb odb;
  Repo() {
    git::ensure_init();
    must("git init -q --bare " + quote(dir));
    git_repository* raw = nullptr;
    REQUIRE(git_repository_open(&raw, dir.c_str()) == 0);
    repo.reset(raw);
    odb = git::open_odb(raw);
  }
  std::string git() const { return "git --git-dir=" + quote(dir) + " "; }

  struct File {
    std::string mode;     // "100644", "100755", "120000" or "160000"
    std::string path;
    std::string content;  // for 160000: the commit id the link names
  };
  // The tree stock git writes for `files` (through an index of its own).
  git_oid tree(const std::vector<File>& files) {
    std::string index = tmp.path + "/index";
    std::string script = "set -e\nexport GIT_INDEX_FILE=" + quote(index) + "\nrm -f " + quote(index) + "\n";
    int n = 0;
    for (const File& f : files) {
      std::string id;
      if (f.mode == "160000") {
        id = f.content;
      } else {
        std::string file = tmp.path + "/content" + std::to_string(n++);
        write_file(file, f.content);
        id = "$(" + git() + "hash-object -w " + quote(file) + ")";
      }
      script += git() + "update-index --add --cacheinfo \"" + f.mode + "," + id + "," + f.path + "\"\n";
    }
    script += git() + "write-tree\n";
    write_file(tmp.path + "/make.sh", script);
    return oid(trim(must("sh " + quote(tmp.path + "/make.sh"))));
  }

  static git_oid oid(const std::string& hex) {
    git_oid id;
    REQUIRE(git_oid_fromstr(&id, hex.c_str()) == 0);
    return id;
  }
  std::string raw_tree(const git_oid& id) { return must(git() + "cat-file tree " + git::oid_str(id)); }
  // Removes the loose object `id`: any read of it now fails.
  void lose(const std::string& id) {
    std::string file = dir + "/objects/" + id.substr(0, 2) + "/" + id.substr(2);
    REQUIRE(fs::remove(file));
  }
};

const std::string kLink = "0123456789abcdef0123456789abcdef01234567";

std::vector<Repo::File> before_files() {
  return {{"100644", "a/x", "1"},        {"100644", "a/y", "2"},       {"100644", "b/z", "3"},
          {"100644", "b/deep/q", "4"},   {"100644", "gone/p", "5"},    {"100644", "top", "6"},
          {"100644", "mode", "7"},       {"100644", "kind", "8"},      {"100644", "a.b", "9"},
          {"100644", "a-", "10"},        {"160000", "vendor", kLink},  {"100644", "same/s", "11"}};
}
std::vector<Repo::File> after_files() {
  return {{"100644", "a/x", "1 changed"}, {"100644", "a/y", "2"},      {"100644", "b/z", "3"},
          {"100644", "b/deep/q", "4"},    {"100644", "c/w", "new"},    {"100644", "top", "6"},
          {"100755", "mode", "7"},        {"100644", "kind/now", "8"}, {"100644", "a.b", "9"},
          {"100644", "a-", "10"},         {"120000", "link", "top"},   {"100644", "same/s", "11"},
          {"100644", "top2", "2"}};
}

TEST_CASE("raw tree: entries parse as git ls-tree lists them, in git's order", "[raw_tree]") {
  Repo r;
  git_oid tree = r.tree(after_files());
  std::string bytes = r.raw_tree(tree);

  std::vector<std::string> parsed;
  std::string_view rest = bytes;
  std::vector<git::RawEntry> entries;
  for (git::RawEntry e; git::next_entry(rest, e);) {
    entries.push_back(e);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%06o", e.mode);
    parsed.push_back(std::string(mode) + " " + git_object_type2string(e.type()) + " " + git::oid_str(e.oid()) + "\t" +
                     std::string(e.name));
  }
  std::vector<std::string> listed;
  std::istringstream lines(must(r.git() + "ls-tree " + git::oid_str(tree)));
  for (std::string line; std::getline(lines, line);) listed.push_back(line);
  CHECK(parsed == listed);

  // Each entry is the exact bytes it was read from, and the order is git's:
  // "a-" < "a.b" < "a" (a tree, as "a/") < "b".
  std::string joined;
  for (const git::RawEntry& e : entries) joined += e.bytes;
  CHECK(joined == bytes);
  for (std::size_t i = 1; i < entries.size(); ++i) {
    INFO(entries[i - 1].name << " before " << entries[i].name);
    CHECK(git::compare_entries(entries[i - 1].name, entries[i - 1].tree(), entries[i].name, entries[i].tree()) < 0);
  }
  CHECK(git::compare_entries("a", false, "a.b", false) < 0);
  CHECK(git::compare_entries("a.b", false, "a", true) < 0);  // '.' < '/'
  CHECK(git::compare_entries("a", true, "a0", false) < 0);   // '/' < '0'
  CHECK(git::compare_entries("a", true, "a", false) > 0);
  CHECK(git::compare_entries("a", true, "a", true) == 0);

  SECTION("kinds follow the mode as libgit2 decides them") {
    std::set<std::string> kinds;
    for (const git::RawEntry& e : entries)
      kinds.insert(std::string(e.name) + ":" + (e.tree() ? "tree" : e.link() ? "link" : "blob"));
    CHECK(kinds.count("a:tree"));
    CHECK(kinds.count("mode:blob"));  // 100755
    CHECK(kinds.count("link:blob"));  // 120000, a symbolic link's target
    CHECK(kinds.count("top:blob"));
  }
  SECTION("find() looks entries up by name") {
    git::RawTree t{std::string(bytes)};
    auto a = t.find("a");
    REQUIRE(a);
    CHECK(a->tree());
    CHECK(git::oid_str(a->oid()) == trim(must(r.git() + "rev-parse " + git::oid_str(tree) + ":a")));
    CHECK(t.find("a.b"));
    CHECK_FALSE(t.find("a/x"));
    CHECK_FALSE(t.find("missing"));
    CHECK_FALSE(t.find(""));
  }
}

TEST_CASE("raw tree: malformed trees are refused, saying what is wrong", "[raw_tree]") {
  // "<head>\0" and an id of `id_bytes` bytes.
  auto entry = [](std::string head, std::size_t id_bytes = 20) {
    head.push_back('\0');
    head.append(id_bytes, '\x01');
    return head;
  };
  struct Case {
    const char* name;
    std::string bytes;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"no mode", entry(" name"), "octal mode"},
      {"a mode that is not octal", entry("100648 name"), "no space after"},
      {"a mode with a sign", entry("-100644 name"), "octal mode"},
      {"a mode over 16 bits", entry("1100644 name"), "over 0177777"},
      {"no space after the mode", "100644", "no space after"},
      {"a name without its NUL", "100644 name", "has no end"},
      {"an empty name", entry("100644 "), "empty name"},
      {"an id cut short", entry("100644 name", 19), "cut short"},
      {"a good entry, then garbage", entry("100644 name") + "x", "octal mode"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      std::string_view rest = c.bytes;
      git::RawEntry e;
      try {
        while (git::next_entry(rest, e)) {
        }
        FAIL("no error");
      } catch (const Error& error) {
        CHECK(error.code() == ErrorCode::kCorruption);
        CHECK_THAT(error.what(), Catch::Contains("a tree object is malformed"));
        CHECK_THAT(error.what(), Catch::Contains(c.reason));
      }
      git::RawTree tree{std::string(c.bytes)};
      CHECK_THROWS_AS(tree.find("name"), Error);
    }
  }
  SECTION("an empty tree has no entries") {
    std::string_view rest;
    git::RawEntry e;
    CHECK_FALSE(git::next_entry(rest, e));
  }
}

// `git diff-tree -r` as "<status> <path> <old mode> <new mode> <old id> <new id>",
// typechanges (T) written as modifications (M): the raw diff does not tell them apart.
std::multiset<std::string> stock_diff(Repo& r, const git_oid& a, const git_oid& b) {
  std::multiset<std::string> out;
  std::istringstream lines(must(r.git() + "diff-tree -r --no-renames " + git::oid_str(a) + " " + git::oid_str(b)));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream f(line.substr(1, line.find('\t') - 1));
    std::string old_mode, new_mode, old_id, new_id, status;
    f >> old_mode >> new_mode >> old_id >> new_id >> status;
    if (status == "T") status = "M";
    out.insert(status + " " + line.substr(line.find('\t') + 1) + " " + old_mode + " " + new_mode + " " + old_id + " " +
               new_id);
  }
  return out;
}

std::string render(const git::TreeDelta& d) {
  char modes[16];
  std::snprintf(modes, sizeof modes, "%06o %06o", d.old_mode, d.new_mode);
  return std::string(1, static_cast<char>(d.status)) + " " + d.path + " " + modes + " " + git::oid_str(d.old_id) + " " +
         git::oid_str(d.new_id);
}

TEST_CASE("raw tree: the diff is git diff-tree -r's", "[raw_tree][diff]") {
  Repo r;
  git_oid a = r.tree(before_files()), b = r.tree(after_files());
  git::TreeReader trees(r.odb.get(), {});
  auto diff = [&](const git_oid* from, const git_oid* to, std::string_view dir = "",
                  git::DiffSides sides = git::DiffSides::kBoth) {
    std::multiset<std::string> got;
    trees.diff(from, to, dir, [&](const git::TreeDelta& d) { got.insert(render(d)); }, sides);
    return got;
  };

  std::multiset<std::string> expected = stock_diff(r, a, b);
  REQUIRE(expected.size() >= 8);
  CHECK(diff(&a, &b) == expected);
  CHECK(diff(&b, &a) == stock_diff(r, b, a));
  CHECK(diff(&a, &a).empty());

  SECTION("from or to nothing: every path added or removed") {
    std::multiset<std::string> added;
    for (std::string e : diff(nullptr, &b)) {
      CHECK(e[0] == 'A');
      added.insert(e.substr(2, e.find(' ', 2) - 2));
    }
    std::multiset<std::string> listed;
    std::istringstream lines(must(r.git() + "ls-tree -r --name-only " + git::oid_str(b)));
    for (std::string line; std::getline(lines, line);) listed.insert(line);
    CHECK(added == listed);
    for (const std::string& e : diff(&b, nullptr)) CHECK(e[0] == 'D');
  }
  SECTION("below one folder only, paths from the root") {
    std::multiset<std::string> in_a;
    for (const std::string& e : expected)
      if (e.substr(2).starts_with("a/")) in_a.insert(e);
    CHECK(diff(&a, &b, "a") == in_a);
    CHECK(diff(&a, &b, "missing").empty());
  }
  SECTION("one side only") {
    std::multiset<std::string> no_removals, no_additions;
    for (const std::string& e : expected) {
      if (e[0] != 'D') no_removals.insert(e);
      if (e[0] != 'A') no_additions.insert(e);
    }
    CHECK(diff(&a, &b, "", git::DiffSides::kAddedOrChanged) == no_removals);
    CHECK(diff(&a, &b, "", git::DiffSides::kRemovedOrChanged) == no_additions);
  }
  SECTION("new trees: those of the new side that the old does not hold at the same path") {
    std::set<std::string> got;
    trees.diff(&a, &b, "", [](const git::TreeDelta&) {}, git::DiffSides::kAddedOrChanged,
               [&](const std::string& path, const git_oid& id) { got.insert(path + " " + git::oid_str(id)); });
    std::set<std::string> old_trees, wanted;
    std::istringstream old_lines(must(r.git() + "ls-tree -r -d " + git::oid_str(a)));
    for (std::string line; std::getline(old_lines, line);)
      old_trees.insert(line.substr(line.find('\t') + 1) + " " + line.substr(12, 40));
    std::istringstream new_lines(must(r.git() + "ls-tree -r -d " + git::oid_str(b)));
    for (std::string line; std::getline(new_lines, line);) {
      std::string key = line.substr(line.find('\t') + 1) + " " + line.substr(12, 40);
      if (!old_trees.count(key)) wanted.insert(key);
    }
    CHECK(got == wanted);
    CHECK(got.count("c " + trim(must(r.git() + "rev-parse " + git::oid_str(b) + ":c"))));
    CHECK_FALSE(got.count("b " + trim(must(r.git() + "rev-parse " + git::oid_str(b) + ":b"))));
  }
}

// `git diff-tree -r` along `pathspecs`, rendered as stock_diff does, in git's order.
std::vector<std::string> stock_diff_along(Repo& r, const git_oid& a, const git_oid& b,
                                          const std::vector<std::string>& pathspecs) {
  std::string cmd = r.git() + "diff-tree -r --no-renames " + git::oid_str(a) + " " + git::oid_str(b) + " --";
  for (const std::string& p : pathspecs) cmd += " " + quote(p);
  std::vector<std::string> out;
  std::istringstream lines(must(cmd));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream f(line.substr(1, line.find('\t') - 1));
    std::string old_mode, new_mode, old_id, new_id, status;
    f >> old_mode >> new_mode >> old_id >> new_id >> status;
    if (status == "T") status = "M";
    out.push_back(status + " " + line.substr(line.find('\t') + 1) + " " + old_mode + " " + new_mode + " " + old_id +
                  " " + new_id);
  }
  return out;
}

TEST_CASE("raw tree: a diff along patterns is git diff-tree -r's with them as pathspecs, in git's order",
          "[raw_tree][diff]") {
  Repo r;
  git_oid a = r.tree(before_files()), b = r.tree(after_files());
  git::TreeReader trees(r.odb.get(), {});
  // Patterns whose "*" spans one name, where git's pathspecs mean the same.
  const std::vector<std::vector<std::string>> cases = {
      {"a/"},                       // a folder's contents
      {"a/x"},                      // one blob, changed
      {"a"},                        // a folder named without its "/"
      {"kind"},                     // a blob that became a folder: removed, and what is below added
      {"kind/"},                    // only what is below the folder
      {"mode"},                     // a mode changed
      {"vendor", "link"},           // a submodule link removed, a symbolic link added
      {"*/x", "*/w"},               // any one folder
      {"b/*/q", "*/deep/q"},        // unchanged: nothing
      {"a/x", "*/x", "a/"},         // overlapping: each path once
      {"missing/", "top", "same"},  // absent, and unchanged
      {"top2", "c/", "gone/", "a-", "a.b"},
      {"", },                       // everything
  };
  for (const std::vector<std::string>& c : cases) {
    std::string name;
    for (const std::string& p : c) name += "\"" + p + "\" ";
    INFO("patterns " << name);
    for (bool forward : {true, false}) {
      const git_oid &from = forward ? a : b, &to = forward ? b : a;
      std::vector<std::string> got;
      trees.diff(&from, &to, git::PathPatterns(c), [&](const git::TreeDelta& d) { got.push_back(render(d)); });
      std::vector<std::string> specs = c;
      if (c == std::vector<std::string>{""}) specs.clear();
      CHECK(got == stock_diff_along(r, from, to, specs));
    }
  }
  // From nothing: every path the patterns name, added.
  std::vector<std::string> got;
  trees.diff(nullptr, &b, git::PathPatterns({"*/x", "c/"}), [&](const git::TreeDelta& d) { got.push_back(d.path); });
  CHECK(got == std::vector<std::string>{"a/x", "c/w"});
}

TEST_CASE("raw tree: a diff reads only the trees it must", "[raw_tree][diff]") {
  Repo r;
  git_oid a = r.tree(before_files()), b = r.tree(after_files());
  std::string rev = r.git() + "rev-parse " + git::oid_str(a);
  // Subtrees both sides share, and one only the old side has: unreadable now.
  r.lose(trim(must(rev + ":b")));
  r.lose(trim(must(rev + ":same")));
  std::string gone = trim(must(rev + ":gone"));
  r.lose(gone);
  git::TreeReader trees(r.odb.get(), {});
  std::size_t n = 0;
  auto count = [&](const git::TreeDelta&) { ++n; };
  CHECK_NOTHROW(trees.diff(&a, &b, "", count, git::DiffSides::kAddedOrChanged));
  CHECK(n > 0);
  try {
    trees.diff(&a, &b, "", count);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kCorruption);
    CHECK_THAT(e.what(), Catch::Contains("gone"));
  }
}

TEST_CASE("raw tree: lookups and listings agree with git", "[raw_tree]") {
  Repo r;
  git_oid b = r.tree(after_files());
  git::TreeReader trees(r.odb.get(), {nullptr, false, true});
  auto rev = [&](const std::string& path) { return trim(must(r.git() + "rev-parse " + git::oid_str(b) + ":" + path)); };
  auto blob = [&](const std::string& path) {
    auto id = trees.blob_at(&b, path);
    return id ? git::oid_str(*id) : std::string("none");
  };
  CHECK(blob("a/x") == rev("a/x"));
  CHECK(blob("b/deep/q") == rev("b/deep/q"));
  CHECK(blob("mode") == rev("mode"));
  CHECK(blob("a") == "none");         // a tree
  CHECK(blob("a/x/y") == "none");     // below a blob
  CHECK(blob("b/missing") == "none");
  CHECK(blob("kind") == "none");
  CHECK_FALSE(trees.blob_at(nullptr, "a/x"));
  auto tree = trees.tree_at(&b, "b/deep");
  REQUIRE(tree);
  CHECK(git::oid_str(*tree) == rev("b/deep"));
  CHECK_FALSE(trees.tree_at(&b, "a/x"));
  CHECK(git::oid_str(*trees.tree_at(&b, "")) == git::oid_str(b));

  std::vector<std::string> listed, expected;
  trees.list(b, "", [&](const std::string& path, const git_oid& id, git_object_t type) {
    listed.push_back(std::string(git_object_type2string(type)) + " " + git::oid_str(id) + "\t" + path);
  });
  std::istringstream lines(must(r.git() + "ls-tree -r " + git::oid_str(b)));
  for (std::string line; std::getline(lines, line);) expected.push_back(line.substr(7));
  CHECK(listed == expected);

  SECTION("a listing may skip subtrees") {
    std::vector<std::string> top;
    trees.list(b, "root", [&](const std::string& path, const git_oid&, git_object_t) { top.push_back(path); },
               [](const std::string&, const git_oid&) { return false; });
    CHECK(std::find(top.begin(), top.end(), "root/top") != top.end());
    CHECK(std::find(top.begin(), top.end(), "root/a/x") == top.end());
  }
}

TEST_CASE("raw tree: with check_ids, a tree whose content has another id is refused", "[raw_tree]") {
  Repo r;
  git_oid b = r.tree(after_files());
  std::string id = trim(must(r.git() + "rev-parse " + git::oid_str(b) + ":a"));
  std::string other = r.raw_tree(Repo::oid(trim(must(r.git() + "rev-parse " + git::oid_str(b) + ":b"))));
  // A loose object named `id` holding another tree's bytes.
  std::string file = r.dir + "/objects/" + id.substr(0, 2) + "/" + id.substr(2);
  write_file(r.tmp.path + "/other", other);
  must("python3 -c " + quote("import sys, zlib; d = open(sys.argv[1], 'rb').read(); "
                             "open(sys.argv[2], 'wb').write(zlib.compress(b'tree ' + str(len(d)).encode() + b'\\0' + d))") +
       " " + quote(r.tmp.path + "/other") + " " + quote(r.tmp.path + "/swapped"));
  fs::permissions(file, fs::perms::owner_write, fs::perm_options::add);
  fs::rename(r.tmp.path + "/swapped", file);

  git::TreeReader trusting(r.odb.get(), {});
  CHECK(trusting.blob_at(&b, "a/z"));  // b's content, read as a
  git::TreeReader checking(r.odb.get(), {nullptr, true});
  try {
    checking.blob_at(&b, "a/x");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kCorruption);
    CHECK_THAT(e.what(), Catch::Contains(id));
    CHECK_THAT(e.what(), Catch::Contains("a: the tree object"));
  }
}

TEST_CASE("raw tree: trees read through kistore's pack reader diff the same", "[raw_tree][diff]") {
  Repo r;
  git_oid a = r.tree(before_files()), b = r.tree(after_files());
  // Everything in one pack of stored objects, as kistore keeps them.
  {
    git::PackWriter pack(r.dir + "/objects/pack");
    std::istringstream lines(must(r.git() + "cat-file --batch-all-objects --batch-check"));
    for (std::string id, type, size; lines >> id >> type >> size;) {
      git_oid oid = Repo::oid(id);
      git_odb_object* o = nullptr;
      REQUIRE(git_odb_read(&o, r.odb.get(), &oid) == 0);
      git::OdbObject owned(o);
      pack.write(oid, git_odb_object_type(o), {static_cast<const char*>(git_odb_object_data(o)), git_odb_object_size(o)}, 0);
    }
    pack.finish();
  }
  git::PackReader packs(r.dir + "/");
  git_object_t type;
  std::string bytes;
  REQUIRE(packs.read(b, type, bytes));
  git::TreeReader trees(r.odb.get(), {&packs, true});
  std::multiset<std::string> got;
  trees.diff(&a, &b, "", [&](const git::TreeDelta& d) { got.insert(render(d)); });
  CHECK(got == stock_diff(r, a, b));
}

}  // namespace
}  // namespace kistore
