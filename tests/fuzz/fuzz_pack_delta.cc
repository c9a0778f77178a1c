// libFuzzer target for git's delta format as kistore reads it
// (store/git/pack_delta.h): any base and delta must end in exactly the declared
// result or in Error(kRefused), never a crash or a sanitizer report. Deltas
// inside a pack sit in zlib streams, whose checksums keep the pack target
// from mutating them; this one reaches every instruction.
//
// Input: one byte, the base's length (times 4); the base; the delta.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "objects/error.h"
#include "store/git/pack_delta.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string_view base = rest.substr(0, std::min<std::size_t>(rest.size(), std::size_t{data[0]} * 4));
  std::string_view delta = rest.substr(base.size());
  kistore::git::DeltaHeader header;
  if (!kistore::git::read_delta_header(delta, header)) return 0;
  // What the indexer checks before it applies a delta.
  if (header.base_size != base.size() || header.result_size > (1 << 20)) return 0;
  std::string out;
  try {
    kistore::git::apply_delta(base, delta, header, out, 12);
    if (out.size() != header.result_size) abort();
  } catch (const kistore::Error& e) {
    if (e.code() != kistore::ErrorCode::kRefused) abort();
  }
  return 0;
}
