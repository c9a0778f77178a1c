// The object codec: how a document's canonical bytes are kept on disk.
//
// An object is one zstd frame with the content checksum on and the content
// size in its header, holding the JCS bytes of a document without metadata.
// A frame may name a zstd dictionary by its Dictionary_ID (SPEC §2: the store
// keeps it at dictionaries/<id>, raw, as `zstd --train` writes it, so that
// `zstd -D` reads the object); encode_object writes frames with the
// dictionary it is given, or without one.
// Decoding is strict: one frame, nothing after it, checksum valid, content at
// most kMaxInputBytes, a named dictionary present; anything else is
// Corruption naming the object.
//
// Thread-safety: reentrant; each call uses its own zstd context (a thread
// local one is reused for speed). A Dictionary is immutable once made and may
// be shared between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct ZSTD_DDict_s;
struct ZSTD_CDict_s;

namespace kistore {

// zstd level used for new objects: zstd's default. Objects are small JSON
// documents compressed with the store's dictionary; level 9 made them 2.7 %
// smaller (3.70 MB against 3.80 MB for 60,000 KernelBench documents) and
// cost 15 % of a 20,000-run import's wall time (docs/benchmarks.md,
// "Importers"). A frame's level is the writer's choice: any level decodes
// the same, and a merge of two stores' frames of one document keeps one.
inline constexpr int kObjectCompressionLevel = 3;
// zstd level a dictionary's statistics are trained for (ZDICT's zParams). It
// shapes the dictionary's bytes, hence its ID: kept at 9, the level the
// first stores trained at, so that every version of kistore trains the same
// dictionary from the same documents and two stores of them agree.
inline constexpr int kDictionaryTrainingLevel = 9;

class Dictionary;

// The frame of `canonical_bytes` at kObjectCompressionLevel, with the content
// checksum and size; with `dictionary`, compressed with it, and the frame
// names its Dictionary_ID. Error(kIO) if zstd fails (it does not, short of
// memory).
std::string encode_object(std::string_view canonical_bytes, const Dictionary* dictionary = nullptr);

// Decodes a frame written by encode_object (or any conforming writer that
// declares the content size and sets the checksum flag). `name` is what
// messages call the object (its path). The header is checked before any
// allocation, and exactly the declared size is allocated. Throws
// Error(kCorruption) naming `name` and what was expected and found: not a
// zstd data frame, no content checksum, no declared content size, a declared
// size over kMaxInputBytes, a truncated frame, bytes or a second frame after
// it, content that differs from the declared size or fails its checksum.
std::string decode_object(std::string_view frame, std::string_view name);

// The largest dictionary a store may hold: ten times what `zstd --train`
// makes by default (110 KiB), so that a reader's cache of them stays small.
inline constexpr std::size_t kMaxDictionaryBytes = 1 << 20;

// The Dictionary_IDs a store may give the dictionaries it trains: zstd keeps
// 0 for "none" and 1-32767 and 2^31 and above for a public registry
// (RFC 8878 §5), so a store's own are 32768 to 2^31 - 1. Frames naming other
// IDs still decode (`zstd --train --dictID` makes them), but verify reports
// a dictionary whose ID is reserved.
inline constexpr std::uint32_t kFirstStoreDictionaryId = 32768;
inline constexpr std::uint32_t kLastStoreDictionaryId = 0x7FFFFFFF;
inline constexpr bool dictionary_id_reserved(std::uint32_t id) {
  return id < kFirstStoreDictionaryId || id > kLastStoreDictionaryId;
}
// What verify and pull say of a dictionary whose ID is reserved.
std::string reserved_dictionary_id_detail(std::uint32_t id);

// A zstd dictionary a store holds, ready for decoding (and, on first use,
// for encoding).
class Dictionary {
 public:
  // Checks that `bytes` is a zstd dictionary (magic 0xEC30A437, as `zstd
  // --train` writes it) whose Dictionary_ID is `id`, and prepares it. Throws
  // Error(kCorruption) naming `name` (its path) and what was found otherwise:
  // too short, over kMaxDictionaryBytes, another magic number, another
  // Dictionary_ID, tables zstd cannot load. A raw-content dictionary has no ID, so it is refused.
  Dictionary(std::string_view bytes, std::uint32_t id, std::string_view name);
  ~Dictionary();
  Dictionary(const Dictionary&) = delete;
  Dictionary& operator=(const Dictionary&) = delete;
  std::uint32_t id() const { return id_; }
  // The dictionary's bytes, as given.
  const std::string& bytes() const { return bytes_; }
  // "" when zstd can compress with this dictionary as well as decode with it:
  // its tables load for compression (ZSTD_createCDict) and a small document
  // compressed with it decodes back to the same bytes. Otherwise what went
  // wrong, in words for a message about its path. zstd decodes with some
  // dictionaries it cannot compress with (zstd 1.5.4: a literals Huffman
  // table that describes fewer than 256 byte values); a writer must never
  // depend on one (store/core/frame_encoder.h), and a pull refuses one.
  // Checked once, on first call, then remembered; safe from any thread.
  const std::string& compression_problem() const;

