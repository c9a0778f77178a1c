// Signing at the command line: reading the key that --sign / the sign.key
// setting names, and the judges that log and verify use (store/history/audit.h holds
// the rules, objects/ssh_signature.h the formats).
//
// For the commands that sign (add, import, attest, rerun) or show signatures
// (log, verify). Thread-safety: the functions are reentrant; a judge may be
// called from one thread at a time.
#pragma once

#include <functional>
#include <string>

#include "cli/common.h"
#include "objects/ssh_signature.h"
#include "store/history/audit.h"

namespace kistore::cli {

// Reads the OpenSSH private key file at `path` (at most
// SshPrivateKey::kMaxTextBytes + 1 bytes of it) and parses it, wiping the
// text read once it is parsed. Throws IOError naming `path` when the file
// cannot be opened or read, else as SshPrivateKey::parse (InvalidInput).
SshPrivateKey read_private_key(const std::string& path);

// How log shows a commit's signature against `signers`. Never throws.
using SignatureJudge = std::function<SignatureStatus(const LogEntry&)>;
SignatureJudge signature_judge(const std::vector<AllowedSigner>& signers);

}  // namespace kistore::cli
