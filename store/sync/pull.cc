// pull and clone (sync.h): receive into a quarantine (quarantine.h), check
// there, move in, fast-forward or merge.
#include <fcntl.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>

#include "store/edge/files.h"
#include "store/edge/interrupt.h"
#include "store/git/git.h"
#include "store/git/work_tree.h"
#include "store/sync/incoming.h"
#include "store/git/incoming_walk.h"
#include "store/git/sync_repo.h"
#include "store/history/last_pull.h"
#include "store/history/level_audit.h"
#include "store/sync/local_transport.h"
#include "store/sync/merge.h"
#include "store/sync/pull.h"
#include "store/sync/remote.h"
#include "store/core/store_shape.h"
#include "store/sync/url.h"

namespace kistore {
namespace {

std::string short_id(const std::string& id) { return id.substr(0, 12); }

// How often a fast-forward that lost a race with another writer looks again.
constexpr int kFastForwardAttempts = 16;

// The look at a fast-forward's checkout (git::look_ahead), made on a thread
// of its own while the pull checks what it received; waited for before the
// quarantine moves in, and on the way out.
class CheckoutLookAhead {
 public:
  CheckoutLookAhead() = default;
  CheckoutLookAhead(const CheckoutLookAhead&) = delete;
  CheckoutLookAhead& operator=(const CheckoutLookAhead&) = delete;
  ~CheckoutLookAhead() { wait(); }

  void start(git::WorkTreeSite site, std::string objects_gitdir, const git_oid& from, const git_oid& to) {
    try {
      thread_ = std::thread([this, site = std::move(site), objects = std::move(objects_gitdir), from, to] {
        look_ = git::look_ahead(site, objects, from, to, &stop_);
        done_ = true;
      });
    } catch (const std::system_error&) {
      // No thread to be had: the checkout looks for itself.
    }
  }
  // The look, if it is made by now (null when none was started, it failed,
  // or it is not done: it is stopped then, and the checkout looks for
  // itself on every core, as it would have without it; the look works at
  // the lowest priority, so on a busy machine it may not be done).
  git::CheckoutLook* result() {
    if (!done_) stop_ = true;
    wait();
    return look_.get();
  }

 private:
  void wait() {
    if (thread_.joinable()) thread_.join();
  }
  std::thread thread_;
  std::atomic<bool> stop_{false}, done_{false};
  git::CheckoutLookPtr look_;
};

// One pull, step by step. Each step that ends the pull fills the report and
// returns true.
class Pull {
 public:
  Pull(Store& store, Connection& conn, const std::string& branch, git::Quarantine& quarantine)
      : store_(store), repo_(store.repo()), quarantine_(quarantine), conn_(conn), options_(conn.options()),
        branch_(branch), snap_(store.snapshot()) {
    report_.remote = conn.remote();
    report_.url = redact_url(conn.url());
    if (!snap_.empty()) {
      report_.commit = snap_.commit_id();
      local_ = git::to_oid(snap_.commit());
    }
  }

  PullReport run() {
    // A checkout an earlier write owes the work tree (killed, or declined
    // for a cause since gone) is made first, whatever this pull brings.
    note_work_tree_behind(store_.dir(), git::resume_work_tree(repo_, branch_));
    auto remote_head = conn_.head(branch_);
    if (!remote_head) {
      report_.result = PullResult::kUpToDate;
      report_.notes.push_back("the remote has no " + branch_ + " yet");
      return std::move(report_);
    }
    incoming_ = *remote_head;
    report_.incoming = git::oid_str(incoming_);
    if (!received() || other_format() || history_rewritten() || already_here()) return std::move(report_);
    std::vector<git_oid> fresh = new_commits();
    // A fast-forward of a work tree's branch: its checkout is looked at on
    // the other core meanwhile (nothing written), so that once the branch
    // moves only the writing is left.
    if (local_ && git::descends_from(quarantine_.repo(), incoming_, *local_))
      if (std::optional<git::WorkTreeSite> site = git::checkout_site(repo_, branch_))
        look_ahead_.start(std::move(*site), quarantine_.path(), *local_, incoming_);
    {
      // Checked where it landed: the quarantine sees the store's objects
      // through its alternates and the new ones as they came. Its own
      // objects were each rehashed on the way in (IncomingPack for a
      // network pack, CopyingSource from a path) and again by received()'s
      // walk, the rest are the store's: hashing every tree read once more
      // (the big index folders of the store's side included) would cost
      // what the store holds, not what is new.
      LayoutTrees trees(quarantine_.repo(), /*check_ids=*/false);
      git::HashCheck hashes(true);  // what came in is read against its ids
      // One walk of commit messages over both histories, the store's first:
      // the checks then read only what is new and the rerun commits.
      LevelAudit levels(quarantine_.repo(), options_.trust);
      if (local_) levels.walk(git::to_commit_id(*local_));
      levels.walk(git::to_commit_id(incoming_));
      if (refused(trees, levels, fresh)) return std::move(report_);
    }
    ahead_ = look_ahead_.result();  // it read the quarantine, which now moves in
    quarantine_.migrate();
    if (fast_forwarded()) return std::move(report_);
    // Every object the merge reads is now the store's own or was rehashed
    // on its way in and checked above: hashing each index file and tree
    // again as the merge reads it would cost the two sides' index, not the
    // merge.
    LayoutTrees trees(repo_, /*check_ids=*/false);
    LevelAudit levels(repo_, options_.trust);
    if (local_) levels.walk(git::to_commit_id(*local_));
    levels.walk(git::to_commit_id(incoming_));
    merge(trees, levels);
    return std::move(report_);
  }

