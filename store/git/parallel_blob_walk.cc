// walk_blobs_parallel (parallel_blob_walk.h): every blob below a folder on
// every core, for verify. Each part of the tree runs on one worker, through a
// repository handle of that worker's own.
#include "store/git/parallel_blob_walk.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "objects/parallel.h"
#include "store/git/git.h"
#include "store/git/objwrite.h"
#include "store/git/packread.h"
#include "store/git/raw_tree.h"

namespace kistore::git {
namespace {

// What walk_parallel hands out: a folder below which one worker lists and
// reads every blob, or a single blob.
struct WalkPart {
  std::string path;
  git_oid id;
  bool tree;
};

// The parts of the tree `root` at `dir`: the folders three levels down
// (objects/sha256/ab, refs/levels/x, ...) and the blobs above them, in tree
// order. other(path) for the entries above them that are neither.
std::vector<WalkPart> walk_parts(const TreeReader& trees, std::string_view dir, const git_oid& root,
                                 const std::function<void(const std::string&)>& other) {
  std::vector<WalkPart> parts;
  std::function<void(const std::string&, const git_oid&, int)> list = [&](const std::string& path, const git_oid& id,
                                                                          int depth) {
    trees.list(id, path, [&](const std::string& p, const git_oid& e, git_object_t type) {
      if (type == GIT_OBJECT_BLOB) parts.push_back({p, e, false});
      else if (other) other(p);
    }, [&](const std::string& p, const git_oid& e) {
      if (depth + 1 >= 3) parts.push_back({p, e, true});
      else list(p, e, depth + 1);
      return false;
    });
  };
  std::size_t depth = dir.empty() ? 0 : std::count(dir.begin(), dir.end(), '/') + 1;
  list(std::string(dir), root, static_cast<int>(depth));
  return parts;
}

// Small blobs read and found to hash to their id, by id: an index holds
// many entries with the same bytes (every default level entry is one blob),
// and one read and hash serves them all. Direct-mapped, so it stays small.
class CheckedBlobs {
 public:
  static constexpr std::size_t kMaxBytes = 256;
  const std::string* find(const git_oid& id) const {
    const Slot& s = slots_[index(id)];
    return s.used && git_oid_equal(&s.id, &id) ? &s.bytes : nullptr;
  }
  void add(const git_oid& id, std::string_view bytes) {
    if (bytes.size() > kMaxBytes) return;
    Slot& s = slots_[index(id)];
    s.id = id, s.used = true;
    s.bytes.assign(bytes.data(), bytes.size());
  }

 private:
  struct Slot {
    git_oid id{};
    bool used = false;
    std::string bytes;
  };
  static std::size_t index(const git_oid& id) { return OidHash{}(id) % kSlots; }
  static constexpr std::size_t kSlots = 61;
  Slot slots_[kSlots];
};

// One worker's way into the repository: a handle of its own (libgit2 wants
// one per thread), its object database, a tree reader, a read buffer and the
// small blobs it has checked.
struct WalkSlot {
  Repository repo;
  Odb odb;
  std::unique_ptr<TreeReader> trees;
  std::string buffer;
  CheckedBlobs checked;

  WalkSlot(const std::string& gitdir, const PackReader& packs, bool check_tree_ids) {
    git_repository* r = nullptr;
    check(git_repository_open_ext(&r, gitdir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr),
               gitdir + ": opening for reading");
    repo.reset(r);
    odb = open_odb(r);
    trees = std::make_unique<TreeReader>(odb.get(), TreeReader::Options{&packs, check_tree_ids});
  }
};

// Slots for the parts that run at once: a part takes a free one (or opens
// one) and gives it back, so no more are opened than parts run together.
class WalkSlots {
 public:
  WalkSlots(std::string gitdir, const PackReader& packs, bool check_tree_ids)
      : gitdir_(std::move(gitdir)), packs_(packs), check_tree_ids_(check_tree_ids) {}
  std::unique_ptr<WalkSlot> take() {
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<WalkSlot> slot = std::move(free_.back());
        free_.pop_back();
        return slot;
      }
    }
    return std::make_unique<WalkSlot>(gitdir_, packs_, check_tree_ids_);
  }
  void give(std::unique_ptr<WalkSlot> slot) {
    std::lock_guard lock(mutex_);
    free_.push_back(std::move(slot));
  }

 private:
  std::string gitdir_;
  const PackReader& packs_;
  bool check_tree_ids_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<WalkSlot>> free_;
};

