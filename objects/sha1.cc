#include "objects/sha1.h"

#include <openssl/evp.h>

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

}  // namespace kistore
