// What can be wrong with a store's tree, its index or its history: a closed
// set of problem kinds, each with one machine name (SPEC §3 verify's
// {"kind","path","detail"}), shared by `verify` (store/verify/verify.h), `pull`'s
// checks of incoming commits (store/sync/incoming.h) and `verify FILE`.
//
// One fault has one kind wherever it is found: a group entry that disagrees
// with its run is group-mismatch for verify and for pull alike. The names
// are rendered here and nowhere else; scripts and tests match on them, so
// a name, once given, stays.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kistore {

enum class ProblemKind {
  // The tree's shape (SPEC §2).
  kLayout,              // "layout": a path, mode or entry kind outside the store layout
  // Objects.
  kObjectCorrupt,       // "object-corrupt": not a valid zstd frame, or its git object cannot be read or rehashed
  kObjectHashMismatch,  // "object-hash-mismatch": the bytes do not hash to the digest the path names
  kObjectInvalid,       // "object-invalid": not a document of a known kind (deep: one that validates)
  kObjectNotCanonical,  // "object-not-canonical": a valid document, but not in RFC 8785 form
  // The index (refs/) against the objects.
  kMetadataInvalid,      // "metadata-invalid": a metadata entry that is not the JCS of a JSON object
  kDanglingRef,          // "dangling-ref": an entry naming an object the store does not hold
  kGroupMismatch,        // "group-mismatch": a group entry that disagrees with its run
  kMissingGroup,         // "missing-group": a run without its group entry
  kLevelMismatch,        // "level-mismatch": a level entry's bytes, or a run with several levels
  kMissingLevel,         // "missing-level": a run without a level
  kLevelUnjustified,     // "level-unjustified": a level no valid signed rerun gives
  kAttestationMismatch,  // "attestation-mismatch": an attestation entry that disagrees with its attestation
  kMissingAttestation,   // "missing-attestation": an attestation not indexed under its subject
  kRerunMismatch,        // "rerun-mismatch": a rerun entry that is no controlled rerun of its run, or states another verdict or ratio
  kSourceMismatch,       // "source-mismatch": a source entry that does not name the run with that id
  kMissingSource,        // "missing-source": a run missing from the source index
  kIndexRemoved,         // "index-removed": a commit removes an index entry (only a level moves)
  // History.
  kHistoryRewritten,  // "history-rewritten": a commit removes or changes an object, or a remote's branch lost what was synced
  kHistoryMissing,    // "history-missing": a commit of the history cannot be read
  // Bundle files (`verify FILE`).
  kDigestMismatch,  // "digest-mismatch": a run records another digest for a document the bundle carries
  // Warnings (never a reason to refuse).
  kSourceClaimed,      // "source-claimed": a source id another run claimed first
  kExternalReference,  // "external-reference": a run names a document the store or bundle does not carry
  kDictionaryReadOnly,  // "dictionary-read-only": a dictionary zstd decodes with but cannot compress with (writers pass it over)
  kLast = kDictionaryReadOnly,
};

// The kind's machine name, e.g. "group-mismatch".
std::string_view problem_kind_name(ProblemKind kind);
// The inverse of problem_kind_name; nullopt for a name that is not a kind.
std::optional<ProblemKind> parse_problem_kind(std::string_view name);

struct Problem {
  ProblemKind kind;
  std::string path;    // the store path (or commit id, or JSON pointer) it is about
  std::string detail;  // what was expected and what was found
};

}  // namespace kistore
