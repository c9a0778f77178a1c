// libFuzzer target for the pack indexer (store/git/pack_indexer.h): any bytes
// must end in an indexed pack or in Error(kRefused) — never a crash, a
// sanitizer report, a hang, a large allocation or another exception — and a
// refusal must leave the destination folder empty.
//
// The input's first byte says how to feed the rest: bit 0, no cache of delta
// bases; bit 1, replace the last 20 bytes with the SHA-1 of those before
// (a mutated pack then still passes its trailer check and reaches delta
// resolution); bits 2-7, the size of the pieces (0: all at once).
//
//   cmake -S . -B build-fuzz -G Ninja -DKISTORE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++
//   ninja -C build-fuzz fuzz_pack_indexer
//   build-fuzz/tests/fuzz/fuzz_pack_indexer -max_total_time=30 tests/fuzz/corpus/pack_indexer
#include <openssl/evp.h>
#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "objects/error.h"
#include "store/git/pack_indexer.h"

namespace {

const std::string& scratch_dir() {
  static const std::string dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fuzz-pack-indexer-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) abort();
    return tmpl;
  }();
  static const bool cleaned_at_exit = [] {
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    });
    return true;
  }();
  (void)cleaned_at_exit;
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // Small limits, so that a run explores refusals rather than big inflates.
  kistore::git::PackLimits limits;
  limits.max_pack_bytes = 1 << 20;
  limits.max_objects = 1 << 16;
  limits.max_blob_bytes = limits.max_tree_bytes = limits.max_delta_bytes = 1 << 20;
  limits.max_commit_bytes = 1 << 16;
  limits.max_inflated_bytes = 8 << 20;
  limits.max_delta_depth = 16;
  limits.delta_cache_bytes = data[0] & 1 ? 0 : 1 << 20;
  std::size_t piece = data[0] >> 2 ? data[0] >> 2 : size;
  std::string pack(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 2) && pack.size() >= 20) {
    unsigned int n = 0;
    EVP_Digest(pack.data(), pack.size() - 20, reinterpret_cast<unsigned char*>(pack.data()) + pack.size() - 20, &n,
               EVP_sha1(), nullptr);
  }
  const std::string& dir = scratch_dir();
  bool refused = false;
  try {
    kistore::git::IncomingPack in(dir, limits);
    for (std::size_t at = 0; at < pack.size(); at += piece) in.append(std::string_view(pack).substr(at, piece));
    kistore::git::IndexedPack got = in.finish();
    if (got.objects.size() > got.entries) abort();
  } catch (const kistore::Error& e) {
    if (e.code() != kistore::ErrorCode::kRefused) {
      std::fprintf(stderr, "not a refusal: %s\n", e.what());
      abort();
    }
    refused = true;
  }
  if (refused && !std::filesystem::is_empty(dir)) {
    std::fprintf(stderr, "a refused pack left files behind\n");
    abort();
  }
  for (const auto& f : std::filesystem::directory_iterator(dir)) std::filesystem::remove(f.path());
  return 0;
}
