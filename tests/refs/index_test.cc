#include "refs/index.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "objects/digest.h"
#include "objects/document.h"
#include "objects/error.h"
#include "objects/json.h"
#include "objects/blob.h"
#include "refs/layout.h"
#include "refs/problem.h"

namespace kistore {
namespace {

std::string data(const std::string& name) {
  const std::string path = std::string(KISTORE_SOURCE_DIR) + "/tests/data/refs/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open golden file " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

const char kFixture[] = "seed-run-tiled-geglu-backward.json";
// Published by KernelIndex (SPEC §1).
const char kSeedRun[] = "sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0";
// sha256 of tests/data/refs/seed-run.comparison-key.json, computed with sha256sum
// over JCS written by hand from SPEC §1's definition.
const char kSeedKey[] = "sha256:04a2550439d8b192200cc440806ec7651434ad8d662b93bfe882f33d0465b567";

Bundle seed_bundle() { return Bundle::from_json(parse_json(data(kFixture), kFixture), Location{kFixture, ""}); }

Json parse(std::string_view text) { return parse_json(text, "test"); }

TEST_CASE("comparison_key of the seed run is SPEC's digest of its ComparisonKey document", "[index]") {
  Bundle bundle = seed_bundle();
  REQUIRE(bundle.run().digest().str() == kSeedRun);
  const std::string key_doc = data("seed-run.comparison-key.json");
  REQUIRE(Digest::of(key_doc).str() == kSeedKey);
  CHECK(comparison_key(bundle.run().spec()).str() == kSeedKey);
}

TEST_CASE("comparison_key depends on exactly environment, protocol and workload", "[index]") {
  Json spec = seed_bundle().run().spec();
  const Digest base = comparison_key(spec);
  const std::string other = "sha256:" + std::string(64, '0');

  SECTION("other members do not change it") {
    for (const char* name : {"implementationDigest", "status", "observedAt"}) {
      Json changed = spec;
      changed.set(name, other);
      INFO(name);
      CHECK(comparison_key(changed) == base);
    }
    Json changed = spec;
    changed.set("measurements", Json::array());
    changed.erase("timing");
    changed.erase("sourceNative");
    CHECK(comparison_key(changed) == base);
  }
  SECTION("each of E, P, W does") {
    for (const char* name : {"environmentDigest", "protocolDigest", "workloadDigest"}) {
      Json changed = spec;
      changed.set(name, other);
      INFO(name);
      CHECK(comparison_key(changed) != base);
    }
  }
  SECTION("member order of the run spec does not matter") {
    Json reordered = Json::object();
    for (const char* name : {"workloadDigest", "protocolDigest", "environmentDigest"}) reordered.set(name, *spec.find(name));
    CHECK(comparison_key(reordered) == base);
  }
}

TEST_CASE("comparison_key hashes the JCS of the key document, for synthetic digests", "[index]") {
  const std::string e = "sha256:" + std::string(64, 'e'), p = "sha256:" + std::string(64, 'a'),
                    w = "sha256:" + std::string(64, '7');
  Json spec = Json::object();
  spec.set("workloadDigest", w);
  spec.set("protocolDigest", p);
  spec.set("environmentDigest", e);
  const std::string jcs = R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"ComparisonKey","spec":{"environmentDigest":")" +
                          e + R"(","protocolDigest":")" + p + R"(","workloadDigest":")" + w + R"("}})";
  CHECK(comparison_key(spec) == Digest::of(jcs));
}

TEST_CASE("comparison_key is the digest of canonical() of the key document, whatever the three values are", "[index]") {
  // The key document written directly (plain digests, absent or null) and the
  // one built and canonicalized (anything else) must give the same bytes.
  auto expected = [](const Json& spec) {
    Json key_spec = Json::object();
    for (const char* name : {"environmentDigest", "protocolDigest", "workloadDigest"})
      key_spec.set(name, spec.find(name) ? *spec.find(name) : Json());
    Json doc = Json::object();
    doc.set("apiVersion", std::string(kApiVersion));
    doc.set("kind", "ComparisonKey");
    doc.set("spec", std::move(key_spec));
    return Digest::of(canonical(doc));
  };
  const std::string d = "sha256:" + std::string(64, 'b');
  std::vector<Json> specs;
  Json plain = Json::object();
  plain.set("environmentDigest", d);
  plain.set("protocolDigest", d);
  plain.set("workloadDigest", d);
  specs.push_back(plain);
  Json absent = Json::object();
  absent.set("protocolDigest", d);
  specs.push_back(absent);
  Json null_one = plain;
  null_one.set("workloadDigest", Json());
  specs.push_back(null_one);
  Json number = plain;
  number.set("environmentDigest", 5.0);
  specs.push_back(number);
  for (const char* odd : {"quote\"inside", "back\\slash", "tab\there", "caf\u00e9", "\x7f"}) {
    Json escaped = plain;
    escaped.set("protocolDigest", std::string(odd));
    specs.push_back(escaped);
  }
  for (const Json& spec : specs) {
    INFO(canonical(spec));
    CHECK(comparison_key(spec) == expected(spec));
  }
  CHECK(comparison_key(specs[0]) != comparison_key(specs[2]));
}

// Measurement as "metric/statistic/unit/value" for compact comparisons.
std::string show(const std::optional<Measurement>& m) {
  if (!m) return "none";
  return m->metric + "/" + m->statistic + "/" + m->unit + "/" + format_number(m->value);
}

TEST_CASE("primary_measurement: timing's primary statistic, else the first median", "[index]") {
  const std::string m_p20 = R"({"metric":"latency","statistic":"p20","unit":"ns","value":7})";
  const std::string m_median_a = R"({"metric":"throughput","statistic":"median","unit":"GB/s","value":10})";
  const std::string m_median_b = R"({"metric":"latency","statistic":"median","unit":"ms","value":3.5})";
  struct Case {
    const char* name;
    std::string spec;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"timing names median",
       R"({"timing":{"primaryStatistic":"median","latencyNs":{"median":2606080}},"measurements":[)" + m_median_b + "]}",
       "latency/median/ns/2606080"},
      {"timing names p20",
       R"({"timing":{"primaryStatistic":"p20","latencyNs":{"median":5,"p20":4.25}},"measurements":[]})",
       "latency/p20/ns/4.25"},
      {"timing without primaryStatistic: first median",
       R"({"timing":{"latencyNs":{"median":5}},"measurements":[)" + m_p20 + "," + m_median_a + "," + m_median_b + "]}",
       "throughput/median/GB/s/10"},
      {"primaryStatistic absent from latencyNs: first median",
       R"({"timing":{"primaryStatistic":"p99","latencyNs":{"median":5}},"measurements":[)" + m_median_b + "]}",
       "latency/median/ms/3.5"},
      {"primaryStatistic not a string: first median",
       R"({"timing":{"primaryStatistic":5,"latencyNs":{"median":5}},"measurements":[)" + m_median_b + "]}",
       "latency/median/ms/3.5"},
      {"primary value not a number: first median",
       R"({"timing":{"primaryStatistic":"median","latencyNs":{"median":"5"}},"measurements":[)" + m_median_b + "]}",
       "latency/median/ms/3.5"},
      {"timing without latencyNs: first median",
       R"({"timing":{"primaryStatistic":"median"},"measurements":[)" + m_median_b + "]}",
       "latency/median/ms/3.5"},
      {"no timing: first median", R"({"measurements":[)" + m_p20 + "," + m_median_b + "," + m_median_a + "]}",
       "latency/median/ms/3.5"},
      {"no timing, no median", R"({"measurements":[)" + m_p20 + "]}", "none"},
      {"no timing, empty measurements", R"({"measurements":[]})", "none"},
      {"nothing at all", R"({})", "none"},
      {"timing without primaryStatistic, no median",
       R"({"timing":{"latencyNs":{"median":5}},"measurements":[)" + m_p20 + "]}", "none"},
  };
  for (const Case& c : cases) {
    INFO(c.name << ": " << c.spec);
    CHECK(show(primary_measurement(parse(c.spec))) == c.expected);
  }
}

