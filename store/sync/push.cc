// push (sync.h): send the branch, pulling first when the remote moved.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <random>
#include <thread>

#include "store/edge/files.h"

#include "store/git/commit_graph.h"
#include "store/git/git.h"
#include "store/core/layout_trees.h"
#include "store/sync/local_transport.h"
#include "store/git/new_objects.h"
#include "store/git/sync_repo.h"
#include "store/sync/pull.h"
#include "store/sync/remote.h"
#include "store/sync/url.h"

namespace kistore {
namespace {

// How many rounds of pull-then-push before push gives up on a busy remote.
// Each lost race costs a round, and of N pushers racing at once at least one
// wins each round; with the waits below, 8 pushers at once all got in within
// 8 rounds on loopback (docs/benchmarks.md).
constexpr int kPushRounds = 10;

// Whether a server's rejection of the ref update says that another push got
// there first (git's receive-pack: the ref's lock was held, or it no longer
// had the value we sent as old): worth a look and another round, not an
// answer. Hooks, permissions and anything else are the remote's answer.
bool lost_race(const std::string& rejection) {
  static constexpr const char* kRaceWords[] = {"failed to update ref", "failed to lock", "cannot lock ref",
                                               "fetch first",          "non-fast-forward", "stale info",
                                               "incorrect old value"};
  for (const char* w : kRaceWords)
    if (rejection.find(w) != std::string::npos) return true;
  return false;
}

// A wait before round `round` + 1 after a lost race: random, up to 200 ms
// doubled each round (at most 3.2 s), so that pushers that collided do not
// collide again in step (10 rounds wait 19 s at most in all).
void back_off(int round) {
  static std::minstd_rand jitter(static_cast<std::uint32_t>(::getpid()) ^
                                 static_cast<std::uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  const int cap_ms = 200 << std::min(round, 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(0, cap_ms)(jitter)));
}

// A second handle on the store's repository for packing what push sends
// through libgit2 (tune_packing gives it its settings once the remote is
// reached, so that a push that reaches nothing writes nothing).
git::OwnedRepository packing_handle(Store& store) { return git::reopen(store.repo(), store.dir() + ": opening for push"); }

// kistore's objects are zstd frames: deflate gains nothing on them and a
// delta search between them costs a third of a big push for ~3 % of pack
// size, so the packing handle turns delta search off. libgit2 1.5 takes the
// size above which it skips delta search from the key pack.deltaCacheSize (a
// libgit2 bug: core.bigFileThreshold is never read); both are set. The
// settings live in a file of the store's local folder, given to this handle
// only: git's own commands on the store keep their defaults.
void tune_packing(Store& store, git_repository* packer) {
  namespace fs = std::filesystem;
  std::string settings = store.local_dir() + "/push-pack.config";
  if (!fs::exists(settings)) {
    const bool made = make_folder(store.local_dir());
    try {
      replace_file(settings, "[core]\n\tbigFileThreshold = 1\n[pack]\n\tdeltaCacheSize = 1\n", "config");
    } catch (...) {
      if (made) remove_empty_folder_quietly(store.local_dir());
      throw;
    }
  }
  git::use_settings_file(packer, settings, store.dir());
}

// "; the remote said: <line> | <line>", or "" when the server said nothing
// on the last push (raw: the command line escapes every error it prints).
std::string remote_said(const Connection& conn) {
  std::string out;
  for (const std::string& l : conn.messages()) {
    out += out.empty() ? "; the remote said: " : " | ";
    out += l;
  }
  return out;
}

// Pushes over the network with kistore's own pack (receive_pack.h): the
// objects the new commits bring, as they are stored, and an update of
// `branch` from `theirs` (none: it must not exist), which the server applies
// only if the branch did not move meanwhile. A ref the server refuses is
// recorded in the connection, as libgit2's callback would.
// The receiving end's report on a push of `count` objects in `bytes`,
// over the network or from a repository on this machine.
void take_report(Connection& conn, const std::string& branch, const git::ReceivePack::Result& result,
                 std::size_t count, std::uint64_t bytes) {
  conn.record_messages(result.messages);
  if (result.unpack != "ok")
    throw RemoteError("the remote " + conn.where() + " could not store the pushed objects: " +
                      conn.scrub(result.unpack) + remote_said(conn));
  conn.record_sent(count, bytes);
  if (!result.rejection.empty()) conn.record_rejection(branch, result.rejection);
}

void push_smart(git_repository* repo, Connection& conn, const std::string& branch, const git_oid& local,
                const std::optional<git_oid>& theirs) {
  std::vector<git_oid> have;
  if (theirs) have.push_back(*theirs);
  NewObjects objects(repo, local, have);
  std::uint64_t bytes = 0;
  auto progress = [&](std::size_t sent, std::size_t total) { conn.progress("sending", sent, total, bytes); };
  std::string where = "the remote " + conn.where();
  git::ReceivePack::Result result;
  try {
    result = conn.receive_pack().send(
        branch, theirs ? &*theirs : nullptr, local, static_cast<std::uint32_t>(objects.size()),
        [&](git::PackStream& pack) {
          objects.read(
              [&](const NewObjects::Object& o, std::string_view data, int level) { pack.write(o.type, data, level); },
              progress);
        },
        [&](std::uint64_t sent) { bytes = sent; });
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kRemote) throw;
    throw RemoteError("pushing to " + where + ": " + conn.scrub(e.what()));
  }
  progress(objects.size(), objects.size());
  take_report(conn, branch, result, objects.size(), bytes);
}

// One push, round by round: each round looks at the remote's branch, pushes
// or pulls, and says whether the push is done.
class Push {
 public:
  Push(Store& store, const std::string& remote, const SyncOptions& options)
      : store_(store),
        repo_(store.repo()),
        remote_(resolve_remote(store.repo(), remote)),
        label_(remote_.label),
        options_(options),
        branch_(store.branch()) {
    report_.remote = label_;  // a URL given for a name: without its password
  }

