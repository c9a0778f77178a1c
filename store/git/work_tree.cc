#include "store/git/work_tree.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "objects/error.h"
#include "objects/parallel.h"
#include "objects/sha1.h"
#include "store/edge/beneath.h"
#include "store/edge/interrupt.h"
#include "store/edge/tempfiles.h"
#include "store/git/git.h"
#include "store/git/index_file.h"
#include "store/git/packread.h"
#include "store/git/raw_tree.h"

namespace kistore::git {
namespace {

constexpr std::uint32_t kFileMode = 0100644, kSubmoduleMode = 0160000;
constexpr std::size_t kMaxFileBytes = std::size_t(1) << 30;  // a file checked by content; documents are far smaller
constexpr int kLockTries = 100;                                // git's index.lock held by git: wait up to ~1 s
constexpr int kIndexTries = 3;                                 // the index changed under us: merge again
// Why a .gitattributes in the work tree declines the checkout (after its path).
constexpr const char* kAttributes = ": its attributes may change the bytes git's checkout writes";
// After a change of the user's that refuses the checkout.
constexpr const char* kKeptLocal =
    "; nothing written to the work tree, as git refuses a fast-forward over local changes: commit, stash or move "
    "the change, and the next kistore command finishes the checkout";

// One path the write changed, and what became of it.
struct Change {
  TreeDelta delta;
  std::string folder, name;  // the folder ("" the top) and the file's name in it
  bool done = false;
  bool ours = false;  // resuming: the file there is one an interrupted checkout wrote (removed, then written again)
  const IndexEntry* entry = nullptr;  // the index's entry at the path (index_holds_from; until the index is read again)
  struct stat st {};  // of the file written
};

// The SHA-1 git gives `bytes` as a blob.
void blob_id(std::string_view bytes, unsigned char out[20]) {
  Sha1 sha;
  const std::string header = "blob " + std::to_string(bytes.size());
  sha.update(header.data(), header.size() + 1);  // with its NUL
  sha.update(bytes.data(), bytes.size());
  sha.final(out);
}

bool is_racy(const IndexEntry& e, const struct stat& index) {
  const auto sec = static_cast<std::uint32_t>(index.st_mtim.tv_sec);
  const auto nsec = static_cast<std::uint32_t>(index.st_mtim.tv_nsec);
  return sec < e.mtime_s || (sec == e.mtime_s && nsec <= e.mtime_ns);
}

// git's "stat data matches" (read-cache.c, ce_match_stat_basic): the fields
// git compares on Linux by default (core.checkStat=default, core.trustctime).
bool stat_matches(const IndexEntry& e, const struct stat& st) {
  return e.mtime_s == static_cast<std::uint32_t>(st.st_mtim.tv_sec) &&
         e.mtime_ns == static_cast<std::uint32_t>(st.st_mtim.tv_nsec) &&
         e.ctime_s == static_cast<std::uint32_t>(st.st_ctim.tv_sec) &&
         e.ctime_ns == static_cast<std::uint32_t>(st.st_ctim.tv_nsec) &&
         e.ino == static_cast<std::uint32_t>(st.st_ino) && e.uid == st.st_uid && e.gid == st.st_gid &&
         e.size == static_cast<std::uint32_t>(st.st_size);
}

IndexEntry entry_of(const Change& c) {
  IndexEntry e;
  e.ctime_s = static_cast<std::uint32_t>(c.st.st_ctim.tv_sec);
  e.ctime_ns = static_cast<std::uint32_t>(c.st.st_ctim.tv_nsec);
  e.mtime_s = static_cast<std::uint32_t>(c.st.st_mtim.tv_sec);
  e.mtime_ns = static_cast<std::uint32_t>(c.st.st_mtim.tv_nsec);
  e.dev = static_cast<std::uint32_t>(c.st.st_dev);
  e.ino = static_cast<std::uint32_t>(c.st.st_ino);
  e.mode = kFileMode;
  e.uid = c.st.st_uid;
  e.gid = c.st.st_gid;
  e.size = static_cast<std::uint32_t>(c.st.st_size);
  std::memcpy(e.id, c.delta.new_id.id, 20);
  e.path = c.delta.path;
  return e;
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// Whether `path` is there and, read as git and libgit2 read it (through a
// link), no regular file: a FIFO blocks their reading for ever.
bool blocks_reading(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

// The user's own `name` file (~/.config/git/attributes, .../ignore): in the
// folder of their XDG git config, which libgit2 finds as git does ("" when
// none).
std::string global_file(const char* name) {
  git_buf xdg = GIT_BUF_INIT;
  std::string global;
  if (git_libgit2_opts(GIT_OPT_GET_SEARCH_PATH, GIT_CONFIG_LEVEL_XDG, &xdg) == 0 && xdg.size > 0) {
    global.assign(xdg.ptr, xdg.size);
    global = global.substr(0, global.find(GIT_PATH_LIST_SEPARATOR)) + "/" + name;
  }
  git_buf_dispose(&xdg);
  git_error_clear();
  return global;
}

// What refuses a checkout outright among the files of attributes and of
// ignored paths that libgit2's checkout (which a decline hands over to)
// reads: one that is no regular file. Those of the work tree (.gitattributes,
// .gitignore) are seen by the look at each changed path. Empty when none.
std::string attributes_block(git_repository* repo, const std::string& gitdir) {
  std::vector<std::string> paths{gitdir + "info/attributes", gitdir + "info/exclude", global_file("attributes"),
                                 global_file("ignore")};
  git_config* config = nullptr;
  if (git_repository_config_snapshot(&config, repo) == 0) {
    Config owned(config);
    for (const char* key : {"core.attributesfile", "core.excludesfile"}) {
      git_buf set = GIT_BUF_INIT;
      if (git_config_get_path(&set, config, key) == 0) paths.emplace_back(set.ptr, set.size);
      git_buf_dispose(&set);
    }
  }
  git_error_clear();
  for (const std::string& path : paths)
    if (blocks_reading(path)) return path + ": is not a file (a FIFO, socket or device); nothing written";
  return "";
}

// Why git's checkout could write other bytes than the blob's, or keep
// files elsewhere (empty when neither): kistore's checkout writes blobs as
// they are, into every path.
std::string config_declines(git_repository* repo, const std::string& gitdir) {
  git_config* config = nullptr;
  if (git_repository_config_snapshot(&config, repo) != 0) return "its configuration cannot be read: " + last_error();
  Config owned(config);
  int on = 0;
  if (git_config_get_bool(&on, config, "core.sparsecheckout") == 0 && on) return "core.sparseCheckout is on";
  const char* text = nullptr;
  if (git_config_get_string(&text, config, "core.autocrlf") == 0 && std::string_view(text) != "false")
    return "core.autocrlf is set";
  if (git_config_get_string(&text, config, "core.attributesfile") == 0) return "core.attributesFile is set";
  git_error_clear();
  if (file_exists(gitdir + "info/attributes")) return gitdir + "info/attributes exists";
  if (const std::string global = global_file("attributes"); !global.empty() && file_exists(global))
    return global + " exists";
  return "";
}

// Why the path is not one kistore writes as it is (empty when it is).
std::string path_declines(const std::string& path) {
  if (std::string why = check_relative_path(path); !why.empty()) return path + " " + why;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    std::string name = path.substr(start, slash - start);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name == ".git" || name == ".gitattributes" || name == ".gitmodules") return path + " is git's";
    start = slash + 1;
  }
  return "";
}

// The folders a checkout works in, each opened once: the folders above the
// changed files are kept open (at most kKept of them), so that a file's
// folder is opened from its parent's descriptor, not walked from the top.
// Folders are made when `make`. Safe to use from several threads.
class OpenFolders {
 public:
  OpenFolders(const BeneathDir& root, bool make) : root_(root), make_(make) {}

