// The object codec: how a document's canonical bytes are kept on disk.
//
// An object is one zstd frame with the content checksum on and the content
// size in its header, holding the JCS bytes of a document without metadata.
// The frame must decode on its own (no dictionary) so that any zstd tool can
// read a store. Decoding is strict: one frame, nothing after it, checksum
// valid, content at most kMaxInputBytes; anything else is Corruption naming
// the object.
//
// Thread-safety: reentrant; each call uses its own zstd context (a thread
// local one is reused for speed).
#pragma once

#include <string>
#include <string_view>

namespace kistore {

// zstd level used for new objects. Objects are small JSON documents; level 9
// costs little more than the default here and keeps the store smaller.
inline constexpr int kObjectCompressionLevel = 9;

std::string encode_object(std::string_view canonical_bytes);

// Decodes a frame written by encode_object (or any conforming writer).
// `name` is what messages call the object (its path). Throws Error(kCorruption).
std::string decode_object(std::string_view frame, std::string_view name);

}  // namespace kistore
