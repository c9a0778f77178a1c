// kistore's own checkout of what one write changed, for a store that is the
// work tree of a plain `git clone` (SPEC §2: `git status` stays clean).
//
// After the branch moves from commit `from` to `to`, the paths that differ
// between their trees (kistore's tree diff, raw_tree.h) are written into the
// work tree and the index is written once, as `git checkout` would leave
// them, at a fraction of libgit2's cost (libgit2's checkout works on one core
// and rewrites its whole in-memory index):
//
//   0. A link (or anything but a folder) where a changed path needs a
//      folder, or a link where it needs a file, refuses the checkout: nothing
//      is written, and libgit2's checkout must not run either (it follows a
//      link planted at a folder's place and writes through it). So does a
//      FIFO, socket or device at a changed path (libgit2's checkout opens
//      it for writing: a FIFO blocks it for ever), and git's `index.lock`
//      held (libgit2's checkout writes the files, then fails on the lock),
//      and an index, a file of attributes or of ignored paths
//      (.gitattributes or .gitignore above a changed path, .git/info/
//      attributes or exclude, the user's own) that is no file: a FIFO there
//      blocks libgit2's reading for ever.
//      The work tree stays behind HEAD, as `git status` shows, until the
//      user looks.
//   1. The index is read (index_file.h) and the checkout is declined, with
//      nothing written, for anything it does not handle exactly as git: a
//      sparse checkout, conflicts, skip-worktree or intent-to-add entries,
//      a mandatory index extension (split or sparse index), a submodule,
//      attributes or end-of-line conversion that would change the bytes (in
//      the configuration, .git/info/attributes, the user's own, or a
//      .gitattributes in the work tree at or above a changed path, tracked
//      or not, or in the index: git's checkout reads them all), a path of
//      another mode than 100644.
//   2. Every path to change is checked as git's safe checkout checks it: a
//      file to modify or remove must hold what the index says and the
//      index must hold what `from` holds (its status matching the index's,
//      and not racily clean, or its content hashing to the blob); nothing
//      may stand where a file is to be added (but the folder of files that
//      are all removed); no folder on the way may be a link, or a file (but
//      one the checkout removes: an index file that fans out into a folder
//      as the store grows). Any one that fails refuses the checkout, with
//      nothing written, as git refuses a fast-forward over local changes
//      (and so does a change staged at a changed path). It is not handed to
//      libgit2's safe checkout, which writes nothing either when it sees the
//      change, but was seen to truncate a file that a program was appending
//      to while it looked.
//   3. The files are written on every core, the removals first (then the
//      folders they leave empty, as git removes them), so that a file and a
//      folder may trade places; each folder is opened once, from its
//      parent's descriptor (store/edge/beneath.h: never through a link, never
//      outside the work tree).
//   4. The index is written once: the old entries, those of removed paths
//      dropped, those written with the status of the file just made, the
//      rest as they were (but racily clean ones smudged, their size 0, so
//      that git checks their content, as git does when it writes an index),
//      in the old version (2, 3 or 4), without extensions (all optional
//      caches). It is written whole to a temporary file beside the index,
//      then moved over it while kistore holds `index.lock` (git's lock) for
//      that instant only, so a kill -9 leaves no lock that stops git, only a
//      temporary file the next checkout sweeps. An index changed by someone
//      else meanwhile is read again and merged again.
//
//   5. A checkout that does not finish (declined, refused, cut short, or
//      killed) is owed: kCheckoutOwedRef names the commit the work tree was
//      at, and the next one starts there, taking as its own what the
//      unfinished one did (removed paths, files holding the commit's bytes
//      or the start of them, index entries it wrote).
//
// Thread-safety: one call at a time per repository (it uses `repo` from the
// calling thread and its own worker threads for files).
#pragma once

#include <git2.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

