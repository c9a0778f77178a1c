// The pack indexer (store/git/pack_indexer.h) against hostile packs, one line
// per lie: each is refused with Error(kRefused) and a message naming the
// entry, what was expected and what was found, whether it arrives at once or
// a byte at a time, and leaves nothing in the destination folder the moment
// it is refused. Lying sizes end at once, without a large allocation.
#include <sys/resource.h>

#include <cstdio>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "objects/error.h"
#include "store/git/pack_indexer.h"
#include "tests/store/pack_bytes.h"
#include "tests/store/support.h"

namespace kistore {
namespace {

using namespace test_support;

std::string hex_of(std::string_view raw) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) out += digits[c >> 4], out += digits[c & 15];
  return out;
}

struct Hostile {
  std::string name;
  std::string pack;
  std::string message;  // the refusal's message contains this
  git::PackLimits limits = {};
};

std::vector<Hostile> hostile_packs() {
  const std::string hello = "hello";
  const std::string blob = whole_entry(3, hello);  // at offset 12
  const std::uint64_t second = 12 + blob.size();   // where the next entry starts
  auto with_delta = [&](const std::string& delta) { return pack_of(2, blob + ofs_entry(second, 12, delta)); };
  auto at = [](std::uint64_t offset) { return "pack entry at offset " + std::to_string(offset) + " "; };
  std::vector<Hostile> out;

  std::string bad_signature = pack_of(1, blob);
  bad_signature[2] = 'X';
  out.push_back({"bad signature", bad_signature, "pack does not start with \"PACK\": found \"PAXK\""});
  out.push_back({"version 4", pack_of(1, blob, 4), "pack is version 4; kistore reads versions 2 and 3"});
  out.push_back({"count larger than the entries", pack_of(2, blob), "pack ends after 1 of the 2 entries its header declares"});
  out.push_back({"count smaller than the entries", pack_of(1, blob + blob),
                 "pack has more bytes after its last entry (at offset " + std::to_string(second) +
                     ") than a trailer: its header declares 1 entry, fewer than it holds"});
  std::string bad_trailer = pack_of(1, blob);
  bad_trailer.back() ^= 1;
  out.push_back({"trailer mismatch", bad_trailer,
                 "pack trailer is " + hex_of(bad_trailer.substr(bad_trailer.size() - 20)) + ", but the pack's bytes hash to " +
                     hex_of(sha1_bytes(bad_trailer.substr(0, bad_trailer.size() - 20)))});
  out.push_back({"bytes after the trailer", pack_of(1, blob) + "x", "pack has more bytes after its last entry"});
  out.push_back({"empty input", "", "pack is 0 bytes, too short for a pack header (12 bytes) and trailer (20)"});
  std::string raw1000(1000, '\0');
  for (std::size_t i = 0; i < raw1000.size(); ++i) raw1000[i] = static_cast<char>(i * 7919 % 251);
  out.push_back({"truncated inside an entry",
                 pack_of(1, entry_head(3, raw1000.size()) + zlib_of(raw1000, 0)).substr(0, 500),
                 "pack ends at byte 500 inside the pack entry at offset 12 (entry 1 of 1), before its trailer"});
  out.push_back({"10 million declared entries, none present", pack_of(10000000, ""),
                 "pack header declares 10000000 entries; the limit is 8388608"});
  git::PackLimits many;
  many.max_objects = 20000000;
  out.push_back({"10 million declared entries under a raised limit", pack_of(10000000, ""),
                 "pack ends after 0 of the 10000000 entries its header declares", many});
  git::PackLimits small_pack;
  small_pack.max_pack_bytes = 40;
  out.push_back({"pack over the byte limit", pack_of(2, blob + blob), "pack is larger than the limit of 40 bytes", small_pack});

  // Entry headers and sizes.
  out.push_back({"1 TiB blob", pack_of(1, entry_head(3, std::uint64_t{1} << 40) + zlib_of("abc")),
                 at(12) + "declares 1099511627776 bytes (1.0 TiB); the limit for a blob is 16842752 bytes (16.1 MiB)"});
  out.push_back({"commit over its limit", pack_of(1, entry_head(1, 2 << 20) + zlib_of("abc")),
                 at(12) + "declares 2097152 bytes (2.0 MiB); the limit for a commit is 1048576 bytes (1.0 MiB)"});
  out.push_back({"delta over its limit", pack_of(1, entry_head(7, 100 << 20) + std::string(20, 'a') + zlib_of("abc")),
                 at(12) + "declares 104857600 bytes (100.0 MiB); the limit for a delta is 67108864 bytes (64.0 MiB)"});
  out.push_back({"size past 64 bits", pack_of(1, std::string(11, '\xbf') + "\x01" + zlib_of("abc")),
                 at(12) + "declares a size that does not fit in 64 bits"});
  out.push_back({"tag", pack_of(1, whole_entry(4, "object 0000000000000000000000000000000000000000\n")),
                 at(12) + "is a tag; a kistore store holds only commits, trees and blobs"});
  out.push_back({"type 5", pack_of(1, whole_entry(5, "x")), at(12) + "has type 5, which is no git object type"});
  out.push_back({"type 0", pack_of(1, whole_entry(0, "x")), at(12) + "has type 0, which is no git object type"});
  out.push_back({"inflates to more than declared", pack_of(1, whole_entry(3, "abcdef", 3)),
                 at(12) + "inflates to more than the 3 bytes it declares"});
  out.push_back({"inflates to less than declared", pack_of(1, whole_entry(3, "abcde", 10)),
                 at(12) + "inflates to 5 bytes, fewer than the 10 bytes it declares"});
  out.push_back({"delta inflates to more than declared",
                 pack_of(2, blob + entry_head(6, 3) + ofs_distance(second - 12) + zlib_of(delta_header(5, 5) + delta_insert(hello))),
                 at(second) + "inflates to more than the 3 bytes it declares"});
  out.push_back({"not zlib", pack_of(1, entry_head(3, 5) + "garbage!"), at(12) + "is not a valid zlib stream (incorrect header check)"});

  // Zip bombs: more inflated bytes than the pack may bring.
  std::string zeros(1 << 20, '\0');
  std::string bomb = whole_entry(3, zeros);
  git::PackLimits two_mib;
  two_mib.max_inflated_bytes = 2 << 20;
  out.push_back({"zip bomb", pack_of(3, bomb + bomb + bomb),
                 at(12 + 2 * bomb.size()) + "brings the pack's inflated bytes past the limit of 2097152 bytes (2.0 MiB) "
                                            "(2097152 so far, 1048576 more)",
                 two_mib});
  std::string spread = delta_header(zeros.size(), zeros.size() + 1);
  for (std::uint32_t i = 0; i < 16; ++i) spread += delta_copy(i << 16, 1 << 16);
  std::string delta_bombs = bomb;
  std::uint64_t offset = 12 + bomb.size();
  for (int i = 0; i < 8; ++i) {
    std::string e = ofs_entry(offset, 12, spread + delta_insert(std::string(1, static_cast<char>('a' + i))));
    delta_bombs += e;
    offset += e.size();
  }
  git::PackLimits four_mib;
  four_mib.max_inflated_bytes = 4 << 20;
  out.push_back({"delta bomb", pack_of(9, delta_bombs),
                 "brings the pack's inflated bytes past the limit of 4194304 bytes (4.0 MiB)", four_mib});

  // Deltas.
  out.push_back({"REF_DELTA against an object not in the pack",
                 pack_of(1, ref_entry(std::string(20, '\xab'), delta_header(5, 5) + delta_insert(hello))),
                 at(12) + "is a delta against object " + hex_of(std::string(20, '\xab')) + ", which the pack does not hold (kistore accepts no thin packs)"});
  out.push_back({"OFS_DELTA against no entry",
                 pack_of(2, blob + entry_head(6, 7) + ofs_distance(second - 13) + zlib_of(delta_header(5, 5) + delta_insert(hello))),
                 at(second) + "is a delta against offset 13, where no entry starts"});
  out.push_back({"OFS_DELTA before the pack", pack_of(1, entry_head(6, 7) + ofs_distance(1000) + zlib_of("abcdefg")),
                 at(12) + "is a delta whose base would be 1000 bytes before it, outside the pack's entries"});
  out.push_back({"base size mismatch", with_delta(delta_header(7, 5) + delta_insert(hello)),
                 at(second) + "is a delta against a base of 7 bytes; its base, the blob at offset 12, has 5 bytes"});
  out.push_back({"copy past the base", with_delta(delta_header(5, 100) + delta_copy(0, 100)),
                 at(second) + "is a delta copying bytes [0, 100) from a base of 5 bytes"});
  out.push_back({"copy far past the base", with_delta(delta_header(5, 5) + delta_copy(0xffffffff, 0xffffff)),
                 at(second) + "is a delta copying bytes [4294967295, 4311744510) from a base of 5 bytes"});
  out.push_back({"insert past the result", with_delta(delta_header(5, 2) + delta_insert(hello)),
                 at(second) + "is a delta writing past the 2 bytes it declares"});
  out.push_back({"result shorter than declared", with_delta(delta_header(5, 10) + delta_copy(0, 5)),
                 at(second) + "is a delta building 5 bytes, not the 10 bytes it declares"});
  out.push_back({"reserved instruction", with_delta(delta_header(5, 5) + std::string(1, '\0')),
                 at(second) + "is a delta holding the reserved instruction 0"});
  out.push_back({"instruction cut short", with_delta(delta_header(5, 5) + "\x91"),
                 at(second) + "is a delta whose instructions end inside an instruction"});
  out.push_back({"delta header cut short", with_delta("\x85"), at(second) + "is a delta without a valid header of base and result sizes"});
  std::string commit = "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nm\n";
  std::string commit_entry = whole_entry(1, commit);
  out.push_back({"delta building a commit over its limit",
                 pack_of(2, commit_entry + ofs_entry(12 + commit_entry.size(), 12,
                                                     delta_header(commit.size(), 2 << 20) + delta_copy(0, 10))),
                 at(12 + commit_entry.size()) + "is a delta building 2097152 bytes (2.0 MiB); the limit for a commit is "
                                                "1048576 bytes (1.0 MiB)"});
  std::string chain = blob;
  std::uint64_t previous = 12, next = second;
  for (int depth = 1; depth <= 4; ++depth) {
    std::string e = ofs_entry(next, previous, delta_header(5, 5) + delta_insert("hell" + std::to_string(depth)));
    chain += e;
    previous = next;
    next += e.size();
  }
  git::PackLimits three_deep;
  three_deep.max_delta_depth = 3;
  out.push_back({"delta chain over the limit", pack_of(5, chain),
                 at(previous) + "is a delta 4 deep (deltas down to a whole object); the limit is 3", three_deep});
  return out;
}

