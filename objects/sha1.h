// Sha1: SHA-1, computed incrementally, for git's object and pack ids.
//
// The store layer writes git objects and packs itself (store/git/objwrite.h) and
// needs git's SHA-1 ids for them; this layer owns the hashing library
// (OpenSSL), so the hasher lives here. SHA-1 is only git's transport id:
// kistore's integrity rests on SHA-256 digests (objects/digest.h).
//
// Thread-safety: one Sha1 per thread (it holds one hashing context).
#pragma once

#include <cstddef>
#include <string_view>

struct SHAstate_st;

namespace kistore {

class Sha1 {
 public:
  Sha1();
  ~Sha1();
  Sha1(const Sha1&) = delete;
  Sha1& operator=(const Sha1&) = delete;

  // Starts a new hash; update adds bytes; final writes the 20-byte hash.
  void init();
  void update(const void* data, std::size_t size);
  void final(unsigned char out[20]);

 private:
  SHAstate_st* ctx_;  // OpenSSL's low-level SHA_CTX (see digest.cc for why not EVP)
};

// HMAC-SHA1 of `message` under `key` into `out` (20 bytes), as OpenSSH's
// hashed known_hosts names use it. False if OpenSSL cannot compute it.
bool hmac_sha1(std::string_view key, std::string_view message, unsigned char out[20]);

}  // namespace kistore