 private:
  // Brings the remote's objects into the quarantine, and checks their shape
  // there (incoming_walk.h); false (the report says why) when refused.
  bool received() {
    std::vector<Problem> problems;
    try {
      if (on_this_machine(conn_.url())) {
        // A repository on this machine: copied object by object, rehashed.
        report_.fetched_objects = fetch_local(repo_, quarantine_, conn_, incoming_, branch_, problems);
      } else {
        report_.fetched_objects = download();
        git::QuarantineSource source(quarantine_.repo(), repo_);
        problems = git::walk_incoming(source, incoming_, IncomingChecker::kMaxProblems, [&](std::size_t done) {
                     conn_.progress("checking", done, 0, 0);
                   }).problems;
      }
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kRefused) throw;
      problems.push_back({ProblemKind::kObjectCorrupt, branch_, std::string("the remote's pack: ") + e.what()});
    }
    conn_.disconnect();
    if (problems.empty()) return true;
    report_.result = PullResult::kRefused;
    // A repository that is no store at all: that first, then two examples,
    // not a problem for each of its files (fetch_local does the same).
    lead_with(not_a_store(quarantine_.repo(), incoming_, branch_), problems);
    report_.problems = std::move(problems);
    return false;
  }

  // A network fetch into the quarantine, its pack read by IncomingPack. The
  // quarantine's refs tell the server what the store has (negotiation walks
  // the refs of the repository fetched into). Returns the objects received.
  std::size_t download() {
    if (local_) quarantine_.set_ref("refs/kistore/have/local", *local_);
    if (auto synced = git::ref_target(repo_, synced_ref(conn_.remote())); synced && git::has_object(repo_, *synced))
      quarantine_.set_ref("refs/kistore/have/synced", *synced);
    quarantine_.receive_packs();
    try {
      conn_.download("+" + branch_ + ":" + incoming_ref(conn_.remote()));
    } catch (const Error&) {
      if (std::exception_ptr why = quarantine_.pack_failure()) std::rethrow_exception(why);
      throw;
    }
    return quarantine_.received_objects();
  }

  // Stores of different formats do not sync (refs/layout.h): the remote's
  // head must be of this store's format (an empty store is format 2), and of
  // one kistore reads. True (the report says why) when it is not.
  bool other_format() {
    LayoutTrees trees(quarantine_.repo());
    git_oid tree = git::commit_tree(quarantine_.repo(), incoming_);
    std::optional<Format> theirs = trees.format_of(&tree);
    const Format mine = snap_.format();
    if (theirs == mine) return false;
    report_.result = PullResult::kRefused;
    std::string detail;
    if (!theirs) {
      detail = "the remote's " + unknown_format_problem(trees.read(&tree, std::string(kFormatPath)).value_or(""));
    } else if (std::optional<Problem> none = not_a_store(quarantine_.repo(), incoming_, branch_);
               *theirs == Format::k1 && none) {
      // A tree with no FORMAT reads as format 1; one with nothing of kistore's
      // (a README.md) is no store at all, and upgrading it is not the cure.
      report_.problems.push_back(std::move(*none));
      return true;
    } else if (*theirs < mine) {
      detail = "the remote is a format-" + std::to_string(static_cast<int>(*theirs)) + " store and this one is " +
               format_name(mine) +
               "; stores of different formats do not sync: run `kistore upgrade` in the remote store (or clone it "
               "with `git clone --bare` and run `kistore upgrade` in the clone), then pull again";
    } else {
      detail = "this store is " + format_name(mine) + " and the remote is " + format_name(*theirs) +
               "; stores of different formats do not sync: run `kistore upgrade` in this store, then pull again";
    }
    report_.problems.push_back({ProblemKind::kLayout, std::string(kFormatPath), detail});
    return true;
  }

