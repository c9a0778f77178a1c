// The one way a digest enters the store from a caller (objects/document.h):
// a Document's digest is always the SHA-256 of the canonical bytes it holds,
// whether it was made from JSON, from stored bytes, or taken again from a
// DocumentCache; and a bundle whose run names a carried document by another
// digest cannot be built.
#include "objects/document.h"

#include <catch2/catch.hpp>

#include <string>
#include <type_traits>

#include "objects/digest.h"
#include "objects/error.h"
#include "objects/json.h"

namespace kistore {
namespace {

// No constructor takes a digest or bytes on trust: the only ways in are the
// static makers, which canonicalize and hash themselves.
static_assert(!std::is_default_constructible_v<Document>);
static_assert(!std::is_constructible_v<Document, std::string, Digest>);
static_assert(!std::is_constructible_v<Document, std::string_view, Digest>);
static_assert(!std::is_constructible_v<Document, Json, Digest>);
static_assert(!std::is_constructible_v<Document, Json>);

Json protocol_json(const std::string& harness, const std::string& title = "a protocol") {
  return parse_json(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"BenchmarkProtocol",
    "spec":{"measurement":{"timer":"cuda_events"},"harness":{"name":")" + harness + R"("}},
    "metadata":{"title":")" + title + R"("}})",
                    "protocol.json");
}

Json run_json(const Digest& protocol, const Digest& environment) {
  Json run = parse_json(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"BenchmarkRun","spec":{
    "status":"passed","measurements":[{"metric":"latency","statistic":"median","unit":"ns","value":1.0}],
    "workloadDigest":"sha256:1111111111111111111111111111111111111111111111111111111111111111",
    "implementationDigest":"sha256:3333333333333333333333333333333333333333333333333333333333333333"}})",
                        "run.json");
  run.find("spec")->set("protocolDigest", Json(protocol.str()));
  run.find("spec")->set("environmentDigest", Json(environment.str()));
  return run;
}

void check_consistent(const Document& doc) {
  CHECK(doc.digest() == Digest::of(doc.canonical()));
  CHECK(doc.canonical() == canonical(doc.body()));
  CHECK(!doc.body().find("metadata"));
}

Json environment_json() {
  return parse_json(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"ExecutionEnvironment",
    "spec":{"hardware":{"vendor":"nvidia","product":"NVIDIA H100","architecture":"sm_90"}}})",
                    "environment.json");
}

TEST_CASE("document: the digest is the hash of the canonical bytes it holds, however it was made", "[document]") {
  const Location at{"protocol.json", ""};
  const Document made = Document::from_json(protocol_json("nvbench"), at);
  check_consistent(made);
  // Stored bytes that are not canonical (spaces, members out of order) are
  // canonicalized again: the digest is of the canonical bytes, not of the
  // bytes given.
  const std::string loose = R"({ "spec": {"harness":{"name":"nvbench"}, "measurement":{"timer":"cuda_events"}},
    "kind":"BenchmarkProtocol", "apiVersion":"kernelindex.dev/v1alpha1" })";
  const Document stored = Document::from_canonical(loose, std::nullopt, at);
  check_consistent(stored);
  CHECK(stored.canonical() != loose);
  CHECK(stored.digest() != Digest::of(loose));
  CHECK(stored.digest() == made.digest());
}

TEST_CASE("document cache: a document made again from equal JSON is the one from_json makes", "[document]") {
  DocumentCache cache;
  const Location at{"protocol.json", "/protocol"};
  const Document first = cache.make(protocol_json("nvbench"), at);
  // Equal JSON with its members in another order: the same document.
  Json reordered = Json::object();
  const Json source = protocol_json("nvbench");
  for (auto it = source.as_object().rbegin(); it != source.as_object().rend(); ++it) reordered.set(it->first, it->second);
  const Document again = cache.make(reordered, at);
  CHECK(again.digest() == first.digest());
  CHECK(&again.canonical() == &first.canonical());  // taken as made, not made again
  check_consistent(again);

  // JSON that differs in the spec, in the metadata only, or by a metadata
  // missing or added, is made anew: never the cached document.
  const Document other = cache.make(protocol_json("tritonbench"), at);
  CHECK(other.digest() != first.digest());
  check_consistent(other);
  const Document retitled = cache.make(protocol_json("nvbench", "another title"), at);
  CHECK(retitled.digest() == first.digest());  // metadata is not evidence
  CHECK(retitled.metadata_canonical() != first.metadata_canonical());
  CHECK(retitled.metadata()->find("title")->as_string() == "another title");
  Json bare = protocol_json("nvbench");
  bare.erase("metadata");
  const Document without = cache.make(bare, at);
  CHECK(!without.metadata());
  CHECK(cache.make(protocol_json("nvbench"), at).metadata());
  for (const Document& d : {other, retitled, without}) CHECK(d.made_from(d.with_metadata()));
  CHECK(!first.made_from(protocol_json("tritonbench")));
  CHECK(!first.made_from(bare));
  CHECK(!without.made_from(protocol_json("nvbench")));

  // More documents than the cache holds: each still the one from_json makes.
  for (int i = 0; i < 3 * static_cast<int>(DocumentCache::kEntries); ++i) {
    const Json json = protocol_json("harness-" + std::to_string(i % (DocumentCache::kEntries + 1)));
    const Document d = cache.make(json, at);
    CHECK(d.digest() == Document::from_json(json, at).digest());
    check_consistent(d);
  }
}