  // The folder `dir` ("" the top), opened now (not kept).
  std::shared_ptr<const BeneathDir::Folder> open(const std::string& dir) {
    return dir.empty() ? parent("") : open_uncached(dir);
  }

  // As open, for a folder to make that was missing a moment ago (the look
  // before writing saw it so): made first, then opened (Folder::make_sub).
  std::shared_ptr<const BeneathDir::Folder> open_new(const std::string& dir) {
    if (dir.empty() || !make_) return open(dir);
    const std::size_t slash = dir.rfind('/');
    std::shared_ptr<const BeneathDir::Folder> above = parent(slash == std::string::npos ? "" : dir.substr(0, slash));
    if (!above || above->state() != BeneathDir::Folder::State::kPresent) return open_uncached(dir);
    return std::make_shared<const BeneathDir::Folder>(above->make_sub(slash == std::string::npos ? dir : dir.substr(slash + 1)));
  }

 private:
  static constexpr std::size_t kKept = 512;

  // The kept folder `dir`; null when there are too many kept already.
  std::shared_ptr<const BeneathDir::Folder> parent(const std::string& dir) {
    {
      std::lock_guard lock(mutex_);
      if (auto it = kept_.find(dir); it != kept_.end()) return it->second;
      if (kept_.size() >= kKept) return nullptr;
    }
    std::shared_ptr<const BeneathDir::Folder> made = open_uncached(dir);
    std::lock_guard lock(mutex_);
    return kept_.emplace(dir, std::move(made)).first->second;  // another thread's, if it came first
  }
  std::shared_ptr<const BeneathDir::Folder> open_uncached(const std::string& dir) {
    if (dir.empty()) return std::make_shared<const BeneathDir::Folder>(root_.folder("", false));
    const std::size_t slash = dir.rfind('/');
    std::shared_ptr<const BeneathDir::Folder> above = parent(slash == std::string::npos ? "" : dir.substr(0, slash));
    if (!above) return std::make_shared<const BeneathDir::Folder>(root_.folder(dir, make_));
    return std::make_shared<const BeneathDir::Folder>(above->sub(slash == std::string::npos ? dir : dir.substr(slash + 1), make_));
  }

  const BeneathDir& root_;
  const bool make_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const BeneathDir::Folder>, std::less<>> kept_;
};

// Thrown where a look made ahead stops because it is no longer wanted.
struct LookStopped {};

class Checkout {
 public:
  // A checkout of the work tree `workdir` whose git folder is `gitdir`
  // (ending in '/'). `resuming`: a checkout owed from `from`
  // (kCheckoutOwedRef), which an earlier one began: a path that holds what
  // it would write, or the start of it (a write cut short), or that it
  // already removed, is its own.
  Checkout(std::string gitdir, std::string workdir, bool resuming)
      : gitdir_(std::move(gitdir)), workdir_(std::move(workdir)), resuming_(resuming) {
    while (workdir_.size() > 1 && workdir_.back() == '/') workdir_.pop_back();
  }

  WorkTreeCheckout run(git_repository* repo, const git_oid& from, const git_oid& to, std::string& why) {
    if (std::optional<WorkTreeCheckout> verdict = look(repo, from, to, why)) return *verdict;
    return write(repo, why);
  }

  // Steps 0-2 without writing anything: the changes from `from` to `to`,
  // their trees read through `objects` (the store, or a quarantine that
  // sees the store's objects), then one look at the index and at every
  // changed path, on `threads` threads (0: every core). A verdict when that
  // alone ends the checkout (nothing changed, a path it does not handle);
  // else write() takes it from there.
  // `stop`, when set (by another thread), ends a look made ahead midway:
  // LookStopped is thrown.
  std::optional<WorkTreeCheckout> look(git_repository* objects, const git_oid& from, const git_oid& to,
                                       std::string& why, unsigned threads = 0,
                                       const std::atomic<bool>* stop = nullptr) {
    if (workdir_.empty()) return decline(why, "the repository has no work tree");
    threads_ = threads;
    stop_ = stop;
    {
      PackReader packs(git_repository_path(objects));
      Odb odb = open_odb(objects);
      if (!collect(objects, packs, odb.get(), from, to, why)) return WorkTreeCheckout::kDeclined;
      if (changes_.empty()) return WorkTreeCheckout::kDone;
      // An index that is no file (a FIFO, or a link to one): libgit2's
      // checkout opens it, through a link too, and blocks for ever;
      // refused, as a FIFO in the work tree is.
      if (struct stat st; ::stat((gitdir_ + "index").c_str(), &st) == 0 && !S_ISREG(st.st_mode))
        return refused(why, gitdir_ + "index: is not a file (a FIFO, socket, device or folder); nothing written");
      BeneathDir root = BeneathDir::open(workdir_, false);
      packs_ = &packs;  // a resumed checkout's look reads the blobs it may have written
      odb_ = odb.get();
      group();
      index_ok_ = read_index(index_why_) && index_holds_from(index_why_);
      inspect(root, index_ok_);
      packs_ = nullptr;
      odb_ = nullptr;
    }
    threads_ = 0;
    stop_ = nullptr;
    return std::nullopt;
  }

