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

// Decodes a frame written by encode_object (or any conforming writer that
// declares the content size and sets the checksum flag). `name` is what
// messages call the object (its path). The header is checked before any
// allocation, and exactly the declared size is allocated. Throws
// Error(kCorruption) naming `name` and what was expected and found: not a
// zstd data frame, no content checksum, no declared content size, a declared
// size over kMaxInputBytes, a truncated frame, bytes or a second frame after
// it, content that differs from the declared size or fails its checksum.
std::string decode_object(std::string_view frame, std::string_view name);

}  // namespace kistore