  PushReport run() {
    for (round_ = 0; round_ < kPushRounds; ++round_)
      if (attempt(round_ + 1 < kPushRounds)) return std::move(report_);
    throw RemoteError("gave up pushing to " + label_ + " (" + report_.url + ") after " + std::to_string(kPushRounds) +
                      " rounds: its " + branch_ + " kept moving while kistore merged it");
  }

 private:
  // One round; true when the push is done (pushed, up to date, or refused).
  bool attempt(bool may_retry) {
    Snapshot snap = store_.snapshot();
    if (snap.empty()) throw InvalidInput(store_.dir() + ": the store is empty; nothing to push");
    if (snap.format() != kCurrentFormat)
      throw IOError(store_.dir() + ": this store is " + format_name(snap.format()) + "; kistore syncs " +
                    format_name(kCurrentFormat) + " only: run `kistore upgrade` first; nothing was sent");
    git_oid local = git::to_oid(snap.commit());
    report_.commit = snap.commit_id();
    git::OwnedRepository packer = packing_handle(store_);
    Connection conn(store_, remote_, git::Direction::kPush, options_, packer.get());
    report_.url = redact_url(conn.url());
    conn.connect();
    auto theirs = conn.head(branch_);
    if (theirs && git::same_id(*theirs, local)) {
      report_.result = PushResult::kUpToDate;
      mark_synced(local);
      return true;
    }
    refuse_other_format(snap, theirs);
    bool is_behind = behind(local, theirs);
    if (!is_behind) tune_packing(store_, packer.get());
    int rc = is_behind ? GIT_ENONFASTFORWARD : send(packer.get(), conn, local, theirs);
    if (rc == GIT_ENONFASTFORWARD || rc == GIT_EMODIFIED) {
      conn.disconnect();
      return pulled(pull(store_, remote_, options_));
    }
    if (!conn.rejection().empty()) return after_rejection(conn, local, theirs, may_retry);
    report_.remote_messages = conn.messages();
    report_.pushed_objects = conn.sent_objects();
    report_.pushed_bytes = conn.sent_bytes();
    report_.result = PushResult::kPushed;
    mark_synced(local);
    return true;
  }

