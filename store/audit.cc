#include "store/audit.h"

namespace kistore {

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
  if (const AllowedSigner* who = find_signer(signers, check.signer)) {
    s.state = SignatureStatus::kTrusted;
    for (const std::string& p : who->principals) s.principal += (s.principal.empty() ? "" : ",") + p;
  } else {
    s.state = SignatureStatus::kUntrusted;
  }
  return s;
}

std::string justify_level_commit(const LogEntry& e, const std::vector<AllowedSigner>& signers) {
  if (e.op != "rerun") return "set by commit " + e.id + ", a \"" + (e.op.empty() ? "plain" : e.op) + "\" commit, not a rerun";
  SignatureStatus st = judge_signature(e, signers);
  if (st.state == SignatureStatus::kTrusted) return "";
  return "set by rerun commit " + e.id + ", which is " + st.text();
}

std::string justify_level(const Store& store, const std::vector<AllowedSigner>& signers,
                          const std::string& level_path) {
  LogQuery q;
  q.paths = {level_path};
  q.with_changes = true;
  for (const LogEntry& e : read_history(store, q)) {
    bool wrote = false;
    for (const PathChange& c : e.changes) wrote |= c.path == level_path && c.status != 'D';
    if (wrote) return justify_level_commit(e, signers);
  }
  return "no commit in the history writes this level";
}

}  // namespace kistore
