#include "objects/commit_id.h"

#include <cstring>

namespace kistore {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// A lowercase hex digit's value; -1 for every other byte (uppercase is not
// the rendered form).
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

std::optional<CommitId> CommitId::parse(std::string_view hex) {
  if (hex.size() != 2 * kSize) return std::nullopt;
  CommitId id;
  for (std::size_t i = 0; i < kSize; ++i) {
    int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    id.bytes_[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return id;
}

CommitId CommitId::from_bytes(const std::uint8_t* bytes) {
  CommitId id;
  std::memcpy(id.bytes_.data(), bytes, kSize);
  return id;
}

std::string CommitId::hex() const {
  std::string out(2 * kSize, '0');
  for (std::size_t i = 0; i < kSize; ++i) {
    out[2 * i] = kHex[bytes_[i] >> 4];
    out[2 * i + 1] = kHex[bytes_[i] & 15];
  }
  return out;
}

}  // namespace kistore
