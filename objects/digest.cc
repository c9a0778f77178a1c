#include "objects/digest.h"

#include <array>
#include <cstdint>

// The low-level digest functions are deprecated in OpenSSL 3.0, not removed.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

namespace kistore {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Lowercase hex digits' values, -1 for every other byte (uppercase is not the
// rendered form, so it is not accepted). A table: digests are parsed by the
// million (every index path and reference of a verify).
constexpr std::array<std::int8_t, 256> kHexValues = [] {
  std::array<std::int8_t, 256> t{};
  t.fill(-1);
  for (int c = '0'; c <= '9'; ++c) t[c] = static_cast<std::int8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) t[c] = static_cast<std::int8_t>(c - 'a' + 10);
  return t;
}();

int hex_value(char c) { return kHexValues[static_cast<unsigned char>(c)]; }

}  // namespace

Digest Digest::of(std::string_view bytes) {
  // OpenSSL's low-level SHA-256 (deprecated in 3.0, kept for good): the same
  // assembly as the EVP interface, without its provider machinery, whose
  // first fetch in a process (loading the default provider, building its
  // name map) cost a read-only command more than all its own work. SHA256()
  // is no substitute: in OpenSSL 3 it fetches, behind a lock, on every call.
  Digest d;
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, bytes.data(), bytes.size());
  SHA256_Final(d.bytes_.data(), &ctx);
  return d;
}

std::optional<Digest> Digest::parse(std::string_view text) {
  if (text.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  return parse_hex(text.substr(kPrefix.size()));
}

std::optional<Digest> Digest::parse_hex(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  Digest d;
  int bad = 0;  // any digit's -1, or'd in: one test at the end instead of 64 branches
  for (std::size_t i = 0; i < 32; ++i) {
    int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
    bad |= hi | lo;
    d.bytes_[i] = static_cast<std::uint8_t>((hi & 15) << 4 | (lo & 15));
  }
  if (bad < 0) return std::nullopt;
  return d;
}

std::string Digest::hex() const {
  std::string out(64, '0');
  for (std::size_t i = 0; i < 32; ++i) {
    out[2 * i] = kHex[bytes_[i] >> 4];
    out[2 * i + 1] = kHex[bytes_[i] & 15];
  }
  return out;
}

std::string Digest::str() const { return std::string(kPrefix) + hex(); }

bool is_hex_prefix(std::string_view text) {
  if (text.empty() || text.size() > 64) return false;
  for (char c : text)
    if (hex_value(c) < 0) return false;
  return true;
}

std::optional<std::string> parse_hex_ref(std::string_view ref, std::size_t min_digits) {
  if (ref.starts_with(Digest::kPrefix)) ref.remove_prefix(Digest::kPrefix.size());
  std::string hex(ref);
  for (char& c : hex)
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  if (hex.size() < min_digits || !is_hex_prefix(hex)) return std::nullopt;
  return hex;
}

}  // namespace kistore
