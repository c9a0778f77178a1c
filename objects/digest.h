// Digest: a SHA-256 content name, "sha256:" followed by 64 lowercase hex digits.
//
// A Digest that exists is valid: the only ways to make one are hashing bytes
// (Digest::of) or parsing text that has exactly the rendered form
// (Digest::parse / Digest::parse_hex, each the inverse of str() / hex()).
//
// Thread-safety: plain value type.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kistore {

class Digest {
 public:
  static constexpr std::string_view kPrefix = "sha256:";

  // SHA-256 of `bytes`.
  static Digest of(std::string_view bytes);
  // "sha256:<64 lowercase hex>"; nullopt for anything else (uppercase included).
  static std::optional<Digest> parse(std::string_view text);
  // "<64 lowercase hex>"; nullopt for anything else.
  static std::optional<Digest> parse_hex(std::string_view hex);

  std::string str() const;  // "sha256:<hex>"
  std::string hex() const;  // 64 lowercase hex digits
  const std::array<std::uint8_t, 32>& bytes() const { return bytes_; }

  // Four words compared in place: the tables of a million digests (verify,
  // merges) compare keys on every lookup, and the library's 32-byte memcmp
  // was a call each time.
  friend bool operator==(const Digest& a, const Digest& b) {
    std::uint64_t x[4], y[4];
    __builtin_memcpy(x, a.bytes_.data(), 32);
    __builtin_memcpy(y, b.bytes_.data(), 32);
    return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3])) == 0;
  }
  friend auto operator<=>(const Digest&, const Digest&) = default;

 private:
  Digest() = default;
  std::array<std::uint8_t, 32> bytes_{};
};

// True when `text` is 1..64 lowercase hex digits (a digest prefix).
bool is_hex_prefix(std::string_view text);

// A REF as a user types it, "sha256:" optional and hex digits in either case
// ("628643BA"), as the lowercase hex prefix digests are written in; nullopt
// unless it is `min_digits` to 64 hex digits. Never throws.
std::optional<std::string> parse_hex_ref(std::string_view ref, std::size_t min_digits = 8);

}  // namespace kistore

template <>
struct std::hash<kistore::Digest> {
  std::size_t operator()(const kistore::Digest& d) const noexcept {
    std::size_t h;
    static_assert(sizeof(h) <= 32);
    __builtin_memcpy(&h, d.bytes().data(), sizeof(h));
    return h;
  }
};
