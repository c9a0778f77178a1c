// verify_store against stores tampered with by STOCK git plumbing (hash-object,
// update-index, write-tree, commit-tree, update-ref), the way an attacker or
// a careless hand would, never through kistore's own writer.
#include "store/verify/verify.h"

#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "objects/error.h"
#include "tests/store/support.h"
#include "objects/blob.h"
#include "objects/json.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "store/write/add.h"
#include "store/history/audit.h"

namespace kistore {
namespace {

using namespace test_support;

namespace fs = std::filesystem;

// ---- helpers (shared ones: tests/store/support.h) ----

const char kFixture[] = "refs/seed-run-tiled-geglu-backward.json";
const char kSeedRun[] = "sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0";
const char kSeedProtocol[] = "sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8";
const char kSeedEnvironment[] = "sha256:e2646efafa5e5fbd428b49a99b1c076c10d51654a549c4e50ec36da7662d4328";
const char kSeedSource[] =
    "refs/sources/liger-kernel-bench/tiled_geglu/backward/liger_tiled/nvidia-geforce-rtx-4090/"
    "batch2-hidden2048-intermediate4096-seq1024-bf16/2025-11-11-06-22-57";

Json fixture() { return parse_json(read_file(std::string(KISTORE_SOURCE_DIR) + "/tests/data/" + kFixture), kFixture); }

Digest D(const char* s) { return *Digest::parse(s); }

// The base store every scenario tampers with: the seed bundle, a second run in
// the same group (another source id) and a note attesting the seed run.
struct BaseStore {
  TempDir tmp;
  std::string dir = tmp.path + "/store";
  Store store = Store::init(dir);
  std::vector<Document> docs;
  Digest run = D(kSeedRun), protocol = D(kSeedProtocol), environment = D(kSeedEnvironment);
  Digest run2 = Digest::of(""), att = Digest::of("");

  BaseStore() {
    Json bundle = fixture();
    docs = Bundle::from_json(bundle, Location{"seed.json", ""}).documents();
    Json other = *bundle.find("run");
    other.find("spec")->find("timing")->find("latencyNs")->set("median", 2700000);
    other.find("spec")->find("sourceNative")->set("externalId", "tiled_geglu/backward/other/run");
    docs.push_back(Document::from_json(other, Location{"other.json", ""}));
    run2 = docs.back().digest();
    Json note = parse_json(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Attestation","spec":{"type":"note","author":"Ann <a@example.com>","body":"fine"}})", "att");
    note.find("spec")->set("subject", kSeedRun);
    docs.push_back(Document::from_json(note, Location{"att.json", ""}));
    att = docs.back().digest();
    commit_format2();
  }

  // Verify reads stores of format 2 (SPEC §2: before `kistore upgrade`), and
  // format 2's one blob per fact makes a tampered entry one path: this store
  // is format 2, as the format-2 release wrote it (FORMAT, each object's
  // frame, its index entries and metadata), in one commit made with stock
  // git, since kistore now writes only format 3 (verify_format3_test attacks
  // format 3's lines).
  void commit_format2() {
    const std::string work = tmp.path + "/format2";
    fs::create_directories(work);
    std::string script = "set -e\nexport GIT_INDEX_FILE=" + quote(work + "/index") + "\n: > " + quote(work + "/info") + "\n";
    int n = 0;
    auto put = [&](const std::string& path, const std::string& bytes) {
      const std::string file = work + "/blob" + std::to_string(n++);
      write_file(file, bytes);
      script += "printf '100644 %s\\t%s\\n' \"$(" + git() + "hash-object -w " + quote(file) + ")\" " + quote(path) +
                " >> " + quote(work + "/info") + "\n";
    };
    put("FORMAT", std::string(kFormat2Bytes));
    for (const Document& d : docs) {
      put(object_path(d.digest()), encode_object(d.canonical()));
      for (const IndexEntry& e : index_entries(Format::k2, d, "seed.json")) put(e.path, e.bytes);
      if (d.metadata()) put(metadata_path(Format::k2, d.digest()), d.metadata_canonical());
    }
    script += git() + "update-index --add --index-info < " + quote(work + "/info") + "\n" +
              "commit=$(GIT_AUTHOR_NAME=Maker GIT_AUTHOR_EMAIL=m@example.com GIT_COMMITTER_NAME=Maker "
              "GIT_COMMITTER_EMAIL=m@example.com " + git() + "commit-tree \"$(" + git() + "write-tree)\" -m 'add: format 2')\n" +
              git() + "update-ref refs/heads/main \"$commit\"\n";
    write_file(work + "/format2.sh", script);
    must("sh " + quote(work + "/format2.sh"));
  }

