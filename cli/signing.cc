#include "cli/signing.h"

#include "objects/ssh_signature.h"
#include "store/trust.h"

namespace kistore::cli {

std::string SignatureStatus::text() const {
  switch (state) {
    case kUnsigned: return "unsigned";
    case kTrusted: return "good signature by " + principal + " (" + fingerprint + "), trusted controller";
    case kUntrusted: return "good signature by untrusted key " + fingerprint;
    case kInvalid: return "INVALID signature: " + detail;
  }
  return "?";
}

Json SignatureStatus::to_json() const {
  static const char* names[] = {"unsigned", "trusted", "untrusted", "invalid"};
  Json out = Json::object();
  out.set("status", names[state]);
  if (!principal.empty()) out.set("principal", principal);
  if (!fingerprint.empty()) out.set("fingerprint", fingerprint);
  if (!detail.empty()) out.set("detail", detail);
  return out;
}

SignatureJudge signature_judge(const std::vector<AllowedSigner>& signers) {
  return [signers](const LogEntry& e) {
    SignatureStatus s;
    if (e.signature.empty()) return s;
    SshSignatureCheck check = verify_signature(e.signature, e.signed_payload, "git");
    if (!check.signer.blob.empty()) s.fingerprint = check.signer.fingerprint();
    if (!check.valid) {
      s.state = SignatureStatus::kInvalid;
      s.detail = check.detail;
      return s;
    }
    if (const AllowedSigner* who = find_signer(signers, check.signer)) {
      s.state = SignatureStatus::kTrusted;
      for (const std::string& p : who->principals) s.principal += (s.principal.empty() ? "" : ",") + p;
    } else {
      s.state = SignatureStatus::kUntrusted;
    }
    return s;
  };
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
  return [signers, s](const Digest& run, const std::string& path) -> std::string {
    LogQuery q;
    q.paths = {path};
    q.with_changes = true;
    for (const LogEntry& e : read_history(*s, q)) {
      bool added = false;
      for (const PathChange& c : e.changes) added |= c.path == path && c.status != 'D';
      if (!added) continue;
      if (e.op != "rerun") return "set by commit " + e.id + ", a \"" + e.op + "\", not a rerun";
      SignatureStatus st = signature_judge(*signers)(e);
      if (st.state == SignatureStatus::kTrusted) return "";
      return "set by commit " + e.id + ", whose signature is " + st.text();
    }
    return "no commit in the history sets this level";
  };
}

}  // namespace kistore::cli