  // Whether the look found nothing in the way: the index read and holding
  // `from`, no link, no change of the user's.
  bool clear() const {
    return index_ok_ && !index_damaged_ && link_at_ == kNone && user_at_ == kNone && problem_at_ == kNone;
  }

  // For a look made ahead (look_ahead): whether what it saw still holds
  // now: the index as it was (the same file, size and times), and every
  // file to modify or remove still clean. A path to add needs no second
  // look: its file is made only where nothing stands (O_EXCL), its folder
  // opened without following a link, and what stands there since is
  // reported, never overwritten or written through.
  bool still_holds() {
    struct stat now;
    if (::stat((gitdir_ + "index").c_str(), &now) != 0 || now.st_dev != index_st_.st_dev ||
        now.st_ino != index_st_.st_ino || now.st_size != index_st_.st_size ||
        now.st_mtim.tv_sec != index_st_.st_mtim.tv_sec || now.st_mtim.tv_nsec != index_st_.st_mtim.tv_nsec ||
        now.st_ctim.tv_sec != index_st_.st_ctim.tv_sec || now.st_ctim.tv_nsec != index_st_.st_ctim.tv_nsec)
      return false;
    BeneathDir root = BeneathDir::open(workdir_, false);
    OpenFolders folders(root, false);
    for (const std::vector<std::size_t>& members : groups_) {
      std::shared_ptr<const BeneathDir::Folder> folder;
      for (std::size_t i : members) {
        const Change& c = changes_[i];
        if (c.delta.status == TreeDelta::kAdded) continue;
        if (!folder) folder = folders.open(c.folder);
        struct stat st;
        if (!folder->status(c.name, st) || !file_clean(*folder, c, st)) return false;
      }
    }
    return true;
  }

  // Steps 0-4 after look(): what refuses or declines the checkout (the
  // look's findings, git's lock, the files of attributes, `repo`'s
  // configuration), then the files and the index.
  WorkTreeCheckout write(git_repository* repo, std::string& why) {
    // A link in the way first: nothing may then be handed to libgit2's
    // checkout, which follows a link planted at a folder's place.
    if (link_at_ != kNone) return refused(why, link_why_);
    // git holds the index (a commit, an add -p, or a lock a crashed git
    // left): git's checkout writes nothing then, and neither may this one
    // nor libgit2's (which writes the files, then fails on the lock): the
    // work tree would move ahead of an index that cannot be written.
    if (!lock_free(gitdir_ + "index.lock"))
      return refused(why, gitdir_ + "index.lock: git holds the index (the lock file is there); nothing written");
    // A change of the user's where the commit changes a path (in the work
    // tree, or staged): nothing is written, as git refuses a fast-forward
    // over local changes. Not handed to libgit2's safe checkout, which
    // writes nothing either when it sees the change, but was seen to
    // truncate a file that a program was appending to as it looked.
    if (user_at_ != kNone) return refused(why, user_why_ + kKeptLocal);
    if (staged_) return refused(why, index_why_ + kKeptLocal);
    if (std::string no = attributes_block(repo, gitdir_); !no.empty()) return refused(why, no);
    if (std::string no = attributes_above(true); !no.empty()) return refused(why, no);
    if (std::string no = config_declines(repo, gitdir_); !no.empty()) return decline(why, no);
    if (std::string no = attributes_above(false); !no.empty()) return decline(why, no);
    // An index cut short or with a wrong checksum: libgit2's checkout fails
    // on it as git does (and libgit2 1.5 leaks on the way): refused here.
    if (index_damaged_) return refused(why, index_why_ + "; nothing written (git cannot read the index either)");
    if (!index_ok_) return decline(why, index_why_);
    if (problem_at_ != kNone) return decline(why, problem_);
    sweep_stale_temp_files(gitdir_);  // the temporary index of a checkout killed before its rename
    PackReader packs(gitdir_);
    Odb odb = open_odb(repo);
    BeneathDir root = BeneathDir::open(workdir_, false);
    // From here on files change: a failure is partial, never a decline.
    writing_ = true;
    const bool all_written = write_files(root, packs, odb.get(), why);
    std::string index_why;
    if (!write_index(index_why)) {
      why = index_why;
      return WorkTreeCheckout::kPartial;
    }
    return all_written ? WorkTreeCheckout::kDone : WorkTreeCheckout::kPartial;
  }

 private:
  static WorkTreeCheckout decline(std::string& why, const std::string& because) {
    why = because;
    return WorkTreeCheckout::kDeclined;
  }
  static WorkTreeCheckout refused(std::string& why, const std::string& because) {
    why = because;
    return WorkTreeCheckout::kRefused;
  }
  static bool refuse(std::string& why, const std::string& because) {
    why = because;
    return false;
  }

 public:
  // Whether files may have changed (an error from here on is partial).
  bool writing() const { return writing_; }

