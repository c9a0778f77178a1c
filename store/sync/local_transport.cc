#include "store/sync/local_transport.h"

#include <unistd.h>

#include <filesystem>

#include "store/edge/files.h"
#include "store/git/store_access.h"
#include "store/git/remote_receive_pack.h"
#include "store/sync/incoming.h"
#include "store/git/incoming_walk.h"
#include "store/core/store_shape.h"
#include "store/git/new_objects.h"
#include "store/git/objwrite.h"
#include "store/git/remote_local.h"
#include "store/sync/url.h"

namespace kistore {
namespace fs = std::filesystem;
namespace {

// The path of the connection's remote, a path or file:// URL on this machine.
std::string local_path(const Connection& conn) {
  const std::string& url = conn.url();
  return url_kind(url) == UrlKind::kFile ? url.substr(7) : url;
}

// The repository of the connection's remote.
git::LocalRemote open_on_this_machine(const Connection& conn) { return git::LocalRemote(local_path(conn), conn.where()); }

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

LocalPush push_local(git_repository* repo, Connection& conn, const std::string& branch, const git_oid& local,
                     const std::optional<git_oid>& theirs, const ProcessContext& process) {
  const std::string path = fs::absolute(local_path(conn)).lexically_normal().string();  // never an option to git
  {
    git::LocalRemote remote(path, conn.where());
    refuse_checked_out(remote, conn, branch);
    // A user who may not write there (outside a shared repository's group)
    // hears so, and why, before anything is sent.
    check_push_access(remote.gitdir(), conn.where());
  }
  const std::optional<std::string> git = find_program("git", process.search_path);
  if (!git)
    throw RemoteError("cannot push to " + conn.where() +
                      ": a push to a repository on this machine goes through its own git receive-pack, as git "
                      "push's does (so that its hooks and settings apply), and git was not found on PATH; install "
                      "git, or push through a git:// or ssh remote; nothing was sent");
  // The request whole in a file first: the program reads it as its input.
  WorkFolder work(process.temp_parent, "push");
  std::string request = work.path() + "/request-XXXXXX";
  const int fd = create_temp_file(request, 0600, "the push's request");
  std::vector<git_oid> have;
  if (theirs) have.push_back(*theirs);
  NewObjects objects(repo, local, have);
  LocalPush out;
  out.count = objects.size();
  try {
    git::write_push_request(
        branch, theirs ? &*theirs : nullptr, local, static_cast<std::uint32_t>(objects.size()),
        [&](git::PackStream& pack) {
          objects.read(
              [&](const NewObjects::Object& o, std::string_view data, int level) { pack.write(o.type, data, level); },
              [&](std::size_t sent, std::size_t total) { conn.progress("sending", sent, total, out.bytes); });
        },
        [&](std::string_view piece) {
          write_all(fd, piece, request);
          out.bytes += piece.size();
        });
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  ProcessSpec spec = process_spec(process, {*git, "receive-pack", path});
  spec.cwd = work.path();
  spec.stdin_file = request;
  spec.stdout_limit = 64u << 20;  // its refs (a repository with many tags lists them all), then its report
  spec.stderr_tail = 64u << 10;  // its hooks' words
  const ProcessResult ran = run_process(spec);
  // Its stderr read as a network push's side band 2 is.
  out.result.messages = git::server_lines(ran.err_tail);
  if (!ran.started) throw RemoteError("cannot push to " + conn.where() + ": " + ran.start_error + "; nothing was sent");
  if (ran.stdout_truncated)
    throw RemoteError("pushing to " + conn.where() + ": git receive-pack printed more than " +
                      std::to_string(spec.stdout_limit >> 20) + " MiB before its report (its list of refs); the push "
                      "may have landed: run kistore pull to see");
  std::vector<std::string> words = std::move(out.result.messages);
  try {
    out.result = git::read_push_answer(ran.out, branch);
  } catch (const Error& e) {
    conn.record_messages(words);
    throw RemoteError("pushing to " + conn.where() + ": " + e.what() + " (git receive-pack: " + ran.outcome() + ")");
  }
  out.result.messages = std::move(words);
  if (!theirs && out.result.unpack == "ok" && out.result.rejection.empty()) {
    git::LocalRemote remote(path, conn.where());
    remote.adopt_head(branch);  // the first push: a stock clone checks the store out
  }
  conn.progress("sending", out.count, out.count, out.bytes);
  return out;
}

}  // namespace kistore
