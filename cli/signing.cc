#include "cli/signing.h"

#include <cerrno>
#include <cstring>
#include <fstream>


namespace kistore::cli {

SshPrivateKey read_private_key(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(path + ": cannot open the private key file: " + std::strerror(errno));
  std::string text(SshPrivateKey::kMaxTextBytes + 1, '\0');
  // The text holds the private key in the clear: wipe it on every way out.
  struct Wipe {
    std::string& bytes;
    ~Wipe() { wipe_key_material(bytes); }
  } wipe{text};
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw IOError(path + ": cannot read the private key file: " + std::strerror(errno));
  text.resize(static_cast<std::size_t>(in.gcount()));  // only shrinks: nothing is left unwiped
  return SshPrivateKey::parse(text, path);
}

SignatureJudge signature_judge(const std::vector<AllowedSigner>& signers) {
  return [signers](const LogEntry& e) { return judge_signature(e, signers); };
}

std::function<std::string(std::string_view)> signer_for(const Globals& g, Store* store) {
  std::string path = g.sign_key;
  if (path.empty() && store)
    if (auto configured = store->setting("signkey")) path = *configured;
  if (path.empty()) return {};
  auto key = std::make_shared<SshPrivateKey>(read_private_key(path));
  return [key](std::string_view payload) { return key->sign(payload, "git"); };
}

}  // namespace kistore::cli