 private:
  // A .gitattributes in the work tree (untracked or not) applies to every
  // path below its folder, as git's checkout reads it: one in a folder above
  // the changed files but not holding any (the top, objects/, ...); those in
  // the folders of changed files are seen by inspect(). `blocking`: only one
  // that is no regular file (blocks_reading). Empty when none.
  std::string attributes_above(bool blocking) const {
    for (const std::string& dir : above_) {
      const std::string path = workdir_ + "/" + (dir.empty() ? "" : dir + "/") + ".gitattributes";
      if (blocking ? blocks_reading(path) : file_exists(path))
        return path + (blocking ? ": is not a file (a FIFO, socket or device); nothing written" : kAttributes);
      if (const std::string ignore = path.substr(0, path.size() - 10) + "ignore"; blocking && blocks_reading(ignore))
        return ignore + ": is not a file (a FIFO, socket or device); nothing written";
    }
    return "";
  }

  // Reads the index into index_ (and its status into index_st_); false with
  // `why` when it is missing, unreadable, or holds what the checkout leaves
  // to git.
  bool read_index(std::string& why) {
    const std::string path = gitdir_ + "index";
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);  // a FIFO: no wait
    if (fd < 0) {
      why = path + ": cannot open the index: " + std::strerror(errno);
      return false;
    }
    std::string bytes;
    bool read_ok = ::fstat(fd, &index_st_) == 0 && S_ISREG(index_st_.st_mode);
    if (read_ok) {
      bytes.resize(static_cast<std::size_t>(index_st_.st_size));
      std::size_t got = 0;
      while (got < bytes.size()) {
        const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
      }
      read_ok = got == bytes.size();
    }
    ::close(fd);
    if (!read_ok) {
      why = path + ": cannot read the index";
      return false;
    }
    std::string bad;
    std::optional<IndexFile> index = parse_index(bytes, bad);
    if (!index) {
      why = path + ": " + bad;
      index_damaged_ = true;
      return false;
    }
    for (const std::string& ext : index->extensions)
      if (!(ext[0] >= 'A' && ext[0] <= 'Z')) {
        why = path + ": holds the mandatory extension \"" + ext + "\" (a split or sparse index)";
        return false;
      }
    for (const IndexEntry& e : index->entries) {
      if (e.stage() != 0) {
        why = path + ": " + e.path + " is in conflict";
        return false;
      }
      if (e.flags_extended != 0) {
        why = path + ": " + e.path + " is skip-worktree or intent-to-add";
        return false;
      }
      if ((e.mode & 0170000) == kSubmoduleMode) {
        why = path + ": " + e.path + " is a submodule";
        return false;
      }
      if (e.path == ".gitattributes" || e.path.ends_with("/.gitattributes")) {
        why = path + ": " + e.path + " is staged (its attributes may change the bytes git's checkout writes)";
        return false;
      }
    }
    for (std::size_t i = 1; i < index->entries.size(); ++i)
      if (!(index->entries[i - 1].path < index->entries[i].path)) {
        why = path + ": its entries are not sorted by path";
        return false;
      }
    index_ = std::move(*index);
    return true;
  }

  // The paths that differ between the two commits' trees, each checked
  // against the index; false with `why` for one the checkout leaves to git.
  bool collect(git_repository* objects, const PackReader& packs, git_odb* odb, const git_oid& from, const git_oid& to,
               std::string& why) {
    TreeReader reader(odb, {&packs, false, false});
    const git_oid from_tree = commit_tree(objects, from), to_tree = commit_tree(objects, to);
    std::string odd;
    reader.diff(&from_tree, &to_tree, "", [&](const TreeDelta& d) {
      stop_if_asked();
      if (odd.empty() && ((d.old_mode && d.old_mode != kModeBlob) || (d.new_mode && d.new_mode != kModeBlob)))
        odd = d.path + " is not a plain file (mode 100644) on both sides";
      if (odd.empty()) odd = path_declines(d.path);
      Change c{d, "", ""};
      const std::size_t slash = d.path.rfind('/');
      c.folder = slash == std::string::npos ? "" : d.path.substr(0, slash);
      c.name = slash == std::string::npos ? d.path : d.path.substr(slash + 1);
      changes_.push_back(std::move(c));
    });
    if (!odd.empty()) return refuse(why, odd);
    // A path that is a file on one side and a folder on the other (an index
    // file that fans out into a folder as the store grows): the removals are
    // written first, so the file is gone before its folder is made, and the
    // folder's files before the file is made.
    for (const Change& c : changes_) {
      if (c.delta.status == TreeDelta::kAdded) continue;
      if (c.delta.status == TreeDelta::kRemoved) removed_files_.insert(c.delta.path);
      for (std::size_t slash = c.delta.path.find('/'); slash != std::string::npos; slash = c.delta.path.find('/', slash + 1))
        old_folders_.insert(c.delta.path.substr(0, slash));
    }
    // The diff comes in git's tree order, which is the paths' order but
    // where a name is a prefix of another followed by a byte below '/'.
    const auto by_path = [](const Change& a, const Change& b) { return a.delta.path < b.delta.path; };
    if (!std::is_sorted(changes_.begin(), changes_.end(), by_path)) std::sort(changes_.begin(), changes_.end(), by_path);
    return true;
  }

  // Whether the index holds what `from` holds at every changed path (git's
  // safe checkout leaves a staged change alone); false with `why` otherwise.
  // Notes each change's entry (both lists are sorted by path: one walk).
  bool index_holds_from(std::string& why) {
    auto at = index_.entries.cbegin();
    for (Change& c : changes_) {
      while (at != index_.entries.cend() && at->path < c.delta.path) ++at;
      const IndexEntry* e = at != index_.entries.cend() && at->path == c.delta.path ? &*at : nullptr;
      c.entry = e;
      // Resuming, an entry the interrupted checkout wrote (the commit's) is its own.
      if (resuming_ && e && e->mode == kFileMode && c.delta.new_mode && std::memcmp(e->id, c.delta.new_id.id, 20) == 0)
        continue;
      if (c.delta.status == TreeDelta::kAdded) {
        if (e) {
          staged_ = true;
          return refuse(why, c.delta.path + " is in the index but not in the commit before");
        }
      } else if (!e || e->mode != kFileMode || std::memcmp(e->id, c.delta.old_id.id, 20) != 0) {
        staged_ = true;
        return refuse(why, c.delta.path + ": the index does not hold what the commit before holds (a change staged)");
      }
    }
    return true;
  }

