// Signing and judging signatures at the command line: --sign / sign.key,
// the trust list, and what a signature on a commit is worth.
#pragma once

#include <functional>
#include <string>

#include "cli/common.h"
#include "objects/ssh_signature.h"
#include "store/history.h"

namespace kistore::cli {

struct SignatureStatus {
  enum State { kUnsigned, kTrusted, kUntrusted, kInvalid } state = kUnsigned;
  std::string principal;    // trusted: the controller's principal
  std::string fingerprint;  // signed: the key's SHA256 fingerprint
  std::string detail;       // invalid: why
  std::string text() const;
  Json to_json() const;
};

using SignatureJudge = std::function<SignatureStatus(const LogEntry&)>;

// Judges commit signatures against `signers` (the store's trust list unless
// --allowed-signers names another).
SignatureJudge signature_judge(const std::vector<AllowedSigner>& signers);

}  // namespace kistore::cli
