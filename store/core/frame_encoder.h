// How a writer compresses the objects it adds (SPEC §2 objects/ and
// dictionaries/<id>), for add_documents (store/write/add.h) and BulkAdd
// (store/write/bulk_add.h).
//
// A store's new frames are compressed with its dictionary: of the tree's
// dictionaries/<id>, the one of the highest ID that zstd can compress with
// (a tree holds several only after a merge of stores that each trained their
// own, all made alike from the same kind of documents; the highest is a
// choice every writer makes the same way without reading history). One that
// cannot be read, or whose tables zstd loads for decoding only
// (Dictionary::compression_problem), is passed over: a pull refuses such a
// dictionary and verify reports it, but a store that holds one anyway (an
// older kistore took it in) stays writable. A store that has no usable
// dictionary may train one
// from the documents of a large enough add (objects/blob.h
// train_dictionary: at least kTrainingMinimumDocuments), and the add's commit
// records it at dictionaries/<id>: every frame of that commit can be read
// with the tree it is in. Frames already stored are never rewritten.
//
// Thread-safety: encode() may be called from any number of threads at once;
// train() is not safe beside anything else.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "objects/blob.h"
#include "store/core/store.h"

namespace kistore {

class FrameEncoder {
 public:
  // The dictionary of `base` (the head the add starts from) of the highest
  // ID that zstd can compress with, if it has one. Throws only what reading
  // the tree throws (Error(kIO)); a dictionary that is damaged or that zstd
  // cannot compress with is passed over.
  explicit FrameEncoder(const Snapshot& base);

  // True when frames are compressed with a dictionary (the store's, or one
  // this writer trained).
  bool has_dictionary() const { return dictionary_ != nullptr; }
  // True when the store has no dictionary (none it can compress with) and
  // none was trained yet.
  bool may_train() const { return !dictionary_; }

  // Trains a dictionary on `samples` (canonical documents) when the store
  // has none; true when one was made (train_dictionary can decline: too few
  // samples, nothing to learn). Its ID is none that `base` holds.
  bool train(const std::vector<std::string_view>& samples);

  // train() on `fresh` (the add's new documents), or, when they are fewer
  // than kTrainingMinimumDocuments, on them and documents `base` already
  // holds (up to kTrainingSampleDocuments in all), so that a store filled
  // by small adds gets a dictionary too. The store's are read only when it
  // plausibly holds enough: when every one of the 256 folders of
  // objects/sha256/ is there (about 1,500 objects or more; one tree read
  // tells). Objects that cannot be read are left out (verify reports them).
  // False, training nothing, for a format-1 tree.
  bool train_from(const Snapshot& base, const std::vector<std::string_view>& fresh);

  // The frame of `canonical` (objects/blob.h encode_object) with this
  // writer's dictionary, or without one.
  std::string encode(std::string_view canonical) const { return encode_object(canonical, dictionary_.get()); }

  // The dictionary this writer trained, which its commit must record; null
  // when it uses the store's own or none.
  const Dictionary* trained() const { return trained_ ? dictionary_.get() : nullptr; }
  // dictionaries/<id> of trained().
  std::string trained_path() const;

  // Before a commit on `head` (the base, or a newer head another writer
  // made): Error(kIO) when `head` holds the trained dictionary's path with
  // other bytes (another writer recorded another dictionary of that ID
  // meanwhile, a chance of about 2^-31: the frames made cannot go into that
  // tree). Does nothing when nothing was trained.
  void check_head(const Snapshot& head) const;

 private:
  std::shared_ptr<const Dictionary> dictionary_;
  std::vector<std::uint32_t> taken_;  // the base's dictionary IDs
  bool trained_ = false;
};

// The Dictionary_IDs of the tree's dictionaries/<id>, ascending. Names that
// are not a dictionary's are left out (verify reports them).
std::vector<std::uint32_t> dictionary_ids(const Snapshot& tree);

}  // namespace kistore
