#include "store/audit.h"

#include <optional>

#include "store/git.h"

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

namespace {

// Whether the merge commit `e` has the entry at `path` exactly as one of its
// non-first parents has it: then it only joined that side's change (pull's
// merges), and the commit that wrote it on that side is the one to judge.
bool merged_from_other_parent(const Store& store, const LogEntry& e, const std::string& path) {
  auto entry_at = [&](const std::string& commit_id) -> std::optional<git_oid> {
    git_oid id;
    git_commit* c = nullptr;
    if (git_oid_fromstr(&id, commit_id.c_str()) < 0 || git_commit_lookup(&c, store.repo(), &id) < 0) return std::nullopt;
    git::Commit commit(c);
    git_tree* t = nullptr;
    if (git_commit_tree(&t, c) < 0) return std::nullopt;
    git::Tree tree(t);
    git_tree_entry* raw = nullptr;
    if (git_tree_entry_bypath(&raw, t, path.c_str()) < 0) return std::nullopt;
    git::TreeEntry entry(raw);
    return *git_tree_entry_id(raw);
  };
  auto mine = entry_at(e.id);
  if (!mine) return false;
  for (std::size_t i = 1; i < e.parents.size(); ++i)
    if (auto theirs = entry_at(e.parents[i]); theirs && git_oid_equal(&*theirs, &*mine)) return true;
  git_error_clear();
  return false;
}

}  // namespace

std::string justify_level(const Store& store, const std::vector<AllowedSigner>& signers,
                          const std::string& level_path) {
  LogQuery q;
  q.paths = {level_path};
  q.with_changes = true;
  for (const LogEntry& e : read_history(store, q)) {
    bool wrote = false;
    for (const PathChange& c : e.changes) wrote |= c.path == level_path && c.status != 'D';
    if (wrote && e.parents.size() > 1 && merged_from_other_parent(store, e, level_path)) continue;
    if (wrote) return justify_level_commit(e, signers);
  }
  return "no commit in the history writes this level";
}

}  // namespace kistore