TEST_CASE("primary_measurement of the seed run is its timed median", "[index]") {
  CHECK(show(primary_measurement(seed_bundle().run().spec())) == "latency/median/ns/2606080");
}

TEST_CASE("group_entry bytes are pinned by golden files", "[index][golden]") {
  CHECK(group_entry(seed_bundle().run().spec()) == data("seed-run.group-entry.json"));
  CHECK(group_entry(parse(R"({"measurements":[]})")) == data("no-primary.group-entry.json"));
  CHECK(group_entry(parse(R"({"timing":{"primaryStatistic":"p50","latencyNs":{"p50":1e21}}})")) ==
        R"({"metric":"latency","statistic":"p50","unit":"ns","value":1e+21})");
  CHECK(group_entry(parse(R"({"measurements":[{"value":0.5,"unit":"ms","statistic":"median","metric":"latency"}]})")) ==
        R"({"metric":"latency","statistic":"median","unit":"ms","value":0.5})");
}

TEST_CASE("Measurement::from_json is the inverse of to_json, and rejects malformed ones", "[index]") {
  Measurement m{"latency", "median", "ns", 2606080};
  auto back = Measurement::from_json(m.to_json());
  REQUIRE(back.has_value());
  CHECK(show(back) == "latency/median/ns/2606080");
  for (const char* bad : {R"({"metric":"l","statistic":"s","unit":"u"})",
                          R"({"metric":"l","statistic":"s","unit":"u","value":"1"})",
                          R"({"metric":null,"statistic":null,"unit":null,"value":null})", R"([])", R"(1)"}) {
    INFO(bad);
    CHECK_FALSE(Measurement::from_json(parse(bad)).has_value());
  }
}

