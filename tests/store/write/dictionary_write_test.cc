// Writing dictionary-compressed objects (SPEC §2 dictionaries/<id>): a store
// without a dictionary trains one from a large enough add and records it in
// the same commit; later adds use it; frames already stored keep theirs.
// Checked from the outside where it matters (git cat-file, zstd -D).
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "objects/blob.h"
#include "objects/json.h"
#include "refs/layout.h"
#include "store/write/add.h"
#include "store/write/bulk_add.h"
#include "store/core/frame_encoder.h"
#include "store/query/stats.h"
#include "store/core/store.h"
#include "store/verify/verify.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;
namespace fs = std::filesystem;

const char* const kAuthor = "Test <t@example.com>";

std::string fixture() {
  return read_file(std::string(KISTORE_SOURCE_DIR) + "/tests/data/refs/seed-run-tiled-geglu-backward.json");
}

// The seed bundle's documents (run, protocol, environment).
std::vector<Document> seed_documents() {
  return Bundle::from_json(parse_json(fixture(), "seed"), Location{"seed.json", ""}).documents();
}

// `n` distinct runs shaped like the seed run (another median, another
// upstream id each): documents of the size and shape a store holds.
std::vector<Document> runs(int first, int n) {
  std::vector<Document> out;
  const Json seed = *parse_json(fixture(), "seed").find("run");
  for (int i = first; i < first + n; ++i) {
    Json run = seed;
    Json* spec = run.find("spec");
    spec->find("timing")->find("latencyNs")->set("median", 2600000 + i);
    spec->find("sourceNative")->set("externalId", "variant/" + std::to_string(i));
    out.push_back(Document::from_json(run, Location{"runs.jsonl:" + std::to_string(i), ""}));
  }
  return out;
}

Document document(const std::string& json) { return Document::from_json(parse_json(json, "doc"), Location{"doc.json", ""}); }

struct TestStore {
  TempDir tmp;
  std::string dir = tmp.path + "/store";
  Store store = Store::init(dir);
  std::string git() const { return "git --git-dir=" + quote(dir) + " "; }
  std::string blob(const std::string& path) const { return must(git() + "cat-file blob " + quote("main:" + path)); }
  std::vector<std::string> paths(const std::string& under) const {
    std::vector<std::string> out;
    std::istringstream lines(sh(git() + "ls-tree -r --name-only main -- " + quote(under)).out);
    for (std::string line; std::getline(lines, line);) out.push_back(line);
    return out;
  }
  // Every file below objects/ of the repository, with its size.
  std::set<std::string> files() const {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir + "/objects"))
      if (e.is_regular_file()) out.insert(e.path().string() + " " + std::to_string(e.file_size()));
    return out;
  }
};

std::vector<AddedDocument> inputs(const std::vector<Document>& docs) {
  std::vector<AddedDocument> in;
  for (std::size_t i = 0; i < docs.size(); ++i) in.push_back({&docs[i], "input.jsonl:" + std::to_string(i + 1), ""});
  return in;
}

AddReport add(Store& store, const std::vector<Document>& docs) {
  AddOptions opts;
  opts.commit.author = kAuthor;
  return add_documents(store, inputs(docs), opts);
}

BulkAddReport bulk_add(Store& store, const std::vector<Document>& docs) {
  BulkAddOptions opts;
  opts.commit.author = kAuthor;
  BulkAdd bulk(store, opts);
  std::vector<AddedDocument> all = inputs(docs);
  for (std::size_t at = 0; at < all.size(); at += 512)
    bulk.add(std::vector<AddedDocument>(all.begin() + at, all.begin() + std::min(all.size(), at + 512)));
  return bulk.commit();
}

// Every blob below objects/ as git holds it (one `git cat-file --batch` for
// all: "<id> blob <size>\n<bytes>\n").
std::vector<std::string> frames(const TestStore& t) {
  std::vector<std::string> out;
  std::string batch = must(t.git() + "ls-tree -r main objects | awk '{print $3}' | " + t.git() + "cat-file --batch");
  for (std::size_t at = 0; at < batch.size();) {
    std::size_t eol = batch.find('\n', at);
    REQUIRE(eol != std::string::npos);
    std::istringstream header(batch.substr(at, eol - at));
    std::string id, type;
    std::size_t size = 0;
    header >> id >> type >> size;
    REQUIRE(type == "blob");
    out.push_back(batch.substr(eol + 1, size));
    at = eol + 1 + size + 1;
  }
  return out;
}

// The Dictionary_ID every frame below objects/ names.
std::multiset<std::uint32_t> frame_ids(const TestStore& t) {
  std::multiset<std::uint32_t> ids;
  for (const std::string& f : frames(t)) ids.insert(frame_dictionary_id(f));
  return ids;
}

void check_verifies(const Store& store) {
  VerifyOptions options;
  options.deep = true;
  VerifyReport report = verify_store(store, options);
  std::string problems;
  for (const Problem& p : report.problems) problems += p.path + ": " + p.detail + "\n";
  INFO(problems);
  CHECK(report.ok());
}

