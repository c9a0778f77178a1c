// add_documents against a real store, checked from the outside with stock
// tools (git, zstd, sha256sum) so that the test does not trust kistore's own
// codec or tree reader.
#include "store/write/add.h"

#include <stdlib.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "objects/error.h"
#include "refs/index_lines.h"
#include "tests/store/support.h"
#include "tests/store/format3.h"
#include "objects/json.h"
#include "refs/layout.h"
#include "store/git/git.h"
#include "store/git/objwrite.h"
#include "store/git/packread.h"
#include "store/core/store.h"
#include "store/verify/verify.h"
#include "store/core/index_trees.h"
#include "store/query/query.h"
#include "refs/index_trie.h"

namespace kistore {
namespace {

using namespace test_support;

namespace fs = std::filesystem;

// ---- helpers (shared ones: tests/store/support.h) ----

std::string data(const std::string& rel) { return read_file(std::string(KISTORE_SOURCE_DIR) + "/tests/data/" + rel); }

const char kFixture[] = "refs/seed-run-tiled-geglu-backward.json";
const char kSeedRun[] = "sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0";
const char kSeedProtocol[] = "sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8";
const char kSeedEnvironment[] = "sha256:e2646efafa5e5fbd428b49a99b1c076c10d51654a549c4e50ec36da7662d4328";
const char kSeedKeyHex[] = "04a2550439d8b192200cc440806ec7651434ad8d662b93bfe882f33d0465b567";
const char kSeedSource[] =
    "refs/sources/liger-kernel-bench/tiled_geglu/backward/liger_tiled/nvidia-geforce-rtx-4090/"
    "batch2-hidden2048-intermediate4096-seq1024-bf16/2025-11-11-06-22-57";

std::vector<Document> seed_documents() {
  Bundle b = Bundle::from_json(parse_json(data(kFixture), kFixture), Location{"seed.json", ""});
  return b.documents();
}

Json seed_json(const char* role) { return *parse_json(data(kFixture), kFixture).find(role); }

Document implementation(const std::string& name, bool with_metadata = true) {
  Json doc = Json::object();
  doc.set("apiVersion", "kernelindex.dev/v1alpha1");
  doc.set("kind", "Implementation");
  Json spec = Json::object();
  spec.set("name", name);
  doc.set("spec", spec);
  if (with_metadata) {
    Json meta = Json::object();
    meta.set("name", name);
    doc.set("metadata", meta);
  }
  return Document::from_json(doc, Location{"impl.json", ""});
}

Document attestation(const std::string& subject, const std::string& body) {
  Json doc = parse_json(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Attestation","spec":{"type":"note","author":"Ann <a@example.com>"}})", "att");
  doc.find("spec")->set("subject", subject);
  doc.find("spec")->set("body", body);
  return Document::from_json(doc, Location{"att.json", ""});
}

// The seed run with another median and external id: another run in the same group.
Document seed_variant(int n, const std::string& external_id = "") {
  Json run = seed_json("run");
  Json* spec = run.find("spec");
  spec->find("timing")->find("latencyNs")->set("median", 2600000 + n);
  if (!external_id.empty()) spec->find("sourceNative")->set("externalId", external_id);
  else spec->find("sourceNative")->set("externalId", "variant/" + std::to_string(n));
  return Document::from_json(run, Location{"variant.json", ""});
}

const char* const kAuthor = "Test <t@example.com>";

AddReport add(Store& store, const std::vector<Document>& docs, const std::string& where = "seed.json",
              std::vector<std::string> inputs = {}) {
  std::vector<AddedDocument> in;
  for (const Document& d : docs) in.push_back({&d, where});
  AddOptions opts;
  opts.inputs = std::move(inputs);
  opts.commit.author = kAuthor;
  return add_documents(store, in, opts);
}

struct TestStore {
  TempDir tmp;
  std::string dir = tmp.path + "/store";
  Store store = Store::init(dir);
  std::string git() const { return "git --git-dir=" + quote(dir) + " "; }
  std::string head() const { return trim(sh(git() + "rev-parse --verify -q refs/heads/main").out); }
  std::string blob(const std::string& path) const { return must(git() + "cat-file blob " + quote("main:" + path)); }
  std::set<std::string> paths() const {
    std::set<std::string> out;
    std::istringstream lines(must(git() + "ls-tree -r --name-only main"));
    for (std::string line; std::getline(lines, line);) out.insert(line);
    return out;
  }
};

std::vector<std::string> strs(const std::vector<Digest>& ds) {
  std::vector<std::string> out;
  for (const Digest& d : ds) out.push_back(d.str());
  return out;
}

std::string hex(const char* digest) { return std::string(digest).substr(7); }
// A digest as format 2 names it below an index folder: <h0h1>/<h2h3>/<h4..h63>.

// Format 3: the line of `key` in the file of `family` that holds it, read
// with git; "" when there is none.
std::string line_of(const TestStore& t, Family family, const std::string& key) {
  const std::string path = fact_file(t.store.snapshot(), family, key);
  const Shell file = sh(t.git() + "cat-file blob " + quote("main:" + path), true);
  const std::string start = "{\"@key\":\"" + key + "\"";
  for (std::size_t at = 0; at < file.out.size();) {
    std::size_t end = file.out.find('\n', at);
    if (end == std::string::npos) break;
    if (file.out.compare(at, start.size(), start) == 0) return file.out.substr(at, end + 1 - at);
    at = end + 1;
  }
  return "";
}
// The line that `key` and a JSON object's other members (`object`, "{...}") make.
std::string line(const std::string& key, const std::string& object) {
  return "{\"@key\":\"" + key + "\"," + object.substr(1) + "\n";
}
std::string metadata_line(const char* digest, const std::string& metadata) {
  return line(hex(digest), "{\"metadata\":" + metadata + "}");
}
// The run that claims an upstream id, from its line; nullopt when none does.
std::optional<Digest> source_run(const Snapshot& snap, const std::string& source, const std::string& id) {
  std::optional<IndexFact> fact = find_fact(snap, Family::kSources, source_key(source, id));
  if (!fact) return std::nullopt;
  return std::get<SourceFact>(*fact).run;
}

// ---- tests -----------------------------------------------------------------

TEST_CASE("add: the seed bundle lands at SPEC §2 paths, checked with git, zstd and sha256sum", "[store][add]") {
  TestStore t;
  auto docs = seed_documents();
  AddReport report = add(t.store, docs);
  CHECK(strs(report.added) == std::vector<std::string>{kSeedRun, kSeedProtocol, kSeedEnvironment});
  CHECK(report.present.empty());
  CHECK(report.notes.empty());
  REQUIRE(report.commit.has_value());
  CHECK(*report.commit == t.head());

  auto object = [](const char* d) {
    std::string h = hex(d);
    return "objects/sha256/" + h.substr(0, 2) + "/" + h.substr(2, 2) + "/" + h.substr(4);
  };
  const std::set<std::string> expected = {
      "FORMAT",
      object(kSeedRun),
      object(kSeedProtocol),
      object(kSeedEnvironment),
      // Format 3: a file of lines per family, named by the keys' first digit
      // (an upstream id's key is the hash of the id); no levels line for a
      // run at its default level.
      "refs/metadata/" + hex(kSeedRun).substr(0, 1),
      "refs/metadata/" + hex(kSeedProtocol).substr(0, 1),
      "refs/metadata/" + hex(kSeedEnvironment).substr(0, 1),
      "refs/groups/" + std::string(kSeedKeyHex).substr(0, 1),
      "refs/sources/" + source_key("liger-kernel-bench", std::string(kSeedSource).substr(32)).substr(0, 1),
  };
  CHECK(t.paths() == expected);

  for (const Document& d : docs) {
    const std::string digest = d.digest().str();
    INFO(digest);
    const std::string frame = t.tmp.path + "/frame.zst";
    must(t.git() + "cat-file blob " + quote("main:" + object(digest.c_str())) + " > " + quote(frame));
    // The stock zstd CLI decodes it (checking the frame's checksum) to bytes hashing to the name.
    CHECK(trim(must("zstd -q -dc " + quote(frame) + " | sha256sum")) == hex(digest.c_str()) + "  -");
    CHECK(must("zstd -q -dc " + quote(frame)) == d.canonical());
    std::string listing = sh("zstd -lv " + quote(frame), true).out;
    CHECK_THAT(listing, Catch::Matchers::Contains("# Zstandard Frames: 1"));
    CHECK_THAT(listing, Catch::Matchers::Contains("Check: XXH64"));
  }

  CHECK(line_of(t, Family::kMetadata, hex(kSeedRun)) == metadata_line(kSeedRun, data("store/seed-run.metadata.json")));
  CHECK(line_of(t, Family::kMetadata, hex(kSeedProtocol)) ==
        metadata_line(kSeedProtocol, data("store/seed-protocol.metadata.json")));
  CHECK(line_of(t, Family::kMetadata, hex(kSeedEnvironment)) ==
        metadata_line(kSeedEnvironment, data("store/seed-environment.metadata.json")));
  const std::string group_key = std::string(kSeedKeyHex) + hex(kSeedRun);
  CHECK(line_of(t, Family::kGroups, group_key) == line(group_key, data("refs/seed-run.group-entry.json")));
  CHECK(line_of(t, Family::kLevels, hex(kSeedRun)).empty());  // its default level: no line
  CHECK(source_run(t.store.snapshot(), "liger-kernel-bench", std::string(kSeedSource).substr(32)) ==
        Digest::parse(kSeedRun));
}

TEST_CASE("add: adding the same documents again makes no commit and reports them present", "[store][add]") {
  TestStore t;
  auto docs = seed_documents();
  add(t.store, docs);
  const std::string head = t.head();
  AddReport again = add(t.store, docs);
  CHECK(again.added.empty());
  CHECK(strs(again.present) == std::vector<std::string>{kSeedRun, kSeedProtocol, kSeedEnvironment});
  CHECK_FALSE(again.commit.has_value());
  CHECK(again.notes.empty());
  CHECK(t.head() == head);
  CHECK(trim(must(t.git() + "rev-list --count main")) == "1");
}

TEST_CASE("add: a document repeated within one call is added once and reported present once", "[store][add]") {
  TestStore t;
  Document impl = implementation("dup");
  AddReport r = add(t.store, {impl, impl});
  CHECK(strs(r.added) == std::vector<std::string>{impl.digest().str()});
  CHECK(strs(r.present) == std::vector<std::string>{impl.digest().str()});
  CHECK(trim(must(t.git() + "rev-list --count main")) == "1");
}

TEST_CASE("add: differing metadata on re-add keeps the first and adds a note", "[store][add]") {
  TestStore t;
  add(t.store, seed_documents());
  const std::string head = t.head();
  Json run = seed_json("run");
  run.find("metadata")->set("title", "another title");
  Document renamed = Document::from_json(run, Location{"renamed.json", ""});
  REQUIRE(renamed.digest().str() == kSeedRun);
  AddReport r = add(t.store, {renamed}, "renamed.json");
  CHECK(r.added.empty());
  CHECK(strs(r.present) == std::vector<std::string>{kSeedRun});
  REQUIRE(r.notes.size() == 1);
  CHECK_THAT(r.notes[0], Catch::Matchers::Contains("renamed.json"));
  CHECK_THAT(r.notes[0], Catch::Matchers::Contains(kSeedRun));
  CHECK_FALSE(r.commit.has_value());
  CHECK(t.head() == head);
  CHECK(line_of(t, Family::kMetadata, hex(kSeedRun)) == metadata_line(kSeedRun, data("store/seed-run.metadata.json")));

  SECTION("the same metadata, or none, is no note") {
    auto docs = seed_documents();
    CHECK(add(t.store, docs).notes.empty());
    run.erase("metadata");
    Document bare = Document::from_json(run, Location{"bare.json", ""});
    CHECK(add(t.store, {bare}).notes.empty());
    CHECK(t.head() == head);
  }
}

// Regression: add skipped a document repeated within one call before
// comparing its metadata, so a differing metadata in the same call is dropped
// silently. SPEC §2: "the first metadata stays, a differing one is reported".
// Input: one add_documents call with the seed run twice, the second copy with
// metadata.title "another title"; expected one note naming the run; found none.
TEST_CASE("add: differing metadata repeated within one call is reported", "[store][add]") {
  TestStore t;
  Document first = seed_documents()[0];
  Json run = seed_json("run");
  run.find("metadata")->set("title", "another title");
  Document second = Document::from_json(run, Location{"second.json", ""});
  REQUIRE(second.digest() == first.digest());
  AddReport r = add(t.store, {first, second});
  CHECK(strs(r.added) == std::vector<std::string>{kSeedRun});
  CHECK(line_of(t, Family::kMetadata, hex(kSeedRun)) == metadata_line(kSeedRun, data("store/seed-run.metadata.json")));
  REQUIRE(r.notes.size() == 1);
  CHECK_THAT(r.notes[0], Catch::Matchers::Contains(kSeedRun));
}

TEST_CASE("add: a malformed author is InvalidInput and writes nothing", "[store][add][errors]") {
  TestStore t;
  Document impl = implementation("x");
  std::vector<AddedDocument> in{{&impl, "x.json"}};
  for (const char* author : {"nobody", "<t@example.com>", "Test <>", "Test <t@example.com> trailing", "Test t@example.com>",
                             "Test <t<x@example.com>", "Te<st <t@example.com>", "Te>st <t@example.com>",
                             "Test <t>x@example.com>"}) {
    INFO(author);
    AddOptions opts;
    opts.commit.author = author;
    try {
      add_documents(t.store, in, opts);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInvalidInput);
      CHECK_THAT(e.what(), Catch::Matchers::Contains("expected \"Name <email>\""));
      CHECK_THAT(e.what(), Catch::Matchers::Contains(author));
    }
    CHECK(t.head().empty());
  }
  // A line break would end the author line and start a header of the author's own.
  for (const char* author : {"Test\nKistore-Op: forged <t@example.com>", "Test <t@example.com\r>"}) {
    INFO(author);
    AddOptions opts;
    opts.commit.author = author;
    CHECK_THROWS_WITH(add_documents(t.store, in, opts), Catch::Matchers::Contains("found a line break"));
    CHECK(t.head().empty());
  }
  CHECK(add(t.store, {implementation("x")}).commit.has_value());
}

TEST_CASE("add: without an author the commit is git's user.name, else kistore <kistore@localhost>", "[store][add]") {
  TestStore t;
  Document first = implementation("first"), second = implementation("second");
  std::vector<AddedDocument> in{{&first, "first.json"}};
  AddOptions opts;
  opts.commit.time = 1767225600;  // 2026-01-01T00:00:00Z
  REQUIRE(add_documents(t.store, in, opts).commit);
  CHECK(trim(must(t.git() + "log -1 --format='%an <%ae>|%cn <%ce>|%at|%ct' main")) ==
        "kistore <kistore@localhost>|kistore <kistore@localhost>|1767225600|1767225600");
  must(t.git() + "config user.name 'Store Owner'");
  must(t.git() + "config user.email owner@example.com");
  Store reopened = Store::open(t.dir);
  in = {{&second, "second.json"}};
  REQUIRE(add_documents(reopened, in, AddOptions{}).commit);
  CHECK(trim(must(t.git() + "log -1 --format='%an <%ae>' main")) == "Store Owner <owner@example.com>");
}

TEST_CASE("add: an attestation whose subject is missing is InvalidInput and writes nothing", "[store][add][errors]") {
  TestStore t;
  const std::string missing = Digest::of("no such run").str();
  Document att = attestation(missing, "about nothing");
  Document impl = implementation("innocent bystander");

  SECTION("on an empty store: no branch is created") {
    try {
      add(t.store, {impl, att}, "att.json");
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInvalidInput);
      CHECK_THAT(e.what(), Catch::Matchers::StartsWith("att.json: /spec/subject: "));
      CHECK_THAT(e.what(), Catch::Matchers::Contains(missing));
    }
    CHECK(t.head().empty());
  }
  SECTION("on a store with other runs: head unchanged") {
    add(t.store, seed_documents());
    const std::string head = t.head();
    CHECK_THROWS_MATCHES(add(t.store, {impl, att}, "att.json"), Error,
                         Catch::Matchers::Predicate<Error>([](const Error& e) { return e.code() == ErrorCode::kInvalidInput; }));
    CHECK(t.head() == head);
    CHECK_FALSE(t.store.snapshot().has_object(impl.digest()));
  }
}

