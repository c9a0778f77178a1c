#include "store/core/frame_encoder.h"

#include <algorithm>

#include "objects/digest.h"

#include "objects/error.h"
#include "refs/layout.h"

namespace kistore {

std::vector<std::uint32_t> dictionary_ids(const Snapshot& tree) {
  std::vector<std::uint32_t> ids;
  if (tree.empty() || tree.format() == Format::k1) return ids;  // format 1 has none
  for (const std::string& name : tree.list(kDictionariesDir))
    if (auto id = parse_dictionary_path(tree.format(), std::string(kDictionariesDir) + "/" + name)) ids.push_back(*id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

FrameEncoder::FrameEncoder(const Snapshot& base) : taken_(dictionary_ids(base)) {
  // The highest ID zstd can compress with: one it cannot (damaged, or one
  // whose tables load only for decoding) is passed over, so that no
  // dictionary a tree holds can stop the store's writers (verify reports it).
  const DictionaryLookup lookup = taken_.empty() ? DictionaryLookup() : base.dictionaries();
  for (auto id = taken_.rbegin(); id != taken_.rend() && !dictionary_; ++id) {
    std::shared_ptr<const Dictionary> d;
    try {
      d = lookup(*id);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kCorruption) throw;
      continue;
    }
    if (d && d->compression_problem().empty()) dictionary_ = std::move(d);
  }
}

bool FrameEncoder::train(const std::vector<std::string_view>& samples) {
  if (dictionary_) return false;
  std::optional<std::string> bytes = train_dictionary(
      samples, [&](std::uint32_t id) { return std::binary_search(taken_.begin(), taken_.end(), id); });
  if (!bytes) return false;
  const std::uint32_t id = dictionary_id(*bytes);
  dictionary_ = std::make_shared<const Dictionary>(*bytes, id, dictionary_path(id));
  trained_ = true;
  return true;
}

namespace {

// Up to `n` documents `base` holds, in path order (digests are uniform, so
// the first folders are as good a sample as any), when all 256 first-level
// folders of objects/sha256/ are there; none otherwise.
std::vector<std::string> stored_samples(const Snapshot& base, std::size_t n) {
  std::vector<std::string> out;
  const std::string root = "objects/sha256";
  const std::vector<std::string> first = base.list(root);
  if (first.size() < 256) return out;
  for (const std::string& a : first)
    for (const std::string& b : base.list(root + "/" + a))
      for (const std::string& c : base.list(root + "/" + a + "/" + b)) {
        if (out.size() >= n) return out;
        std::optional<Digest> d = Digest::parse_hex(a + b + c);
        if (!d) continue;
        try {
          out.push_back(base.object_bytes(*d));
        } catch (const Error&) {
        }
      }
  return out;
}

}  // namespace

bool FrameEncoder::train_from(const Snapshot& base, const std::vector<std::string_view>& fresh) {
  if (dictionary_ || base.format() == Format::k1) return false;
  if (fresh.size() >= kTrainingMinimumDocuments || base.empty()) return train(fresh);
  std::vector<std::string> stored = stored_samples(base, kTrainingSampleDocuments - fresh.size());
  if (fresh.size() + stored.size() < kTrainingMinimumDocuments) return false;
  std::vector<std::string_view> samples(fresh);
  for (const std::string& s : stored) samples.push_back(s);
  return train(samples);
}

std::string FrameEncoder::trained_path() const { return trained_ ? dictionary_path(dictionary_->id()) : std::string(); }

void FrameEncoder::check_head(const Snapshot& head) const {
  if (!trained_) return;
  std::optional<std::string> there = head.read(trained_path());
  if (there && *there != dictionary_->bytes())
    throw IOError(trained_path() + ": another writer recorded another dictionary of this ID meanwhile; nothing was "
                  "written: run the add again");
}

}  // namespace kistore
