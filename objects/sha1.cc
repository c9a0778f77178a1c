#include "objects/sha1.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "objects/error.h"

namespace kistore {

Sha1::Sha1() : md_(EVP_MD_fetch(nullptr, "SHA1", nullptr)), ctx_(EVP_MD_CTX_new()) {
  if (!md_ || !ctx_) {
    EVP_MD_CTX_free(ctx_);
    EVP_MD_free(md_);
    throw Error(ErrorCode::kIO, "SHA-1 is not available from OpenSSL");
  }
}

Sha1::~Sha1() {
  EVP_MD_CTX_free(ctx_);
  EVP_MD_free(md_);
}

void Sha1::init() { EVP_DigestInit_ex(ctx_, md_, nullptr); }
void Sha1::update(const void* data, std::size_t size) { EVP_DigestUpdate(ctx_, data, size); }
void Sha1::final(unsigned char out[20]) { EVP_DigestFinal_ex(ctx_, out, nullptr); }

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