TEST_CASE("add: an attestation is indexed under its subject, in the store or in the same call", "[store][add]") {
  TestStore t;
  auto docs = seed_documents();
  Document att = attestation(kSeedRun, "reproduced on my 4090");
  const std::string entry = hex(kSeedRun) + att.digest().hex();
  SECTION("subject in the same call") {
    docs.push_back(att);
    AddReport r = add(t.store, docs);
    CHECK(r.added.size() == 4);
  }
  SECTION("subject already in the store") {
    add(t.store, docs);
    AddReport r = add(t.store, {att});
    CHECK(strs(r.added) == std::vector<std::string>{att.digest().str()});
    CHECK(trim(must(t.git() + "rev-list --count main")) == "2");
  }
  CHECK(line_of(t, Family::kAttestations, entry) == line(entry, R"({"author":"Ann <a@example.com>","type":"note"})"));
}

// Regression: add accepted an attestation whose subject is any object in
// the store (or in the call), not only a run; SPEC §1 says an Attestation's
// subject is a run digest (`kistore attest RUN`), and the index keeps it under
// refs/attestations/<run hex>/. verify did not flag such an entry either. Input: the seed bundle, then a note whose subject is the
// bundle's protocol sha256:080e6e66...; expected Error(kInvalidInput) naming
// /spec/subject; found: added, indexed at refs/attestations/080e6e66.../<att>.
TEST_CASE("add: an attestation whose subject is not a run is InvalidInput", "[store][add][errors]") {
  TestStore t;
  add(t.store, seed_documents());
  const std::string head = t.head();
  Document att = attestation(kSeedProtocol, "about a protocol");
  try {
    add(t.store, {att}, "att.json");
    FAIL("added an attestation about a protocol");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidInput);
    CHECK_THAT(e.what(), Catch::Matchers::StartsWith("att.json: /spec/subject: "));
  }
  CHECK(t.head() == head);
}

