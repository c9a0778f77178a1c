#include "store/query/stats.h"

#include <algorithm>
#include <filesystem>
#include <unordered_set>

#include "objects/blob.h"
#include "objects/error.h"
#include "refs/layout.h"
#include "store/core/frame_encoder.h"
#include "store/git/commit_graph.h"
#include "store/git/git.h"
#include "store/git/raw_tree.h"

namespace kistore {
namespace {

enum class Area { kObjects, kDictionaries, kMetadata, kIndex, kOther };

Area area_of(const std::string& path) {
  if (path.starts_with("objects/")) return Area::kObjects;
  if (path.starts_with("dictionaries/")) return Area::kDictionaries;
  if (path.starts_with("refs/metadata/")) return Area::kMetadata;
  if (path.starts_with("refs/") || path == kFormatPath) return Area::kIndex;
  return Area::kOther;
}

// One walk of the head tree, every git object counted once.
class Counter {
 public:
  Counter(const git::ObjectDatabase& odb, StoreStats& out, Format format)
      : odb_(odb), trees_(odb.get(), {}), out_(out), format_(format) {}

  void tree(const git_oid& id, const std::string& path) {
    if (!seen_.insert(id).second) return;
    std::shared_ptr<const git::RawTree> t = trees_.tree(id, path);
    StoreStats::Part& part = path.starts_with("objects/") ? out_.object_trees
                             : path.starts_with("refs/")  ? out_.index_trees
                                                          : out_.other_trees;
    ++part.count, part.bytes += t->bytes().size();
    std::string_view rest = t->bytes();
    git::RawEntry e;
    while (git::next_entry(rest, e)) {
      std::string child = path.empty() ? std::string(e.name) : path + "/" + std::string(e.name);
      git_oid child_id = e.oid();
      if (e.tree()) tree(child_id, child);
      else if (!e.link()) blob(child_id, child);
    }
  }

 private:
  void blob(const git_oid& id, const std::string& path) {
    if (format_ == Format::k3) {
      // A line of refs/groups or refs/reruns per run (reruns included).
      if (path.starts_with("refs/groups/") || path.starts_with("refs/reruns/"))
        odb_.read(id, path, [&](std::string_view bytes) { out_.runs += static_cast<std::uint64_t>(std::count(bytes.begin(), bytes.end(), '\n')); });
    } else if (path.starts_with("refs/levels/")) {
      ++out_.runs;  // a run's one level entry
    }
    if (!seen_.insert(id).second) return;
    Area area = area_of(path);
    StoreStats::Part& part = area == Area::kObjects        ? out_.objects
                             : area == Area::kDictionaries ? out_.dictionaries
                             : area == Area::kMetadata     ? out_.metadata
                                                           : out_.index;
    ++part.count;
    if (area != Area::kObjects) {
      part.bytes += odb_.size_of(id, path);
      return;
    }
    odb_.read(id, path, [&](std::string_view frame) {
      part.bytes += frame.size();
      out_.content_bytes += frame_content_size(frame);
      if (frame_dictionary_id(frame)) ++out_.frames_with_dictionary;
    });
  }

  const git::ObjectDatabase& odb_;
  git::TreeReader trees_;
  StoreStats& out_;
  std::unordered_set<git_oid, git::OidHash, git::OidEq> seen_;
  Format format_;
};

}  // namespace

StoreStats store_stats(const Store& store) {
  StoreStats out;
  const std::string gitdir = git::gitdir(store.repo());
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(gitdir + "objects", ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec)) ++out.disk_files, out.disk_bytes += it->file_size(ec);
  if (ec) throw IOError(gitdir + "objects: listing the repository's objects: " + ec.message());
  Snapshot head = store.snapshot();
  if (head.empty()) return out;
  out.dictionary_ids = dictionary_ids(head);
  const git::ObjectDatabase odb(store.repo());
  Counter(odb, out, head.format()).tree(*head.tree_id(), "");
  out.commits = git::count_commits(store.repo(), git::to_oid(head.commit()));
  return out;
}

}  // namespace kistore