  std::string git() const { return "git --git-dir=" + quote(dir) + " "; }
  std::string head() const { return trim(must(git() + "rev-parse main")); }
  std::string blob(const std::string& path) const { return must(git() + "cat-file blob " + quote("main:" + path)); }
  std::string group() const { return group_path(Format::k2, comparison_key(docs[0].spec()), run); }

  // One commit on main made with stock git: `edits` maps paths to new bytes
  // (nullopt removes the path). Returns the commit id.
  std::string tamper(const std::vector<std::pair<std::string, std::optional<std::string>>>& edits,
                     const std::string& message = "tamper\n") {
    const std::string work = tmp.path + "/tamper";
    fs::create_directories(work);
    // One shell script (fewer processes: the machine is shared): hash the new
    // blobs, edit a private index of main's tree, write the tree, commit it
    // on top of main and move main.
    std::string script = "set -e\nexport GIT_INDEX_FILE=" + quote(work + "/index") + "\n" + git() +
                         "read-tree refs/heads/main\n: > " + quote(work + "/info") + "\n";
    int n = 0;
    for (const auto& [path, bytes] : edits) {
      if (bytes) {
        const std::string file = work + "/blob" + std::to_string(n++);
        write_file(file, *bytes);
        script += "printf '100644 %s\\t%s\\n' \"$(" + git() + "hash-object -w " + quote(file) + ")\" " + quote(path) +
                  " >> " + quote(work + "/info") + "\n";
      } else {
        script += "printf '0 " + std::string(40, '0') + "\\t%s\\n' " + quote(path) + " >> " + quote(work + "/info") + "\n";
      }
    }
    write_file(work + "/message", message);
    script += git() + "update-index --index-info < " + quote(work + "/info") + "\n" +
              "commit=$(GIT_AUTHOR_NAME=Mallory GIT_AUTHOR_EMAIL=m@example.com GIT_COMMITTER_NAME=Mallory "
              "GIT_COMMITTER_EMAIL=m@example.com " + git() + "commit-tree \"$(" + git() + "write-tree)\" -p refs/heads/main -F " +
              quote(work + "/message") + ")\n" + git() + "update-ref refs/heads/main \"$commit\"\necho \"$commit\"\n";
    write_file(work + "/tamper.sh", script);
    return trim(must("sh " + quote(work + "/tamper.sh")));
  }
};

// verify as `kistore verify` runs it: levels judged against the history with
// an empty list of controllers (no allowed signers).
VerifyReport verify(const std::string& dir) {
  Store store = Store::open(dir);
  return verify_store(store, VerifyOptions{});
}

std::multiset<std::string> kinds_and_paths(const std::vector<Problem>& problems) {
  std::multiset<std::string> out;
  for (const Problem& p : problems) out.insert(std::string(problem_kind_name(p.kind)) + " " + p.path);
  return out;
}

std::string describe(const std::vector<Problem>& problems) {
  std::string out;
  for (const Problem& p : problems) out += std::string(problem_kind_name(p.kind)) + " " + p.path + ": " + p.detail + "\n";
  return out;
}

// A zstd frame made by the stock zstd CLI (checksum on by default).
std::string zstd_frame(const std::string& bytes, const std::string& work) {
  write_file(work + "/plain", bytes);
  return must("zstd -q -c " + quote(work + "/plain"));
}

// ---- tests -------------------------------------------------------------------

TEST_CASE("verify: a clean store has no problems; external references are warnings", "[store][verify]") {
  BaseStore s;
  VerifyReport r = verify(s.dir);
  INFO(describe(r.problems));
  CHECK(r.ok());
  CHECK(r.problems.empty());
  CHECK(r.objects == 5);
  // Both runs name a workload and an implementation the bundle does not carry.
  std::multiset<std::string> kinds;
  for (const Problem& w : r.warnings) kinds.insert(std::string(problem_kind_name(w.kind)));
  CHECK(kinds == std::multiset<std::string>{"external-reference", "external-reference", "external-reference",
                                           "external-reference"});
  CHECK(kinds_and_paths(r.warnings).count("external-reference " + object_path(s.run)) == 2);

  SECTION("also with the default (null) level justifier and --deep") {
    VerifyOptions options;
    options.deep = true;
    VerifyReport deep = verify_store(s.store, options);
    INFO(describe(deep.problems));
    CHECK(deep.ok());
  }
}

TEST_CASE("verify: tampering with stock git is found, with the expected kind and path", "[store][verify][tamper]") {
  struct Scenario {
    const char* name;
    // Applies the tampering; returns the expected "kind path" of every problem.
    std::function<std::multiset<std::string>(BaseStore&)> apply;
  };
  const std::string tag = "{\"author\":\"a\",\"type\":\"note\"}";
  const std::vector<Scenario> scenarios = {
      {"(a) object replaced by a valid zstd frame of other JSON",
       [](BaseStore& s) {
         std::string p = object_path(s.protocol);
         s.tamper({{p, zstd_frame(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"BenchmarkProtocol","spec":{"harness":{},"measurement":{}}})", s.tmp.path)}});
         return std::multiset<std::string>{"object-hash-mismatch " + p, "history-rewritten " + p};
       }},
      {"(a) object replaced by bytes that are not zstd",
       [](BaseStore& s) {
         std::string p = object_path(s.protocol);
         s.tamper({{p, std::string("{\"not\":\"compressed\"}")}});
         return std::multiset<std::string>{"object-corrupt " + p, "history-rewritten " + p};
       }},
      {"(a) object's frame with its content checksum flipped",
       [](BaseStore& s) {
         std::string p = object_path(s.protocol);
         std::string frame = s.blob(p);
         frame.back() = static_cast<char>(frame.back() ^ 0x01);
         s.tamper({{p, frame}});
         return std::multiset<std::string>{"object-corrupt " + p, "history-rewritten " + p};
       }},
      {"(a) object's frame truncated",
       [](BaseStore& s) {
         std::string p = object_path(s.environment);
         std::string frame = s.blob(p);
         s.tamper({{p, frame.substr(0, frame.size() - 6)}});
         return std::multiset<std::string>{"object-corrupt " + p, "history-rewritten " + p};
       }},
      {"(a) object's frame followed by trailing bytes",
       [](BaseStore& s) {
         std::string p = object_path(s.environment);
         s.tamper({{p, s.blob(p) + "x"}});
         return std::multiset<std::string>{"object-corrupt " + p, "history-rewritten " + p};
       }},
      {"(b) a protocol object removed",
       [](BaseStore& s) {
         std::string p = object_path(s.protocol);
         s.tamper({{p, std::nullopt}});
         return std::multiset<std::string>{"dangling-ref " + metadata_path(Format::k2, s.protocol), "history-rewritten " + p};
       }},
      {"(b) an attestation object removed",
       [](BaseStore& s) {
         std::string p = object_path(s.att);
         s.tamper({{p, std::nullopt}});
         return std::multiset<std::string>{"dangling-ref " + attestation_path(Format::k2, s.run, s.att), "history-rewritten " + p};
       }},
      {"(c) files outside the layout",
       [](BaseStore& s) {
         s.tamper({{"README", std::string("hello\n")},
                   {"refs/unknown/x", std::string("x")},
                   {"objects/sha256/ab/cd/short", std::string("x")},
                   {"refs/metadata/not-hex", std::string("{}")},
                   {"refs/levels/famous/" + s.run.hex(), std::string(R"({"evidence":null})")}});
         return std::multiset<std::string>{"layout README", "layout refs/unknown/x", "layout objects/sha256/ab/cd/short",
                                           "layout refs/metadata/not-hex", "layout refs/levels/famous/" + s.run.hex()};
       }},
      {"(d) a group entry's value edited",
       [](BaseStore& s) {
         s.tamper({{s.group(), std::string(R"({"metric":"latency","statistic":"median","unit":"ns","value":1})")}});
         return std::multiset<std::string>{"group-mismatch " + s.group()};
       }},
      {"(d) a group entry rewritten in non-canonical form",
       [](BaseStore& s) {
         s.tamper({{s.group(), std::string(R"({"metric": "latency", "statistic": "median", "unit": "ns", "value": 2606080})")}});
         return std::multiset<std::string>{"group-mismatch " + s.group()};
       }},
      {"(d) a run's group entry moved to another group",
       [](BaseStore& s) {
         std::string moved = group_path(Format::k2, Digest::of("other key"), s.run);
         s.tamper({{s.group(), std::nullopt}, {moved, s.blob(s.group())}});
         return std::multiset<std::string>{"group-mismatch " + moved};
       }},
      {"(d) a group entry removed",
       [](BaseStore& s) {
         s.tamper({{s.group(), std::nullopt}});
         return std::multiset<std::string>{"missing-group " + s.group()};
       }},
      {"(e) level moved from source-native to reproduced in an unsigned rerun commit",
       [](BaseStore& s) {
         std::string to = level_path(Format::k2, Level::kReproduced, s.run);
         s.tamper({{level_path(Format::k2, Level::kSourceNative, s.run), std::nullopt}, {to, std::string(R"({"evidence":null})")}},
                  "rerun: reproduced\n\nKistore-Op: rerun\n");
         return std::multiset<std::string>{"level-unjustified " + to};
       }},
      {"(e) level moved from source-native to reproduced in an unsigned plain commit",
       [](BaseStore& s) {
         std::string to = level_path(Format::k2, Level::kReproduced, s.run);
         s.tamper({{level_path(Format::k2, Level::kSourceNative, s.run), std::nullopt}, {to, std::string(R"({"evidence":null})")}});
         return std::multiset<std::string>{"level-unjustified " + to};
       }},
      {"(e) a second level beside the default",
       [](BaseStore& s) {
         std::string to = level_path(Format::k2, Level::kDisputed, s.run);
         s.tamper({{to, std::string(R"({"evidence":null})")}});
         return std::multiset<std::string>{"level-unjustified " + to, "level-mismatch refs/levels"};
       }},
      {"(e) a level entry removed",
       [](BaseStore& s) {
         std::string p = level_path(Format::k2, Level::kSourceNative, s.run);
         s.tamper({{p, std::nullopt}});
         return std::multiset<std::string>{"missing-level " + p};
       }},
      {"(f) a source entry naming another run",
       [](BaseStore& s) {
         s.tamper({{kSeedSource, s.run2.str()}});
         return std::multiset<std::string>{"source-mismatch " + std::string(kSeedSource)};
       }},
      {"(f) a source entry removed",
       [](BaseStore& s) {
         s.tamper({{kSeedSource, std::nullopt}});
         return std::multiset<std::string>{"missing-source " + std::string(kSeedSource)};
       }},
      {"(g) an attestation entry whose attestation object is missing",
       [tag](BaseStore& s) {
         std::string p = attestation_path(Format::k2, s.run, Digest::of("no such attestation"));
         s.tamper({{p, tag}});
         return std::multiset<std::string>{"dangling-ref " + p};
       }},
      {"(g) an attestation entry removed",
       [](BaseStore& s) {
         s.tamper({{attestation_path(Format::k2, s.run, s.att), std::nullopt}});
         return std::multiset<std::string>{"missing-attestation " + object_path(s.att)};
       }},
      {"(g) an attestation entry moved under another run",
       [tag](BaseStore& s) {
         std::string moved = attestation_path(Format::k2, s.run2, s.att);
         s.tamper({{attestation_path(Format::k2, s.run, s.att), std::nullopt}, {moved, tag}});
         return std::multiset<std::string>{"attestation-mismatch " + moved};
       }},
      {"(g) an attestation entry's bytes edited",
       [](BaseStore& s) {
         std::string p = attestation_path(Format::k2, s.run, s.att);
         s.tamper({{p, std::string(R"({"author":"Mallory <m@example.com>","type":"reproduction"})")}});
         return std::multiset<std::string>{"attestation-mismatch " + p};
       }},
      {"a group entry naming a document that is not a run",
       [](BaseStore& s) {
         std::string p = group_path(Format::k2, comparison_key(s.docs[0].spec()), s.protocol);
         s.tamper({{p, s.blob(s.group())}});
         return std::multiset<std::string>{"group-mismatch " + p};
       }},
      {"a default level entry carrying evidence",
       [](BaseStore& s) {
         std::string p = level_path(Format::k2, Level::kSourceNative, s.run);
         s.tamper({{p, "{\"evidence\":\"" + s.att.str() + "\"}"}});
         return std::multiset<std::string>{"level-mismatch " + p};
       }},
      {"metadata entry for a missing object, and one not in JCS",
       [](BaseStore& s) {
         std::string orphan = metadata_path(Format::k2, Digest::of("nothing"));
         s.tamper({{orphan, std::string(R"({"name":"x"})")},
                   {metadata_path(Format::k2, s.protocol), std::string(R"({"title": "x", "name": "y"})")}});
         return std::multiset<std::string>{"dangling-ref " + orphan, "metadata-invalid " + metadata_path(Format::k2, s.protocol)};
       }},
  };
  for (const Scenario& sc : scenarios) {
    DYNAMIC_SECTION(sc.name) {
      BaseStore s;
      std::multiset<std::string> expected = sc.apply(s);
      VerifyReport r = verify(s.dir);
      INFO(describe(r.problems));
      CHECK_FALSE(r.ok());
      CHECK(kinds_and_paths(r.problems) == expected);
      for (const Problem& p : r.problems) CHECK_FALSE(p.detail.empty());
    }
  }
}

// A gitlink (mode 160000, a "submodule") is neither a blob nor a tree: it is
// still a path outside the layout, and a clone would try to check it out.
// Regression: verify once walked the tree through Snapshot::walk, which
// visits only trees and blobs, so it never saw a gitlink and reported
// nothing. Input: a commit (stock git) adding "160000 <commit id>\tvendor" to
// a clean store; expected one problem "layout vendor".
TEST_CASE("verify: a gitlink outside the layout is reported", "[store][verify][tamper]") {
  BaseStore s;
  const std::string work = s.tmp.path + "/gitlink";
  fs::create_directories(work);
  const std::string env = "GIT_INDEX_FILE=" + quote(work + "/index") + " ";
  must(env + s.git() + "read-tree refs/heads/main");
  must(env + s.git() + "update-index --add --cacheinfo 160000," + s.head() + ",vendor");
  const std::string tree = trim(must(env + s.git() + "write-tree"));
  const std::string commit = trim(must("GIT_AUTHOR_NAME=M GIT_AUTHOR_EMAIL=m@x GIT_COMMITTER_NAME=M GIT_COMMITTER_EMAIL=m@x " +
                                       s.git() + "commit-tree " + tree + " -p refs/heads/main -m gitlink"));
  must(s.git() + "update-ref refs/heads/main " + commit);
  VerifyReport r = verify(s.dir);
  INFO(describe(r.problems));
  CHECK(kinds_and_paths(r.problems) == std::multiset<std::string>{"layout vendor"});
}

TEST_CASE("verify --deep: objects that hash right but are not JCS, or not valid documents", "[store][verify][tamper]") {
  BaseStore s;
  const std::string spaced = R"({"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Implementation", "spec": {"name": "x"}})";
  const std::string invalid = R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation","spec":{}})";
  const std::string p1 = object_path(Digest::of(spaced)), p2 = object_path(Digest::of(invalid));
  s.tamper({{p1, zstd_frame(spaced, s.tmp.path)}, {p2, zstd_frame(invalid, s.tmp.path)}});
  CHECK(verify(s.dir).ok());  // not deep: both hash to their names
  Store store = Store::open(s.dir);
  VerifyOptions options;
  options.deep = true;
  VerifyReport r = verify_store(store, options);
  INFO(describe(r.problems));
  CHECK(kinds_and_paths(r.problems) == std::multiset<std::string>{"object-not-canonical " + p1, "object-invalid " + p2});
}

TEST_CASE("verify: a removed run leaves dangling refs and a rewritten history", "[store][verify][tamper]") {
  BaseStore s;
  const std::string p = object_path(s.run);
  s.tamper({{p, std::nullopt}});
  VerifyReport r = verify(s.dir);
  INFO(describe(r.problems));
  auto found = kinds_and_paths(r.problems);
  for (const std::string& e : {"dangling-ref " + metadata_path(Format::k2, s.run), "dangling-ref " + s.group(),
                               "dangling-ref " + level_path(Format::k2, Level::kSourceNative, s.run),
                               "dangling-ref " + attestation_path(Format::k2, s.run, s.att), "history-rewritten " + p}) {
    INFO(e);
    CHECK(found.count(e) == 1);
  }
  // The source index still names the run: reported, under whatever kind.
  std::set<std::string> paths;
  for (const Problem& problem : r.problems) paths.insert(problem.path);
  CHECK(paths == std::set<std::string>{metadata_path(Format::k2, s.run), s.group(), level_path(Format::k2, Level::kSourceNative, s.run),
                                       attestation_path(Format::k2, s.run, s.att), kSeedSource, p});
}

TEST_CASE("verify: every problem is reported when several are present at once", "[store][verify][tamper]") {
  BaseStore s;
  const std::string proto = object_path(s.protocol), env = object_path(s.environment);
  const std::string reproduced = level_path(Format::k2, Level::kReproduced, s.run);
  const std::string missing_att = attestation_path(Format::k2, s.run, Digest::of("no such attestation"));
  s.tamper({
      {proto, zstd_frame(R"({"other":"json"})", s.tmp.path)},                                      // (a)
      {env, std::nullopt},                                                                        // (b)
      {"README", std::string("hello\n")},                                                         // (c)
      {s.group(), std::string(R"({"metric":"latency","statistic":"median","unit":"ns","value":1})")},  // (d)
      {level_path(Format::k2, Level::kSourceNative, s.run), std::nullopt},                                    // (e)
      {reproduced, std::string(R"({"evidence":null})")},                                          // (e)
      {kSeedSource, s.run2.str()},                                                                // (f)
      {missing_att, std::string(R"({"author":"a","type":"note"})")},                              // (g)
  });
  VerifyReport r = verify(s.dir);
  INFO(describe(r.problems));
  CHECK(kinds_and_paths(r.problems) == std::multiset<std::string>{
                                           "object-hash-mismatch " + proto,
                                           "history-rewritten " + proto,
                                           "dangling-ref " + metadata_path(Format::k2, s.environment),
                                           "history-rewritten " + env,
                                           "layout README",
                                           "group-mismatch " + s.group(),
                                           "level-unjustified " + reproduced,
                                           "source-mismatch " + std::string(kSeedSource),
                                           "dangling-ref " + missing_att,
                                       });
}

TEST_CASE("verify: history that lost an object is rewritten even after the object comes back", "[store][verify][tamper]") {
  BaseStore s;
  const std::string p = object_path(s.protocol);
  const std::string frame = s.blob(p);
  const std::string lost = s.tamper({{p, std::nullopt}});
  s.tamper({{p, frame}});
  CHECK(s.blob(p) == frame);  // the head is whole again
  VerifyReport r = verify(s.dir);
  INFO(describe(r.problems));
  REQUIRE(kinds_and_paths(r.problems) == std::multiset<std::string>{"history-rewritten " + p});
  CHECK_THAT(r.problems[0].detail, Catch::Matchers::Contains(lost));
}

TEST_CASE("verify: the level-unjustified detail says why", "[store][verify][tamper]") {
  BaseStore s;
  const std::string to = level_path(Format::k2, Level::kReproduced, s.run);
  const std::string commit = s.tamper({{level_path(Format::k2, Level::kSourceNative, s.run), std::nullopt}, {to, std::string(R"({"evidence":null})")}},
                                      "rerun: reproduced\n\nKistore-Op: rerun\n");
  VerifyReport r = verify(s.dir);
  REQUIRE(r.problems.size() == 1);
  CHECK_THAT(r.problems[0].detail, Catch::Matchers::Contains("source-native"));  // the default it expected
  CHECK_THAT(r.problems[0].detail, Catch::Matchers::Contains(commit));           // the commit that set it

  SECTION("the default justifier (none) rejects it too") {
    VerifyReport plain = verify_store(s.store, VerifyOptions{});
    CHECK(kinds_and_paths(plain.problems) == std::multiset<std::string>{"level-unjustified " + to});
  }
}

TEST_CASE("verify: source entries say which run claims a source id, and what blocks one", "[store][verify][tamper]") {
  BaseStore s;
  const std::string other_source = "refs/sources/liger-kernel-bench/tiled_geglu/backward/other/run";
  SECTION("an entry naming another run names the run whose source id it is") {
    s.tamper({{kSeedSource, s.run2.str()}});
    VerifyReport r = verify(s.dir);
    REQUIRE(kinds_and_paths(r.problems) == std::multiset<std::string>{"source-mismatch " + std::string(kSeedSource)});
    CHECK_THAT(r.problems[0].detail, Catch::Matchers::Contains("the run " + s.run2.str() + " does not have this source id"));
    CHECK_THAT(r.problems[0].detail, Catch::Matchers::Contains("; run " + s.run.str() + " does"));
    // run2's own entry still names it: nothing about it; the seed run's id now names another run.
    REQUIRE(r.warnings.size() >= 1);
    bool named = false;
    for (const Problem& w : r.warnings)
      named |= w.kind == ProblemKind::kSourceClaimed && w.path == kSeedSource &&
               w.detail.find("which names " + s.run2.str() + " (the first claim)") != std::string::npos;
    CHECK(named);
  }
  SECTION("an entry below a run's source id blocks it: a warning naming the blocker") {
    const std::string below = std::string(kSeedSource) + "/later";
    s.tamper({{kSeedSource, std::nullopt}, {below, s.run2.str()}});
    VerifyReport r = verify(s.dir);
    CHECK(kinds_and_paths(r.problems) == std::multiset<std::string>{"source-mismatch " + below});
    bool named = false;
    for (const Problem& w : r.warnings)
      named |= w.kind == ProblemKind::kSourceClaimed && w.path == kSeedSource &&
               w.detail.find("which is blocked by " + below) != std::string::npos;
    CHECK(named);
    CHECK_THAT(describe(r.problems), !Catch::Matchers::Contains(other_source));  // run2's own entry holds
  }
}

// Replaces the loose object `id` of the store at `dir` with a well-formed
// loose object of `type` holding `content`: its file name no longer matches
// its content, as a disk error or a hand editing objects/ would leave it.
void swap_loose_object(const std::string& dir, const std::string& id, const std::string& type, const std::string& content) {
  const std::string file = dir + "/objects/" + id.substr(0, 2) + "/" + id.substr(2);
  REQUIRE(fs::exists(file));
  write_file(dir + "/swap.bin", content);
  must("python3 -c " + quote("import sys, zlib; d = open(sys.argv[1], 'rb').read(); "
                             "open(sys.argv[2], 'wb').write(zlib.compress(sys.argv[3].encode() + b' ' + str(len(d)).encode() + b'\\0' + d))") +
       " " + quote(dir + "/swap.bin") + " " + quote(dir + "/swapped") + " " + type);
  fs::permissions(file, fs::perms::owner_write, fs::perm_options::add);
  fs::rename(dir + "/swapped", file);
}

TEST_CASE("verify: a git object whose content does not match its id is reported", "[store][verify][tamper]") {
  BaseStore s;
  SECTION("an index entry (git's id is its only check)") {
    const std::string path = level_path(Format::k2, Level::kSourceNative, s.run2);
    const std::string id = trim(must(s.git() + "rev-parse " + quote("main:" + path)));
    // {"evidence":null} is shared by both runs' level entries: both paths are reported.
    swap_loose_object(s.dir, id, "blob", R"({"evidence":"sha256:0000000000000000000000000000000000000000000000000000000000000000"})");
    VerifyReport r = verify(s.dir);
    INFO(describe(r.problems));
    // ... and, unreadable, they leave both runs without a level.
    REQUIRE(kinds_and_paths(r.problems) == std::multiset<std::string>{"object-corrupt " + level_path(Format::k2, Level::kSourceNative, s.run),
                                                                      "object-corrupt " + path,
                                                                      "missing-level " + level_path(Format::k2, Level::kSourceNative, s.run),
                                                                      "missing-level " + path});
    CHECK_THAT(r.problems[0].detail, Catch::Matchers::Contains(id));
    CHECK_THAT(r.problems[0].detail, Catch::Matchers::Contains("another id"));
  }
  SECTION("a document (its SHA-256 is checked)") {
    const std::string path = object_path(s.protocol);
    const std::string id = trim(must(s.git() + "rev-parse " + quote("main:" + path)));
    swap_loose_object(s.dir, id, "blob", zstd_frame(R"({"other":"json"})", s.tmp.path));
    VerifyReport r = verify(s.dir);
    REQUIRE(kinds_and_paths(r.problems) == std::multiset<std::string>{"object-hash-mismatch " + path});
  }
  SECTION("a tree where a file belongs (a tree entry of mode 100644 naming a tree)") {
    const std::string path = level_path(Format::k2, Level::kSourceNative, s.run2);
    const std::string tree = trim(must(s.git() + "rev-parse main:refs/groups"));
    const std::string index = s.tmp.path + "/tree-as-file.index";
    const std::string with = "GIT_INDEX_FILE=" + quote(index) + " " + s.git();
    must(with + "read-tree main && " + with + "update-index --cacheinfo " + quote("100644," + tree + "," + path));
    const std::string commit = trim(must("GIT_AUTHOR_NAME=M GIT_AUTHOR_EMAIL=m@example.com GIT_COMMITTER_NAME=M "
                                         "GIT_COMMITTER_EMAIL=m@example.com " + s.git() + "commit-tree -p main -m tamper \"$(" +
                                         with + "write-tree)\""));
    must(s.git() + "update-ref refs/heads/main " + commit);
    VerifyReport r = verify(s.dir);
    INFO(describe(r.problems));
    REQUIRE(kinds_and_paths(r.problems) == std::multiset<std::string>{"object-corrupt " + path, "missing-level " + path});
    CHECK_THAT(r.problems[0].detail, Catch::Matchers::Contains("its git object " + tree + " is a tree, where a file (blob) belongs"));
  }
  SECTION("a tree") {
    const std::string id = trim(must(s.git() + "rev-parse main:refs/levels"));
    swap_loose_object(s.dir, id, "tree", must(s.git() + "cat-file tree main:refs/groups"));
    try {
      verify(s.dir);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kCorruption);
      CHECK_THAT(e.what(), Catch::Matchers::Contains("refs/levels"));
      CHECK_THAT(e.what(), Catch::Matchers::Contains(id));
    }
  }
}

TEST_CASE("Snapshot::object_bytes names both digests when an object does not hash to its name", "[store][verify][tamper]") {
  BaseStore s;
  const std::string other = R"({"other":"json"})";
  s.tamper({{object_path(s.protocol), zstd_frame(other, s.tmp.path)}});
  Store reopened = Store::open(s.dir);  // a Snapshot must not outlive its Store
  Snapshot snap = reopened.snapshot();
  try {
    snap.object_bytes(s.protocol);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kCorruption);
    CHECK_THAT(e.what(), Catch::Matchers::Contains(s.protocol.str()));
    CHECK_THAT(e.what(), Catch::Matchers::Contains(Digest::of(other).str()));
  }
}

}  // namespace
}  // namespace kistore