  // A remote whose head this store has (it is behind) but of another format,
  // as after an upgrade here: stores of different formats do not sync, in
  // either direction. Error(kRefused), nothing sent. A head we lack is judged
  // by the pull that follows.
  void refuse_other_format(const Snapshot& snap, const std::optional<git_oid>& theirs) const {
    if (!theirs) return;
    if (!git::has_object(repo_, *theirs)) return;
    LayoutTrees trees(repo_);
    git_oid tree = git::commit_tree(repo_, *theirs);
    std::optional<Format> format = trees.format_of(&tree);
    if (format == snap.format()) return;
    throw Refused("push to " + label_ + ": the remote's " + branch_ + " is " +
                  (format ? format_name(*format) : std::string("of a format this kistore cannot read")) +
                  " and this store is " + format_name(snap.format()) +
                  "; stores of different formats do not sync: run `kistore upgrade` in the remote store, then push "
                  "again; nothing was sent");
  }

  // Whether the remote's branch has commits ours lacks (or ones we do not have).
  bool behind(const git_oid& local, const std::optional<git_oid>& theirs) const {
    if (!theirs) return false;
    return !git::has_object(repo_, *theirs) || !git::descends_from(repo_, local, *theirs);
  }

  // Sends the branch the way the remote takes it best: a repository on this
  // machine directly, a network remote through kistore's receive-pack
  // exchange. A server without report-status would not say whether it stored
  // the pack and moved the branch (and libgit2 1.5 fails on one with an
  // internal assertion): refused, Error(kRemote).
  int send(git_repository* packer, Connection& conn, const git_oid& local, const std::optional<git_oid>& theirs) {
    if (on_this_machine(conn.url())) {
      LocalPush pushed = push_local(packer, conn, branch_, local, theirs, options_.process);
      take_report(conn, branch_, pushed.result, pushed.count, pushed.bytes);
      return 0;
    }
    if (conn.receive_pack().usable()) {
      push_smart(packer, conn, branch_, local, theirs);
      return 0;
    }
    throw RemoteError("cannot push to remote " + conn.where() +
                      ": the server does not offer report-status, so it would not say whether it stored the pack "
                      "and moved the branch; kistore pushes only to servers that do (git's receive-pack does)");
  }

  // Records a pull made on the way; true (the push is refused) when it was.
  bool pulled(PullReport report) {
    bool refused = report.refused();
    report_.pulls.push_back(std::move(report));
    if (refused) report_.result = PushResult::kRefused;
    return refused;
  }

  // Someone else may have pushed between our look and our push: then pull
  // and try again; any other rejection is the remote's answer.
  // A lost race (lost_race) is retried even when the branch has not moved
  // yet (the winner may still hold its lock), after a wait.
  bool after_rejection(Connection& conn, const git_oid& local, const std::optional<git_oid>& theirs, bool may_retry) {
    std::string rejection = conn.scrub(conn.rejection());
    const std::string said = remote_said(conn);
    conn.disconnect();
    if (may_retry) {
      const bool race = lost_race(rejection);
      if (race) back_off(round_);
      git::Quarantine quarantine(store_.repo());
      Connection again(store_, remote_, git::Direction::kFetch, options_, quarantine.repo());
      again.connect();
      auto now = again.head(branch_);
      bool moved = now.has_value() != theirs.has_value() || (now && !git::same_id(*now, *theirs));
      if (moved && !(now && git::same_id(*now, local))) return pulled(pull_from(store_, again, branch_, quarantine));
      if (race) return false;  // the next round pushes again
    }
    throw RemoteError("the remote " + label_ + " (" + report_.url + ") rejected the push: " + rejection + said);
  }

  void mark_synced(const git_oid& local) {
    git::set_ref(repo_, synced_ref(label_), local, "kistore: push " + label_);
    keep_tracking_ref(repo_, label_, branch_, local);
  }

  Store& store_;
  git_repository* repo_;
  const ResolvedRemote remote_;  // resolved once, for every round
  int round_ = 0;                // the round being tried, from 0
  const std::string& label_;     // remote_ as references and messages name it (remote.h)
  const SyncOptions& options_;
  const std::string& branch_;
  PushReport report_;
};

}  // namespace

PushReport push(Store& store, const std::string& remote, const SyncOptions& options) {
  return Push(store, remote, options).run();
}

std::string_view push_result_name(PushResult result) {
  switch (result) {
    case PushResult::kPushed: return "pushed";
    case PushResult::kUpToDate: return "up-to-date";
    case PushResult::kRefused: return "refused";
  }
  return "refused";
}

}  // namespace kistore
