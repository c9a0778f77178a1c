// Reading input that arrives zstd-compressed (a harness's results kept as
// `results.json.zst`), as hostile bytes: decompressed a block at a time, and
// never past a bound that the caller sets to the limit the same input would
// have uncompressed (SPEC §2: 16 MiB for a JSON text).
//
// A ZstdInput is told where the compressed bytes come from (a function that
// hands over the next block, as a file is read) and hands back decompressed
// bytes in blocks of the caller's size, so that nothing is ever held whole:
// a "zstd bomb" (a few KiB that decompress to gigabytes) is refused with
// Error(kInvalidInput) as soon as its output passes the bound, having used no
// more memory than one block and zstd's window (zstd's default limit on the
// window, 128 MiB, is kept: a frame that asks for more is refused too).
// A truncated frame, bytes that are no zstd frame, or a checksum that does not
// match are Error(kInvalidInput) as well. Several frames one after the other
// read as their concatenation, as `zstd -dc` reads them.
//
// Every message begins with the source's name: "<source>: expected …, found …".
//
// Thread-safety: a ZstdInput belongs to one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace kistore {

// The magic number that begins every zstd frame (RFC 8878 §3.1.1), as bytes.
inline constexpr std::string_view kZstdMagic = "\x28\xB5\x2F\xFD";

// True when `head` (the first bytes of an input) begins a zstd frame.
inline bool starts_zstd_frame(std::string_view head) { return head.substr(0, 4) == kZstdMagic; }

class ZstdInput {
 public:
  // Reads compressed bytes: writes up to `size` at `buffer`, returns how many,
  // 0 at the end.
  using Read = std::function<std::size_t(char* buffer, std::size_t size)>;

  // `what_bound` says in a message what the bound is ("a JSON text's limit").
  ZstdInput(Read read, std::string source, std::uint64_t max_output, std::string what_bound);
  ~ZstdInput();
  ZstdInput(const ZstdInput&) = delete;
  ZstdInput& operator=(const ZstdInput&) = delete;

  // Writes up to `size` decompressed bytes at `buffer`; returns how many, 0
  // only at the end of the input (after the last frame was complete).
  std::size_t read(char* buffer, std::size_t size);

  // Decompressed bytes handed out so far.
  std::uint64_t produced() const { return produced_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::string source_;
  std::uint64_t max_output_;
  std::string what_bound_;
  std::uint64_t produced_ = 0;
};

}  // namespace kistore
