#include "refs/problem.h"

namespace kistore {

std::string_view problem_kind_name(ProblemKind kind) {
  // A switch without default: a kind added without a name does not compile
  // cleanly (-Wswitch).
  switch (kind) {
    case ProblemKind::kLayout: return "layout";
    case ProblemKind::kObjectCorrupt: return "object-corrupt";
    case ProblemKind::kObjectHashMismatch: return "object-hash-mismatch";
    case ProblemKind::kObjectInvalid: return "object-invalid";
    case ProblemKind::kObjectNotCanonical: return "object-not-canonical";
    case ProblemKind::kMetadataInvalid: return "metadata-invalid";
    case ProblemKind::kDanglingRef: return "dangling-ref";
    case ProblemKind::kGroupMismatch: return "group-mismatch";
    case ProblemKind::kMissingGroup: return "missing-group";
    case ProblemKind::kLevelMismatch: return "level-mismatch";
    case ProblemKind::kMissingLevel: return "missing-level";
    case ProblemKind::kLevelUnjustified: return "level-unjustified";
    case ProblemKind::kAttestationMismatch: return "attestation-mismatch";
    case ProblemKind::kMissingAttestation: return "missing-attestation";
    case ProblemKind::kRerunMismatch: return "rerun-mismatch";
    case ProblemKind::kSourceMismatch: return "source-mismatch";
    case ProblemKind::kMissingSource: return "missing-source";
    case ProblemKind::kIndexRemoved: return "index-removed";
    case ProblemKind::kHistoryRewritten: return "history-rewritten";
    case ProblemKind::kHistoryMissing: return "history-missing";
    case ProblemKind::kDigestMismatch: return "digest-mismatch";
    case ProblemKind::kSourceClaimed: return "source-claimed";
    case ProblemKind::kExternalReference: return "external-reference";
    case ProblemKind::kDictionaryReadOnly: return "dictionary-read-only";
  }
  return "unknown";
}

std::optional<ProblemKind> parse_problem_kind(std::string_view name) {
  for (int k = 0; k <= static_cast<int>(ProblemKind::kLast); ++k)
    if (problem_kind_name(static_cast<ProblemKind>(k)) == name) return static_cast<ProblemKind>(k);
  return std::nullopt;
}

}  // namespace kistore