TEST_CASE("add: a run whose source id another run holds is added, not indexed there, and reported", "[store][add]") {
  // An upstream id names one run: the first claim stays, as metadata does.
  TestStore t;
  add(t.store, seed_documents());
  const std::string head = t.head();
  Json run = seed_json("run");
  run.find("spec")->find("timing")->find("latencyNs")->set("median", 1);  // another run, same source id
  Document clash = Document::from_json(run, Location{"clash.json", ""});
  AddReport report = add(t.store, {clash}, "clash.json");
  CHECK(t.head() != head);
  REQUIRE(report.added.size() == 1);
  REQUIRE(report.notes.size() == 1);
  CHECK_THAT(report.notes[0], Catch::Matchers::StartsWith("clash.json: the upstream id \"liger-kernel-bench\""));
  CHECK_THAT(report.notes[0], Catch::Matchers::Contains(kSeedRun));
  CHECK_THAT(report.notes[0], Catch::Matchers::Contains(clash.digest().str()));
  Snapshot snap = t.store.snapshot();
  CHECK(snap.has_object(clash.digest()));
  const std::string id = clash.spec().find("sourceNative")->find("externalId")->as_string();
  CHECK(source_run(snap, "liger-kernel-bench", id) == Digest::parse(kSeedRun));
}