  // One group per folder, in the order of their first change. A folder's
  // changes mostly follow each other (sorted by path): one look-up a group.
  void group() {
    std::unordered_map<std::string_view, std::size_t> by_folder;
    std::size_t g = 0;
    for (std::size_t i = 0; i < changes_.size(); ++i) {
      const std::string& folder = changes_[i].folder;
      if (i == 0 || folder != changes_[i - 1].folder) {
        auto [it, fresh] = by_folder.try_emplace(folder, groups_.size());
        if (fresh) groups_.emplace_back();
        g = it->second;
      }
      groups_[g].push_back(i);
    }
    // The folders above changed files but holding none, for both looks of
    // attributes_above.
    std::set<std::string, std::less<>> above{""};
    std::unordered_set<std::string_view> holding;
    for (const std::vector<std::size_t>& members : groups_) {  // one folder each
      const std::string& folder = changes_[members.front()].folder;
      holding.insert(folder);
      for (std::size_t slash = folder.find('/'); slash != std::string::npos; slash = folder.find('/', slash + 1))
        if (const std::string_view up(folder.data(), slash); !above.count(up)) above.emplace(up);
    }
    for (const std::string& dir : above)
      if (!holding.count(dir)) above_.push_back(dir);
  }

  // Records the problem of change `i` (the first one by path is reported).
  void note(std::size_t i, const std::string& what) {
    std::lock_guard lock(mutex_);
    if (i < problem_at_) {
      problem_at_ = i;
      problem_ = what;
    }
  }
  void note_link(std::size_t i, const std::string& what) {
    std::lock_guard lock(mutex_);
    if (i < link_at_) {
      link_at_ = i;
      link_why_ = what;
    }
  }
  // A change of the user's at path `i`: changed, removed, or in the way.
  void note_user(std::size_t i, const std::string& what) {
    std::lock_guard lock(mutex_);
    if (i < user_at_) {
      user_at_ = i;
      user_why_ = what;
    }
  }

  // Whether the file at `c` holds the start (or all) of the blob it is to
  // hold: what a checkout killed while writing it leaves. Hostile content
  // of the user's would have to be a prefix of the commit's own bytes.
  bool starts_blob(const BeneathDir::Folder& folder, const Change& c) {
    std::string want;
    if (!blob(*packs_, odb_, c.delta.new_id, want)) return false;
    std::optional<std::string> have = folder.read(c.name, want.size() + 1);
    return have && have->size() <= want.size() && want.compare(0, have->size(), *have) == 0;
  }

  // Whether the file of change `c` holds what the index says (git's safe
  // checkout: a file whose status differs, or is racily clean, is judged by
  // its content).
  bool file_clean(const BeneathDir::Folder& folder, const Change& c, const struct stat& st) const {
    const IndexEntry* e = c.entry;
    if (!e || !S_ISREG(st.st_mode) || (st.st_mode & 0111)) return false;
    if (stat_matches(*e, st) && !is_racy(*e, index_st_)) return true;
    std::optional<std::string> bytes = folder.read(c.name, kMaxFileBytes);
    if (!bytes) return false;
    unsigned char id[20];
    blob_id(*bytes, id);
    return std::memcmp(id, c.delta.old_id.id, 20) == 0;
  }

  // One look at every path to change (nothing is written), noting the first
  // by path of two kinds of problem: a link (or anything but a folder) where
  // a folder goes, or a link where a file goes (note_link); and, when the
  // index could be read (`index_ok`), what git's safe checkout refuses: a
  // file the user changed, removed or put in the way (note). A file this
  // checkout removes is not in the way of the folder that takes its place.
  void inspect(const BeneathDir& root, bool index_ok) {
    OpenFolders folders(root, false);
    missing_.assign(groups_.size(), 0);
    each_group([&](std::size_t g, const std::vector<std::size_t>& members) {
      const std::string& dir = changes_[members.front()].folder;
      std::shared_ptr<const BeneathDir::Folder> folder = folders.open(dir);
      missing_[g] = folder->state() == BeneathDir::Folder::State::kMissing;
      if (folder->state() == BeneathDir::Folder::State::kNotFolder) {
        if (!below_removed_file(dir))
          note_link(members.front(), workdir_ + "/" + dir +
                                         ": a link or a file stands where a folder goes (planted?); nothing written "
                                         "to the work tree");
        return;  // else the file removed first is where the folder goes
      }
      if (struct stat st; folder->status(".gitignore", st) && !S_ISREG(st.st_mode))
        note_link(members.front(), workdir_ + "/" + (dir.empty() ? "" : dir + "/") +
                                       ".gitignore: is not a file; nothing written to the work tree");
      if (struct stat st; folder->status(".gitattributes", st)) {
        const std::string shown = workdir_ + "/" + (dir.empty() ? "" : dir + "/") + ".gitattributes";
        if (S_ISREG(st.st_mode))
          note(members.front(), shown + kAttributes);
        else  // a FIFO (or a link to one) blocks the reading of libgit2's checkout for ever
          note_link(members.front(), shown + ": is not a file; nothing written to the work tree");
      }
      for (std::size_t i : members) {
        Change& c = changes_[i];
        const std::string shown = workdir_ + "/" + c.delta.path;
        struct stat st;
        const bool present = folder->status(c.name, st);
        if (present && S_ISLNK(st.st_mode)) {
          note_link(i, shown + ": is a link; nothing written to the work tree");
          continue;
        }
        // A FIFO, socket or device: libgit2's checkout opens what stands
        // at a path it adds for writing, and blocks on a FIFO for ever
        // (or feeds whatever reads it); refused as a link is.
        if (present && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
          note_link(i, shown + ": is neither a file nor a folder (a FIFO, socket or device); nothing written to the "
                               "work tree");
          continue;
        }
        if (!index_ok) continue;
        if (resuming_) {
          // What the interrupted checkout left: removed already, or written
          // (whole or cut short) with what this one writes.
          if (!present && c.delta.status != TreeDelta::kAdded) continue;
          if (present && S_ISREG(st.st_mode) && c.delta.new_mode && starts_blob(*folder, c)) {
            c.ours = true;
            continue;
          }
        }
        if (c.delta.status == TreeDelta::kAdded) {
          // A folder whose files are all removed first makes way for the file.
          const bool going = present && S_ISDIR(st.st_mode) && old_folders_.count(c.delta.path);
          if (present && !going) note_user(i, shown + ": is in the way (untracked, not in the commit before)");
        } else if (!present) {
          note_user(i, shown + ": was removed from the work tree");
        } else if (!file_clean(*folder, c, st)) {
          note_user(i, shown + ": has changes not committed");
        }
      }
    });
  }

