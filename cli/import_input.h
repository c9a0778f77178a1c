// The files `kistore import` reads, as the hostile input they may be (SPEC §2):
// plain, or zstd-compressed (told by the zstd magic number at their start,
// never by their name), read a block at a time and never past a bound.
//
// An ImportInput opens one path and hands out its text, decompressed where it
// is compressed. A stream ("-" for standard input, a pipe such as
// `<(zstdcat f.zst)`, a FIFO, a device) is read whole the first time its path
// is opened, at most kMaxStreamBytes (and `max_bytes`) of it, and held for the
// process's life, so that opening the same path again (to tell the input's
// kind, to hash it, to read it) reads the same bytes. The text may be at
// most `max_bytes` long whatever its form:
// kMaxInputBytes (16 MiB, a JSON text's limit) for a file that is one JSON
// text, kMaxImportFileBytes for a file read a record at a time (CSV, JSON
// Lines). A compressed file that decompresses past that bound (a "zstd bomb")
// is refused with Error(kInvalidInput) as soon as it passes it, having held no
// more than one block; a truncated or corrupt frame is refused the same way.
// Every message begins with the path.
//
// Thread-safety: an ImportInput belongs to one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace kistore {
class ZstdInput;
}

namespace kistore::cli {

// The largest text a record-at-a-time input may have (and what read_input_file
// allows a file): 4 GiB.
inline constexpr std::uint64_t kMaxImportFileBytes = std::uint64_t{4} << 30;
// The most of a stream (standard input, a pipe, a FIFO, a device) that is
// held: it is read once, whole, so that it can be read again; a larger input
// is read from a file.
inline constexpr std::uint64_t kMaxStreamBytes = std::uint64_t{256} << 20;

class ImportInput {
 public:
  // Error(kInvalidInput) naming the path when it does not exist, Error(kIO)
  // when it cannot be read.
  ImportInput(std::string path, std::uint64_t max_bytes, std::string what_bound);
  ~ImportInput();
  ImportInput(const ImportInput&) = delete;
  ImportInput& operator=(const ImportInput&) = delete;

  const std::string& path() const { return path_; }
  bool compressed() const { return compressed_; }

  // Up to `size` bytes of the text at `buffer`; 0 at its end.
  std::size_t read(char* buffer, std::size_t size);
  // The rest of the text, whole (the bound holds).
  std::string read_all();
  // Reads again from the first byte.
  void rewind();
  // The first non-blank byte of the text ('\0' for none), the byte order mark
  // passed over: how the importers tell a JSON file from a CSV one. Rewinds.
  char first_byte();

 private:
  std::size_t read_raw(char* buffer, std::size_t size);
  void open();

  std::string path_;
  std::uint64_t max_bytes_;
  std::string what_bound_;
  bool compressed_ = false;
  std::FILE* file_ = nullptr;
  std::shared_ptr<const std::string> stream_;  // a stream's bytes, held whole (null: a file)
  std::size_t stream_pos_ = 0;
  std::string head_;             // raw bytes read to tell compressed from plain, handed out first
  std::size_t head_pos_ = 0;
  std::unique_ptr<ZstdInput> zstd_;
  std::uint64_t produced_ = 0;   // plain text handed out (compressed: zstd_ counts)
};

}  // namespace kistore::cli