TEST_CASE("add: two new runs claiming one source id in one call: the first is indexed", "[store][add]") {
  TestStore t;
  Document a = seed_variant(1, "same/id"), b = seed_variant(2, "same/id");
  AddReport report = add(t.store, {a, b}, "two.json");
  CHECK(report.added.size() == 2);
  REQUIRE(report.notes.size() == 1);
  CHECK_THAT(report.notes[0], Catch::Matchers::Contains(b.digest().str()));
  CHECK(source_run(t.store.snapshot(), "liger-kernel-bench", "same/id") == a.digest());
}

TEST_CASE("add: the commit has a summary, the inputs in its body, a Kistore-Op trailer and the author", "[store][add]") {
  TestStore t;
  add(t.store, seed_documents(), "seed.json", {"seed.json"});
  const std::string git = t.git();
  const std::string message = must(git + "log -1 --format=%B main");
  CHECK_THAT(trim(must(git + "log -1 --format=%s main")), Catch::Matchers::StartsWith("add: 3 documents"));
  // summary, blank line, body, blank line, trailer.
  CHECK_THAT(message, Catch::Matchers::Matches("add: 3 documents[^\n]*\n\nfrom seed\\.json\n\nKistore-Op: add\n\n?"));
  CHECK(trim(must(git + "log -1 --format='%(trailers:key=Kistore-Op,valueonly)' main")) == "add");
  CHECK(trim(must(git + "log -1 --format='%an <%ae>|%cn <%ce>' main")) == "Test <t@example.com>|Test <t@example.com>");
  CHECK(commit_op(message) == "add");
}