 private:
  friend std::string decode_object(std::string_view, std::string_view,
                                   const std::function<std::shared_ptr<const Dictionary>(std::uint32_t)>&);
  friend std::string encode_object(std::string_view, const Dictionary*);
  // Made on the first encode_object with this dictionary (readers never
  // need it), then shared by every thread.
  ZSTD_CDict_s* compression_tables() const;
  std::uint32_t id_;
  std::string bytes_;
  ZSTD_DDict_s* ddict_;
  mutable std::once_flag cdict_once_;
  mutable ZSTD_CDict_s* cdict_ = nullptr;
  mutable std::once_flag checked_once_;
  mutable std::string compression_problem_;
};

// Training a dictionary for a store's new frames (zstd's fastCover trainer,
// with fixed parameters so that the same samples always give the same
// bytes). Samples are canonical documents; kTrainingSampleDocuments of them
// (or kTrainingSampleBytes, whichever comes first) are plenty, fewer than
// kTrainingMinimumDocuments teach too little to be worth a dictionary.
inline constexpr std::size_t kTrainingMinimumDocuments = 1000;
inline constexpr std::size_t kTrainingSampleDocuments = 4096;
inline constexpr std::size_t kTrainingSampleBytes = 8u << 20;
inline constexpr std::size_t kTrainedDictionaryBytes = 64u << 10;

// A dictionary (at most kTrainedDictionaryBytes) trained on `samples`, whose
// Dictionary_ID is store_dictionary_id of its content, or the next ID in the
// store's range for which taken(id) is false. nullopt when the samples are
// too few (under kTrainingMinimumDocuments) or zstd's trainer finds nothing
// to learn from them. Never throws but for memory.
std::optional<std::string> train_dictionary(const std::vector<std::string_view>& samples,
                                            const std::function<bool(std::uint32_t)>& taken);

// The Dictionary_ID a store gives a dictionary it trained: 32768 + (the first
// four bytes of SHA-256 of the dictionary with its ID field zeroed, read as a
// little-endian number) mod (2^31 - 32768), so that two stores that trained
// the same dictionary agree on its ID and two that trained different ones
// almost surely do not.
std::uint32_t store_dictionary_id(std::string_view dictionary);

// The Dictionary_ID a zstd dictionary's header holds; 0 for bytes that are
// not a zstd dictionary. Never throws.
std::uint32_t dictionary_id(std::string_view dictionary);

// `dictionary` (a zstd dictionary, at least 8 bytes) with its Dictionary_ID
// field set to `id`; the ID is not part of its tables.
std::string with_dictionary_id(std::string_view dictionary, std::uint32_t id);

// The dictionaries a decoder may use: the one whose Dictionary_ID is `id`, or
// null when the store holds none of that ID. It may throw (a damaged
// dictionary), and the decoder passes that on. Shared, so that a cache may
// drop a dictionary while a decoder still uses it.
using DictionaryLookup = std::function<std::shared_ptr<const Dictionary>(std::uint32_t id)>;

// The decompressed size a frame's header declares; 0 when it declares none
// or the bytes are not a zstd frame header. Never throws.
std::uint64_t frame_content_size(std::string_view frame);

// The Dictionary_ID that a frame's header names, 0 for none (or for bytes
// that are not a zstd frame header). Never throws.
std::uint32_t frame_dictionary_id(std::string_view frame);

// decode_object for a frame that may name a dictionary: one that names none
// decodes as above; one that names ID n decodes with dictionaries(n), and is
// Corruption naming `name`, n and dictionaries/n when that is null.
std::string decode_object(std::string_view frame, std::string_view name, const DictionaryLookup& dictionaries);

}  // namespace kistore
