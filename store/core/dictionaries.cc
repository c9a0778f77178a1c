#include "store/core/dictionaries.h"

#include "objects/error.h"
#include "refs/layout.h"

namespace kistore {

DictionaryCache::DictionaryCache(Reader read) : read_(std::move(read)) {}

std::shared_ptr<const Dictionary> DictionaryCache::find(std::uint32_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = entries_.find(id); it != entries_.end()) {
    recent_.splice(recent_.begin(), recent_, it->second.place);
    if (!it->second.error.empty()) throw Corruption(it->second.error);
    return it->second.dictionary;
  }
  const std::string path = dictionary_path(id);
  Entry entry;
  try {
    if (std::optional<std::string> bytes = read_(path))
      entry.dictionary = std::make_shared<const Dictionary>(*bytes, id, path);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kCorruption) throw;
    entry.error = e.what();  // a damaged dictionary stays damaged: read once
  }
  if (entries_.size() >= kCachedDictionaries) {
    entries_.erase(recent_.back());
    recent_.pop_back();
  }
  recent_.push_front(id);
  entry.place = recent_.begin();
  auto& kept = entries_.emplace(id, std::move(entry)).first->second;
  if (!kept.error.empty()) throw Corruption(kept.error);
  return kept.dictionary;
}

DictionaryLookup DictionaryCache::lookup() {
  return [this](std::uint32_t id) { return find(id); };
}

}  // namespace kistore