TEST_CASE("add: stock `git fsck --strict` accepts the store", "[store][add][fsck]") {
  TestStore t;
  auto docs = seed_documents();
  add(t.store, docs);
  add(t.store, {attestation(kSeedRun, "ok"), seed_variant(7)});
  std::vector<Document> many;
  for (int i = 0; i < 70; ++i) many.push_back(implementation("fsck-" + std::to_string(i)));
  add(t.store, many);
  Shell fsck = sh(t.git() + "fsck --strict --no-dangling", true);
  INFO(fsck.out);
  CHECK(fsck.rc == 0);
  CHECK(fsck.out.find("error") == std::string::npos);
  CHECK(fsck.out.find("warning") == std::string::npos);
}

TEST_CASE("add: unusual but valid source ids are stored verbatim and pass fsck", "[store][add][fsck]") {
  TestStore t;
  std::vector<Document> runs;
  int n = 0;
  for (const char* id : {"a/.../b", "a b/c", "ünïcødé/名前", "a/x.git", "a/con", "a/b:c", "a/b\\c",
                         "a/-leading-dash", "a/~tilde", "a/*star", "a/x.lock"})
    runs.push_back(seed_variant(100 + n++, id));
  add(t.store, runs);
  for (const Document& run : runs) {
    std::string id = run.spec().find("sourceNative")->find("externalId")->as_string();
    INFO(id);
    CHECK(source_run(t.store.snapshot(), "liger-kernel-bench", id) == run.digest());
  }
  Shell fsck = sh(t.git() + "fsck --strict --no-dangling", true);
  INFO(fsck.out);
  CHECK(fsck.rc == 0);
}

