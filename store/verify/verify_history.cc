// verify's check of the history: append-only objects and dictionaries, and a
// format that only moves forward (verify_state.h).
#include <git2.h>

#include "store/git/git.h"
#include "store/git/raw_tree.h"
#include "store/verify/verify_state.h"

namespace kistore::verifying {
namespace {

class HistoryCheck {
 public:
  explicit HistoryCheck(VerifyState& state) : s_(state) {}

  // No commit reachable from the head may lose or change an object its
  // parent had: objects are immutable, so history is append-only.
  void run() {
    if (s_.snap.empty()) return;
    git_repository* repo = s_.store.repo();
    git_revwalk* raw = nullptr;
    git::check(git_revwalk_new(&raw, repo), "walking history");
    git::Revwalk walk(raw);
    git_oid head;
    git_oid_fromstr(&head, s_.snap.commit_id().c_str());
    git::check(git_revwalk_push(walk.get(), &head), "walking history");
    git::Odb odb = git::open_odb(repo);
    git::TreeReader trees(odb.get(), {});  // libgit2 checks each tree's id (verify_store turns its check on)
    git_oid id;
    while (git_revwalk_next(&id, walk.get()) == 0) {
      git_commit* c = nullptr;
      if (git_commit_lookup(&c, repo, &id) < 0) {
        s_.problem(ProblemKind::kHistoryMissing, git::oid_str(id), "a commit in the history cannot be read: " + git::last_error());
        continue;
      }
      git::Commit commit(c);
      for (unsigned i = 0; i < git_commit_parentcount(c); ++i) {
        git_commit* p = nullptr;
        if (git_commit_parent(&p, c, i) < 0) {
          s_.problem(ProblemKind::kHistoryMissing, git::oid_str(*git_commit_parent_id(c, i)),
                  "a parent of commit " + git::oid_str(id) + " cannot be read: " + git::last_error());
          continue;
        }
        git::Commit parent(p);
        check_format_change(c, p, trees);
        try {
          // Objects and dictionaries are immutable. A dictionary "changed"
          // against a parent is also how one ID naming two dictionaries shows
          // (a merge whose other parent had another dictionary of that ID):
          // frames made with the other one no longer decode.
          for (const char* dir : {"objects", "dictionaries"})
            trees.diff(git_commit_tree_id(p), git_commit_tree_id(c), dir, [&](const git::TreeDelta& d) {
              if (git::mode_is_link(d.old_mode) || (d.status == git::TreeDelta::kModified && !d.ids_differ())) return;
              if (dir[0] == 'o' && d.status == git::TreeDelta::kModified && frame_of_another_parent(c, i, d, trees)) return;
              s_.problem(ProblemKind::kHistoryRewritten, d.path,
                      "commit " + git::oid_str(id) + " " + (d.status == git::TreeDelta::kRemoved ? "removed" : "changed") +
                          (dir[0] == 'o' ? " an object" : " a dictionary") + " its parent " +
                          git::oid_str(*git_commit_id(p)) + " had" +
                          (dir[0] == 'o' ? "" : ": a Dictionary_ID names one dictionary for ever"));
            }, git::DiffSides::kRemovedOrChanged);
        } catch (const Error& e) {
          s_.problem(ProblemKind::kHistoryMissing, git::oid_str(id), e.what());
        }
      }
    }
  }
  // Where a merge's parents hold one document under different frames (other
  // dictionaries), the merge keeps one of them: its blob at d.path is the one
  // parent `skip` lacks but another parent has. Each decodes to the same bytes.
  static bool frame_of_another_parent(git_commit* merge, unsigned skip, const git::TreeDelta& d,
                                      const git::TreeReader& trees) {
    for (unsigned k = 0; k < git_commit_parentcount(merge); ++k) {
      if (k == skip) continue;
      git_commit* q = nullptr;
      if (git_commit_parent(&q, merge, k) < 0) continue;  // reported as a missing parent
      git::Commit other(q);
      std::optional<git_oid> id = trees.blob_at(git_commit_tree_id(q), d.path);
      if (id && git_oid_equal(&*id, &d.new_id)) return true;
    }
    return false;
  }
  // A store's format only moves forward, by an upgrade commit (Kistore-Op:
  // upgrade, format 1 to format 2, one parent): a commit that drops FORMAT
  // or adds it otherwise is a problem at FORMAT.
  void check_format_change(git_commit* commit, git_commit* parent, const git::TreeReader& trees) {
    auto format_at = [&](git_commit* c) { return trees.blob_at(git_commit_tree_id(c), kFormatPath).has_value(); };
    const bool before = format_at(parent), after = format_at(commit);
    if (before == after) return;
    const std::string id = git::oid_str(*git_commit_id(commit));
    const char* message = git_commit_message(commit);
    if (before)
      s_.problem(ProblemKind::kLayout, std::string(kFormatPath),
              "commit " + id + " removes FORMAT, which its parent " + git::oid_str(*git_commit_id(parent)) +
                  " had: a store's format never goes back to format 1");
    else if (commit_op(message ? message : "") != "upgrade" || git_commit_parentcount(commit) != 1)
      s_.problem(ProblemKind::kLayout, std::string(kFormatPath),
              "commit " + id + " turns format 1 into format 2 without being an upgrade commit (Kistore-Op: upgrade, one parent)");
  }

 private:
  VerifyState& s_;
};

}  // namespace

void check_history(VerifyState& state) { HistoryCheck(state).run(); }

}  // namespace kistore::verifying
