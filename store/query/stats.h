// Where a store's bytes go (`kistore stats`): the blobs and trees of the
// branch's tree by part of the layout (SPEC §2), the objects' compressed and
// decompressed sizes, and what the repository folder holds on disk.
//
// Sizes are git object sizes (a blob's bytes, a tree object's bytes) as the
// tree at the branch head names them, each object counted once however many
// paths name it; "on disk" is every file under the repository's objects/
// folder (packs, their indexes, loose objects: all of history), as kistore
// or git left it.
//
// Thread-safety: as Store (store_stats reads on every core).
#pragma once

#include <cstdint>
#include <vector>

#include "store/core/store.h"

namespace kistore {

struct StoreStats {
  struct Part {
    std::uint64_t count = 0;  // objects (distinct git ids)
    std::uint64_t bytes = 0;  // their sizes, summed
  };
  // Blobs by path: objects/ (zstd frames), dictionaries/, refs/metadata/,
  // the rest of refs/ and FORMAT (the index).
  Part objects, dictionaries, metadata, index;
  // Trees: those below objects/, those below refs/, and the rest (the root,
  // objects/ and refs/ themselves, dictionaries/).
  Part object_trees, index_trees, other_trees;
  std::uint64_t content_bytes = 0;          // the objects' decompressed sizes (their frame headers)
  std::uint64_t frames_with_dictionary = 0;  // objects whose frame names a dictionary
  std::vector<std::uint32_t> dictionary_ids;
  std::uint64_t runs = 0;        // level entries: one per run (reruns included); format 3: group and rerun lines
  std::uint64_t disk_bytes = 0;  // every file below the repository's objects/ folder
  std::uint64_t disk_files = 0;
  std::uint64_t commits = 0;  // reachable from the branch head
};

// The figures of the store's branch head. An empty store gives zeros (and
// what its objects/ folder holds). Error(kCorruption) naming the path when
// a tree or blob cannot be read; Error(kIO) when the repository folder
// cannot be listed.
StoreStats store_stats(const Store& store);

}  // namespace kistore
