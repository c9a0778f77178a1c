// Signing at the command line: --sign / the sign.key setting, and the judges
// that log and verify use (store/audit.h holds the rules).
#pragma once

#include <functional>
#include <string>

#include "cli/common.h"
#include "store/audit.h"

namespace kistore::cli {

using SignatureJudge = std::function<SignatureStatus(const LogEntry&)>;
SignatureJudge signature_judge(const std::vector<AllowedSigner>& signers);

}  // namespace kistore::cli