TEST_CASE("dictionary: a bulk add into an empty store trains one and every frame of the commit names it",
          "[store][dictionary]") {
  TestStore t;
  std::vector<Document> docs = seed_documents();
  for (Document& d : runs(1, 1500)) docs.push_back(std::move(d));
  BulkAddReport report = bulk_add(t.store, docs);
  CHECK(report.added == 1503);
  std::vector<std::string> dicts = t.paths("dictionaries");
  REQUIRE(dicts.size() == 1);
  auto id = parse_dictionary_path(Format::k2, dicts[0]);
  REQUIRE(id);
  CHECK_FALSE(dictionary_id_reserved(*id));
  const std::string dict = t.blob(dicts[0]);
  CHECK(dictionary_id(dict) == *id);
  CHECK(store_dictionary_id(dict) == *id);  // no other dictionary was in the way
  std::multiset<std::uint32_t> ids = frame_ids(t);
  CHECK(ids.size() == 1503);
  CHECK(ids.count(*id) == 1503);

  // Stock zstd reads an object by hand with the dictionary the tree holds.
  write_file(t.tmp.path + "/dict", dict);
  const Document& run = docs[3];
  write_file(t.tmp.path + "/frame", t.blob(object_path(run.digest())));
  CHECK(must("zstd -q -d -c -D " + quote(t.tmp.path + "/dict") + " " + quote(t.tmp.path + "/frame")) == run.canonical());
  // And kistore reads every document back as it was.
  Snapshot snap = t.store.snapshot();
  for (const Document& d : docs) CHECK(snap.object_bytes(d.digest()) == d.canonical());
  check_verifies(t.store);

  // stats counts what the tree holds, each git object once.
  StoreStats stats = store_stats(t.store);
  CHECK(stats.objects.count == 1503);
  CHECK(stats.frames_with_dictionary == 1503);
  std::uint64_t content = 0, frame_bytes = 0;
  for (const Document& d : docs) content += d.canonical().size();
  for (const std::string& f : frames(t)) frame_bytes += f.size();
  CHECK(stats.content_bytes == content);
  CHECK(stats.objects.bytes == frame_bytes);
  CHECK(stats.dictionaries.count == 1);
  CHECK(stats.dictionaries.bytes == dict.size());
  CHECK(stats.dictionary_ids == std::vector<std::uint32_t>{*id});
  CHECK(stats.runs == 1501);
  CHECK(stats.commits == 1);
  CHECK(stats.metadata.count > 0);
  CHECK(stats.index.count > 0);
  CHECK(stats.object_trees.count > 0);
  CHECK(stats.index_trees.count > 0);
  CHECK(stats.disk_bytes > stats.objects.bytes + stats.dictionaries.bytes);
}

TEST_CASE("dictionary: add_documents (import, attest) trains one from a large add, then every kind of document "
          "round-trips through it",
          "[store][dictionary]") {
  TestStore t;
  std::vector<Document> first = runs(1, 1200);
  AddReport report = add(t.store, first);
  CHECK(report.added.size() == 1200);
  std::vector<std::string> dicts = t.paths("dictionaries");
  REQUIRE(dicts.size() == 1);
  const std::uint32_t id = *parse_dictionary_path(Format::k2, dicts[0]);
  CHECK(frame_ids(t).count(id) == 1200);

  // Every kind: run, protocol, environment (the seed bundle), a workload, an
  // implementation and an attestation, added one commit after the other.
  std::vector<Document> kinds = seed_documents();
  kinds.push_back(document(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Workload","spec":{"definition":"SwiGLU MLP","parameters":{"seq":1024}}})"));
  kinds.push_back(document(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation","spec":{"name":"liger","revision":"0.8.2"},"metadata":{"name":"liger"}})"));
  add(t.store, kinds);
  kinds.push_back(document(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Attestation","spec":{"subject":")" +
                           seed_documents()[0].digest().str() +
                           R"(","type":"note","author":"Ann <a@example.com>","body":"seen it"}})"));
  add(t.store, {kinds.back()});
  CHECK(t.paths("dictionaries") == dicts);  // no second dictionary
  Snapshot snap = t.store.snapshot();
  std::set<Kind> seen;
  for (const Document& d : kinds) {
    INFO(role_name(d.kind()));
    CHECK(frame_dictionary_id(t.blob(object_path(d.digest()))) == id);
    CHECK(snap.object_bytes(d.digest()) == d.canonical());
    seen.insert(d.kind());
  }
  CHECK(seen.size() == 6);
  check_verifies(t.store);
}