TEST_CASE("level_entry and attestation_entry bytes", "[index][golden]") {
  CHECK(level_entry(std::nullopt) == R"({"evidence":null})");
  CHECK(level_entry(Digest::parse(kSeedRun)) == std::string(R"({"evidence":")") + kSeedRun + R"("})");
  CHECK(attestation_entry(parse(R"({"type":"note","subject":"x","body":"b","author":"Ann <a@example.com>"})")) ==
        R"({"author":"Ann <a@example.com>","type":"note"})");
}

TEST_CASE("index_entries of the seed bundle: group, default level and source for the run only", "[index]") {
  Bundle bundle = seed_bundle();
  const Document& run = bundle.run();
  auto entries = index_entries(Format::k2, run, kFixture);
  const std::string hex = run.digest().hex();
  REQUIRE(entries.size() == 3);
  const std::string fanned = hex.substr(0, 2) + "/" + hex.substr(2, 2) + "/" + hex.substr(4);
  CHECK(entries[0].path == "refs/groups/04/a2/550439d8b192200cc440806ec7651434ad8d662b93bfe882f33d0465b567/" + hex);
  CHECK(entries[0].bytes == data("seed-run.group-entry.json"));
  CHECK(entries[1].path == "refs/levels/source-native/" + fanned);
  CHECK(entries[1].bytes == R"({"evidence":null})");
  CHECK(entries[2].path ==
        "refs/sources/liger-kernel-bench/tiled_geglu/backward/liger_tiled/nvidia-geforce-rtx-4090/"
        "batch2-hidden2048-intermediate4096-seq1024-bf16/2025-11-11-06-22-57");
  CHECK(entries[2].bytes == kSeedRun);
  for (std::size_t i = 1; i < bundle.documents().size(); ++i) {
    INFO(kind_name(bundle.documents()[i].kind()));
    CHECK(index_entries(Format::k2, bundle.documents()[i], kFixture).empty());
  }
  // Format 1 (what an upgrade reads) names the same entries flat.
  auto flat = index_entries(Format::k1, run, kFixture);
  REQUIRE(flat.size() == 3);
  CHECK(flat[0].path == "refs/groups/04a2550439d8b192200cc440806ec7651434ad8d662b93bfe882f33d0465b567/" + hex);
  CHECK(flat[1].path == "refs/levels/source-native/" + hex);
  CHECK(flat[2].path == entries[2].path);
  for (std::size_t i = 0; i < 3; ++i) CHECK(flat[i].bytes == entries[i].bytes);
}

TEST_CASE("rerun_entry: JCS {level, ratio}; rerun_ratio divides the rerun's primary value by the run's", "[index]") {
  CHECK(rerun_entry(Level::kReproduced, 1.017) == R"({"level":"reproduced","ratio":1.017})");
  CHECK(rerun_entry(Level::kDisputed, 1.3) == R"({"level":"disputed","ratio":1.3})");
  CHECK(rerun_entry(Level::kDisputed, 2) == R"({"level":"disputed","ratio":2})");
  Json run = *parse(data(kFixture)).find("run");
  Json rerun = run;
  Json& timing = *rerun.find("spec")->find("timing");
  const double median = timing.find("latencyNs")->find("median")->as_number();
  timing.find("latencyNs")->set("median", median * 1.5);
  auto ratio = rerun_ratio(*run.find("spec"), *rerun.find("spec"));
  REQUIRE(ratio.has_value());
  CHECK(*ratio == Approx(1.5));
  Json no_primary = Json::object();
  CHECK_FALSE(rerun_ratio(*run.find("spec"), no_primary).has_value());
}

TEST_CASE("index_entries: a failed run is reported, one without sourceNative has no source entry", "[index]") {
  Json run = *parse(data(kFixture)).find("run");
  run.find("spec")->set("status", "failed");
  run.find("spec")->erase("sourceNative");
  Document doc = Document::from_json(run, Location{"run.json", ""});
  auto entries = index_entries(Format::k2, doc, "run.json");
  REQUIRE(entries.size() == 2);
  const std::string hex = doc.digest().hex();
  CHECK(entries[0].path.rfind("refs/groups/04/a2/" + std::string(kSeedKey).substr(11) + "/", 0) == 0);
  CHECK(entries[1].path == "refs/levels/reported/" + hex.substr(0, 2) + "/" + hex.substr(2, 2) + "/" + hex.substr(4));
}

TEST_CASE("index_entries: an attestation is indexed under its subject", "[index]") {
  Json att = parse(std::string(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Attestation","spec":{"subject":")") +
                   kSeedRun + R"(","type":"note","author":"Ann <a@example.com>","body":"looks right"}})");
  Document doc = Document::from_json(att, Location{"att.json", ""});
  auto entries = index_entries(Format::k2, doc, "att.json");
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].path == "refs/attestations/33/4f/" + std::string(kSeedRun).substr(11) + "/" + doc.digest().hex());
  CHECK(entries[0].bytes == R"({"author":"Ann <a@example.com>","type":"note"})");
}

