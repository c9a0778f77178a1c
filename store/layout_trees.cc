#include "store/layout_trees.h"

#include "refs/layout.h"

namespace kistore {
namespace {

constexpr Level kLevels[] = {Level::kDisputed, Level::kReported, Level::kSourceNative, Level::kReproduced};

// Where a source id's own segments start: after "refs/sources/".
constexpr std::size_t kSourcesPrefix = 13;

}  // namespace

LayoutTrees::LayoutTrees(git_repository* repo, bool check_ids)
    : repo_(repo), odb_(git::open_odb(repo)), packs_(git_repository_path(repo)),
      reader_(odb_.get(), {&packs_, check_ids, /*keep=*/true}) {}

std::optional<git_oid> LayoutTrees::entry(const git_oid* root, const std::string& path) const {
  return reader_.blob_at(root, path);
}

std::optional<std::string> LayoutTrees::read(const git_oid* root, const std::string& path) const {
  auto id = entry(root, path);
  if (!id) return std::nullopt;
  return git::blob_bytes(repo_, *id);
}

std::optional<Format> LayoutTrees::format_of(const git_oid* root) const {
  if (!root) return kCurrentFormat;
  auto bytes = read(root, std::string(kFormatPath));
  if (!bytes) return Format::k1;
  return parse_format_bytes(*bytes);
}

std::optional<LevelState> LayoutTrees::level_of(const git_oid* root, const Digest& run) const {
  const Format f = format_of(root).value_or(kCurrentFormat);
  for (Level l : kLevels)
    if (auto id = entry(root, level_path(f, l, run))) return LevelState{l, *id};
  return std::nullopt;
}

int LayoutTrees::level_count(const git_oid* root, const Digest& run) const {
  const Format f = format_of(root).value_or(kCurrentFormat);
  int n = 0;
  for (Level l : kLevels) n += entry(root, level_path(f, l, run)).has_value();
  return n;
}

bool LayoutTrees::source_blocked(const git_oid* root, const std::string& path) const {
  if (reader_.tree_at(root, path)) return true;
  for (std::size_t slash = path.find('/', kSourcesPrefix); slash != std::string::npos; slash = path.find('/', slash + 1))
    if (entry(root, path.substr(0, slash))) return true;
  return false;
}

std::vector<git::TreeDelta> LayoutTrees::diff(const git_oid* from, const git_oid* to, const std::string& dir) const {
  std::vector<git::TreeDelta> out;
  reader_.diff(from, to, dir, [&](const git::TreeDelta& d) { out.push_back(d); });
  return out;
}

}  // namespace kistore
