// The object codec: how a document's canonical bytes are kept on disk.
//
// An object is one zstd frame with the content checksum on and the content
// size in its header, holding the JCS bytes of a document without metadata.
// A frame may name a zstd dictionary by its Dictionary_ID (SPEC §2: the store
// keeps it at dictionaries/<id>, raw, as `zstd --train` writes it, so that
// `zstd -D` reads the object); encode_object writes frames without one.
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
#include <string>
#include <string_view>

struct ZSTD_DDict_s;

namespace kistore {

// zstd level used for new objects. Objects are small JSON documents; level 9
// costs little more than the default here and keeps the store smaller.
inline constexpr int kObjectCompressionLevel = 9;

std::string encode_object(std::string_view canonical_bytes);

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

// A zstd dictionary a store holds, ready for decoding.
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

 private:
  friend std::string decode_object(std::string_view, std::string_view,
                                   const std::function<std::shared_ptr<const Dictionary>(std::uint32_t)>&);
  std::uint32_t id_;
  ZSTD_DDict_s* ddict_;
};

// The dictionaries a decoder may use: the one whose Dictionary_ID is `id`, or
// null when the store holds none of that ID. It may throw (a damaged
// dictionary), and the decoder passes that on. Shared, so that a cache may
// drop a dictionary while a decoder still uses it.
using DictionaryLookup = std::function<std::shared_ptr<const Dictionary>(std::uint32_t id)>;

// The Dictionary_ID that a frame's header names, 0 for none (or for bytes
// that are not a zstd frame header). Never throws.
std::uint32_t frame_dictionary_id(std::string_view frame);

// decode_object for a frame that may name a dictionary: one that names none
// decodes as above; one that names ID n decodes with dictionaries(n), and is
// Corruption naming `name`, n and dictionaries/n when that is null.
std::string decode_object(std::string_view frame, std::string_view name, const DictionaryLookup& dictionaries);

}  // namespace kistore
