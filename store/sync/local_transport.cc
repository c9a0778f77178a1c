#include "store/sync/local_transport.h"

#include "store/sync/incoming.h"
#include "store/git/incoming_walk.h"
#include "store/core/store_shape.h"
#include "store/git/new_objects.h"
#include "store/git/objwrite.h"
#include "store/git/remote_local.h"
#include "store/sync/url.h"

namespace kistore {
namespace {

// The repository of the connection's remote, a path or file:// URL on this machine.
git::LocalRemote open_on_this_machine(const Connection& conn) {
  const std::string& url = conn.url();
  return git::LocalRemote(url_kind(url) == UrlKind::kFile ? url.substr(7) : url, conn.where());
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
void refuse_checked_out(const git::LocalRemote& remote, const Connection& conn, const std::string& branch) {
  if (remote.checks_out(branch))
    throw RemoteError("the remote " + conn.where() + " rejected the push: " + branch +
                      " is checked out in its working tree (push to a bare repository)");
}

}  // namespace

std::size_t fetch_local(git_repository* store, git::Quarantine& quarantine, const Connection& conn,
                        const git_oid& head, const std::string& branch, std::vector<Problem>& problems) {
  git::LocalRemote remote = open_on_this_machine(conn);
  git::PackWriter pack(quarantine.pack_dir());
  git::CopyingSource source(remote.repo(), store, pack);
  git::WalkResult walked = git::walk_incoming(source, head, IncomingChecker::kMaxProblems, [&](std::size_t got) {
    conn.progress("receiving", got, 0, pack.bytes());
  });
  if (!walked.problems.empty()) {
    problems = std::move(walked.problems);
    // A repository that is no store at all: that first, then two examples.
    lead_with(not_a_store(remote.repo(), head, branch), problems);
    return 0;  // the pack goes with its writer
  }
  std::size_t n = pack.count();
  conn.progress("receiving", n, n, pack.bytes());
  pack.finish();
  return n;
}

int push_local(git_repository* repo, Connection& conn, const std::string& branch, const git_oid& local,
               const std::optional<git_oid>& theirs) {
  git::LocalRemote remote = open_on_this_machine(conn);
  refuse_checked_out(remote, conn, branch);
  git::PackWriter pack(remote.pack_dir());
  std::vector<git_oid> have;
  if (theirs) have.push_back(*theirs);
  copy_new_objects(repo, local, have, pack, [&](std::size_t sent, std::size_t total) {
    conn.progress("sending", sent, total, pack.bytes());
  });
  conn.record_sent(pack.count(), pack.bytes());
  pack.finish();
  int rc = remote.publish(branch, local, theirs ? &*theirs : nullptr, "push from kistore");
  if (rc == GIT_EMODIFIED) return rc;
  if (rc < 0) throw RemoteError("the remote " + conn.where() + " rejected the push: " + git::last_error());
  return 0;
}

}  // namespace kistore
