// Hand-made git pack bytes for the pack indexer's tests (and its fuzz
// seeds): entry headers, zlib streams, delta instructions and whole packs
// with a correct or a chosen trailer, so that a test can lie about exactly
// one thing at a time.
#pragma once

#include <openssl/evp.h>
#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kistore::test_support {

inline std::string sha1_bytes(std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(data.data(), data.size(), out, &n, EVP_sha1(), nullptr) != 1) throw std::runtime_error("sha1");
  return std::string(reinterpret_cast<char*>(out), n);
}

// zlib's stream of `data` (deflated at `level`).
inline std::string zlib_of(std::string_view data, int level = 6) {
  uLongf n = compressBound(static_cast<uLong>(data.size()));
  std::string out(n, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &n, reinterpret_cast<const Bytef*>(data.data()),
                static_cast<uLong>(data.size()), level) != Z_OK)
    throw std::runtime_error("compress2");
  out.resize(n);
  return out;
}

// An entry's header: type (1 commit, 2 tree, 3 blob, 4 tag, 6 OFS_DELTA,
// 7 REF_DELTA) and the inflated size it declares.
inline std::string entry_head(int type, std::uint64_t size) {
  std::string out;
  unsigned char c = static_cast<unsigned char>((type << 4) | (size & 15));
  size >>= 4;
  while (size) {
    out += static_cast<char>(c | 0x80);
    c = size & 0x7f;
    size >>= 7;
  }
  out += static_cast<char>(c);
  return out;
}

// A whole object's entry, declaring `declared` bytes (its real size unless told).
inline std::string whole_entry(int type, std::string_view data, std::int64_t declared = -1) {
  return entry_head(type, declared < 0 ? data.size() : static_cast<std::uint64_t>(declared)) + zlib_of(data);
}

// An OFS_DELTA's distance back to its base, as git encodes it.
inline std::string ofs_distance(std::uint64_t d) {
  std::string out(1, static_cast<char>(d & 0x7f));
  while (d >>= 7) {
    --d;
    out.insert(out.begin(), static_cast<char>(0x80 | (d & 0x7f)));
  }
  return out;
}

inline std::string delta_size(std::uint64_t n) {
  std::string out;
  do {
    unsigned char c = n & 0x7f;
    n >>= 7;
    out += static_cast<char>(n ? c | 0x80 : c);
  } while (n);
  return out;
}

// Delta instructions: a header of base and result sizes, copies, inserts.
inline std::string delta_header(std::uint64_t base, std::uint64_t result) { return delta_size(base) + delta_size(result); }
inline std::string delta_copy(std::uint32_t offset, std::uint32_t size) {
  std::string args;
  unsigned char op = 0x80;
  for (int i = 0; i < 4; ++i)
    if ((offset >> (8 * i)) & 0xff) op |= 1 << i, args += static_cast<char>((offset >> (8 * i)) & 0xff);
  for (int i = 0; i < 3; ++i)
    if ((size >> (8 * i)) & 0xff) op |= 0x10 << i, args += static_cast<char>((size >> (8 * i)) & 0xff);
  return std::string(1, static_cast<char>(op)) + args;
}
inline std::string delta_insert(std::string_view bytes) { return std::string(1, static_cast<char>(bytes.size())) + std::string(bytes); }

// An OFS_DELTA entry at `offset` whose base entry is at `base_offset`.
inline std::string ofs_entry(std::uint64_t offset, std::uint64_t base_offset, std::string_view delta) {
  return entry_head(6, delta.size()) + ofs_distance(offset - base_offset) + zlib_of(delta);
}
// A REF_DELTA entry against the object whose raw 20-byte id is `base`.
inline std::string ref_entry(std::string_view base, std::string_view delta) {
  return entry_head(7, delta.size()) + std::string(base) + zlib_of(delta);
}

inline std::string be32_bytes(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

// "PACK", version, count, the entries, then the SHA-1 of all that.
inline std::string pack_of(std::uint32_t count, std::string_view entries, std::uint32_t version = 2) {
  std::string out = "PACK" + be32_bytes(version) + be32_bytes(count) + std::string(entries);
  return out + sha1_bytes(out);
}

// git's raw id of an object.
inline std::string raw_id(std::string_view type, std::string_view data) {
  return sha1_bytes(std::string(type) + " " + std::to_string(data.size()) + '\0' + std::string(data));
}

}  // namespace kistore::test_support