// Regression: refs/layout's segment check rejected only the segment ".git";
// git and libgit2 treat ".git.", ".git ", "git~1" (NTFS spellings) as ".git"
// too. So source_path accepted externalId "a/.git./b", and add_documents then
// failed late, in git_tree_create_updated, with Error(kIO) (exit 3, "store or
// I/O error") "building the new tree: failed to insert entry: invalid name for
// a tree entry - .git." - naming neither the input nor the JSON pointer.
// Expected: Error(kInvalidInput) "<where>: /spec/sourceNative/externalId: ..."
// (exit 2); if it were ever stored, `git fsck --strict` would fail (hasDotgit).
TEST_CASE("add: a source id git treats as .git is refused, or the store still passes fsck", "[store][add][fsck]") {
  for (const char* id : {"a/.git./b", "a/git~1/b"}) {
    INFO(id);
    TestStore t;
    Document run = seed_variant(3, id);
    bool refused = false;
    try {
      add(t.store, {run}, "dotgit.json");
    } catch (const Error& e) {
      refused = true;
      CHECK(e.code() == ErrorCode::kInvalidInput);
      CHECK_THAT(e.what(), Catch::Matchers::Contains("/spec/sourceNative/externalId"));
      CHECK(t.head().empty());
    }
    if (!refused) {
      Shell fsck = sh(t.git() + "fsck --strict --no-dangling", true);
      INFO(fsck.out);
      CHECK(fsck.rc == 0);
    }
  }
}

// Loose object files: objects/<2 hex>/<38 hex>.
std::vector<std::string> loose_objects(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& sub : fs::directory_iterator(dir + "/objects")) {
    std::string name = sub.path().filename().string();
    if (name.size() != 2 || !sub.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(sub.path())) out.push_back(name + f.path().filename().string());
  }
  return out;
}

std::size_t loose_blobs(const TestStore& t) {
  std::size_t n = 0;
  for (const std::string& id : loose_objects(t.dir))
    if (trim(must(t.git() + "cat-file -t " + id)) == "blob") ++n;
  return n;
}

std::set<std::string> packs(const std::string& dir) {
  std::set<std::string> out;
  if (!fs::exists(dir + "/objects/pack")) return out;
  for (const auto& f : fs::directory_iterator(dir + "/objects/pack"))
    if (f.path().extension() == ".pack") out.insert(f.path().string());
  return out;
}