  // The remote must still contain what was synced with it before.
  bool history_rewritten() {
    auto synced = git::ref_target(repo_, synced_ref(conn_.remote()));
    if (!synced || git::descends_from(quarantine_.repo(), incoming_, *synced)) return false;
    report_.result = PullResult::kRefused;
    report_.problems.push_back(
        {ProblemKind::kHistoryRewritten, branch_,
         "the remote's " + branch_ + " at " + short_id(report_.incoming) + " does not contain commit " +
             short_id(git::oid_str(*synced)) + ", which was synced with " + conn_.remote() +
             " before: its history was rewritten (force-pushed). If the remote is meant to be another store "
             "now, remove and add the remote again (`kistore remote remove " + conn_.remote() + "`)"});
    return true;
  }

  bool already_here() {
    if (!local_ || !git::descends_from(quarantine_.repo(), *local_, incoming_)) return false;
    report_.result = PullResult::kUpToDate;
    mark_synced();
    return true;
  }

  // The commits new to this store, oldest first.
  std::vector<git_oid> new_commits() {
    std::vector<git_oid> fresh = git::commits_to_take(quarantine_.repo(), incoming_, local_ ? &*local_ : nullptr);
    report_.new_commits = fresh.size();
    return fresh;
  }

  // Checks every new commit; true (the report says why) when any fails.
  bool refused(const LayoutTrees& trees, LevelAudit& levels, const std::vector<git_oid>& fresh) {
    IncomingChecker checker(trees, levels);
    // One big commit (a first clone, a bulk import): show progress through its
    // paths; many commits: through the commits.
    if (options_.progress && fresh.size() == 1)
      checker.progress = [&](std::size_t done, std::size_t total) { options_.progress("checking", done, total, 0); };
    for (std::size_t i = 0; i < fresh.size() && !checker.full(); ++i) {
      checker.check_commit(fresh[i]);
      if (options_.progress && fresh.size() > 1) options_.progress("checking", i + 1, fresh.size(), 0);
    }
    new_objects_ = checker.new_objects();
    std::vector<Problem> problems = checker.take_problems();
    std::vector<Problem> clashes = dictionary_clashes(trees);
    problems.insert(problems.end(), clashes.begin(), clashes.end());
    if (problems.empty()) return false;
    report_.result = PullResult::kRefused;
    report_.problems = std::move(problems);
    return true;
  }

  // A Dictionary_ID names one dictionary: a remote whose tree holds another
  // dictionary under an ID the store has cannot be merged in (the frames of
  // one side do not decode with the other's). Each side was checked alone.
  std::vector<Problem> dictionary_clashes(const LayoutTrees& trees) {
    std::vector<Problem> out;
    // (A fast-forward's own commits were checked for changing one.)
    if (!local_ || git::descends_from(quarantine_.repo(), incoming_, *local_)) return out;
    const git_oid mine = git::commit_tree(quarantine_.repo(), *local_), theirs = git::commit_tree(quarantine_.repo(), incoming_);
    for (const git::TreeDelta& d : trees.diff(&mine, &theirs, "dictionaries"))
      if (d.status == git::TreeDelta::kModified && d.ids_differ())
        out.push_back({ProblemKind::kHistoryRewritten, d.path,
                       "the remote holds another dictionary under this ID than the store does; an ID names one "
                       "dictionary, so the two cannot be merged"});
    return out;
  }

