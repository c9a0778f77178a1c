// Judging the audit trail: what a commit's signature is worth against a list
// of controllers (SPEC §1: only a controller's signed rerun commit may set a
// level; store/history/level_audit.h applies the whole rule).
//
// Used by log and by the level audit (verify, pull, the readers) alike, so
// the judgement lives in one place.
//
// Thread-safety: as Store.
#pragma once

#include <string>
#include <vector>

#include "objects/ssh_signature.h"
#include "store/history/history.h"

namespace kistore {

struct SignatureStatus {
  enum State { kUnsigned, kTrusted, kUntrusted, kInvalid } state = kUnsigned;
  std::string principal;    // trusted: the controller's principals, comma-separated
  std::string fingerprint;  // signed: the key's SHA256 fingerprint
  std::string detail;       // invalid: why; untrusted: why a line listing the key does not count, if one does
  std::string text() const;
  Json to_json() const;
};

// Checks the commit's signature (git's SSH format, namespace "git") and looks
// its key up in `signers` at the commit's committer time (valid-after and
// valid-before, as git verify-commit passes that time to ssh-keygen). A key
// that some line lists but that does not count then (namespaces, validity,
// cert-authority) is untrusted, with `detail` saying why.
SignatureStatus judge_signature(const LogEntry& commit, const std::vector<AllowedSigner>& signers);

}  // namespace kistore