TEST_CASE("document cache: invalid JSON throws as from_json does, and is not remembered", "[document]") {
  DocumentCache cache;
  Json bad = protocol_json("nvbench");
  bad.find("spec")->erase("harness");
  CHECK_THROWS_WITH(cache.make(bad, Location{"r.json:3", "/protocol"}),
                    "r.json:3: /protocol/spec/harness: expected an object, found nothing");
  CHECK_THROWS_AS(cache.make(bad, Location{"r.json:3", "/protocol"}), Error);
}

TEST_CASE("document: a string or name that is not UTF-8 is refused with its JSON pointer", "[document]") {
  // Strings that did not come through parse_json (a CSV cell, a program's
  // output, a command-line value) reach documents as bytes: from_json is the
  // door they all pass, and a stored object must be UTF-8 (parse_json reads
  // them back).
  Json value = protocol_json("nvbench");
  value.find("spec")->find("harness")->set("name", Json(std::string("nv\xC0\xAF")));
  CHECK_THROWS_WITH(Document::from_json(value, Location{"t.csv:2", "/protocol"}),
                    "t.csv:2: /protocol/spec/harness/name: expected UTF-8 text, found invalid UTF-8 byte 0xc0");
  Json named = protocol_json("nvbench");
  named.find("spec")->set(std::string("x\xFF"), Json(1.0));
  CHECK_THROWS_WITH(Document::from_json(named, Location{"t.csv:3", ""}),
                    "t.csv:3: /spec/x\xFF: expected UTF-8 text, found invalid UTF-8 byte 0xff");
  Json titled = protocol_json("nvbench");
  titled.find("metadata")->set("title", Json(std::string("cut \xE2\x82")));
  CHECK_THROWS_WITH(Document::from_json(titled, Location{"t.csv:4", ""}),
                    "t.csv:4: /metadata/title: expected UTF-8 text, found truncated UTF-8 sequence 0xe2 0x82");
  CHECK_THROWS_AS(Document::from_json(titled, Location{"t.csv:4", ""}), Error);
  // Any UTF-8 at all is kept as it is.
  Json fine = protocol_json("nv\xC3\xA9 \xF0\x9F\x98\x80", "\xE2\x82\xAC");
  Document doc = Document::from_json(fine, Location{"t.json", ""});
  check_consistent(doc);
  CHECK(doc.canonical().find("nv\xC3\xA9 \xF0\x9F\x98\x80") != std::string::npos);
}

TEST_CASE("bundle: a run that names a carried document by another digest cannot be built", "[document]") {
  const Location at{"b.json", ""};
  const Document protocol = Document::from_json(protocol_json("nvbench"), at);
  const Document environment = Document::from_json(environment_json(), at);
  auto bundle_of = [&](const Digest& named) {
    return Bundle::from_documents({Document::from_json(run_json(named, environment.digest()), at), protocol, environment, std::nullopt,
                                   std::nullopt});
  };
  REQUIRE(bundle_of(protocol.digest()));
  // Another document's digest, or one a byte away from the protocol's.
  CHECK(!bundle_of(environment.digest()));
  std::string near = protocol.digest().hex();
  near[63] = near[63] == '0' ? '1' : '0';
  CHECK(!bundle_of(*Digest::parse_hex(near)));
  // The same through JSON: refused, naming both digests.
  Json json = bundle_of(protocol.digest())->to_json();
  json.find("run")->find("spec")->set("protocolDigest", Json(environment.digest().str()));
  CHECK_THROWS_WITH(Bundle::from_json(json, at),
                    Catch::Contains("/run/spec/protocolDigest") && Catch::Contains(protocol.digest().str()) &&
                        Catch::Contains(environment.digest().str()));
}

TEST_CASE("bundle: to_json is the bundle from_json reads back, document for document", "[document]") {
  const Location at{"b.json", ""};
  const Document protocol = Document::from_json(protocol_json("nvbench"), at);
  const Document environment = Document::from_json(environment_json(), at);
  const auto bundle = Bundle::from_documents({Document::from_json(run_json(protocol.digest(), environment.digest()), at),
                                              protocol, environment, std::nullopt, std::nullopt});
  REQUIRE(bundle);
  const Bundle back = Bundle::from_json(bundle->to_json(), at);
  REQUIRE(back.documents().size() == bundle->documents().size());
  for (std::size_t i = 0; i < back.documents().size(); ++i) {
    CHECK(back.documents()[i].digest() == bundle->documents()[i].digest());
    CHECK(back.documents()[i].canonical() == bundle->documents()[i].canonical());
    CHECK(back.documents()[i].metadata_canonical() == bundle->documents()[i].metadata_canonical());
  }
  CHECK(back.external_roles() == bundle->external_roles());
}

}  // namespace
}  // namespace kistore