  // Moves the branch to the incoming head when it is empty or behind; true
  // when the pull is then done, false when the two sides diverged.
  bool fast_forwarded() {
    const std::string log = "kistore: pull " + conn_.remote() + " (fast-forward)";
    for (int attempt = 0; attempt < kFastForwardAttempts; ++attempt) {
      Snapshot now = store_.snapshot();
      int rc;
      if (now.empty()) {
        rc = git::compare_and_swap_ref(repo_, branch_, incoming_, nullptr, log);
      } else {
        git_oid head = git::to_oid(now.commit());
        if (git::descends_from(repo_, head, incoming_)) {
          report_.result = PullResult::kUpToDate;
          report_.commit = now.commit_id();
          mark_synced();
          return true;
        }
        if (!git::descends_from(repo_, incoming_, head)) return false;
        rc = git::compare_and_swap_ref(repo_, branch_, incoming_, &head, log);
      }
      if (rc == 0) {
        note_written("commit " + report_.incoming.substr(0, 12) + " (" + branch_ + " fast-forwarded)");
        std::optional<git_oid> before;
        if (!now.empty()) before = git::to_oid(now.commit());
        note_work_tree_behind(store_.dir(), git::sync_work_tree(repo_, branch_, before ? &*before : nullptr, ahead_));
        record_last_pull(repo_, before ? &*before : nullptr, incoming_);
        report_.result = PullResult::kFastForward;
        report_.commit = report_.incoming;
        report_.new_documents = new_objects_;
        mark_synced();
        return true;
      }
      if (rc != GIT_EMODIFIED && rc != GIT_EEXISTS && rc != GIT_ELOCKED) git::check(rc, "moving " + branch_);
      git::clear_error();
    }
    return false;
  }

  void merge(const LayoutTrees& trees, LevelAudit& levels) {
    MergeOutcome outcome;
    std::optional<std::string> merged = store_.commit(
        [&](const Snapshot& head) { return build_merge(trees, levels, head.commit(), git::to_commit_id(incoming_), remote_in_history(conn_.remote()),
                           outcome); },
        options_.commit);
    report_.notes.insert(report_.notes.end(), outcome.notes.begin(), outcome.notes.end());
    mark_synced();
    if (!merged) {
      report_.result = PullResult::kUpToDate;
      report_.commit = store_.snapshot().commit_id();
      return;
    }
    const git_oid merge_id = git::parse_oid(*merged);
    std::optional<git_oid> before = git::first_parent(repo_, merge_id);
    record_last_pull(repo_, before ? &*before : nullptr, merge_id);
    report_.result = PullResult::kMerge;
    report_.commit = *merged;
    report_.new_documents = outcome.new_documents;
  }

  void mark_synced() {
    git::set_ref(repo_, synced_ref(conn_.remote()), incoming_, "kistore: pull " + conn_.remote());
    keep_tracking_ref(repo_, conn_.remote(), branch_, incoming_);
  }

  Store& store_;
  git_repository* repo_;
  git::Quarantine& quarantine_;
  CheckoutLookAhead look_ahead_;        // waited for by the pull's end at the latest
  git::CheckoutLook* ahead_ = nullptr;  // its look, once the check passed
  Connection& conn_;
  const SyncOptions& options_;
  const std::string& branch_;
  Snapshot snap_;
  std::optional<git_oid> local_;  // the branch head when the pull began
  git_oid incoming_{};
  std::size_t new_objects_ = 0;
  PullReport report_;
};

// Moves every entry of `from` (a clone made in a folder of its own inside
// `to`) up into `to`, each with one rename that replaces nothing and is
// tracked for an interruption as it is made (make_tracked): what kistore
// moved in is removed again, and a name someone put in `to` meanwhile stops
// the move, which puts back what it moved and says so. `to` itself, and
// whatever else is in it, is never touched.
void move_clone_up(const std::string& from, const std::string& to) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(from)) names.push_back(entry.path().filename().string());
  std::vector<std::string> moved;
  for (const std::string& name : names) {
    const std::string src = from + "/" + name, dst = to + "/" + name;
    if (make_tracked(dst, [&] {
          return file_system().rename_at(AT_FDCWD, src.c_str(), AT_FDCWD, dst.c_str(), true) == 0;
        })) {
      moved.push_back(name);
      continue;
    }
    const int err = errno;
    for (const std::string& back : moved) {
      file_system().rename_at(AT_FDCWD, (to + "/" + back).c_str(), AT_FDCWD, (from + "/" + back).c_str(), true);
      untrack_temporary(to + "/" + back);
    }
    throw IOError(to + ": cannot move the clone's " + name + " into it: " + std::strerror(err) +
                  (err == EEXIST ? " (something was put there during the clone; it is left as it is)" : ""));
  }
  for (const std::string& name : moved) untrack_temporary(to + "/" + name);
}

}  // namespace

