#include "objects/sha1.h"

// The low-level digest functions are deprecated in OpenSSL 3.0, not removed.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

namespace kistore {

Sha1::Sha1() : ctx_(new SHA_CTX) { SHA1_Init(ctx_); }
Sha1::~Sha1() { delete ctx_; }

void Sha1::init() { SHA1_Init(ctx_); }
void Sha1::update(const void* data, std::size_t size) { SHA1_Update(ctx_, data, size); }
void Sha1::final(unsigned char out[20]) { SHA1_Final(out, ctx_); }

bool hmac_sha1(std::string_view key, std::string_view message, unsigned char out[20]) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (!HMAC(EVP_sha1(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
            message.size(), mac, &size) ||
      size != 20)
    return false;
  for (int i = 0; i < 20; ++i) out[i] = mac[i];
  return true;
}

}  // namespace kistore