TEST_CASE("index_entries: a source id that cannot be a path throws, naming where", "[index][errors]") {
  Json run = *parse(data(kFixture)).find("run");
  run.find("spec")->find("sourceNative")->set("externalId", "a/../b");
  Document doc = Document::from_json(run, Location{"runs.jsonl:3", ""});
  try {
    index_entries(Format::k2, doc, "runs.jsonl:3");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidInput);
    CHECK_THAT(e.what(), Catch::Matchers::StartsWith("runs.jsonl:3: /spec/sourceNative/externalId: "));
  }
}

// ---- object_facts: what a stored object implies, for verify and pull ----

struct Stored {
  std::string path, frame;
};
Stored store_document(const Document& doc) { return {object_path(doc.digest()), encode_object(doc.canonical())}; }

TEST_CASE("object_facts of a stored run: the index entries add writes, and the digests it names", "[index][facts]") {
  Bundle bundle = seed_bundle();
  const Document& run = bundle.run();
  Stored s = store_document(run);
  for (ObjectCheck check : {ObjectCheck::kShallow, ObjectCheck::kDeep}) {
    ObjectFacts f = object_facts(Format::k2, s.path, s.frame, check);
    INFO((f.problem ? f.problem->detail : std::string()));
    REQUIRE(f.valid());
    CHECK(*f.digest == run.digest());
    CHECK(f.kind == Kind::kRun);
    // The same entries index_entries gives add: one rule for both.
    auto entries = index_entries(Format::k2, run, kFixture);
    REQUIRE(entries.size() == 3);
    CHECK(entries[0].path == f.group_path);
    CHECK(entries[0].bytes == f.group_bytes);
    CHECK(entries[1].path == level_path(Format::k2, f.default_level, run.digest()));
    CHECK(f.default_level == Level::kSourceNative);
    REQUIRE(f.source_path);
    CHECK(entries[2].path == *f.source_path);
    std::vector<std::string> roles;
    f.references.for_each([&](std::string_view role, const Digest& digest) {
      roles.emplace_back(role);
      CHECK(digest == *run_reference(run, std::string(role)));
    });
    CHECK(roles == std::vector<std::string>{"protocol", "environment", "workload", "implementation"});
  }
}

