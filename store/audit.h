// Judging the audit trail: what a commit's signature is worth against a list
// of controllers, and whether a run's level was set the only way a level may
// change — by a rerun commit signed by a trusted controller (SPEC §1).
//
// Used by verify, log and pull alike, so the rule lives in one place.
//
// Thread-safety: as Store.
#pragma once

#include <string>
#include <vector>

#include "objects/ssh_signature.h"
#include "store/history.h"

namespace kistore {

struct SignatureStatus {
  enum State { kUnsigned, kTrusted, kUntrusted, kInvalid } state = kUnsigned;
  std::string principal;    // trusted: the controller's principals, comma-separated
  std::string fingerprint;  // signed: the key's SHA256 fingerprint
  std::string detail;       // invalid: why
  std::string text() const;
  Json to_json() const;
};

// Checks the commit's signature (git's SSH format, namespace "git") and looks
// its key up in `signers`.
SignatureStatus judge_signature(const LogEntry& commit, const std::vector<AllowedSigner>& signers);

// Why the level entry at `level_path` (refs/levels/<level>/<run>) is not
// justified in the history of `store`'s branch, or "" when the newest commit
// that wrote it is a "rerun" commit signed by a controller in `signers`.
std::string justify_level(const Store& store, const std::vector<AllowedSigner>& signers,
                          const std::string& level_path);

// The same rule for one commit that writes a level entry: "" if `commit` is a
// rerun signed by a controller in `signers`, else why not.
std::string justify_level_commit(const LogEntry& commit, const std::vector<AllowedSigner>& signers);

}  // namespace kistore