  // The bytes of blob `id`; false when it cannot be read whole (PackReader's
  // checks: sizes, Adler-32, a delta that fits its base) or is not a blob.
  // Not re-hashed: every object of the store was hashed when it came in (a
  // pull re-hashes all it takes; a write made it), and git's checkout trusts
  // its object database the same way; re-hashing was a third of the
  // checkout's instructions.
  bool blob(const PackReader& packs, git_odb* odb, const git_oid& id, std::string& out) {
    git_object_t type = GIT_OBJECT_INVALID;
    if (!packs.read_any(id, type, out)) {
      std::lock_guard lock(odb_mutex_);  // libgit2's odb from one thread at a time
      git_odb_object* object = nullptr;
      if (git_odb_read(&object, odb, &id) != 0) return false;
      OdbObject owned(object);
      type = git_odb_object_type(object);
      out.assign(static_cast<const char*>(git_odb_object_data(object)), git_odb_object_size(object));
    }
    return type == GIT_OBJECT_BLOB;
  }

  // Writes every change on all cores, the removals first (then the folders
  // they empty), so that a file and a folder may trade places; false with
  // `why` (the first problem by path) when one could not be written.
  bool write_files(const BeneathDir& root, const PackReader& packs, git_odb* odb, std::string& why) {
    problem_at_ = kNone;
    {
      OpenFolders folders(root, false);
      each_group([&](std::size_t, const std::vector<std::size_t>& members) {
        std::shared_ptr<const BeneathDir::Folder> folder;
        for (std::size_t i : members) {
          Change& c = changes_[i];
          if (c.delta.status == TreeDelta::kAdded && !c.ours) continue;
          if (!folder) folder = folders.open(c.folder);
          try {
            folder->remove_file(c.name);
            if (c.delta.status == TreeDelta::kRemoved) c.done = true;
          } catch (const std::exception& e) {
            note(i, e.what());
          }
        }
      });
    }
    for (const Change& c : changes_)
      if (c.done) root.remove_empty_folders_above(c.delta.path);
    OpenFolders folders(root, true);
    each_group([&](std::size_t g, const std::vector<std::size_t>& members) {
      std::shared_ptr<const BeneathDir::Folder> folder;
      std::string bytes;
      for (std::size_t i : members) {
        Change& c = changes_[i];
        if (c.delta.status == TreeDelta::kRemoved) continue;
        const std::string shown = workdir_ + "/" + c.delta.path;
        try {
          if (!blob(packs, odb, c.delta.new_id, bytes)) {
            note(i, shown + ": the blob " + oid_str(c.delta.new_id) + " cannot be read");
            continue;
          }
          if (!folder) folder = missing_[g] ? folders.open_new(c.folder) : folders.open(c.folder);
          if (folder->create(c.name, bytes, c.st))
            c.done = true;
          else
            note(i, shown + ": something was put there while kistore wrote the work tree");
        } catch (const std::exception& e) {
          note(i, e.what());
        }
      }
    });
    if (problem_at_ == kNone) return true;
    why = problem_;
    return false;
  }

  // Calls fn(g, members) for every group g of changes of one folder, on all
  // cores; an error that escapes is noted against the group's first change.
  template <typename Fn>
  void each_group(Fn&& fn) {
    parallel_for(groups_.size(), [&](std::size_t g) {
      stop_if_asked();
      try {
        fn(g, groups_[g]);
      } catch (const std::exception& e) {
        note(groups_[g].front(), e.what());
      }
    }, threads_);
  }

  // A look made ahead that is no longer wanted ends here.
  void stop_if_asked() const {
    if (stop_ && stop_->load(std::memory_order_relaxed)) throw LookStopped{};
  }

  // Whether `dir` or a folder above it is a file this checkout removes.
  bool below_removed_file(const std::string& dir) const {
    for (std::size_t end = dir.size(); end != std::string::npos && end > 0; end = dir.rfind('/', end - 1)) {
      if (removed_files_.count(std::string_view(dir).substr(0, end))) return true;
      if (end == 0) break;
    }
    return false;
  }

  // The new index's entries: the old ones with the changes done merged in.
  std::vector<IndexEntry> merged() const {
    std::vector<IndexEntry> out;
    out.reserve(index_.entries.size() + changes_.size());
    auto old = index_.entries.begin();
    for (const Change& c : changes_) {
      if (!c.done) continue;
      for (; old != index_.entries.end() && old->path < c.delta.path; ++old) keep(out, *old);
      if (old != index_.entries.end() && old->path == c.delta.path) ++old;
      if (c.delta.status != TreeDelta::kRemoved) out.push_back(entry_of(c));
    }
    for (; old != index_.entries.end(); ++old) keep(out, *old);
    return out;
  }

  // An entry kept: racily clean against the old index, it is smudged (size
  // 0) so that git checks its content, as git does when it writes an index
  // (read-cache.c, ce_smudge_racily_clean_entry): the new index's later time
  // would otherwise vouch for it.
  void keep(std::vector<IndexEntry>& out, const IndexEntry& e) const {
    out.push_back(e);
    if (is_racy(e, index_st_)) out.back().size = 0;
  }

