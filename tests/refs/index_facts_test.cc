// Format 3's facts of a document, and the facts format 1 and 2 entries stand
// for (refs/index_facts.h).
#include "refs/index_facts.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <variant>

#include "objects/digest.h"
#include "objects/error.h"
#include "objects/json.h"
#include "refs/index.h"

namespace kistore {
namespace {

std::string data(const std::string& name) {
  const std::string path = std::string(KISTORE_SOURCE_DIR) + "/tests/data/refs/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

const char kFixture[] = "seed-run-tiled-geglu-backward.json";
const char kSeedKey[] = "sha256:04a2550439d8b192200cc440806ec7651434ad8d662b93bfe882f33d0465b567";
const char kExternalId[] =
    "tiled_geglu/backward/liger_tiled/nvidia-geforce-rtx-4090/batch2-hidden2048-intermediate4096-seq1024-bf16/"
    "2025-11-11-06-22-57";

Json seed_run_json() { return *parse_json(data(kFixture), kFixture).find("run"); }
Document doc_of(const Json& json) { return Document::from_json(json, Location{"run.json", ""}); }

TEST_CASE("document_facts of the seed run: its group line and its source claim, no level", "[index][facts3]") {
  Json json = seed_run_json();
  json.erase("metadata");
  Document run = doc_of(json);
  auto facts = document_facts(run, "run.json");
  REQUIRE(facts.size() == 2);
  const auto& group = std::get<GroupFact>(facts[0]);
  CHECK(group.key.str() == kSeedKey);
  CHECK(group.run == run.digest());
  REQUIRE(group.primary);
  CHECK(canonical(group.primary->to_json()) + "\n" == data("seed-run.group-entry.json") + "\n");
  const auto& source = std::get<SourceFact>(facts[1]);
  CHECK(source.source == "liger-kernel-bench");
  CHECK(source.external_id == kExternalId);
  CHECK(source.run == run.digest());
  // The line it renders: the key is sha256(source NUL externalId).
  CHECK(render_line(facts[1]).starts_with("{\"@key\":\"" + source_key("liger-kernel-bench", kExternalId) + "\""));
}

TEST_CASE("document_facts: metadata first, a run without sourceNative has no claim, an attestation its line",
          "[index][facts3]") {
  Json json = seed_run_json();
  json.find("spec")->erase("sourceNative");
  json.set("metadata", parse_json(R"({"title":"GeGLU"})", "t"));
  Document run = doc_of(json);
  auto facts = document_facts(run, "run.json");
  REQUIRE(facts.size() == 2);
  CHECK(std::get<MetadataFact>(facts[0]) == MetadataFact{run.digest(), R"({"title":"GeGLU"})"});
  CHECK(std::holds_alternative<GroupFact>(facts[1]));

  Json att = parse_json(std::string(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Attestation","spec":{"subject":")") +
                            run.digest().str() + R"(","type":"note","author":"Ann <a@example.com>","body":"ok"}})",
                        "att");
  Document attestation = doc_of(att);
  auto att_facts = document_facts(attestation, "att.json");
  REQUIRE(att_facts.size() == 1);
  CHECK(std::get<AttestationFact>(att_facts[0]) ==
        AttestationFact{run.digest(), attestation.digest(), "Ann <a@example.com>", "note"});
}

TEST_CASE("document_facts: a source id holding U+0000 is refused, naming where", "[index][facts3][errors]") {
  Json json = seed_run_json();
  json.find("spec")->find("sourceNative")->set("externalId", std::string("a\0b", 3));
  Document run = doc_of(json);
  try {
    document_facts(run, "runs.jsonl:3", "/run");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidInput);
    CHECK_THAT(e.what(), Catch::Matchers::StartsWith("runs.jsonl:3: /run/spec/sourceNative/externalId: expected a "
                                                     "string without U+0000"));
  }
}

TEST_CASE("entry_fact: each format 2 and format 1 entry is the fact format 3 writes", "[index][facts3][upgrade]") {
  Json json = seed_run_json();
  json.erase("metadata");
  Document run = doc_of(json);
  const std::string evidence = "sha256:" + std::string(64, 'e');
  // Every entry add writes: the group line and the source claim; the
  // default level entry stands for no line.
  for (Format f : {Format::k1, Format::k2}) {
    INFO(format_name(f));
    std::vector<IndexFact> got;
    for (const IndexEntry& e : index_entries(f, run, "run.json"))
      if (auto fact = entry_fact(f, e.path, e.bytes)) got.push_back(*fact);
    CHECK(got == document_facts(run, "run.json"));
    CHECK(entry_fact(f, metadata_path(f, run.digest()), R"({"title":"x"})") ==
          std::optional<IndexFact>(MetadataFact{run.digest(), R"({"title":"x"})"}));
  }
  const Digest e = *Digest::parse(evidence);
  CHECK(entry_fact(Format::k2, level_path(Format::k2, Level::kDisputed, run.digest()), level_entry(e)) ==
        std::optional<IndexFact>(LevelFact{run.digest(), Level::kDisputed, e}));
  CHECK(entry_fact(Format::k2, rerun_path(run.digest(), e), rerun_entry(Level::kReproduced, 1.017)) ==
        std::optional<IndexFact>(RerunFact{run.digest(), e, Level::kReproduced, 1.017}));
  CHECK(entry_fact(Format::k2, attestation_path(Format::k2, run.digest(), e),
                   R"({"author":"Ann <a@example.com>","type":"reproduction"})") ==
        std::optional<IndexFact>(AttestationFact{run.digest(), e, "Ann <a@example.com>", "reproduction"}));
}

TEST_CASE("entry_fact: an entry that is not what its path holds is refused, naming the path", "[index][facts3][errors]") {
  const Digest run = *Digest::parse("sha256:" + std::string(64, 'a'));
  const Digest other = *Digest::parse("sha256:" + std::string(64, 'b'));
  struct Bad {
    std::string path, bytes, expected;
  };
  const Bad bad[] = {
      {group_path(Format::k2, other, run), R"({"value":1})", "a primary measurement"},
      {group_path(Format::k2, other, run), R"({ "metric":null})", "RFC 8785 form"},
      {level_path(Format::k2, Level::kSourceNative, run), level_entry(other), "evidence only for a disputed"},
      {level_path(Format::k2, Level::kDisputed, run), R"({"evidence":"sha256:12"})", "a digest or null"},
      {rerun_path(run, other), R"({"level":"reported","ratio":1})", "\"disputed\" or \"reproduced\""},
      {attestation_path(Format::k2, run, other), R"({"author":"A","type":"vote"})", "\"note\" or \"reproduction\""},
      {"refs/sources/liger/x", "sha256:12", "a run digest"},
      {"refs/unknown/x", "{}", "an index entry of format 2"},
  };
  for (const Bad& b : bad) {
    INFO(b.path << " " << b.bytes);
    try {
      entry_fact(Format::k2, b.path, b.bytes);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kCorruption);
      CHECK_THAT(e.what(), Catch::Matchers::StartsWith(b.path) && Catch::Matchers::Contains(b.expected));
    }
  }
}

}  // namespace
}  // namespace kistore
