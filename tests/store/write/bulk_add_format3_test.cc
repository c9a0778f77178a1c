// The bulk add behind `kistore add` into a format-3 store (refs/layout.h:
// taught room by room): the same refs/ tree as the writers that plan each
// change, whether a family is planned key by key or rebuilt whole
// (index_trees.h kRebuildAbove), and a store that verifies.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "store/write/bulk_add.h"
#include "tests/store/format3.h"

namespace kistore {
namespace {

using namespace test_support;

std::vector<Document> runs(int n) {
  std::vector<Document> out;
  const Json bundle = parse_json(format3_data(kFormat3Fixture), kFormat3Fixture);
  for (const Json* role : {bundle.find("protocol"), bundle.find("environment")})
    out.push_back(Document::from_json(*role, Location{"seed.json", ""}));
  for (int i = 0; i < n; ++i) {
    Json run = *bundle.find("run");
    run.find("spec")->find("timing")->find("latencyNs")->set("median", 1000000 + i);
    // Every eighth claims an upstream id an earlier run claimed: a note.
    run.find("spec")->find("sourceNative")->set("externalId", "bulk/" + std::to_string(i % 8 == 7 ? i - 1 : i));
    if (i % 5 == 0) run.find("metadata")->set("title", "run " + std::to_string(i));
    out.push_back(Document::from_json(run, Location{"runs.jsonl", ""}));
  }
  return out;
}

std::string refs_tree(const std::string& dir) { return trim(must("git --git-dir=" + quote(dir) + " rev-parse main:refs")); }

TEST_CASE("bulk add into a format-3 store: the tree every writer makes of the same facts", "[store][bulk][index3]") {
  const std::vector<Document> docs = runs(2600);  // over kRebuildAbove lines in groups and sources
  TempDir tmp;
  Store bulk_store = Store::init(tmp.path + "/bulk");
  make_format3(bulk_store);
  BulkAddOptions options;
  options.commit = as("T <t@example.org>");
  BulkAdd bulk(bulk_store, options);
  for (std::size_t at = 0; at < docs.size(); at += 700) {
    std::vector<AddedDocument> batch;
    for (std::size_t i = at; i < std::min(docs.size(), at + 700); ++i) batch.push_back({&docs[i], "runs.jsonl:" + std::to_string(i + 1)});
    bulk.add(batch);
  }
  BulkAddReport report = bulk.commit();
  REQUIRE(report.commit);
  CHECK(report.added == docs.size());
  std::size_t claimed_notes = 0;
  for (const std::string& n : report.notes) claimed_notes += n.find("is added but not indexed under that source id") != std::string::npos;
  CHECK(claimed_notes == 2600 / 8);

  // The same documents through add_documents, in commits of 300: each family planned key by key.
  Store planned = Store::init(tmp.path + "/planned");
  make_format3(planned);
  for (std::size_t at = 0; at < docs.size(); at += 300) {
    std::vector<AddedDocument> batch;
    for (std::size_t i = at; i < std::min(docs.size(), at + 300); ++i) batch.push_back({&docs[i], "runs.jsonl"});
    AddOptions o;
    o.commit = as("T <t@example.org>");
    add_documents(planned, batch, o);
  }
  CHECK(refs_tree(tmp.path + "/bulk") == refs_tree(tmp.path + "/planned"));
  CHECK(facts_with_prefix(bulk_store.snapshot(), Family::kGroups, "").size() == 2600);
  CHECK(facts_with_prefix(bulk_store.snapshot(), Family::kMetadata, "").size() == docs.size());  // every document of the fixture has metadata

  VerifyOptions vo;
  std::string problems;
  for (const Problem& p : verify_store(bulk_store, vo).problems) problems += p.path + ": " + p.detail + "\n";
  INFO(problems);
  CHECK(problems.empty());

  // A second bulk add of a few more runs plans its change into the trie as it is.
  std::vector<Document> more = runs(2610);
  more.erase(more.begin() + 2, more.begin() + 2 + 2600);
  BulkAdd again(bulk_store, options);
  std::vector<AddedDocument> batch;
  for (const Document& d : more) batch.push_back({&d, "more.jsonl"});
  again.add(batch);
  REQUIRE(again.commit().commit);
  AddOptions o;
  o.commit = as("T <t@example.org>");
  add_documents(planned, batch, o);
  CHECK(refs_tree(tmp.path + "/bulk") == refs_tree(tmp.path + "/planned"));
}

}  // namespace
}  // namespace kistore
