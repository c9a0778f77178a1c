// The zstd dictionaries of one tree (SPEC §2 `dictionaries/<id>`), for the
// readers of objects whose frames name one: Snapshot::object_bytes, verify,
// the checks of a pull, the level audit.
//
// A DictionaryCache reads `dictionaries/<id>` through the function it is
// given, the first time a frame names that ID, checks it (objects/blob.h
// Dictionary: magic, ID, size, loadable tables) and keeps the prepared
// dictionary, up to kCachedDictionaries of them (the least recently used goes
// first), so that memory stays bounded whatever a tree holds.
//
// Thread-safety: lookup() may be called from any thread; calls are
// serialised, and `read` is only ever called under the cache's lock, one call
// at a time, so it may use a Snapshot that no other thread uses meanwhile.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "objects/blob.h"

namespace kistore {

class DictionaryCache {
 public:
  static constexpr std::size_t kCachedDictionaries = 32;
  // read(path): the bytes of the blob at `path` in the tree, or nullopt when
  // there is none. It may throw; lookup passes that on.
  using Reader = std::function<std::optional<std::string>(const std::string& path)>;
  explicit DictionaryCache(Reader read);

  // The dictionary whose Dictionary_ID is `id`: null when the tree has no
  // dictionaries/<id>; Error(kCorruption) naming that path when its blob is
  // not a dictionary of that ID (read once: the same error again after).
  std::shared_ptr<const Dictionary> find(std::uint32_t id);
  // find, as decode_object takes it; valid while this cache lives.
  DictionaryLookup lookup();

 private:
  Reader read_;
  std::mutex mu_;
  std::list<std::uint32_t> recent_;  // most recent first
  struct Entry {
    std::shared_ptr<const Dictionary> dictionary;  // null: the tree has none (or error)
    std::string error;                             // why dictionaries/<id> is not one
    std::list<std::uint32_t>::iterator place;
  };
  std::unordered_map<std::uint32_t, Entry> entries_;
};

}  // namespace kistore