  // Writes the merged index in place of the old one (see work_tree.h);
  // false with `why` when it cannot.
  bool write_index(std::string& why) {
    const std::string index_path = gitdir_ + "index", lock_path = gitdir_ + "index.lock";
    for (int attempt = 0; attempt < kIndexTries; ++attempt) {
      if (attempt > 0 && !read_index(why)) return false;
      const std::string bytes = render_index(index_.version, merged());
      std::string tmp = temp_file_template(gitdir_, "index");
      const int fd = create_temp_file(tmp, index_st_.st_mode & 0777, "the new index");
      try {
        write_all(fd, bytes, tmp);
      } catch (...) {
        file_system().close(fd);
        remove_quietly(tmp);
        untrack_temporary(tmp);
        throw;
      }
      file_system().close(fd);
      const int lock = take_lock(lock_path);
      if (lock < 0) {
        remove_quietly(tmp);
        untrack_temporary(tmp);
        why = lock_path + ": git holds the index (the lock file is there); the work tree is written, the index "
                          "not: run `git reset` to bring it in step";
        return false;
      }
      struct stat now;
      const bool same = ::stat(index_path.c_str(), &now) == 0 && now.st_ino == index_st_.st_ino &&
                        now.st_size == index_st_.st_size && now.st_mtim.tv_sec == index_st_.st_mtim.tv_sec &&
                        now.st_mtim.tv_nsec == index_st_.st_mtim.tv_nsec;
      bool moved = false;
      if (same) try {
          rename_file(tmp, index_path);
          moved = true;
        } catch (const Error& e) {
          why = e.what();
        }
      untrack_temporary(tmp);
      if (!moved) remove_quietly(tmp);
      file_system().unlink_at(AT_FDCWD, lock_path.c_str(), 0);
      if (moved) {
        adjust_shared(index_path);
        return true;
      }
      if (same) return false;  // the rename failed: `why` says why
    }
    why = index_path + ": changed by another program while kistore wrote it, " + std::to_string(kIndexTries) + " times";
    return false;
  }