TEST_CASE("object_facts of a stored attestation: its subject and its entry's bytes", "[index][facts]") {
  Json att = parse(std::string(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Attestation","spec":{"subject":")") +
                   kSeedRun + R"(","type":"note","author":"Ann <a@example.com>","body":"looks right"}})");
  Document doc = Document::from_json(att, Location{"att.json", ""});
  Stored s = store_document(doc);
  ObjectFacts f = object_facts(Format::k2, s.path, s.frame, ObjectCheck::kDeep);
  REQUIRE(f.valid());
  CHECK(f.kind == Kind::kAttestation);
  CHECK(f.subject == Digest::parse(kSeedRun));
  CHECK(f.attestation_bytes == index_entries(Format::k2, doc, "att.json")[0].bytes);
  CHECK(f.group_path.empty());
}

TEST_CASE("object_facts: what is wrong with an object, as one problem about its path", "[index][facts][errors]") {
  Bundle bundle = seed_bundle();
  const Document& run = bundle.run();
  const std::string path = object_path(run.digest());
  const std::string spaced = R"({"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Implementation", "spec": {"name": "x"}})";
  const std::string invalid = R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation","spec":{}})";
  const std::string unknown = R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Banana","spec":{}})";
  Json bad_source = run.body();
  bad_source.find("spec")->find("sourceNative")->set("externalId", "a/../b");
  const std::string bad_source_bytes = canonical(bad_source);
  struct Case {
    const char* name;
    std::string path, frame;
    ObjectCheck check;
    ProblemKind kind;
    std::string detail;  // a part of the detail
  };
  const std::vector<Case> cases = {
      {"not an object path", "objects/sha256/ab/cd/short", encode_object(run.canonical()), ObjectCheck::kShallow,
       ProblemKind::kLayout, "objects/sha256/<2 hex>"},
      {"not a zstd frame", path, "{\"not\":\"compressed\"}", ObjectCheck::kShallow, ProblemKind::kObjectCorrupt, path},
      {"a frame of other bytes", path, encode_object(bundle.documents()[1].canonical()), ObjectCheck::kShallow,
       ProblemKind::kObjectHashMismatch, bundle.documents()[1].digest().str()},
      {"bytes that are not JSON", object_path(Digest::of("{")), encode_object("{"), ObjectCheck::kShallow,
       ProblemKind::kObjectInvalid, ""},
      {"an unknown kind", object_path(Digest::of(unknown)), encode_object(unknown), ObjectCheck::kShallow,
       ProblemKind::kObjectInvalid, "known kind"},
      {"deep: not RFC 8785", object_path(Digest::of(spaced)), encode_object(spaced), ObjectCheck::kDeep,
       ProblemKind::kObjectNotCanonical, "RFC 8785"},
      {"deep: not a valid Implementation", object_path(Digest::of(invalid)), encode_object(invalid), ObjectCheck::kDeep,
       ProblemKind::kObjectInvalid, "/spec"},
      {"a run whose source id cannot be a path", object_path(Digest::of(bad_source_bytes)),
       encode_object(bad_source_bytes), ObjectCheck::kShallow, ProblemKind::kObjectInvalid, "externalId"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      ObjectFacts f = object_facts(Format::k2, c.path, c.frame, c.check);
      CHECK_FALSE(f.valid());
      REQUIRE(f.problem);
      CHECK(problem_kind_name(f.problem->kind) == problem_kind_name(c.kind));
      CHECK(f.problem->path == c.path);
      CHECK_THAT(f.problem->detail, Catch::Matchers::Contains(c.detail));
      CHECK(f.digest == parse_object_path(c.path));  // known whenever the path is an object path
    }
  }
  SECTION("a hash mismatch names both digests") {
    ObjectFacts f = object_facts(Format::k2, path, encode_object(bundle.documents()[1].canonical()), ObjectCheck::kShallow);
    REQUIRE(f.problem);
    CHECK_THAT(f.problem->detail, Catch::Matchers::Contains(run.digest().str()));
  }
  SECTION("a shallow check does not validate or require RFC 8785") {
    CHECK(object_facts(Format::k2, object_path(Digest::of(spaced)), encode_object(spaced), ObjectCheck::kShallow).valid());
    CHECK(object_facts(Format::k2, object_path(Digest::of(invalid)), encode_object(invalid), ObjectCheck::kShallow).valid());
  }
}

