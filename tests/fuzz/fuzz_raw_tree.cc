// libFuzzer target for the raw-tree parser (store/git/raw_tree.h), which reads
// every tree a pull receives before anything else looks at it: any bytes
// must end in entries or in Error(kCorruption) — never a crash, a sanitizer
// report or another exception — and:
//   - next_entry advances by exactly the entry's bytes, each entry's name is
//     non-empty and its 20-byte id lies inside the tree;
//   - RawTree::find finds every name that the walk found (with a mode and id
//     of an entry of that name), and nothing that is not there;
//   - TreeReader's diff and listing over trees built from the input (with
//     ids checked) end in paths or in Error(kCorruption).
//
// Input: up to four tree objects' bytes, separated by "\xff\xff\xff\xff"
// (0xff cannot appear in a mode, and an id holding it only shifts the cut).
// Before they are stored, every tree entry of tree k gets the id of tree
// k+1, so that the walks go down through trees the fuzzer wrote.
#include <git2.h>
#include <git2/sys/mempack.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "objects/error.h"
#include "store/git/raw_tree.h"

namespace {

namespace git = kistore::git;

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s\n", what, detail.c_str());
  std::abort();
}

bool corruption(const kistore::Error& e) { return e.code() == kistore::ErrorCode::kCorruption; }

// Walks `tree`; for each tree entry, points its id at `child` (when given).
// Returns the names read, or stops at the first malformed entry.
std::set<std::string, std::less<>> walk(std::string& tree, const git_oid* child) {
  std::set<std::string, std::less<>> names;
  std::string_view rest = tree;
  try {
    for (git::RawEntry e; git::next_entry(rest, e);) {
      const char* end = rest.data();
      if (e.bytes.data() + e.bytes.size() != end) fail("entry bytes do not end where the walk goes on", "");
      if (e.name.empty()) fail("an empty name", "");
      auto id_at = static_cast<std::size_t>(reinterpret_cast<const char*>(e.id) - tree.data());
      if (id_at + GIT_OID_RAWSZ > tree.size()) fail("an id outside the tree", "");
      if (child && e.tree()) std::memcpy(tree.data() + id_at, child->id, GIT_OID_RAWSZ);
      names.emplace(e.name);
    }
  } catch (const kistore::Error& e) {
    if (!corruption(e)) fail("not a corruption error", e.what());
  }
  return names;
}

void check_find(const std::string& tree, const std::set<std::string, std::less<>>& names) {
  git::RawTree raw{std::string(tree)};
  try {
    for (const std::string& name : names) {
      auto found = raw.find(name);
      if (!found || found->name != name) fail("find misses a name the walk read", name);
    }
    if (!names.count("\x01missing") && raw.find("\x01missing")) fail("find invents a name", "");
  } catch (const kistore::Error& e) {
    // A tree malformed after its first entries is refused as a whole.
    if (!corruption(e)) fail("not a corruption error", e.what());
  }
}

struct Odb {
  git_odb* odb = nullptr;
  git_odb_backend* mempack = nullptr;
  Odb() {
    static const bool initialized = git_libgit2_init() > 0;
    (void)initialized;
    if (git_odb_new(&odb) < 0 || git_mempack_new(&mempack) < 0 || git_odb_add_backend(odb, mempack, 1) < 0) abort();
  }
  ~Odb() { git_odb_free(odb); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> trees;
  for (std::size_t at = 0; trees.size() < 4;) {
    std::size_t cut = input.find("\xff\xff\xff\xff", at);
    trees.emplace_back(input.substr(at, cut == std::string_view::npos ? cut : cut - at));
    if (cut == std::string_view::npos) break;
    at = cut + 4;
  }
  Odb store;
  std::vector<git_oid> ids(trees.size());
  for (std::size_t k = trees.size(); k-- > 0;) {
    auto names = walk(trees[k], k + 1 < trees.size() ? &ids[k + 1] : nullptr);
    check_find(trees[k], names);
    if (git_odb_write(&ids[k], store.odb, trees[k].data(), trees[k].size(), GIT_OBJECT_TREE) < 0) abort();
  }
  git::TreeReader reader(store.odb, {.packs = nullptr, .check_ids = true, .keep = true});
  std::size_t seen = 0;
  try {
    reader.list(ids[0], "", [&](const std::string& path, const git_oid&, git_object_t) {
      if (path.empty()) fail("an empty path", "");
      ++seen;
    });
  } catch (const kistore::Error& e) {
    if (!corruption(e)) fail("not a corruption error", e.what());
  }
  try {
    const git_oid* other = trees.size() > 1 ? &ids[1] : nullptr;
    reader.diff(other, &ids[0], "", [&](const git::TreeDelta& d) {
      if (d.path.empty()) fail("a delta without a path", "");
    });
    (void)reader.blob_at(&ids[0], "a/b");
    (void)reader.tree_at(&ids[0], "a");
  } catch (const kistore::Error& e) {
    if (!corruption(e)) fail("not a corruption error", e.what());
  }
  (void)seen;
  return 0;
}
