#include "store/git/commit_author.h"

#include "store/git/objwrite.h"

namespace kistore::git {
namespace {

// `sig` as an Identity, at `time` when given (libgit2 checks its name and
// email again then, as it does for every signature it makes). Frees `sig`.
Identity take(git_signature* raw, std::optional<std::int64_t> time) {
  Signature sig(raw);
  if (time) {
    git_signature* pinned = nullptr;
    int rc = git_signature_new(&pinned, sig->name, sig->email, static_cast<git_time_t>(*time), 0);
    sig.reset();
    check(rc, "author");
    sig.reset(pinned);
  }
  return {sig->name, sig->email, static_cast<std::int64_t>(sig->when.time), sig->when.offset, sig->when.sign};
}

git_signature as_signature(const Identity& who) {
  git_signature sig{};
  sig.name = const_cast<char*>(who.name.c_str());
  sig.email = const_cast<char*>(who.email.c_str());
  sig.when.time = static_cast<git_time_t>(who.time);
  sig.when.offset = who.offset_minutes;
  sig.when.sign = who.sign;
  return sig;
}

}  // namespace

Identity identity(const std::string& name, const std::string& email, std::optional<std::int64_t> time) {
  git_signature* sig = nullptr;
  check(git_signature_now(&sig, name.c_str(), email.c_str()), "author");
  return take(sig, time);
}

std::optional<Identity> configured_identity(git_repository* repo, std::optional<std::int64_t> time) {
  git_signature* sig = nullptr;
  if (git_signature_default(&sig, repo) < 0) return std::nullopt;
  return take(sig, time);
}

std::string commit_text(const git_oid& tree, const std::vector<git_oid>& parents, const Identity& author,
                        const Identity& committer, std::string_view message, std::string_view signature) {
  return commit_text(tree, parents, as_signature(author), as_signature(committer), message, signature);
}

}  // namespace kistore::git
