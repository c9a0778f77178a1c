#include "objects/blob.h"

#include <zstd.h>

#include <memory>

#include "objects/error.h"
#include "objects/json.h"

namespace kistore {
namespace {

struct CCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

ZSTD_CCtx* compression_context() {
  thread_local std::unique_ptr<ZSTD_CCtx, CCtxFree> ctx([] {
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, kObjectCompressionLevel);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);
    return c;
  }());
  return ctx.get();
}

ZSTD_DCtx* decompression_context() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxFree> ctx(ZSTD_createDCtx());
  return ctx.get();
}

}  // namespace

std::string encode_object(std::string_view bytes) {
  std::string out(ZSTD_compressBound(bytes.size()), '\0');
  ZSTD_CCtx* c = compression_context();
  ZSTD_CCtx_reset(c, ZSTD_reset_session_only);
  ZSTD_CCtx_setPledgedSrcSize(c, bytes.size());
  size_t n = ZSTD_compress2(c, out.data(), out.size(), bytes.data(), bytes.size());
  if (ZSTD_isError(n)) throw IOError(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

std::string decode_object(std::string_view frame, std::string_view name) { return decode_object(frame, name, nullptr); }

std::uint32_t frame_dictionary_id(std::string_view frame) {
  if (frame.size() < 5) return 0;
  return static_cast<std::uint32_t>(ZSTD_getDictID_fromFrame(frame.data(), frame.size()));
}

std::string decode_object(std::string_view frame, std::string_view name, const DictionaryLookup& dictionaries) {
  auto corrupt = [&](const std::string& what) {
    return Corruption(std::string(name) + ": " + what);
  };
  // Everything is checked from the header before a byte is allocated, so a
  // frame that lies about its size costs nothing. RFC 8878 §3.1.1: magic
  // 0xFD2FB528 (little-endian), then the frame header descriptor, whose bit 2
  // is Content_Checksum_flag.
  const auto* b = reinterpret_cast<const unsigned char*>(frame.data());
  if (frame.size() < 5 || b[0] != 0x28 || b[1] != 0xB5 || b[2] != 0x2F || b[3] != 0xFD)
    throw corrupt("expected a zstd data frame, found " +
                  std::string(frame.size() < 4 ? "fewer than 4 bytes" : "a skippable or unknown frame"));
  if (!(b[4] & 0x04)) throw corrupt("expected a zstd frame with a content checksum, found one without");
  unsigned long long content = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (content == ZSTD_CONTENTSIZE_ERROR)
    throw corrupt("expected a zstd frame header, found an invalid or truncated one");
  if (content == ZSTD_CONTENTSIZE_UNKNOWN)
    throw corrupt("expected a zstd frame that declares its content size in its header, found none");
  if (content > kMaxInputBytes)
    throw corrupt("expected a frame of at most " + std::to_string(kMaxInputBytes) + " bytes, found one declaring " +
                  std::to_string(content));
  size_t frame_size = ZSTD_findFrameCompressedSize(frame.data(), frame.size());
  if (ZSTD_isError(frame_size))
    throw corrupt(std::string("expected a whole zstd frame, found ") + ZSTD_getErrorName(frame_size));
  if (frame_size != frame.size())
    throw corrupt("expected exactly one zstd frame, found " + std::to_string(frame.size() - frame_size) +
                  " bytes after it");
  std::shared_ptr<const Dictionary> dictionary;
  if (std::uint32_t id = frame_dictionary_id(frame)) {
    if (dictionaries) dictionary = dictionaries(id);
    if (!dictionary)
      throw corrupt("the frame names zstd dictionary " + std::to_string(id) + ", and the store holds no dictionaries/" +
                    std::to_string(id));
  }
  std::string out(content, '\0');
  ZSTD_DCtx* d = decompression_context();
  ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
  size_t n = dictionary ? ZSTD_decompress_usingDDict(d, out.data(), out.size(), frame.data(), frame.size(),
                                                     dictionary->ddict_)
                        : ZSTD_decompressDCtx(d, out.data(), out.size(), frame.data(), frame.size());
  if (ZSTD_isError(n)) throw corrupt(std::string("zstd frame does not decode: ") + ZSTD_getErrorName(n));
  if (n != content)
    throw corrupt("expected the " + std::to_string(content) + " bytes the frame declares, found " + std::to_string(n));
  return out;
}

Dictionary::Dictionary(std::string_view bytes, std::uint32_t id, std::string_view name) : id_(id), ddict_(nullptr) {
  auto corrupt = [&](const std::string& what) {
    return Corruption(std::string(name) + ": " + what);
  };
  // RFC 8878 §5: Magic_Number 0xEC30A437 (little-endian), Dictionary_ID (4
  // bytes, little-endian), entropy tables, content.
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < 8 || b[0] != 0x37 || b[1] != 0xA4 || b[2] != 0x30 || b[3] != 0xEC)
    throw corrupt("expected a zstd dictionary (magic number 0xEC30A437, as zstd --train writes it), found " +
                  std::string(bytes.size() < 8 ? std::to_string(bytes.size()) + " bytes" : "other bytes"));
  if (bytes.size() > kMaxDictionaryBytes)
    throw corrupt("expected a dictionary of at most " + std::to_string(kMaxDictionaryBytes) + " bytes, found " +
                  std::to_string(bytes.size()));
  std::uint32_t found = ZSTD_getDictID_fromDict(bytes.data(), bytes.size());
  if (found != id)
    throw corrupt("expected a dictionary whose Dictionary_ID is " + std::to_string(id) + " (its file name), found " +
                  std::to_string(found));
  ddict_ = ZSTD_createDDict(bytes.data(), bytes.size());
  if (!ddict_) throw corrupt("zstd cannot load this dictionary's tables");
}

Dictionary::~Dictionary() { ZSTD_freeDDict(ddict_); }

}  // namespace kistore
