#include "objects/digest_stream.h"

// The low-level digest functions are deprecated in OpenSSL 3.0, not removed.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include <string>

namespace kistore {

Digest digest_of_stream(const std::function<std::size_t(char*, std::size_t)>& read) {
  // The low-level SHA-256, as Digest::of uses it (objects/digest.cc says why).
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  std::string block(std::size_t{1} << 16, '\0');
  while (std::size_t n = read(block.data(), block.size())) SHA256_Update(&ctx, block.data(), n);
  unsigned char bytes[SHA256_DIGEST_LENGTH];
  SHA256_Final(bytes, &ctx);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char b : bytes) {
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  return *Digest::parse_hex(hex);
}

}  // namespace kistore
