#include "cli/signing.h"

#include "objects/ssh_signature.h"
#include "store/trust.h"

namespace kistore::cli {

SignatureJudge signature_judge(const std::vector<AllowedSigner>& signers) {
  return [signers](const LogEntry& e) { return judge_signature(e, signers); };
}

std::function<std::string(std::string_view)> signer_for(const Globals& g, Store* store) {
  std::string path = g.sign_key;
  if (path.empty() && store)
    if (auto configured = store->setting("signkey")) path = *configured;
  if (path.empty()) return {};
  auto key = std::make_shared<SshPrivateKey>(SshPrivateKey::load(path));
  return [key](std::string_view payload) { return key->sign(payload, "git"); };
}

std::function<std::string(const Digest&, const std::string&)> level_justifier(
    const Globals& g, const Store& store, const std::string& allowed_signers_file) {
  auto signers = std::make_shared<std::vector<AllowedSigner>>(
      allowed_signers_file.empty() ? load_trust(store) : load_allowed_signers(allowed_signers_file));
  const Store* s = &store;
  return [signers, s](const Digest&, const std::string& path) { return justify_level(*s, *signers, path); };
}

}  // namespace kistore::cli
