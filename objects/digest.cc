#include "objects/digest.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

namespace kistore {
namespace {

constexpr char kHex[] = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // uppercase is not the rendered form, so it is not accepted
}

}  // namespace

namespace {

// OpenSSL 3's one-shot SHA256() fetches the algorithm from its provider
// registry (behind a lock) on every call; a bulk add hashes hundreds of
// thousands of small documents, so the algorithm is fetched once and each
// thread keeps its own context.
struct Sha256Context {
  EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Sha256Context() {
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md);
  }
};

}  // namespace

Digest Digest::of(std::string_view bytes) {
  Digest d;
  thread_local Sha256Context c;
  unsigned int n = 0;
  if (!c.md || !c.ctx || !EVP_DigestInit_ex2(c.ctx, c.md, nullptr) ||
      !EVP_DigestUpdate(c.ctx, bytes.data(), bytes.size()) || !EVP_DigestFinal_ex(c.ctx, d.bytes_.data(), &n) || n != 32)
    SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), d.bytes_.data());  // the slow, sure way
  return d;
}

std::optional<Digest> Digest::parse(std::string_view text) {
  if (text.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  return parse_hex(text.substr(kPrefix.size()));
}

std::optional<Digest> Digest::parse_hex(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  Digest d;
  for (std::size_t i = 0; i < 32; ++i) {
    int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    d.bytes_[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
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
