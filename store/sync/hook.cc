#include "store/sync/hook.h"

#include <sstream>

#include "objects/error.h"
#include "store/core/layout_trees.h"
#include "store/core/store_shape.h"
#include "store/git/git.h"
#include "store/git/incoming_walk.h"
#include "store/git/store_repo.h"
#include "store/git/sync_repo.h"
#include "store/history/level_audit.h"
#include "store/sync/incoming.h"

namespace kistore {
namespace {

constexpr char kNoId[] = "0000000000000000000000000000000000000000";

// The pushed objects as the walk reads them, trusting only what the store's
// branch reaches: a server's object folder also holds what earlier pushes
// carried beside their commits and no ref reaches, so being there is no
// proof of having been checked. Commits the old head reaches are the
// store's; every tree and blob is read and checked wherever it differs from
// the first parent's at its path.
class PushedSource final : public git::ObjectSource {
 public:
  PushedSource(git::ObjectSource& inner, git_repository* repo, const std::optional<git_oid>& head)
      : inner_(inner), repo_(repo), head_(head) {}
  std::optional<git::ObjectRefusal> read(const git_oid& id, git_object_t type, git::ObjectBytes* out) override {
    return inner_.read(id, type, out);
  }
  bool in_store(const git_oid& id) override { return head_ && git::descends_from(repo_, *head_, id); }
  std::optional<git::ObjectRefusal> stored_as(const git_oid& id, git_object_t type) override {
    return inner_.stored_as(id, type);
  }

 private:
  git::ObjectSource& inner_;
  git_repository* repo_;
  std::optional<git_oid> head_;
};

bool is_hex_id(const std::string& s) {
  return s.size() == 40 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

std::vector<RefUpdate> parse_ref_updates(const std::string& text) {
  std::vector<RefUpdate> out;
  std::istringstream lines(text);
  std::size_t n = 0;
  for (std::string line; std::getline(lines, line);) {
    ++n;
    if (line.empty()) continue;
    RefUpdate u;
    std::istringstream words(line);
    std::string extra;
    if (!(words >> u.old_id >> u.new_id >> u.ref) || (words >> extra) || !is_hex_id(u.old_id) || !is_hex_id(u.new_id))
      throw InvalidInput("standard input, line " + std::to_string(n) + ": expected \"<old id> <new id> <ref>\" as git's "
                         "receive-pack writes it, found \"" + line.substr(0, 200) + "\"");
    out.push_back(std::move(u));
  }
  return out;
}

PushVerdict check_push(const std::string& gitdir, const std::string& quarantine, const std::vector<RefUpdate>& updates,
                       const std::vector<AllowedSigner>& trust) {
  PushVerdict verdict;
  git::OwnedRepository store = git::open_repository(gitdir, gitdir + ": opening the repository");
  git::OwnedRepository pushed = git::open_repository(gitdir, gitdir + ": opening the repository");
  if (!quarantine.empty()) git::add_object_folder(pushed.get(), quarantine, quarantine + ": reading the pushed objects");
  const std::string branch = git::head_target(store.get(), gitdir + ": reading HEAD").value_or("refs/heads/main");
  auto refuse = [&](ProblemKind kind, const std::string& path, const std::string& detail) {
    verdict.problems.push_back({kind, path, detail});
  };
  for (const RefUpdate& u : updates) {
    if (u.ref != branch) {
      refuse(ProblemKind::kLayout, u.ref,
             "a kistore store is the one branch its HEAD names (" + branch + "); this push also updates " + u.ref);
      continue;
    }
    if (u.new_id == kNoId) {
      refuse(ProblemKind::kHistoryRewritten, u.ref, "deletes the store's branch");
      continue;
    }
    const git_oid next = git::parse_oid(u.new_id);
    std::optional<git_oid> old;
    if (u.old_id != kNoId) old = git::parse_oid(u.old_id);
    if (old && !git::descends_from(pushed.get(), next, *old)) {
      refuse(ProblemKind::kHistoryRewritten, u.ref,
             "the pushed " + u.ref + " at " + u.new_id.substr(0, 12) + " does not contain " + u.old_id.substr(0, 12) +
                 ", the store's head: its history would be rewritten (a forced push)");
      continue;
    }
    // A tree with nothing of kistore's (a README, an empty tree) is no store.
    if (std::optional<Problem> none = not_a_store(pushed.get(), next, u.ref)) {
      verdict.problems.push_back(*none);
      continue;
    }
    // Every object the new commits bring, read and rehashed where it waits.
    git::QuarantineSource objects(pushed.get(), store.get());
    PushedSource source(objects, pushed.get(), old);
    git::WalkResult walk = git::walk_incoming(source, next, IncomingChecker::kMaxProblems);
    verdict.objects += walk.objects;
    if (!walk.problems.empty()) {
      for (Problem& p : walk.problems) verdict.problems.push_back(std::move(p));
      continue;
    }
    // Every new commit, as a pull checks what it takes.
    LayoutTrees trees(pushed.get(), /*check_ids=*/false);
    LevelAudit levels(pushed.get(), trust);
    if (old) levels.walk(git::to_commit_id(*old));
    levels.walk(git::to_commit_id(next));
    IncomingChecker checker(trees, levels);
    const std::vector<git_oid> fresh = git::commits_to_take(pushed.get(), next, old ? &*old : nullptr);
    for (std::size_t i = 0; i < fresh.size() && !checker.full(); ++i) checker.check_commit(fresh[i]);
    verdict.commits += fresh.size();
    for (Problem& p : checker.take_problems()) verdict.problems.push_back(std::move(p));
  }
  return verdict;
}

}  // namespace kistore