  // Whether nobody holds git's lock of the index, waiting a little for a
  // git that holds it.
  static bool lock_free(const std::string& lock_path) {
    struct stat st;
    for (int i = 0; i < kLockTries; ++i) {
      if (::lstat(lock_path.c_str(), &st) != 0 && errno == ENOENT) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  // Takes git's lock of the index, waiting a little for a git that holds it;
  // 0 when taken, -1 when not.
  static int take_lock(const std::string& lock_path) {
    for (int i = 0; i < kLockTries; ++i) {
      const int fd = file_system().open_at(AT_FDCWD, lock_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd >= 0) {
        file_system().close(fd);
        return 0;
      }
      if (errno != EEXIST) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }

  static constexpr std::size_t kNone = SIZE_MAX;

  std::string gitdir_, workdir_;
  const bool resuming_;
  unsigned threads_ = 0;  // each_group's (0: every core)
  const std::atomic<bool>* stop_ = nullptr;  // look(): stop when set
  const PackReader* packs_ = nullptr;  // while look() runs
  git_odb* odb_ = nullptr;
  IndexFile index_;
  bool index_ok_ = false;  // read, and holding `from` at every changed path (look)
  std::string index_why_;  // else why not
  struct stat index_st_ {};
  std::vector<Change> changes_;
  std::vector<std::vector<std::size_t>> groups_;
  std::vector<char> missing_;  // by group: its folder was missing when inspect() looked
  std::vector<std::string> above_;  // attributes_above's folders (group)
  std::set<std::string, std::less<>> removed_files_;  // the paths of files removed
  std::set<std::string, std::less<>> old_folders_;    // folders above a file removed or modified
  std::mutex mutex_, odb_mutex_;
  std::size_t problem_at_ = kNone, link_at_ = kNone, user_at_ = kNone;
  std::string problem_, link_why_, user_why_;
  bool staged_ = false;  // the index holds a change of the user's at a changed path (index_holds_from)
  bool writing_ = false;
  bool index_damaged_ = false;  // the index could not be parsed (read_index)
};

}  // namespace

namespace {

// The work tree and git folder of `repo`'s checkout.
Checkout checkout_of(git_repository* repo, bool resuming) {
  const char* workdir = git_repository_workdir(repo);
  return Checkout(git_repository_path(repo), workdir ? workdir : "", resuming);
}

}  // namespace

WorkTreeCheckout checkout_changes(git_repository* repo, const git_oid& from, const git_oid& to, std::string& why,
                                  bool resuming) {
  Checkout checkout = checkout_of(repo, resuming);
  try {
    return checkout.run(repo, from, to, why);
  } catch (const std::exception& e) {
    why = e.what();
  }
  git_error_clear();
  return checkout.writing() ? WorkTreeCheckout::kPartial : WorkTreeCheckout::kDeclined;
}

// A checkout looked at ahead (look_ahead): what it saw, for the fast-forward
// from `from` to `to`.
class CheckoutLook {
 public:
  CheckoutLook(const WorkTreeSite& site, const git_oid& from, const git_oid& to)
      : checkout(site.gitdir, site.workdir, false), from(from), to(to) {}
  Checkout checkout;
  const git_oid from, to;
  std::optional<WorkTreeCheckout> verdict;  // the look's own (nothing changed, or a path not handled)
  std::string why;
  bool used = false;  // the checkout was written from it
};

void CheckoutLookFree::operator()(CheckoutLook* look) const { delete look; }

bool written_from(const CheckoutLook& look) { return look.used; }

CheckoutLookPtr look_ahead(const WorkTreeSite& site, const std::string& objects_gitdir, const git_oid& from,
                           const git_oid& to, const std::atomic<bool>* stop) noexcept {
  try {
    git_repository* opened = nullptr;
    if (git_repository_open_bare(&opened, objects_gitdir.c_str()) != 0) {
      git_error_clear();
      return nullptr;
    }
    Repository objects(opened);
    // What the pull checks comes first: this thread takes only the time the
    // check leaves (it works on one core at times and on every core at others).
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19);
    CheckoutLookPtr look(new CheckoutLook(site, from, to));
    // One thread: the other core is the pull's, checking what came in.
    look->verdict = look->checkout.look(objects.get(), from, to, look->why, 1, stop);
    git_error_clear();
    return look;
  } catch (...) {
    git_error_clear();
    return nullptr;
  }
}

namespace {

// The checkout from `from` to `to` that `ahead` looked at: written now if
// what it saw still holds (Checkout::still_holds), else looked at again.
WorkTreeCheckout finish_look(git_repository* repo, CheckoutLook& ahead, std::string& why) {
  try {
    if (ahead.verdict == WorkTreeCheckout::kDone) return WorkTreeCheckout::kDone;  // nothing changed
    if (!ahead.verdict && ahead.checkout.clear() && ahead.checkout.still_holds()) {
      ahead.used = true;
      return ahead.checkout.write(repo, why);
    }
  } catch (const std::exception& e) {
    if (ahead.checkout.writing()) {
      why = e.what();
      git_error_clear();
      return WorkTreeCheckout::kPartial;
    }
  }
  git_error_clear();
  return checkout_changes(repo, ahead.from, ahead.to, why);
}

// The checkout itself: kistore's own, else libgit2's safe one.
std::string checkout_to_head(git_repository* repo, const std::string& name, const git_oid* from, bool resuming,
                             CheckoutLook* ahead) {
  // kistore's own checkout of the paths the write changed (work_tree.h);
  // libgit2's safe checkout for what it declines (user's changes in the
  // way, a sparse checkout, ...), which keeps the user's files; neither
  // where it refuses (a link in the way, which libgit2 would follow).
  if (from) {
    std::optional<git_oid> to;
    try {
      to = ref_target(repo, name);
    } catch (const Error&) {
    }
    std::string why;
    WorkTreeCheckout done = WorkTreeCheckout::kDeclined;
    if (to && ahead && !resuming && git_oid_equal(&ahead->from, from) && git_oid_equal(&ahead->to, &*to))
      done = finish_look(repo, *ahead, why);
    else if (to)
      done = checkout_changes(repo, *from, *to, why, resuming);
    if (done == WorkTreeCheckout::kDone) return "";
    if (done != WorkTreeCheckout::kDeclined) return why.empty() ? "a file could not be written" : why;
  }
  git_checkout_options opts = GIT_CHECKOUT_OPTIONS_INIT;
  opts.checkout_strategy = GIT_CHECKOUT_SAFE;
  git_commit* base = nullptr;
  git_tree* base_tree = nullptr;
  if (from && git_commit_lookup(&base, repo, from) == 0 && git_commit_tree(&base_tree, base) == 0)
    opts.baseline = base_tree;  // only what changed since is written
  // Paths the user changed are kept, and the checkout says so (a conflict).
  const int rc = git_checkout_head(repo, &opts);
  std::string why;
  if (rc == GIT_ECONFLICT) why = "files of yours stand where the commit changes paths, and were kept";
  else if (rc < 0) why = last_error();
  git_tree_free(base_tree);
  git_commit_free(base);
  git_error_clear();
  return why;
}

// Whether `repo` has a work tree whose HEAD names branch `name`.
bool checks_out(git_repository* repo, const std::string& name) {
  if (git_repository_is_bare(repo)) return false;
  git_reference* head = nullptr;
  if (git_reference_lookup(&head, repo, "HEAD") != 0) {
    git_error_clear();
    return false;
  }
  bool names_it = git_reference_type(head) == GIT_REFERENCE_SYMBOLIC && git_reference_symbolic_target(head) == name;
  git_reference_free(head);
  return names_it;
}

// The commit the work tree and index were left at by a checkout that did not
// finish (declined, refused, cut short by a full disk, or killed).
std::optional<git_oid> owed_from(git_repository* repo) {
  try {
    return ref_target(repo, kCheckoutOwedRef);
  } catch (const Error&) {
    git_error_clear();
    return std::nullopt;
  }
}

// The checkout from `from` (null: none before), and the owed reference
// removed once it is done; "" then, else why the work tree is behind.
std::string finish_checkout(git_repository* repo, const std::string& name, const git_oid* from, bool resuming,
                            CheckoutLook* ahead = nullptr) {
  std::string why = checkout_to_head(repo, name, from, resuming, ahead);
  if (why.empty() && from) delete_ref(repo, kCheckoutOwedRef);
  return why;
}

}  // namespace

std::optional<WorkTreeSite> checkout_site(git_repository* repo, const std::string& name) {
  if (!checks_out(repo, name) || owed_from(repo)) return std::nullopt;
  const char* workdir = git_repository_workdir(repo);
  if (!workdir) return std::nullopt;
  return WorkTreeSite{git_repository_path(repo), workdir};
}

std::string sync_work_tree(git_repository* repo, const std::string& name, const git_oid* from, CheckoutLook* ahead) {
  if (!checks_out(repo, name)) return "";
  // A checkout owed from before (killed, or declined for a cause since
  // gone) starts where that one left the work tree, not at `from`: the
  // reference is set before any file is written and removed once the work
  // tree and index hold the branch's commit.
  if (std::optional<git_oid> owed = owed_from(repo)) return finish_checkout(repo, name, &*owed, true);
  try {
    if (from) set_ref(repo, kCheckoutOwedRef, *from, "kistore: checkout owed");
  } catch (const Error&) {
    git_error_clear();
  }
  return finish_checkout(repo, name, from, false, ahead);
}

std::string resume_work_tree(git_repository* repo, const std::string& name) {
  if (!checks_out(repo, name)) return "";
  std::optional<git_oid> owed = owed_from(repo);
  if (!owed) return "";
  std::string why = finish_checkout(repo, name, &*owed, true);
  if (why.empty()) return "";
  // A checkout killed while it wrote leaves the files it wrote, which now
  // stand in the way as if they were the user's.
  return "a checkout of an earlier kistore write (from commit " + oid_str(*owed).substr(0, 12) +
         ") is still owed: " + why +
         "; if those files are not yours (a kistore killed while writing them), move them away or run `git reset "
         "--hard`, and the next kistore command finishes the checkout";
}

}  // namespace kistore::git
