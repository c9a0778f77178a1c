#include "objects/zstd_input.h"

#include <zstd.h>

#include <utility>
#include <vector>

#include "objects/error.h"

namespace kistore {

struct ZstdInput::State {
  ZSTD_DStream* stream = nullptr;
  Read read;
  std::vector<char> in;
  ZSTD_inBuffer in_buffer{nullptr, 0, 0};
  bool input_ended = false;
  bool any_input = false;
  // ZSTD_decompressStream's last answer: 0 when a frame was just completed.
  std::size_t pending = 0;
  ~State() { ZSTD_freeDStream(stream); }
};

ZstdInput::ZstdInput(Read read, std::string source, std::uint64_t max_output, std::string what_bound)
    : state_(std::make_unique<State>()),
      source_(std::move(source)),
      max_output_(max_output),
      what_bound_(std::move(what_bound)) {
  state_->stream = ZSTD_createDStream();
  if (!state_->stream) throw Error(ErrorCode::kIO, source_ + ": cannot allocate a zstd decompression stream");
  ZSTD_initDStream(state_->stream);
  state_->read = std::move(read);
  state_->in.resize(ZSTD_DStreamInSize());
}

ZstdInput::~ZstdInput() = default;

std::size_t ZstdInput::read(char* buffer, std::size_t size) {
  State& s = *state_;
  ZSTD_outBuffer out{buffer, size, 0};
  while (out.pos == 0 && size > 0) {
    if (s.in_buffer.pos == s.in_buffer.size) {
      if (s.input_ended) {
        if (!s.any_input)
          throw InvalidInput(source_ + ": expected a zstd frame, found an empty file");
        if (s.pending != 0)
          throw InvalidInput(source_ + ": expected the rest of a zstd frame, found the end of the file "
                                       "(the compressed file is truncated)");
        return 0;
      }
      std::size_t n = s.read(s.in.data(), s.in.size());
      if (n == 0) {
        s.input_ended = true;
        continue;
      }
      s.any_input = true;
      s.in_buffer = ZSTD_inBuffer{s.in.data(), n, 0};
    }
    // Never ask for more than one byte past the bound: a bomb stops there.
    std::uint64_t room = max_output_ - produced_ + 1;
    ZSTD_outBuffer bounded{buffer, out.size < room ? out.size : static_cast<std::size_t>(room), 0};
    std::size_t r = ZSTD_decompressStream(s.stream, &bounded, &s.in_buffer);
    if (ZSTD_isError(r))
      throw InvalidInput(source_ + ": expected zstd-compressed data, found bytes zstd cannot decode (" +
                         ZSTD_getErrorName(r) + ") after " + std::to_string(produced_ + bounded.pos) +
                         " decompressed bytes");
    s.pending = r;
    out.pos = bounded.pos;
    if (produced_ + out.pos > max_output_)
      throw InvalidInput(source_ + ": expected at most " + std::to_string(max_output_) + " bytes once decompressed (" +
                         what_bound_ + "), found more: refused without decompressing the rest");
    // A frame ended and nothing more was read yet: the loop reads on.
  }
  produced_ += out.pos;
  return out.pos;
}

}  // namespace kistore
