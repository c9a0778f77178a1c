#include "store/sync/local_transport.h"

#include "store/sync/incoming.h"
#include "store/git/incoming_walk.h"
#include "store/core/store_shape.h"
#include "store/git/new_objects.h"
#include "store/git/objwrite.h"
#include "store/sync/url.h"

namespace kistore {
namespace {

// The repository of the connection's remote, a path or file:// URL on this machine.
git::Repository open_on_this_machine(const Connection& conn) {
  const std::string& url = conn.url();
  std::string path = url_kind(url) == UrlKind::kFile ? url.substr(7) : url;
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) < 0)
    throw RemoteError("cannot open remote " + conn.where() + ": " + git::last_error());
  return git::Repository(raw);
}

// Writes what `head` of `from` brings beyond `have` into `pack`; returns how many objects.
std::size_t copy_new_objects(git_repository* from, const git_oid& head, const std::vector<git_oid>& have,
                             git::PackWriter& pack, const std::function<void(std::size_t, std::size_t)>& progress) {
  NewObjects objects(from, head, have);
  objects.read([&](const NewObjects::Object& o, std::string_view data, int level) { pack.write(o.id, o.type, data, level); },
               progress);
  return objects.size();
}

// A push into a non-bare repository must not move the branch its work tree has checked out.
void refuse_checked_out(git_repository* remote, const Connection& conn, const std::string& branch) {
  if (git_repository_is_bare(remote)) return;
  git_reference* head = nullptr;
  bool checked_out = git_reference_lookup(&head, remote, "HEAD") == 0 &&
                     git_reference_type(head) == GIT_REFERENCE_SYMBOLIC && branch == git_reference_symbolic_target(head);
  git_reference_free(head);
  git_error_clear();
  if (checked_out)
    throw RemoteError("the remote " + conn.where() + " rejected the push: " + branch +
                      " is checked out in its working tree (push to a bare repository)");
}

// A bare repository made by `git init --bare` has a HEAD that names
// refs/heads/master, which a store never has, and a stock `git clone` of it
// then checks out nothing: when what HEAD names does not exist, it names the
// branch just pushed. A HEAD that names a branch that exists is the owner's
// choice and stays.
void point_head_at(git_repository* remote, const std::string& branch) {
  git_reference* head = nullptr;
  if (git_reference_lookup(&head, remote, "HEAD") != 0) return git_error_clear();
  git::Reference owned(head);
  if (git_reference_type(head) != GIT_REFERENCE_SYMBOLIC) return;
  git_reference* target = nullptr;
  int rc = git_reference_lookup(&target, remote, git_reference_symbolic_target(head));
  if (rc == 0) return git_reference_free(target);
  git_error_clear();
  if (rc == GIT_ENOTFOUND) git_repository_set_head(remote, branch.c_str());
  git_error_clear();
}

}  // namespace

std::size_t fetch_local(git_repository* store, git::Quarantine& quarantine, const Connection& conn,
                        const git_oid& head, const std::string& branch, std::vector<Problem>& problems) {
  git::Repository remote = open_on_this_machine(conn);
  git::PackWriter pack(quarantine.pack_dir());
  git::CopyingSource source(remote.get(), store, pack);
  git::WalkResult walked = git::walk_incoming(source, head, IncomingChecker::kMaxProblems, [&](std::size_t got) {
    conn.progress("receiving", got, 0, pack.bytes());
  });
  if (!walked.problems.empty()) {
    problems = std::move(walked.problems);
    // A repository that is no store at all: that first, then two examples.
    lead_with(not_a_store(remote.get(), head, branch), problems);
    return 0;  // the pack goes with its writer
  }
  std::size_t n = pack.count();
  conn.progress("receiving", n, n, pack.bytes());
  pack.finish();
  return n;
}

int push_local(git_repository* repo, Connection& conn, const std::string& branch, const git_oid& local,
               const std::optional<git_oid>& theirs) {
  git::Repository remote = open_on_this_machine(conn);
  refuse_checked_out(remote.get(), conn, branch);
  git::PackWriter pack(std::string(git_repository_path(remote.get())) + "objects/pack");
  std::vector<git_oid> have;
  if (theirs) have.push_back(*theirs);
  copy_new_objects(repo, local, have, pack, [&](std::size_t sent, std::size_t total) {
    conn.progress("sending", sent, total, pack.bytes());
  });
  conn.record_sent(pack.count(), pack.bytes());
  pack.finish();
  git::Odb odb = git::open_odb(remote.get());
  git_odb_refresh(odb.get());
  int rc = git::move_ref(remote.get(), branch, local, theirs ? &*theirs : nullptr, "push from kistore");
  if (rc == 0) point_head_at(remote.get(), branch);
  if (rc == GIT_EMODIFIED || rc == GIT_EEXISTS || rc == GIT_ELOCKED) {
    git_error_clear();
    return GIT_EMODIFIED;
  }
  if (rc < 0) throw RemoteError("the remote " + conn.where() + " rejected the push: " + git::last_error());
  return 0;
}

}  // namespace kistore