PullReport pull_from(Store& store, Connection& conn, const std::string& branch, git::Quarantine& quarantine) {
  // A pull reads each new commit and tree a few times at most: libgit2's
  // object cache and whole-pack windows grew with the commits pulled (~75 of
  // 176 MiB at 200,000 commits, docs/benchmarks.md "A pull's memory").
  git::StreamingReads streaming;
  return Pull(store, conn, branch, quarantine).run();
}

// A pull writes (it moves the branch or merges): like every writer, it
// refuses a store of another format than format 2, before it fetches.
void refuse_old_format(const Store& store) {
  Snapshot snap = store.snapshot();
  if (snap.format() != kCurrentFormat)
    throw IOError(store.dir() + ": this store is " + format_name(snap.format()) + "; kistore syncs " +
                  format_name(kCurrentFormat) + " only: run `kistore upgrade` first; nothing was fetched or written");
}

PullReport pull(Store& store, const std::string& remote, const SyncOptions& options) {
  refuse_old_format(store);
  return pull(store, resolve_remote(store.repo(), remote), options);
}

PullReport pull(Store& store, const ResolvedRemote& remote, const SyncOptions& options) {
  refuse_old_format(store);
  git::Quarantine quarantine(store.repo());
  Connection conn(store, remote, git::Direction::kFetch, options, quarantine.repo());
  conn.connect();
  return pull_from(store, conn, store.branch(), quarantine);
}

PullReport clone(const std::string& url, const std::string& dir_given, const SyncOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // "dir/" names dir (its parent is not dir itself).
  std::string dir = dir_given;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  // Its leading folders are made as git clone makes them (and left).
  if (const fs::path parent = fs::path(dir).parent_path(); !parent.empty()) fs::create_directories(parent, ec);
  // The folder is made and tracked in one step (make_tracked_folder), so
  // that a failed or interrupted clone leaves no half store and removes only
  // a folder it made (looked for first and made later, one made in between
  // by another program was removed with all it held). Anything already there,
  // a link even when it leads nowhere, is never removed.
  const bool existed = !make_tracked_folder(dir);
  if (existed && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec)))
    throw InvalidInput(dir_given + ": already exists and is not an empty folder");
  // Into a folder that was there (empty, or a link to an empty one), the
  // clone is made in a folder of its own inside it (.kistore-clone-XXXXXX,
  // tracked, on the same file system), then moved up entry by entry
  // (move_clone_up): a failure or an interruption takes away only what
  // kistore made, and leaves whatever someone put there meanwhile.
  const std::string into = existed ? make_temp_folder(dir + "/.kistore-clone-XXXXXX") : dir;
  PullReport result;
  auto undo = [&] {
    fs::remove_all(into, ec);
    untrack_temporary(into);
  };
  try {
    Store store = Store::init(into);
    add_remote(store, "origin", url);  // without the URL's password
    SyncOptions with_password = options;
    with_password.credentials.url_password = url_password(url);
    git::Quarantine quarantine(store.repo());
    Connection conn(store, resolve_remote(store.repo(), "origin"), git::Direction::kFetch, with_password,
                    quarantine.repo());
    conn.connect();
    std::string branch = store.branch();
    if (!conn.head(branch)) {
      // Follow the remote's HEAD when it names another branch (a store made
      // with stock git whose default branch is not main).
      std::string other = conn.default_branch();
      if (!other.empty() && other != branch && conn.head(other)) {
        git::set_head(store.repo(), other, into + ": setting HEAD");
        branch = other;
      }
    }
    result = pull_from(store, conn, branch, quarantine);
  } catch (...) {
    undo();
    throw;
  }
  if (result.refused()) {
    undo();
    return result;
  }
  if (existed) {
    try {
      move_clone_up(into, dir);
    } catch (...) {
      undo();
      throw;
    }
    fs::remove(into, ec);  // empty now
  }
  untrack_temporary(into);
  return result;
}

std::string_view pull_result_name(PullResult result) {
  switch (result) {
    case PullResult::kUpToDate: return "up-to-date";
    case PullResult::kFastForward: return "fast-forward";
    case PullResult::kMerge: return "merge";
    case PullResult::kRefused: return "refused";
  }
  return "refused";
}

}  // namespace kistore