TEST_CASE("dictionary: a small add trains none; frames stored before a dictionary keep theirs",
          "[store][dictionary]") {
  TestStore t;
  std::vector<Document> small = runs(1, 300);
  bulk_add(t.store, small);
  CHECK(t.paths("dictionaries").empty());
  CHECK(frame_ids(t).size() == 300);
  for (std::uint32_t id : frame_ids(t)) CHECK(id == 0);
  const std::string before = t.blob(object_path(small[0].digest()));

  // The next large add trains one; the 300 frames stay byte for byte.
  std::vector<Document> large = runs(301, 1100);
  bulk_add(t.store, large);
  REQUIRE(t.paths("dictionaries").size() == 1);
  const std::uint32_t id = *parse_dictionary_path(Format::k2, t.paths("dictionaries")[0]);
  CHECK(t.blob(object_path(small[0].digest())) == before);
  std::multiset<std::uint32_t> ids = frame_ids(t);
  CHECK(ids.count(0) == 300);  // a frame without a dictionary ...
  CHECK(ids.count(id) == 1100);  // ... and frames with one, in one store
  // A third large add uses the store's dictionary and trains no other.
  bulk_add(t.store, runs(1401, 1100));
  CHECK(t.paths("dictionaries").size() == 1);
  CHECK(frame_ids(t).count(id) == 2200);
  check_verifies(t.store);
}

TEST_CASE("dictionary: a store filled by small adds trains one from its own documents once it holds enough",
          "[store][dictionary]") {
  TestStore t;
  std::size_t stored = 0;
  int first = 1;
  while (t.paths("dictionaries").empty() && stored < 4000) {
    bulk_add(t.store, runs(first, 300));
    first += 300, stored += 300;
  }
  // Not before the store could teach one (1,000 documents), and by the time
  // every first-level folder of objects/sha256/ is there (a few thousand).
  CHECK(stored >= kTrainingMinimumDocuments);
  REQUIRE(t.paths("dictionaries").size() == 1);
  const std::uint32_t id = *parse_dictionary_path(Format::k2, t.paths("dictionaries")[0]);
  std::multiset<std::uint32_t> ids = frame_ids(t);
  CHECK(ids.count(id) == 300);  // the frames of the add that trained it
  CHECK(ids.count(0) == stored - 300);  // the earlier ones keep theirs
  check_verifies(t.store);

  // add_documents (import, attest, rerun) does the same.
  TestStore u;
  stored = 0;
  while (u.paths("dictionaries").empty() && stored < 4000) {
    add(u.store, runs(first, 300));
    first += 300, stored += 300;
  }
  REQUIRE(u.paths("dictionaries").size() == 1);
  const std::uint32_t uid = *parse_dictionary_path(Format::k2, u.paths("dictionaries")[0]);
  CHECK(frame_ids(u).count(uid) == 300);
  check_verifies(u.store);
}

TEST_CASE("dictionary: a bulk add abandoned after training leaves no dictionary and no file behind",
          "[store][dictionary]") {
  TestStore t;
  bulk_add(t.store, runs(1, 10));
  const std::set<std::string> before = t.files();
  {
    std::vector<Document> docs = runs(11, 5000);  // past the sample: trained and written into the pack
    BulkAddOptions opts;
    opts.commit.author = kAuthor;
    BulkAdd bulk(t.store, opts);
    std::vector<AddedDocument> all = inputs(docs);
    for (std::size_t at = 0; at < all.size(); at += 512)
      bulk.add(std::vector<AddedDocument>(all.begin() + at, all.begin() + std::min(all.size(), at + 512)));
    // destroyed without commit(), as after a bad line at the end of the input
  }
  CHECK(t.files() == before);
  CHECK(t.paths("dictionaries").empty());
}

TEST_CASE("dictionary: trained dictionaries are deterministic and take an ID in the store's range that is free",
          "[store][dictionary]") {
  std::vector<Document> docs = runs(1, 1200);
  std::vector<std::string_view> samples;
  for (const Document& d : docs) samples.push_back(d.canonical());
  auto a = train_dictionary(samples, nullptr), b = train_dictionary(samples, nullptr);
  REQUIRE(a);
  CHECK(*a == *b);
  const std::uint32_t id = dictionary_id(*a);
  CHECK(id == store_dictionary_id(*a));
  CHECK_FALSE(dictionary_id_reserved(id));
  // An ID the store holds already is passed over, to the next free one.
  auto c = train_dictionary(samples, [&](std::uint32_t n) { return n == id; });
  REQUIRE(c);
  CHECK(dictionary_id(*c) == (id == kLastStoreDictionaryId ? kFirstStoreDictionaryId : id + 1));
  CHECK(with_dictionary_id(*c, id) == *a);  // the ID is all that differs
  // Too few samples: no dictionary.
  samples.resize(kTrainingMinimumDocuments - 1);
  CHECK_FALSE(train_dictionary(samples, nullptr));
  // A frame made with the dictionary names it, is smaller, and decodes with it alone.
  Dictionary dict(*a, id, "dictionaries/" + std::to_string(id));
  const std::string with = encode_object(docs[0].canonical(), &dict), without = encode_object(docs[0].canonical());
  CHECK(frame_dictionary_id(with) == id);
  CHECK(frame_dictionary_id(without) == 0);
  CHECK(with.size() < without.size());
  auto dp = std::make_shared<const Dictionary>(*a, id, "d");
  CHECK(decode_object(with, "o", [&](std::uint32_t n) { return n == id ? dp : nullptr; }) == docs[0].canonical());
  CHECK(decode_object(without, "o") == docs[0].canonical());
  // Encoding without a dictionary after one with: the context forgets it.
  CHECK(encode_object(docs[0].canonical()) == without);
}

}  // namespace
}  // namespace kistore
