// verify's check of the history: append-only objects and dictionaries, and a
// format that only moves forward (verify_state.h).
#include "store/git/commit_graph.h"
#include "store/git/raw_tree.h"
#include "store/verify/verify_state.h"

namespace kistore::verifying {
namespace {

class HistoryCheck {
 public:
  HistoryCheck(git::CommitGraph& commits, std::vector<Problem>& problems) : commits_(commits), problems_(problems) {}

  // No commit reachable from the head may lose or change an object its
  // parent had: objects are immutable, so history is append-only.
  void run(const CommitId& head) {
    // The door's trees trust their ids to libgit2's check (verify_store turns it on).
    const std::unique_ptr<git::TreeReader> trees = commits_.trees({});
    commits_.walk({{head}}, [&](const CommitId& id) {
      std::string why;
      std::optional<git::CommitInfo> c = commits_.find(id, &why);
      if (!c) {
        problem(ProblemKind::kHistoryMissing, id.hex(), "a commit in the history cannot be read: " + why);
        return true;
      }
      for (std::size_t i = 0; i < c->parents.size(); ++i) {
        std::optional<git::CommitInfo> p = commits_.find(c->parents[i], &why);
        if (!p) {
          problem(ProblemKind::kHistoryMissing, c->parents[i].hex(),
                  "a parent of commit " + id.hex() + " cannot be read: " + why);
          continue;
        }
        check_format_change(*c, *p, *trees);
        try {
          // Objects and dictionaries are immutable. A dictionary "changed"
          // against a parent is also how one ID naming two dictionaries shows
          // (a merge whose other parent had another dictionary of that ID):
          // frames made with the other one no longer decode.
          for (const char* dir : {"objects", "dictionaries"})
            trees->diff(&p->tree, &c->tree, dir, [&](const git::TreeDelta& d) {
              if (git::mode_is_link(d.old_mode) || (d.status == git::TreeDelta::kModified && !d.ids_differ())) return;
              if (dir[0] == 'o' && d.status == git::TreeDelta::kModified && frame_of_another_parent(*c, i, d, *trees)) return;
              problem(ProblemKind::kHistoryRewritten, d.path,
                      "commit " + id.hex() + " " + (d.status == git::TreeDelta::kRemoved ? "removed" : "changed") +
                          (dir[0] == 'o' ? " an object" : " a dictionary") + " its parent " + p->id.hex() + " had" +
                          (dir[0] == 'o' ? "" : ": a Dictionary_ID names one dictionary for ever"));
            }, git::DiffSides::kRemovedOrChanged);
        } catch (const Error& e) {
          problem(ProblemKind::kHistoryMissing, id.hex(), e.what());
        }
      }
      return true;
    });
  }

 private:
  void problem(ProblemKind kind, std::string path, std::string detail) {
    problems_.push_back({kind, std::move(path), std::move(detail)});
  }
  // Where a merge's parents hold one document under different frames (other
  // dictionaries), the merge keeps one of them: its blob at d.path is the one
  // parent `skip` lacks but another parent has. Each decodes to the same bytes.
  bool frame_of_another_parent(const git::CommitInfo& merge, std::size_t skip, const git::TreeDelta& d,
                               const git::TreeReader& trees) {
    for (std::size_t k = 0; k < merge.parents.size(); ++k) {
      if (k == skip) continue;
      std::optional<git::CommitInfo> other = commits_.find(merge.parents[k]);
      if (!other) continue;  // reported as a missing parent
      std::optional<git_oid> id = trees.blob_at(&other->tree, d.path);
      if (id && git::same_id(*id, d.new_id)) return true;
    }
    return false;
  }
  // A store's format only moves forward, by an upgrade commit (Kistore-Op:
  // upgrade, format 1 to format 2, one parent): a commit that drops FORMAT
  // or adds it otherwise is a problem at FORMAT.
  void check_format_change(const git::CommitInfo& commit, const git::CommitInfo& parent, const git::TreeReader& trees) {
    auto format_at = [&](const git::CommitInfo& c) { return trees.blob_at(&c.tree, kFormatPath).has_value(); };
    const bool before = format_at(parent), after = format_at(commit);
    if (before == after) return;
    const std::string id = commit.id.hex();
    if (before)
      problem(ProblemKind::kLayout, std::string(kFormatPath),
              "commit " + id + " removes FORMAT, which its parent " + parent.id.hex() +
                  " had: a store's format never goes back to format 1");
    else if (commit_op(commit.message) != "upgrade" || commit.parents.size() != 1)
      problem(ProblemKind::kLayout, std::string(kFormatPath),
              "commit " + id + " turns format 1 into format 2 without being an upgrade commit (Kistore-Op: upgrade, one parent)");
  }

  git::CommitGraph& commits_;
  std::vector<Problem>& problems_;
};

}  // namespace

std::vector<Problem> history_problems(git::CommitGraph& commits, const CommitId& head) {
  std::vector<Problem> out;
  HistoryCheck(commits, out).run(head);
  return out;
}

void check_history(VerifyState& state) {
  if (state.snap.empty()) return;
  for (Problem& p : history_problems(*state.commits, state.snap.commit()))
    state.problem(p.kind, std::move(p.path), std::move(p.detail));
}

}  // namespace kistore::verifying