TEST_CASE("add: a bulk add (>= 64 documents) writes exactly one pack and no loose blobs", "[store][add][pack]") {
  TestStore t;
  add(t.store, seed_documents());  // small: loose
  const std::size_t loose_before = loose_blobs(t);
  CHECK(loose_before == 9);  // FORMAT, 3 objects, 3 metadata files, a groups file, a sources file
  REQUIRE(packs(t.dir).empty());

  std::vector<Document> many;
  for (int i = 0; i < 80; ++i) many.push_back(implementation("bulk-" + std::to_string(i)));
  AddReport r = add(t.store, many);
  CHECK(r.added.size() == 80);
  auto after = packs(t.dir);
  REQUIRE(after.size() == 1);
  CHECK(loose_blobs(t) == loose_before);

  // The pack holds the 80 new objects and the metadata files their lines went to.
  const std::size_t files = std::stoul(trim(must(t.git() + "diff-tree -r --name-only main^ main -- refs/ | wc -l")));
  CHECK(files >= 10);
  std::string idx = *after.begin();
  idx.replace(idx.size() - 5, 5, ".idx");
  std::string listing = must("git verify-pack -v " + quote(idx));
  std::size_t blobs = 0;
  for (std::size_t pos = 0; (pos = listing.find(" blob ", pos)) != std::string::npos; ++pos) ++blobs;
  CHECK(blobs == 80 + files);

  // Readable by a fresh handle and by git.
  Store reopened = Store::open(t.dir);
  Snapshot snap = reopened.snapshot();
  for (const Document& d : many) {
    REQUIRE(snap.has_object(d.digest()));
    CHECK(snap.object_bytes(d.digest()) == d.canonical());
  }
  CHECK(sh(t.git() + "fsck --strict --no-dangling").rc == 0);

  SECTION("kistore's pack reader returns what libgit2 reads, and refuses damage") {
    git::PackReader reader(t.dir + "/");
    git_repository* raw = nullptr;
    REQUIRE(git_repository_open(&raw, t.dir.c_str()) == 0);
    git::Repository repo(raw);
    git_odb* odb_raw = nullptr;
    REQUIRE(git_repository_odb(&odb_raw, raw) == 0);
    git::Odb odb(odb_raw);
    std::string listing2 = must("git verify-pack -v " + quote(idx));
    std::istringstream lines(listing2);
    std::string line, target;
    std::pair<std::string, std::size_t> tree_at;  // a deflated tree, and a byte inside its entry
    std::size_t checked = 0;
    while (std::getline(lines, line)) {
      std::istringstream f(line);
      std::string id, type;
      std::size_t size = 0, packed = 0, offset = 0;
      if (!(f >> id >> type) || id.size() != 40 || (type != "blob" && type != "tree" && type != "commit")) continue;
      if (type == "tree" && f >> size >> packed >> offset) tree_at = {id, offset + packed / 2};
      git_oid oid;
      REQUIRE(git_oid_fromstr(&oid, id.c_str()) == 0);
      git_object_t got = GIT_OBJECT_INVALID;
      std::string bytes;
      git_odb_object* o = nullptr;
      REQUIRE(git_odb_read(&o, odb_raw, &oid) == 0);
      git::OdbObject owned(o);
      std::string expected(static_cast<const char*>(git_odb_object_data(o)), git_odb_object_size(o));
      bool stored = reader.read(oid, got, bytes);
      // Documents are stored (level 0); the commit, the index files, the
      // metadata blobs and the trees of a change of up to 1,024 paths (this
      // one: 80 documents) are deflated. Every whole object reads, as
      // libgit2 reads it.
      CHECK(stored);
      if (stored) {
        CHECK(got == git_odb_object_type(o));
        CHECK(bytes == expected);
        ++checked;
        if (type == "blob" && git::blob_level(expected) == 0 && expected.size() > 40) target = id;  // a zstd frame
      }
    }
    CHECK(checked > 80);
    REQUIRE(!target.empty());
    // The index's JSON Lines files are deflated (objwrite.h blob_level):
    // none of their bytes stand in the pack as they are.
    {
      const std::string packed = read_file(*after.begin());
      std::size_t index_files = 0;
      std::istringstream files(must(t.git() + "ls-tree -r --name-only main -- refs"));
      for (std::string path; std::getline(files, path);) {
        const std::string bytes = t.blob(path);
        REQUIRE(bytes.rfind("{\"@key\":\"", 0) == 0);
        if (bytes.size() < 128) continue;
        ++index_files;
        CHECK(packed.find(bytes.substr(0, 100)) == std::string::npos);
      }
      CHECK(index_files > 0);
    }

    // One byte of that blob's content flipped inside the pack: the reader
    // declines it (Adler-32), and verify reports it through libgit2.
    std::string pack_path = *after.begin();
    std::string pack = read_file(pack_path);
    git_oid oid;
    git_oid_fromstr(&oid, target.c_str());
    std::string content;
    git_object_t got;
    REQUIRE(reader.read(oid, got, content));
    std::size_t at = pack.find(content);
    REQUIRE(at != std::string::npos);
    pack[at + content.size() / 2] ^= 0x01;
    fs::permissions(pack_path, fs::perms::owner_write, fs::perm_options::add);
    write_file(pack_path, pack);
    git::PackReader damaged(t.dir + "/");
    CHECK_FALSE(damaged.read(oid, got, content));
    Store again = Store::open(t.dir);
    VerifyReport v = verify_store(again, VerifyOptions{});
    CHECK_FALSE(v.ok());
    bool named = false;
    for (const Problem& p : v.problems) named |= p.kind == ProblemKind::kObjectCorrupt && p.detail.find(target) != std::string::npos;
    CHECK(named);
    // And one byte inside a deflated tree's entry: declined too (zlib's
    // Adler-32, or a stream that no longer inflates to the declared size).
    REQUIRE(!tree_at.first.empty());
    git_oid tree_oid;
    git_oid_fromstr(&tree_oid, tree_at.first.c_str());
    REQUIRE(damaged.read(tree_oid, got, content));
    pack[tree_at.second] ^= 0x01;
    write_file(pack_path, pack);
    git::PackReader damaged_tree(t.dir + "/");
    CHECK_FALSE(damaged_tree.read(tree_oid, got, content));
  }

  SECTION("a second bulk add writes a second pack") {
    std::vector<Document> more;
    for (int i = 0; i < 64; ++i) more.push_back(implementation("more-" + std::to_string(i), false));
    add(t.store, more);
    CHECK(packs(t.dir).size() == 2);
    CHECK(loose_blobs(t) == loose_before);
  }
}


// ---- format 3 (refs/layout.h: taught room by room; commands do not open it yet) ----


// Every line of every family, as a set of files per family, checked as verify will.
std::map<Family, TrieFiles> index_files(const Snapshot& snap) {
  std::map<Family, TrieFiles> out;
  for (Family family : kFamilies) {
    std::vector<KeyedLine> lines;
    for (const IndexFact& f : facts_with_prefix(snap, family, "")) lines.push_back({fact_key(f), render_line(f)});
    if (!lines.empty()) out[family] = build_trie(lines);
  }
  return out;
}

