#include "cli/import_input.h"

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <sys/stat.h>

#include "cli/common.h"
#include "objects/error.h"
#include "objects/zstd_input.h"

namespace kistore::cli {

namespace {

// Streams read so far, by the path named: standard input ("-"), a pipe
// (`<(zstdcat f.zst)`, /dev/stdin), a FIFO, a device. They can be read once
// only, and an importer may open its input more than once (to tell its kind,
// to hash it, then to read it): each is read whole once, into memory, and
// every later ImportInput of the same path reads the bytes held.
std::mutex streams_mutex;
std::map<std::string, std::shared_ptr<const std::string>> streams;

bool is_stream(const std::string& path) {
  if (path == "-") return true;
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

}  // namespace

ImportInput::ImportInput(std::string path, std::uint64_t max_bytes, std::string what_bound)
    : path_(std::move(path)), max_bytes_(max_bytes), what_bound_(std::move(what_bound)) {
  if (is_stream(path_)) {
    const std::string key = path_;
    if (path_ == "-") path_ = "<stdin>";
    std::lock_guard lock(streams_mutex);
    auto& held = streams[key];
    if (!held)
      held = std::make_shared<const std::string>(read_input_file(
          key, std::min(max_bytes_, kMaxStreamBytes),
          what_bound_ + "; standard input, a pipe or a FIFO is held in memory to be read more than once: save a "
                        "larger one to a file"));
    stream_ = held;
  } else {
    std::error_code ec;
    if (!std::filesystem::exists(path_, ec))
      throw InvalidInput(path_ + ": no such file (expected a harness's output file)");
    if (std::filesystem::is_directory(path_, ec))
      throw InvalidInput(path_ + ": expected a file, found a folder (name the files inside it)");
  }
  open();
}

ImportInput::~ImportInput() {
  if (file_) std::fclose(file_);
}

void ImportInput::open() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  stream_pos_ = 0;
  if (!stream_) {
    file_ = std::fopen(path_.c_str(), "rb");
    if (!file_) throw IOError(path_ + ": cannot open for reading: " + std::strerror(errno));
  }
  // Four bytes tell a zstd frame; they are handed out again either way.
  head_.assign(4, '\0');
  std::size_t got = 0;
  while (got < 4) {
    std::size_t n = read_raw(head_.data() + got, 4 - got);
    if (n == 0) break;
    got += n;
  }
  head_.resize(got);
  head_pos_ = 0;
  produced_ = 0;
  compressed_ = starts_zstd_frame(head_);
  zstd_.reset();
  if (compressed_)
    zstd_ = std::make_unique<ZstdInput>([this](char* b, std::size_t n) {
      std::size_t from_head = 0;
      if (head_pos_ < head_.size()) {
        from_head = std::min(n, head_.size() - head_pos_);
        std::memcpy(b, head_.data() + head_pos_, from_head);
        head_pos_ += from_head;
        return from_head;
      }
      return read_raw(b, n);
    }, path_, max_bytes_, what_bound_);
}

std::size_t ImportInput::read_raw(char* buffer, std::size_t size) {
  if (!file_) {
    std::size_t n = std::min(size, stream_->size() - stream_pos_);
    std::memcpy(buffer, stream_->data() + stream_pos_, n);
    stream_pos_ += n;
    return n;
  }
  std::size_t n = std::fread(buffer, 1, size, file_);
  if (n == 0 && std::ferror(file_)) throw IOError(path_ + ": cannot read: " + std::strerror(errno));
  return n;
}

std::size_t ImportInput::read(char* buffer, std::size_t size) {
  if (zstd_) return zstd_->read(buffer, size);
  std::size_t n = 0;
  if (head_pos_ < head_.size()) {
    n = std::min(size, head_.size() - head_pos_);
    std::memcpy(buffer, head_.data() + head_pos_, n);
    head_pos_ += n;
  } else {
    n = read_raw(buffer, size);
  }
  produced_ += n;
  if (produced_ > max_bytes_)
    throw InvalidInput(path_ + ": expected at most " + std::to_string(max_bytes_) + " bytes (" + what_bound_ +
                       "), found more");
  return n;
}

std::string ImportInput::read_all() {
  std::string text;
  // A plain file's size is known: one allocation instead of a doubling string's copies.
  std::error_code ec;
  if (!compressed_ && file_)
    if (auto size = std::filesystem::file_size(path_, ec); !ec) text.reserve(std::min<std::uintmax_t>(size, max_bytes_) + 1);
  char buf[1 << 16];
  while (std::size_t n = read(buf, sizeof buf)) text.append(buf, n);
  return text;
}

void ImportInput::rewind() { open(); }

char ImportInput::first_byte() {
  char buf[4096];
  char found = '\0';
  bool first = true;
  while (std::size_t n = read(buf, sizeof buf)) {
    std::string_view b(buf, n);
    if (first && b.substr(0, 3) == "\xEF\xBB\xBF") b.remove_prefix(3);
    first = false;
    std::size_t at = b.find_first_not_of(" \t\r\n");
    if (at != std::string_view::npos) {
      found = b[at];
      break;
    }
  }
  rewind();
  return found;
}

}  // namespace kistore::cli