TEST_CASE("Document::validate refuses what from_json refuses, with its message, and passes what it builds",
          "[index][facts][errors]") {
  const Location where{"doc.json", ""};
  const Bundle bundle = seed_bundle();
  for (const Document& doc : bundle.documents()) CHECK_NOTHROW(Document::validate(doc.body(), where));
  for (const char* text : {R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation","spec":{}})",
                           R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Banana","spec":{}})",
                           R"({"apiVersion":"v2","kind":"Implementation","spec":{"name":"x"}})",
                           R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation","spec":{"name":"x"},"metadata":[]})",
                           R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation","spec":{"name":"x"},"extra":1})",
                           R"([1])"}) {
    INFO(text);
    const Json json = parse_json(text, "doc.json");
    std::string built, validated;
    try {
      Document::from_json(json, where);
    } catch (const Error& e) {
      built = e.what();
    }
    try {
      Document::validate(json, where);
    } catch (const Error& e) {
      validated = e.what();
    }
    CHECK_FALSE(built.empty());
    CHECK(validated == built);
  }
}

TEST_CASE("metadata_problem: only the JCS of a JSON object is a metadata entry", "[index][errors]") {
  CHECK_FALSE(metadata_problem("refs/metadata/x", R"({"name":"a","title":"b"})"));
  for (const char* bytes : {R"({"title": "b"})", R"({"title":"b","name":"a"})", "[1]", "{", ""}) {
    INFO(bytes);
    auto p = metadata_problem("refs/metadata/x", bytes);
    REQUIRE(p);
    CHECK(p->kind == ProblemKind::kMetadataInvalid);
    CHECK(p->path == "refs/metadata/x");
    CHECK_FALSE(p->detail.empty());
  }
}

TEST_CASE("problem kinds: one name each, and parse is render's inverse", "[index][problem]") {
  std::set<std::string_view> names;
  for (int k = 0; k <= static_cast<int>(ProblemKind::kLast); ++k) {
    ProblemKind kind = static_cast<ProblemKind>(k);
    std::string_view name = problem_kind_name(kind);
    INFO(name);
    CHECK(name != "unknown");
    CHECK(names.insert(name).second);
    CHECK(parse_problem_kind(name) == kind);
  }
  // The names scripts and tests match on (SPEC §3 verify).
  CHECK(problem_kind_name(ProblemKind::kGroupMismatch) == "group-mismatch");
  CHECK(problem_kind_name(ProblemKind::kObjectHashMismatch) == "object-hash-mismatch");
  CHECK(problem_kind_name(ProblemKind::kHistoryRewritten) == "history-rewritten");
  CHECK(problem_kind_name(ProblemKind::kLevelUnjustified) == "level-unjustified");
  CHECK_FALSE(parse_problem_kind("index-mismatch"));
  CHECK_FALSE(parse_problem_kind(""));
}

}  // namespace
}  // namespace kistore