TEST_CASE("add into a format-3 store: one line a fact, read back by every query", "[store][add][index3]") {
  TestStore t;
  make_format3(t.store);
  REQUIRE(t.store.snapshot().format() == Format::k3);
  auto docs = seed_documents();
  AddReport r = add(t.store, docs);
  REQUIRE(r.commit);
  CHECK(r.added.size() == 3);
  Snapshot snap = t.store.snapshot();
  const Digest run = *Digest::parse(kSeedRun), key = *Digest::parse(std::string("sha256:") + kSeedKeyHex);
  // The run's group line, the metadata of all three, the claim; no level line.
  auto members = group_members(snap, key);
  REQUIRE(members.size() == 1);
  CHECK(members[0].run == run);
  CHECK(members[0].primary == primary_measurement(docs[0].spec()));
  CHECK(members[0].level == Level::kSourceNative);
  CHECK(snap.metadata(run) == docs[0].metadata());
  CHECK(recorded_level(snap, run) == Level::kSourceNative);
  CHECK(run_level(snap, docs[0]) == Level::kSourceNative);
  CHECK(runs_at_level(snap, Level::kSourceNative) == std::vector<Digest>{run});
  CHECK(runs_at_level(snap, Level::kReported).empty());
  CHECK(group_keys(snap) == std::vector<Digest>{key});
  CHECK(resolve_group_ref(snap, std::string(kSeedKeyHex).substr(0, 10)).key == key);
  CHECK_FALSE(find_fact(snap, Family::kLevels, run.hex()));
  const std::set<std::string> paths = t.paths();
  for (const std::string& p : paths) {
    INFO(p);
    CHECK((p == "FORMAT" || p.starts_with("objects/sha256/") || p.starts_with("dictionaries/") ||
           (p.starts_with("refs/") && p[p.size() - 2] == '/')));
  }
  CHECK_FALSE(paths.count("refs/levels/3"));
  const std::string source_file = "refs/sources/" + source_key("liger-kernel-bench", std::string(kSeedSource).substr(32)).substr(0, 1);
  REQUIRE(paths.count(source_file));
  CHECK(t.blob(source_file).find(kSeedRun) != std::string::npos);
  // git show of the add reads as the facts it added: a line each.
  const std::string shown = must(t.git() + "show --format= main -- refs/groups");
  CHECK(shown.find("+{\"@key\":\"" + std::string(kSeedKeyHex) + hex(kSeedRun) + "\",\"metric\":\"latency\"") !=
        std::string::npos);

  SECTION("a second claim of the upstream id is a note; an attestation is a line under its run") {
    Document other = seed_variant(1, std::string(kSeedSource).substr(32));
    Document note = attestation(kSeedRun, "looks right");
    AddReport r2 = add(t.store, {other, note}, "more.json");
    REQUIRE(r2.notes.size() == 1);
    CHECK_THAT(r2.notes[0], Catch::Matchers::Contains("already names " + std::string(kSeedRun)) &&
                                Catch::Matchers::Contains("is added but not indexed under that source id"));
    Snapshot s2 = t.store.snapshot();
    CHECK(std::get<SourceFact>(*find_fact(s2, Family::kSources, source_key("liger-kernel-bench",
                                                                           std::string(kSeedSource).substr(32))))
              .run == run);
    CHECK(attestations_of(s2, run) == std::vector<Digest>{note.digest()});
    CHECK(group_members(s2, key).size() == 2);
  }
  SECTION("a document again with other metadata: nothing written, the first metadata stays") {
    Json changed = seed_json("run");
    changed.find("metadata")->set("title", "another title");
    Document again = Document::from_json(changed, Location{"again.json", ""});
    const std::string before = t.head();
    AddReport r2 = add(t.store, {again}, "again.json");
    CHECK_FALSE(r2.commit);
    CHECK(t.head() == before);
    REQUIRE(r2.notes.size() == 1);
    CHECK_THAT(r2.notes[0], Catch::Matchers::Contains("the first metadata stays"));
  }
  SECTION("the same documents in another order and other commits: the same refs/ tree") {
    TestStore u;
    make_format3(u.store);
    Document a = seed_variant(2), b = seed_variant(3), note = attestation(kSeedRun, "n");
    add(t.store, {a, b, note});
    add(u.store, {b});
    add(u.store, {note, docs[2], docs[0]});
    add(u.store, {docs[1], a});
    CHECK(trim(must(u.git() + "rev-parse main:refs")) == trim(must(t.git() + "rev-parse main:refs")));
    for (const auto& [family, files] : index_files(t.store.snapshot())) CHECK(check_trie(family, files).empty());
    CHECK(sh(u.git() + "fsck --strict --no-dangling").rc == 0);
  }
}

TEST_CASE("a new store is format 3: its first commit writes FORMAT, and it opens", "[store][index3]") {
  TestStore t;
  add(t.store, seed_documents());
  CHECK(must(t.git() + "cat-file blob main:FORMAT") == "kistore 3\n");
  Store opened = Store::open(t.dir);
  CHECK(opened.snapshot().format() == Format::k3);
  CHECK(parse_format_bytes(kFormat3Bytes) == Format::k3);
  CHECK(parse_format_bytes(kFormat2Bytes) == Format::k2);
  CHECK_FALSE(parse_format_bytes("kistore 4\n").has_value());
}

}  // namespace
}  // namespace kistore
