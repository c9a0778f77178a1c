#include "store/history/audit.h"

#include "store/git/git.h"
#include "store/history/trust.h"

namespace kistore {

std::string SignatureStatus::text() const {
  switch (state) {
    case kUnsigned: return "unsigned";
    case kTrusted: return "good signature by " + principal + " (" + fingerprint + "), trusted controller";
    case kUntrusted:
      return "good signature by untrusted key " + fingerprint + (detail.empty() ? "" : " (" + detail + ")");
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

SignatureStatus judge_signature(const LogEntry& e, const std::vector<AllowedSigner>& signers) {
  SignatureStatus s;
  if (e.signature.empty()) return s;
  SshSignatureCheck check = verify_signature(e.signature, e.signed_payload, "git");
  if (!check.signer.blob.empty()) s.fingerprint = check.signer.fingerprint();
  if (!check.valid) {
    s.state = SignatureStatus::kInvalid;
    s.detail = check.detail;
    return s;
  }
  const SigningTime when = signing_time(e.committer_time);
  SignerLookup found = lookup_signer(signers, check.signer, "git", &when);
  if (const AllowedSigner* who = found.signer) {
    s.state = SignatureStatus::kTrusted;
    for (const std::string& p : who->principals) s.principal += (s.principal.empty() ? "" : ",") + p;
  } else {
    s.state = SignatureStatus::kUntrusted;
    s.detail = found.refused;  // empty when no line lists the key
  }
  return s;
}

}  // namespace kistore