TEST_CASE("IncomingPack: hostile packs are refused and leave nothing", "[pack_indexer][hostile]") {
  for (const Hostile& h : hostile_packs()) {
    std::vector<std::size_t> pieces = {0, 4099};
    if (h.pack.size() < 100000) pieces.push_back(1);
    for (std::size_t piece : pieces) {
      DYNAMIC_SECTION(h.name << ", in pieces of " << piece) {
        TempDir dest;
        git::IncomingPack in(dest.path, h.limits);
        std::size_t step = piece ? piece : std::max<std::size_t>(h.pack.size(), 1);
        try {
          for (std::size_t at = 0; at < h.pack.size(); at += step) in.append(std::string_view(h.pack).substr(at, step));
          in.finish();
          FAIL("accepted");
        } catch (const Error& e) {
          CHECK(e.code() == ErrorCode::kRefused);
          CHECK_THAT(e.what(), Catch::Contains(h.message));
        }
        // Nothing left the moment it is refused, and every later call refuses again.
        CHECK(std::filesystem::is_empty(dest.path));
        CHECK_THROWS_WITH(in.finish(), Catch::Contains(h.message));
      }
    }
  }
}

TEST_CASE("index_untrusted_pack: a hostile stream is refused the same way", "[pack_indexer][hostile]") {
  for (const Hostile& h : hostile_packs()) {
    TempDir dest;
    std::istringstream in(h.pack);
    try {
      git::index_untrusted_pack(in, dest.path, h.limits);
      FAIL(h.name << ": accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kRefused);
      CHECK_THAT(e.what(), Catch::Contains(h.message));
    }
    CHECK(std::filesystem::is_empty(dest.path));
  }
}

TEST_CASE("IncomingPack: rebuilding bases that left the cache counts against the limit", "[pack_indexer][hostile]") {
  // A 1 MiB blob and a chain of 10 deltas, each rewriting one byte of the one before.
  std::string base(1 << 20, '\0');
  for (std::size_t i = 0; i < base.size(); ++i) base[i] = static_cast<char>(i * 7919 % 251);
  std::string entries = whole_entry(3, base);
  std::uint64_t previous = 12, offset = 12 + entries.size();
  for (int i = 0; i < 10; ++i) {
    std::string d = delta_header(base.size(), base.size()) + delta_insert(std::string(1, static_cast<char>('a' + i)));
    for (std::uint32_t at = 1; at < base.size(); at += 0x8000) d += delta_copy(at, std::min<std::uint32_t>(0x8000, base.size() - at));
    std::string e = ofs_entry(offset, previous, d);
    entries += e;
    previous = offset;
    offset += e.size();
  }
  std::string pack = pack_of(11, entries);
  git::PackLimits limits;
  limits.max_inflated_bytes = 24 << 20;
  {
    // With a cache, each delta builds on the object just built: about 12 MiB of work.
    TempDir dest;
    std::istringstream in(pack);
    CHECK(git::index_untrusted_pack(in, dest.path, limits).objects.size() == 11);
  }
  // Without one, every base is rebuilt from the whole blob up: 1 + 2 + ... MiB.
  limits.delta_cache_bytes = 0;
  TempDir dest;
  std::istringstream in(pack);
  CHECK_THROWS_WITH(git::index_untrusted_pack(in, dest.path, limits),
                    Catch::Contains("brings the pack's inflated bytes past the limit of 25165824 bytes (24.0 MiB)"));
  CHECK(std::filesystem::is_empty(dest.path));
}

// The process's resident memory and its peak since the last reset (Linux's
// /proc/self/status, in KiB). Writing "5" to /proc/self/clear_refs resets the
// peak, so a test sees its own peak, not that of the tests before it; where
// that is not allowed, getrusage's peak of the whole process stands in.
long status_kib(const std::string& field) {
  std::istringstream in(read_file("/proc/self/status"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  return -1;
}
bool reset_peak_rss() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}
long peak_rss_kib() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return r.ru_maxrss;
}

// A blob "h0000" and a chain of `depth` deltas, each building the next
// five-byte blob ("h0001", ...) from the one before: a pack git's index-pack
// takes whatever the depth.
std::string deep_chain_pack(int depth) {
  auto name = [](int i) {
    char text[8];
    std::snprintf(text, sizeof text, "h%04x", i);
    return std::string(text, 5);
  };
  std::string entries = whole_entry(3, name(0));
  std::uint64_t previous = 12, offset = 12 + entries.size();
  for (int i = 1; i <= depth; ++i) {
    std::string e = ofs_entry(offset, previous, delta_header(5, 5) + delta_insert(name(i)));
    entries += e;
    previous = offset;
    offset += e.size();
  }
  return pack_of(static_cast<std::uint32_t>(depth + 1), entries);
}

TEST_CASE("IncomingPack: a delta chain of any depth git accepts is taken", "[pack_indexer]") {
  // Deeper than git's pack.depth allows (4095) and than the 250 of an old
  // `gc --aggressive`: depth alone is never a reason to refuse.
  std::string pack = deep_chain_pack(5000);
  TempDir dest;
  std::istringstream in(pack);
  git::IndexedPack got = git::index_untrusted_pack(in, dest.path);
  CHECK(got.objects.size() == 5001);
}

TEST_CASE("IncomingPack: a deep chain of tiny deltas rebuilt again and again counts every step", "[pack_indexer][hostile]") {
  // Without a cache each delta's base is rebuilt from the whole blob up:
  // 2,000 * 2,001 / 2 steps of 5 bytes (10 MB) -- but each step counts at
  // least kDeltaStepCost bytes (128 MB), past a 32 MiB budget.
  std::string pack = deep_chain_pack(2000);
  git::PackLimits limits;
  limits.delta_cache_bytes = 0;
  limits.max_inflated_bytes = 32 << 20;
  TempDir dest;
  std::istringstream in(pack);
  CHECK_THROWS_WITH(git::index_untrusted_pack(in, dest.path, limits),
                    Catch::Contains("brings the pack's inflated bytes past the limit of 33554432 bytes (32.0 MiB)"));
  CHECK(std::filesystem::is_empty(dest.path));
  // The same chain with the default cache is about one step per delta.
  TempDir dest2;
  std::istringstream again(pack);
  limits.delta_cache_bytes = git::PackLimits{}.delta_cache_bytes;
  CHECK(git::index_untrusted_pack(again, dest2.path, limits).objects.size() == 2001);
}

TEST_CASE("IncomingPack: a declared 1 TiB ends at once with no large allocation", "[pack_indexer][hostile]") {
  const std::uint64_t tib = std::uint64_t{1} << 40;
  std::string hello = "hello";
  git::PackLimits unlimited;  // even when the limits would let it through, nothing is allocated on its word
  unlimited.max_blob_bytes = unlimited.max_delta_bytes = unlimited.max_inflated_bytes = tib * 4;
  unlimited.max_tree_bytes = unlimited.max_commit_bytes = tib * 4;
  struct Case {
    std::string pack;
    git::PackLimits limits;
    std::string message;
  };
  std::string blob = whole_entry(3, hello);
  std::vector<Case> cases = {
      {pack_of(1, entry_head(3, tib) + zlib_of("abc")), {}, "declares 1099511627776 bytes (1.0 TiB); the limit for a blob"},
      {pack_of(1, entry_head(3, tib) + zlib_of("abc")), unlimited,
       "inflates to 3 bytes, fewer than the 1099511627776 bytes (1.0 TiB) it declares"},
      {pack_of(2, blob + ofs_entry(12 + blob.size(), 12, delta_header(5, tib) + delta_copy(0, 5))), {},
       "is a delta building 1099511627776 bytes (1.0 TiB); the limit for the largest object is 67108864 bytes"},
  };
  for (const Case& c : cases) {
    TempDir dest;
    bool own_peak = reset_peak_rss();
    long before = status_kib("VmRSS");
    auto start = std::chrono::steady_clock::now();
    try {
      std::istringstream in(c.pack);
      git::index_untrusted_pack(in, dest.path, c.limits);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kRefused);
      CHECK_THAT(e.what(), Catch::Contains(c.message));
    }
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));
    if (own_peak) {
      CHECK(status_kib("VmHWM") - before < 64 * 1024);
    } else {
      CHECK(peak_rss_kib() < 200 * 1024);
    }
    CHECK(std::filesystem::is_empty(dest.path));
  }
}

}  // namespace
}  // namespace kistore
