// Store and Snapshot: init/open, reading, resolving REFs, concurrent writers,
// and the audit history. The repository is inspected with stock git.
#include "store/core/store.h"

#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "objects/error.h"
#include "tests/store/support.h"
#include "objects/json.h"
#include "refs/layout.h"
#include "store/write/add.h"
#include "store/history/history.h"

namespace kistore {
namespace {

using namespace test_support;

namespace fs = std::filesystem;

// ---- helpers (shared ones: tests/store/support.h) ----

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

const char kFixture[] = "refs/seed-run-tiled-geglu-backward.json";
const char kSeedRun[] = "sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0";
const char kSeedProtocol[] = "sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8";

std::string fixture_text() { return read_file(std::string(KISTORE_SOURCE_DIR) + "/tests/data/" + kFixture); }

std::vector<Document> seed_documents() {
  return Bundle::from_json(parse_json(fixture_text(), kFixture), Location{"seed.json", ""}).documents();
}

Document implementation(const std::string& name) {
  Json doc = parse_json(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation","spec":{}})", "impl");
  doc.find("spec")->set("name", name);
  Json meta = Json::object();
  meta.set("name", name);
  doc.set("metadata", meta);
  return Document::from_json(doc, Location{"impl.json", ""});
}

Document attestation(const std::string& subject, const std::string& body) {
  Json doc = parse_json(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Attestation","spec":{"type":"note","author":"Ann <a@example.com>"}})", "att");
  doc.find("spec")->set("subject", subject);
  doc.find("spec")->set("body", body);
  return Document::from_json(doc, Location{"att.json", ""});
}

AddReport add(Store& store, const std::vector<Document>& docs, const std::string& op = "add") {
  std::vector<AddedDocument> in;
  for (const Document& d : docs) in.push_back({&d, "test.json"});
  AddOptions opts;
  opts.op = op;
  opts.commit.author = "Test <t@example.com>";
  return add_documents(store, in, opts);
}

std::string git(const std::string& dir) { return "git --git-dir=" + quote(dir) + " "; }

// The message and code of what `fn` throws.
template <typename F>
std::pair<ErrorCode, std::string> error_of(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  FAIL("no error");
  return {};
}

// ---- init / open ------------------------------------------------------------

TEST_CASE("init makes a bare repository whose HEAD names refs/heads/main", "[store][init]") {
  TempDir tmp;
  const std::string dir = tmp.path + "/nested/store";  // parents are made
  Store store = Store::init(dir);
  CHECK(store.branch() == "refs/heads/main");
  CHECK(store.dir() == dir);
  CHECK(trim(must(git(dir) + "symbolic-ref HEAD")) == "refs/heads/main");
  CHECK(trim(must(git(dir) + "rev-parse --is-bare-repository")) == "true");
  CHECK_FALSE(fs::exists(dir + "/.git"));
  Snapshot snap = store.snapshot();
  CHECK(snap.empty());
  CHECK(snap.commit_id().empty());
  CHECK(snap.object_digests().empty());
  CHECK_FALSE(snap.read("README").has_value());
}

TEST_CASE("init over an existing repository fails with kIO and leaves it alone", "[store][init][errors]") {
  TempDir tmp;
  struct Case {
    const char* name;
    std::string make;  // shell command making the repository at $D
  };
  const std::vector<Case> cases = {
      {"a kistore store", ""},
      {"a bare git repository", "git init -q --bare -b trunk"},
      {"a git work tree", "git init -q -b trunk"},
  };
  int n = 0;
  for (const Case& c : cases) {
    INFO(c.name);
    const std::string dir = tmp.path + "/repo" + std::to_string(n++);
    if (c.make.empty()) {
      Store s = Store::init(dir);
      add(s, {implementation("first")});
    } else {
      must(c.make + " " + quote(dir));
    }
    const std::string before = must("cd " + quote(dir) + " && git rev-parse --absolute-git-dir && git symbolic-ref HEAD && git rev-parse -q --verify HEAD; true");
    auto [code, message] = error_of([&] { Store::init(dir); });
    CHECK(code == ErrorCode::kIO);
    CHECK_THAT(message, Catch::Matchers::Contains(dir));
    CHECK(must("cd " + quote(dir) + " && git rev-parse --absolute-git-dir && git symbolic-ref HEAD && git rev-parse -q --verify HEAD; true") == before);
  }
}

TEST_CASE("open of a directory without a store fails with kIO naming the directory", "[store][open][errors]") {
  TempDir tmp;
  const std::string missing = tmp.path + "/does-not-exist";
  auto [code, message] = error_of([&] { Store::open(missing); });
  CHECK(code == ErrorCode::kIO);
  CHECK_THAT(message, Catch::Matchers::Contains(missing));
  CHECK_FALSE(fs::exists(missing));

  const std::string empty = tmp.path + "/empty";
  fs::create_directory(empty);
  auto [code2, message2] = error_of([&] { Store::open(empty); });
  CHECK(code2 == ErrorCode::kIO);
  CHECK_THAT(message2, Catch::Matchers::Contains(empty));
}

TEST_CASE("open: a plain git clone of a store, bare or not, opens", "[store][open]") {
  TempDir tmp;
  const std::string dir = tmp.path + "/store";
  Store store = Store::init(dir);
  add(store, seed_documents());
  for (const char* flags : {"", "--bare"}) {
    INFO("git clone " << flags);
    const std::string clone = tmp.path + "/clone" + flags;
    must("git clone -q " + std::string(flags) + " " + quote(dir) + " " + quote(clone));
    Store opened = Store::open(clone);
    CHECK(opened.branch() == "refs/heads/main");
    Snapshot snap = opened.snapshot();
    CHECK(snap.commit_id() == store.snapshot().commit_id());
    CHECK(snap.has_object(*Digest::parse(kSeedRun)));
  }
}

TEST_CASE("open: a git repository that is not a store is refused, saying what it holds", "[store][open][errors]") {
  TempDir tmp;
  const std::string ugit = "git -c user.name=u -c user.email=u@example.org -c init.defaultBranch=master ";
  struct Case {
    const char* name;
    std::string setup;  // shell commands run in the new repository's folder
    std::string found;
  };
  const std::vector<Case> cases = {
      {"readme", ugit + "init -q . && echo hi >README.md && " + ugit + "add README.md && " + ugit + "commit -qm x",
       "its branch master holds README.md and nothing of kistore's"},
      {"empty-master", ugit + "init -q .", "its HEAD names the branch master, which has no commits"},
      {"main-unborn-other-branch", ugit + "init -q . && " + ugit + "commit -q --allow-empty -m x && " + ugit +
                                       "symbolic-ref HEAD refs/heads/main",
       "its branch main has no commits, but it holds refs/heads/master"},
      {"empty-tree", ugit + "init -q -b main . && " + ugit + "commit -q --allow-empty -m x",
       "its branch main holds an empty tree"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const std::string dir = tmp.path + "/" + c.name;
    std::filesystem::create_directory(dir);
    must("cd " + quote(dir) + " && " + c.setup);
    const std::string before = must("cd " + quote(dir) + " && find . -type f | LC_ALL=C sort | xargs sha256sum");
    auto [code, message] = error_of([&] { Store::open(dir); });
    CHECK(code == ErrorCode::kIO);
    CHECK_THAT(message, Catch::Matchers::Contains(dir + ": not a kistore store: " + c.found));
    CHECK(must("cd " + quote(dir) + " && find . -type f | LC_ALL=C sort | xargs sha256sum") == before);
  }
  const std::string main_empty = tmp.path + "/main-empty";
  must(ugit + "init -q -b main " + quote(main_empty));
  CHECK_NOTHROW(Store::open(main_empty));
}

TEST_CASE("commit: a repository with some of kistore's names and others opens, but no writer commits onto it",
          "[store][open][errors]") {
  TempDir tmp;
  const std::string ugit = "git -c user.name=u -c user.email=u@example.org ";
  struct Case {
    const char* name;
    std::string setup;
    std::string found;
  };
  const std::vector<Case> cases = {
      {"objects-file", "mkdir objects && echo hi >objects/notes.txt && " + ugit + "add objects",
       "its branch main holds objects/notes.txt, which is not kistore's"},
      {"refs-other", "mkdir -p refs/mine && echo hi >refs/mine/x && " + ugit + "add refs",
       "its branch main holds refs/mine/, which is not kistore's"},
      {"format-tree", "mkdir -p FORMAT objects/sha256 && echo hi >FORMAT/x && echo x >objects/sha256/y && " + ugit +
                          "add FORMAT objects",
       "its branch main holds FORMAT/, which is not kistore's"},
      {"readme-beside-objects", "mkdir -p objects/sha256 && echo x >objects/sha256/y && echo hi >README && " + ugit +
                                    "add README objects",
       "its branch main holds README, which is not kistore's"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const std::string dir = tmp.path + "/" + c.name;
    std::filesystem::create_directory(dir);
    must("cd " + quote(dir) + " && " + ugit + "init -q -b main . && " + c.setup + " && " + ugit + "commit -qm x");
    const std::string head = trim(must("git -C " + quote(dir) + " rev-parse main"));
    const std::string objects = must("git -C " + quote(dir) + " count-objects -v");
    Store store = Store::open(dir);
    CHECK_NOTHROW(store.snapshot());
    auto [code, message] = error_of([&] { add(store, {implementation("x")}); });
    CHECK(code == ErrorCode::kIO);
    CHECK_THAT(message, Catch::Matchers::Contains(dir + ": not a kistore store: " + c.found));
    CHECK_THAT(message, Catch::Matchers::Contains("kistore verify"));
    CHECK(trim(must("git -C " + quote(dir) + " rev-parse main")) == head);
    CHECK(must("git -C " + quote(dir) + " count-objects -v") == objects);
  }
}

TEST_CASE("open: a detached HEAD is refused with kIO", "[store][open][errors]") {
  TempDir tmp;
  const std::string dir = tmp.path + "/store";
  {
    Store store = Store::init(dir);
    add(store, {implementation("x")});
  }
  must(git(dir) + "update-ref --no-deref HEAD refs/heads/main");
  auto [code, message] = error_of([&] { Store::open(dir); });
  CHECK(code == ErrorCode::kIO);
  CHECK_THAT(message, Catch::Matchers::Contains(dir));
}

// ---- Snapshot ---------------------------------------------------------------

TEST_CASE("Snapshot reads objects, metadata and directories of the head", "[store][snapshot]") {
  TempDir tmp;
  Store store = Store::init(tmp.path + "/store");
  auto docs = seed_documents();
  add(store, docs);
  Snapshot snap = store.snapshot();
  CHECK(snap.commit_id() == trim(must(git(store.dir()) + "rev-parse main")));
  std::vector<Digest> expected;
  for (const Document& d : docs) {
    expected.push_back(d.digest());
    CHECK(snap.object_bytes(d.digest()) == d.canonical());
    Document back = snap.document(d.digest());
    CHECK(back.digest() == d.digest());
    REQUIRE(back.metadata().has_value());
    CHECK(*back.metadata() == *d.metadata());
  }
  std::sort(expected.begin(), expected.end());
  CHECK(snap.object_digests() == expected);
  CHECK(snap.list("") == std::vector<std::string>{"FORMAT", "objects", "refs"});
  CHECK(snap.read("FORMAT") == "kistore 3\n");
  CHECK(snap.format() == Format::k3);
  // Format 3: no line for a default level, so no refs/levels for runs at theirs.
  CHECK(snap.list("refs") == std::vector<std::string>{"groups", "metadata", "sources"});
  CHECK(snap.list("refs/nothing").empty());
  CHECK_FALSE(snap.read("refs/groups").has_value());  // a tree, not a blob
  CHECK(snap.exists("refs/groups"));

  auto [code, message] = error_of([&] { snap.object_bytes(Digest::of("absent")); });
  CHECK(code == ErrorCode::kNotFound);
  CHECK_THAT(message, Catch::Matchers::Contains(Digest::of("absent").str()));

  std::vector<std::string> walked;
  snap.walk("refs", [&](const std::string& path, std::string_view) { walked.push_back(path); });
  CHECK(std::to_string(walked.size()) == trim(must(git(store.dir()) + "ls-tree -r --name-only main refs | wc -l")));
  CHECK(walked.size() >= 3);  // a file of each family at least
  CHECK(std::is_sorted(walked.begin(), walked.end()));
}

TEST_CASE("Snapshot::resolve: full digests and unique prefixes of 8+ hex", "[store][resolve]") {
  TempDir tmp;
  Store store = Store::init(tmp.path + "/store");
  add(store, seed_documents());
  Snapshot snap = store.snapshot();
  const std::string run_hex = std::string(kSeedRun).substr(7);

  struct Ok {
    std::string ref;
    const char* expected;
  };
  const std::vector<Ok> ok = {
      {kSeedRun, kSeedRun},
      {run_hex, kSeedRun},
      {"334face3", kSeedRun},
      {"sha256:334face3", kSeedRun},
      {"334face30acaee76", kSeedRun},
      {run_hex.substr(0, 63), kSeedRun},
      {"080e6e66", kSeedProtocol},
      {"334FACE3", kSeedRun},  // capitals, as git takes them
      {"sha256:334FaCe3", kSeedRun},
  };
  for (const Ok& c : ok) {
    INFO(c.ref);
    CHECK(snap.resolve(c.ref).str() == c.expected);
  }

  struct Bad {
    std::string ref;
    ErrorCode code;
  };
  const std::vector<Bad> bad = {
      {"334face", ErrorCode::kInvalidInput},            // 7 hex: too short
      {"sha256:334face", ErrorCode::kInvalidInput},     // 7 hex after the prefix
      {"", ErrorCode::kInvalidInput},
      {"sha256:", ErrorCode::kInvalidInput},
      {"334FACEG", ErrorCode::kInvalidInput},           // capitals, not hex
      {"SHA256:334face3", ErrorCode::kInvalidInput},    // the algorithm is lowercase
      {"334face3x", ErrorCode::kInvalidInput},          // not hex
      {" 334face3", ErrorCode::kInvalidInput},
      {"sha1:334face3", ErrorCode::kInvalidInput},
      {run_hex + "0", ErrorCode::kInvalidInput},         // 65 hex
      {"deadbeef", ErrorCode::kNotFound},
      {"334face4", ErrorCode::kNotFound},               // same directory, other name
      {run_hex.substr(0, 63) + "1", ErrorCode::kNotFound},
      {"sha256:" + std::string(64, '0'), ErrorCode::kNotFound},
  };
  for (const Bad& c : bad) {
    INFO("\"" << c.ref << "\"");
    auto [code, message] = error_of([&] { snap.resolve(c.ref); });
    CHECK(code == c.code);
    CHECK_THAT(message, Catch::Matchers::Contains("\"" + c.ref + "\""));
  }
}

TEST_CASE("Snapshot::resolve: an ambiguous prefix is InvalidInput naming the candidates", "[store][resolve]") {
  // Two object names sharing 8 hex digits cannot be made by hashing in test
  // time; resolve looks at names only, so stock git plants two such names.
  TempDir tmp;
  const std::string dir = tmp.path + "/store";
  Store store = Store::init(dir);
  add(store, {implementation("x")});
  const std::string a = "abcdef01" + std::string(56, '0'), b = "abcdef01" + std::string(56, '1');
  const std::string idx = "GIT_INDEX_FILE=" + quote(tmp.path + "/index") + " ";
  must(idx + git(dir) + "read-tree main");
  const std::string blob = trim(must("echo x | " + git(dir) + "hash-object -w --stdin"));
  for (const std::string& h : {a, b})
    must(idx + git(dir) + "update-index --add --cacheinfo 100644," + blob + ",objects/sha256/ab/cd/" + h.substr(4));
  const std::string tree = trim(must(idx + git(dir) + "write-tree"));
  const std::string commit = trim(must("GIT_AUTHOR_NAME=M GIT_AUTHOR_EMAIL=m@x GIT_COMMITTER_NAME=M GIT_COMMITTER_EMAIL=m@x " +
                                       git(dir) + "commit-tree " + tree + " -p main -m plant"));
  must(git(dir) + "update-ref refs/heads/main " + commit);

  Store reopened = Store::open(dir);  // a Snapshot must not outlive its Store
  Snapshot snap = reopened.snapshot();
  auto [code, message] = error_of([&] { snap.resolve("abcdef01"); });
  CHECK(code == ErrorCode::kInvalidInput);
  CHECK_THAT(message, Catch::Matchers::Contains("sha256:" + a));
  CHECK_THAT(message, Catch::Matchers::Contains("sha256:" + b));
  CHECK(snap.resolve("abcdef010").hex() == a);
  CHECK(snap.resolve("sha256:abcdef011").hex() == b);
}

// ---- concurrency ------------------------------------------------------------

TEST_CASE("concurrent writers: two handles, 20 adds each, all 40 commits land in a linear history", "[store][concurrency]") {
  TempDir tmp;
  const std::string dir = tmp.path + "/store";
  Store::init(dir);
  constexpr int kWriters = 2, kAdds = 20;
  std::vector<std::vector<Document>> docs(kWriters);
  for (int w = 0; w < kWriters; ++w)
    for (int i = 0; i < kAdds; ++i) docs[w].push_back(implementation("writer" + std::to_string(w) + "-" + std::to_string(i)));
  // Catch2 assertions are not thread-safe: threads record, the main thread checks.
  std::vector<std::vector<std::string>> commits(kWriters);
  std::vector<std::string> failures(kWriters);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      try {
        Store store = Store::open(dir);
        for (const Document& d : docs[w]) {
          AddReport r = add(store, {d});
          if (r.commit) commits[w].push_back(*r.commit);
          else failures[w] += "no commit for " + d.digest().str() + "\n";
        }
      } catch (const std::exception& e) {
        failures[w] += e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int w = 0; w < kWriters; ++w) {
    INFO("writer " << w);
    CHECK(failures[w].empty());
    CHECK(commits[w].size() == kAdds);
  }

  // Every reported commit is on the branch, which is linear and 40 long.
  auto history = lines(must(git(dir) + "rev-list --parents main"));
  CHECK(history.size() == kWriters * kAdds);
  std::set<std::string> on_branch;
  for (const std::string& line : history) {
    std::istringstream words(line);
    std::vector<std::string> parts;
    for (std::string word; words >> word;) parts.push_back(word);
    CHECK(parts.size() <= 2);  // no merges
    on_branch.insert(parts.front());
  }
  for (const auto& list : commits)
    for (const std::string& id : list) CHECK(on_branch.count(id) == 1);

  Store reopened = Store::open(dir);  // a Snapshot must not outlive its Store
  Snapshot snap = reopened.snapshot();
  for (const auto& list : docs)
    for (const Document& d : list) {
      CHECK(snap.has_object(d.digest()));
      CHECK(snap.metadata(d.digest()).has_value());
    }
  CHECK(snap.object_digests().size() == kWriters * kAdds);
  CHECK(sh(git(dir) + "fsck --strict --no-dangling").rc == 0);
}

// ---- history ----------------------------------------------------------------

struct HistoryStore {
  TempDir tmp;
  std::string dir = tmp.path + "/store";
  Store store = Store::init(dir);
  Document impl = implementation("history-impl");
  Document att = attestation(kSeedRun, "history note");
  std::vector<std::string> ids;  // newest first, as git rev-list prints them
  HistoryStore() {
    add(store, seed_documents(), "add");
    add(store, {impl}, "import");
    add(store, {att}, "attest");
    ids = lines(must(git(dir) + "rev-list main"));
  }
};

std::vector<std::string> ids_of(const std::vector<LogEntry>& log) {
  std::vector<std::string> out;
  for (const LogEntry& e : log) out.push_back(e.id);
  return out;
}

TEST_CASE("read_history: every commit, newest first, with op, summary, author and parents", "[store][history]") {
  HistoryStore h;
  REQUIRE(h.ids.size() == 3);
  auto log = read_history(h.store, {});
  REQUIRE(ids_of(log) == h.ids);
  CHECK(log[0].op == "attest");
  CHECK(log[1].op == "import");
  CHECK(log[2].op == "add");
  CHECK(log[0].parents == std::vector<std::string>{h.ids[1]});
  CHECK(log[1].parents == std::vector<std::string>{h.ids[2]});
  CHECK(log[2].parents.empty());
  auto summaries = lines(must(git(h.dir) + "log --format=%s main"));
  for (std::size_t i = 0; i < log.size(); ++i) {
    INFO(i);
    CHECK(log[i].author == "Test <t@example.com>");
    CHECK(log[i].summary == summaries[i]);
    CHECK(log[i].message == must(git(h.dir) + "cat-file commit " + log[i].id).substr(
                                must(git(h.dir) + "cat-file commit " + log[i].id).find("\n\n") + 2));
    CHECK(log[i].signature.empty());
    CHECK(log[i].changes.empty());  // not requested
    CHECK(std::to_string(log[i].time) == trim(must(git(h.dir) + "log -1 --format=%at " + log[i].id)));
  }
}

TEST_CASE("read_history: filters by op, by path, and limits", "[store][history]") {
  HistoryStore h;
  REQUIRE(h.ids.size() == 3);
  struct Case {
    const char* name;
    LogQuery query;
    std::vector<std::string> expected;
  };
  auto q = [](std::size_t limit, std::string op, std::vector<std::string> paths) {
    LogQuery query;
    query.limit = limit;
    query.op = std::move(op);
    query.paths = std::move(paths);
    return query;
  };
  const std::vector<Case> cases = {
      {"op add", q(0, "add", {}), {h.ids[2]}},
      {"op attest", q(0, "attest", {}), {h.ids[0]}},
      {"op rerun: none", q(0, "rerun", {}), {}},
      {"limit 2", q(2, "", {}), {h.ids[0], h.ids[1]}},
      {"limit 1 with op", q(1, "import", {}), {h.ids[1]}},
      {"paths: attestations", q(0, "", {"refs/attestations/"}), {h.ids[0]}},
      {"paths: sources", q(0, "", {"refs/sources/"}), {h.ids[2]}},
      {"paths: one object", q(0, "", {object_path(h.impl.digest())}), {h.ids[1]}},
      {"paths: objects", q(0, "", {"objects/"}), h.ids},
      {"paths: two", q(0, "", {object_path(h.impl.digest()), object_path(h.att.digest())}), {h.ids[0], h.ids[1]}},
      {"paths: untouched", q(0, "", {"refs/levels/reproduced/"}), {}},
      {"paths and op", q(0, "add", {"refs/attestations/"}), {}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(ids_of(read_history(h.store, c.query)) == c.expected);
  }
}

TEST_CASE("read_history: with_changes lists what each commit added", "[store][history]") {
  HistoryStore h;
  LogQuery query;
  query.with_changes = true;
  auto log = read_history(h.store, query);
  REQUIRE(log.size() == 3);
  std::set<std::pair<char, std::string>> changes;
  for (const PathChange& c : log[1].changes) changes.insert({c.status, c.path});
  CHECK(changes == std::set<std::pair<char, std::string>>{{'A', object_path(h.impl.digest())},
                                                            {'A', metadata_path(kCurrentFormat, h.impl.digest())}});
  CHECK(log[2].changes.size() == 8);  // format 3: no line for the run's default level
}

TEST_CASE("read_history of an empty store is empty", "[store][history]") {
  TempDir tmp;
  Store store = Store::init(tmp.path + "/store");
  CHECK(read_history(store, {}).empty());
}

}  // namespace
}  // namespace kistore
