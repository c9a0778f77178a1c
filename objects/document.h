// Documents and bundles: the units of evidence kistore keeps.
//
// A Document is a validated KernelIndex document (apiVersion, kind, spec,
// optional metadata) of one of the known kinds, with its canonical bytes and
// digest computed once. A Bundle is a run together with the documents it
// carries (protocol, environment, and optionally workload, implementation),
// checked so that every digest the run records for a carried document is that
// document's digest. Both can only be built through validation, so a value
// that exists is valid.
//
// Errors are Error(kInvalidInput) with messages "<where>: <json pointer>:
// expected ..., found ..." where <where> is the Location given (a file, or
// file:line for JSON Lines).
//
// Thread-safety: plain values; functions are reentrant.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "objects/digest.h"
#include "objects/json.h"

namespace kistore {

inline constexpr std::string_view kApiVersion = "kernelindex.dev/v1alpha1";

enum class Kind { kRun, kProtocol, kEnvironment, kWorkload, kImplementation, kAttestation };

// "BenchmarkRun", "BenchmarkProtocol", ...; parse_kind is its inverse.
std::string_view kind_name(Kind kind);
std::optional<Kind> parse_kind(std::string_view name);
// The role a kind plays in a bundle ("run", "protocol", ...); "attestation" for attestations.
std::string_view role_name(Kind kind);
// "BenchmarkRun, BenchmarkProtocol, ..." for messages.
std::string known_kinds();

// Where a JSON value came from, for messages: "runs.jsonl:17" and "/run".
struct Location {
  std::string source;
  std::string pointer;  // RFC 6901, "" for the whole text
  Location child(std::string_view member) const;
  Location child(std::size_t index) const;
  // "<source>: <pointer>: <message>" (the pointer part only when non-empty).
  std::string format(std::string_view message) const;
};

// A Document is the only way a digest enters the store from a caller: it can
// be made only by canonicalizing its JSON (from_json, from_canonical), and its
// digest is computed from exactly the bytes canonical() returns, which are the
// bytes a store keeps. No constructor takes a digest or canonical bytes on
// trust, so a mismatching pair cannot exist (tests/objects/document_test.cc).
class Document {
 public:
  // Validates `json` as a document; throws Error(kInvalidInput) naming `where`.
  static Document from_json(Json json, const Location& where);
  // The checks of from_json alone, for a caller that has the document's
  // canonical bytes and digest already (a stored object being verified):
  // throws as from_json does, and builds nothing.
  static void validate(const Json& json, const Location& where);
  // Rebuilds a document from its canonical bytes as stored (and its metadata,
  // if any). Throws Error(kInvalidInput) if the bytes are not a valid document.
  static Document from_canonical(std::string_view bytes, std::optional<Json> metadata,
                                 const Location& where);

  Kind kind() const { return kind_; }
  const Digest& digest() const { return digest_; }
  // JCS of the document without its metadata: the bytes the digest names.
  const std::string& canonical() const { return data_->canonical; }
  // The document without metadata.
  const Json& body() const { return data_->body; }
  const Json& spec() const { return *data_->body.find("spec"); }
  const std::optional<Json>& metadata() const { return data_->metadata; }
  // JCS of the metadata (the bytes of its refs/metadata entry); empty when
  // there is none.
  const std::string& metadata_canonical() const { return data_->metadata_canonical; }
  // The document with its metadata (for display).
  Json with_metadata() const;
  // Whether from_json(json) would make this very document: json's members
  // equal (Json's ==) to its body's and its metadata. Equal JSON has one
  // canonical form, so such a document's bytes and digest are json's.
  bool made_from(const Json& json) const;

 private:
  // Immutable once made, and shared by copies: a document repeated across
  // many bundles (the protocol of a thousand runs) is held once.
  struct Data {
    Json body;
    std::optional<Json> metadata;
    std::string canonical, metadata_canonical;
  };
  Document() = default;
  Kind kind_ = Kind::kRun;
  Digest digest_ = Digest::of("");
  std::shared_ptr<const Data> data_;
};

// A run and the documents it carries. References the run makes to documents
// the bundle does not carry are "external" (allowed; verify warns).
class Bundle {
 public:
  // Validates a bundle object; throws Error(kInvalidInput) naming `where` and
  // the pointer of the offending member.
  static Bundle from_json(Json json, const Location& where);
  // The bundle of documents already validated, indexed by role in bundle
  // order (run, protocol, environment, workload, implementation; nullopt for
  // a role not carried), as from_json would make it from their JSON; nullopt
  // where from_json would throw (a required role missing, a document of the
  // wrong kind, a carried document the run names by another digest).
  static std::optional<Bundle> from_documents(std::array<std::optional<Document>, 5> by_role);

  // The bundle object from_json reads: each carried document, with its
  // metadata, under its role.
  Json to_json() const;

  const Document& run() const { return documents_.front(); }
  // The run first, then the carried documents in role order.
  const std::vector<Document>& documents() const { return documents_; }
  // Roles ("workload", ...) the run names by digest but the bundle does not carry.
  const std::vector<std::string>& external_roles() const { return external_; }

 private:
  std::vector<Document> documents_;
  std::vector<std::string> external_;
};

// The documents made last, kept so that a document made again from equal
// JSON (the one protocol or environment of every run an importer maps) is
// neither validated, canonicalized nor hashed again: make() returns the
// document it made before, which is the one from_json would make (made_from).
// It holds at most kEntries documents, the most recently made or returned.
//
// Thread-safety: one thread uses a DocumentCache.
class DocumentCache {
 public:
  static constexpr std::size_t kEntries = 4;
  // Document::from_json(json, where), or the equal document made before.
  // Throws as from_json does.
  Document make(Json json, const Location& where);

 private:
  std::vector<Document> recent_;  // the most recent first
};

// The digest a run records for a role ("protocol" -> spec.protocolDigest).
std::optional<Digest> run_reference(const Document& run, std::string_view role);

}  // namespace kistore