// Reads the blob `id` at `path` and hands it to fn(part, path, bytes, error):
// through the pack reader first, hashed against its id unless the caller
// checks the content itself (a small blob this worker hashed before is not
// read again).
void read_walk_blob(WalkSlot& slot, const PackReader& packs, std::size_t part, const std::string& path,
                    const git_oid& id, bool self_checked, const ParallelBlobWalk::Blob& fn) {
  if (!self_checked)
    if (const std::string* known = slot.checked.find(id)) {
      std::string_view bytes = *known;
      return fn(part, path, &bytes, std::string());
    }
  OdbObject owned;
  std::string_view bytes;
  git_object_t type = GIT_OBJECT_INVALID;
  if (packs.read(id, type, slot.buffer) && type == GIT_OBJECT_BLOB) {
    bytes = slot.buffer;
  } else {
    git_odb_object* o = nullptr;
    if (git_odb_read(&o, slot.odb.get(), &id) < 0) {
      std::string why = "its git object " + oid_str(id) + " cannot be read: " + last_error();
      git_error_clear();
      return fn(part, path, nullptr, why);
    }
    owned.reset(o);
    if (git_odb_object_type(o) != GIT_OBJECT_BLOB)
      return fn(part, path, nullptr,
                "its git object " + oid_str(id) + " is a " + git_object_type2string(git_odb_object_type(o)) +
                    ", where a file (blob) belongs");
    bytes = std::string_view(static_cast<const char*>(git_odb_object_data(o)), git_odb_object_size(o));
  }
  if (!self_checked) {
    git_oid actual = object_id(GIT_OBJECT_BLOB, bytes);
    if (!git_oid_equal(&actual, &id))
      return fn(part, path, nullptr, "its git object " + oid_str(id) + " holds content with another id");
    slot.checked.add(id, bytes);
  }
  fn(part, path, &bytes, std::string());
}

}  // namespace

void walk_blobs_parallel(git_repository* repo, const git_oid* root_tree, std::string_view dir, unsigned threads,
                         const ParallelBlobWalk& walk, bool trees_checked) {
  const ParallelBlobWalk::Count& count = walk.count;
  const ParallelBlobWalk::Blob& fn = walk.blob;
  const ParallelBlobWalk::Other& other = walk.other;
  const ParallelBlobWalk::SelfChecked& self_checked = walk.self_checked;
  const ParallelBlobWalk::Progress& progress = walk.progress;
  // libgit2 does not re-hash what it reads here; objects are hashed below
  // instead, except where the caller checks the content itself.
  HashCheck hash_check_off(false);
  std::string gitdir = git_repository_path(repo);
  PackReader packs(gitdir);  // whole stored objects, read without libgit2
  std::vector<WalkPart> parts;
  {
    Odb odb = open_odb(repo);
    TreeReader trees(odb.get(), {&packs, !trees_checked});
    std::optional<git_oid> root;
    if (root_tree) root = trees.tree_at(root_tree, dir);
    if (root) parts = walk_parts(trees, dir, *root, other);
  }
  count(parts.size());
  if (parts.empty()) return;

  // Parts run on every core (objects/parallel.h), the last first: the big
  // index folders under refs/ start early, so that no long part starts
  // last. Progress is reported from the calling thread only.
  WalkSlots slots(gitdir, packs, !trees_checked);
  std::mutex other_mutex;
  std::atomic<bool> failed{false};
  std::atomic<std::size_t> done{0};
  std::size_t reported = 0;
  // Measured against every object the packs list (blobs and trees are
  // counted as they are read), as git fsck measures its own; loose objects
  // are not listed, so a walk that passes the total goes on without one.
  const std::size_t total = packs.object_count();
  const std::thread::id caller = std::this_thread::get_id();
  parallel_for(parts.size(), [&](std::size_t i) {
    if (failed) return;  // another part failed: its error is what the walk throws
    const std::size_t k = parts.size() - 1 - i;
    const WalkPart& part = parts[k];
    std::unique_ptr<WalkSlot> slot = slots.take();
    std::size_t read = 0;
    try {
      auto read_blob = [&](const std::string& path, const git_oid& id) {
        read_walk_blob(*slot, packs, k, path, id, self_checked && self_checked(path), fn);
        ++read;
      };
      if (!part.tree) {
        read_blob(part.path, part.id);
      } else {
        std::vector<std::pair<std::string, git_oid>> blobs;
        std::vector<std::string> others;
        // No deeper than a store's trees may go (a caller that checks the
        // shape at the same time reports a deeper one), so a hostile tree
        // cannot run the listing's recursion out of stack.
        slot->trees->list(part.id, part.path, [&](const std::string& p, const git_oid& e, git_object_t type) {
          if (type == GIT_OBJECT_BLOB) blobs.emplace_back(p, e);
          else others.push_back(p);
        }, [&](const std::string& p, const git_oid&) {
          ++read;  // a tree, counted as the objects progress is measured in are
          return static_cast<std::size_t>(std::count(p.begin(), p.end(), '/')) < kMaxTreeDepth + 1;
        });
        if (!others.empty() && other) {
          std::lock_guard lock(other_mutex);
          for (const std::string& p : others) other(p);
        }
        for (const auto& [p, e] : blobs) read_blob(p, e);
      }
    } catch (...) {
      failed = true;
      throw;
    }
    slots.give(std::move(slot));
    std::size_t now = done.fetch_add(read) + read;
    if (progress && std::this_thread::get_id() == caller && now - reported >= 256) {
      reported = now;
      progress(now, now < total ? total : 0);
    }
  }, threads);
  // The commits, the top trees and anything the tree does not name were not
  // counted: the walk is done all the same.
  if (progress && total) progress(total, total);
}

}  // namespace kistore::git