namespace kistore::git {

enum class WorkTreeCheckout {
  kDone,      // the work tree and index hold `to` at every changed path
  kRefused,   // nothing was written, and nothing may be: a link in the way (libgit2's checkout would follow it)
  kDeclined,  // nothing was written: a case listed above, or a path in the way
  kPartial,   // a file could not be written (a full disk): those written are in the index, the rest not
};

// Brings the work tree and index of `repo` (not bare, its HEAD naming the
// branch that moved) from commit `from` to commit `to`. `why` says why it
// declined or stopped. Never throws.
// `resuming`: the checkout owed from `from` (kCheckoutOwedRef) that an
// earlier one began and did not finish: a path it already removed, or that
// holds the commit's bytes or the start of them (a write killed midway), or
// an index entry it already wrote, is taken as its own work, not the user's.
WorkTreeCheckout checkout_changes(git_repository* repo, const git_oid& from, const git_oid& to, std::string& why,
                                  bool resuming = false);

// While a checkout is owed (from the moment sync_work_tree starts one until
// the work tree and index hold the branch's commit), this reference names the
// commit they were left at: a checkout killed, declined for a cause since
// gone (git's index.lock), refused for a link since removed, or cut short
// by a full disk is resumed from there by the next sync_work_tree or
// resume_work_tree, instead of being forgotten (a later pull would say
// "Already up to date" and leave the work tree behind for good).
inline constexpr const char* kCheckoutOwedRef = "refs/kistore/checkout-owed";

// After `name` moved from `from` (null: it did not exist) in a repository
// with a work tree (a plain `git clone` of a store) whose HEAD names `name`:
// brings its index and work tree to the new commit, changing only the paths
// that changed (SPEC §2: `git status` stays clean): kistore's own checkout
// (work_tree.h), or libgit2's safe checkout where that one declines (a file
// the user changed in the way, a sparse checkout, ...). Files the user
// changed are left as they are (git's safe checkout); with a link planted
// where a changed path goes, nothing is written at all. A bare repository
// is left alone. Never throws: the commit stands whatever the checkout meets.
// Returns "" when the work tree and index hold the new commit (or there is
// none to keep), else why they were left behind it, in words.
//
// `ahead`: the look made ahead at this checkout (look_ahead), used when it
// was made from `from` to the branch's commit and what it saw still holds.
class CheckoutLook;
std::string sync_work_tree(git_repository* repo, const std::string& name, const git_oid* from,
                           CheckoutLook* ahead = nullptr);

// A checkout's look made ahead, on another thread, while a pull checks what
// it received (2 s for 40,000 runs on one core, the other idle): steps 0-2
// above, nothing written, so that only the writing is left once the branch
// moves. What it saw is looked at again before anything is written: the
// index must be the same file with the same times, and each file to modify
// or remove still hold what the index says (else the whole checkout is
// looked at again); a path to add needs no second look (its file is made
// only where nothing stands, its folder never through a link).
//
// checkout_site, on the thread that owns `repo`: the work tree and git
// folder a fast-forward of `name` would be checked out in; none when bare,
// HEAD names another branch, or a checkout is owed (made first, from where
// it was left). look_ahead, on any thread: the look at the fast-forward
// from `from` to `to`, their trees read through the repository at
// `objects_gitdir` (a quarantine that sees the store's objects); null on
// any error (the checkout then looks for itself).
struct WorkTreeSite {
  std::string gitdir, workdir;  // both ending in '/'
};
std::optional<WorkTreeSite> checkout_site(git_repository* repo, const std::string& name);
struct CheckoutLookFree {
  void operator()(CheckoutLook* look) const;
};
using CheckoutLookPtr = std::unique_ptr<CheckoutLook, CheckoutLookFree>;
// `stop`: set by another thread when the look is no longer wanted (null
// then).
CheckoutLookPtr look_ahead(const WorkTreeSite& site, const std::string& objects_gitdir, const git_oid& from,
                           const git_oid& to, const std::atomic<bool>* stop = nullptr) noexcept;
// Whether sync_work_tree wrote the checkout from `look` (what it saw still
// held), rather than looking again.
bool written_from(const CheckoutLook& look);

// The checkout owed by an earlier write (kCheckoutOwedRef), if any, made now
// as sync_work_tree makes it; "" when none was owed or it is done, else why
// the work tree is still behind. Never throws.
std::string resume_work_tree(git_repository* repo, const std::string& name);

}  // namespace kistore::git
