#include "store/git/packread.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "objects/error.h"
#include "store/git/pack_delta.h"

namespace kistore::git {
namespace {

std::uint32_t be32(const unsigned char* p) {
  return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | p[3];
}

struct Mapping {
  const unsigned char* data = nullptr;
  std::size_t size = 0;
  // The file, kept open for pread when it is larger than kHandBackEvery
  // (few files are: a store of many small packs keeps no descriptors).
  int fd = -1;
  bool open(const std::string& path, bool keep_big = false) {
    int file = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (file < 0) return false;
    struct stat st {};
    if (::fstat(file, &st) != 0 || st.st_size <= 0) {
      ::close(file);
      return false;
    }
    void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, file, 0);
    if (p == MAP_FAILED) {
      ::close(file);
      return false;
    }
    data = static_cast<const unsigned char*>(p);
    size = static_cast<std::size_t>(st.st_size);
    if (keep_big && size > kHandBackEvery) fd = file;
    else ::close(file);
    return true;
  }
  ~Mapping() {
    if (data) ::munmap(const_cast<unsigned char*>(data), size);
    if (fd >= 0) ::close(fd);
  }
  // Every page of a mapping that has been read stays resident, counted in
  // the process's memory, until the mapping goes: a verify of a
  // million-run store reads all of its 590 MB pack. After every
  // kHandBackEvery bytes mapped in by reads, the pages are handed back
  // (MADV_DONTNEED; a read-only private file mapping reads them again from
  // the page cache when next touched, so a read on another thread at that
  // moment sees the same bytes), keeping what the pack costs in memory near
  // that figure. A read maps in more than it reads: the kernel maps the
  // cached pages around a faulting one too (fault-around, 64 KiB by
  // default), so a walk that reads small objects in digest order, not pack
  // order, made ~200 MiB resident between hand-backs counted by bytes read.
  static constexpr std::uint64_t kHandBackEvery = std::uint64_t(64) << 20;
  static constexpr std::uint64_t kFaultAround = std::uint64_t(64) << 10;
  mutable std::atomic<std::uint64_t> read_since{0};
  void note_read(std::uint64_t bytes) const {
    if (size <= kHandBackEvery) return;
    bytes = std::max(bytes, kFaultAround);
    if (read_since.fetch_add(bytes, std::memory_order_relaxed) + bytes < kHandBackEvery) return;
    read_since.store(0, std::memory_order_relaxed);
    ::madvise(const_cast<unsigned char*>(data), size, MADV_DONTNEED);
  }
};

// The most a deflate stream of `compressed` bytes can inflate to (zlib's
// worst ratio is about 1032:1), capped at 4 GiB.
std::uint64_t inflate_bound(std::size_t compressed) {
  const std::uint64_t cap = std::uint64_t(1) << 32;
  return compressed > cap / 1032 ? cap : std::uint64_t(compressed) * 1032 + 64;
}

// Replaces `out` with the zlib stream at p[0..avail) inflated, which must be
// exactly `size` bytes and end the stream. `out` grows with what the stream
// yields (doubling, from 64 KiB), never at once to what the entry's header
// claims: a header that declares gigabytes over a short stream costs what
// the stream holds.
bool inflate_exact(const unsigned char* p, std::size_t avail, std::uint64_t size, std::string& out) {
  if (size > inflate_bound(avail)) return false;
  constexpr std::size_t kFirstChunk = std::size_t(64) << 10, kMaxChunk = std::size_t(1) << 30;
  out.clear();
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return false;
  z.next_in = const_cast<unsigned char*>(p);
  z.avail_in = static_cast<uInt>(std::min<std::size_t>(avail, UINT32_MAX));
  int rc = Z_OK;
  while (rc == Z_OK && out.size() < size) {
    const std::size_t have = out.size();
    const std::size_t room = static_cast<std::size_t>(
        std::min<std::uint64_t>(size - have, std::min(std::max(have, kFirstChunk), kMaxChunk)));
    out.resize(have + room);
    z.next_out = reinterpret_cast<unsigned char*>(out.data() + have);
    z.avail_out = static_cast<uInt>(room);
    rc = inflate(&z, Z_NO_FLUSH);
    out.resize(have + room - z.avail_out);
  }
  // All `size` bytes came out: the stream must end here. One that is longer
  // than declared shows as output in `spare`.
  if (rc == Z_OK) {
    unsigned char spare;
    z.next_out = &spare;
    z.avail_out = 1;
    rc = inflate(&z, Z_FINISH);
  }
  bool ok = rc == Z_STREAM_END && z.total_out == size;
  inflateEnd(&z);
  return ok;
}

}  // namespace

struct PackReader::Pack {
  Mapping idx, pack;
  std::uint32_t count = 0;
  const unsigned char* fanout = nullptr;  // 256 big-endian counts
  const unsigned char* names = nullptr;   // count x 20 bytes, sorted
  const unsigned char* offsets = nullptr;  // count x 4 bytes
  const unsigned char* large = nullptr;    // 8-byte offsets
  std::size_t large_count = 0;

  bool open(const std::string& base) {
    if (!idx.open(base + ".idx") || !pack.open(base + ".pack", true)) return false;
    // Index v2: "\377tOc", version 2, fan-out, names, CRCs, offsets, large
    // offsets, two checksums.
    if (idx.size < 8 + 1024 + 40 || std::memcmp(idx.data, "\377tOc", 4) != 0 || be32(idx.data + 4) != 2) return false;
    fanout = idx.data + 8;
    count = be32(fanout + 255 * 4);
    std::size_t need = 8 + 1024 + std::size_t(count) * 28 + 40;
    if (idx.size < need) return false;
    names = fanout + 1024;
    offsets = names + std::size_t(count) * 24;  // after the names and the CRCs
    large = offsets + std::size_t(count) * 4;
    large_count = (idx.size - need) / 8;
    if (pack.size < 32 || std::memcmp(pack.data, "PACK", 4) != 0) return false;
    return true;
  }

  // The offset of `id` in the pack, or 0 (no entry starts at 0). Object ids
  // are uniform, so the search starts where the id's value puts it in its
  // fan-out bucket and gallops from there: a few nearby reads of the names
  // table instead of a binary search's dozen far-apart ones (in a large
  // store's index each of those is a cache miss).
  std::uint64_t find(const git_oid& id) const {
    unsigned first = id.id[0];
    std::uint32_t lo = first ? be32(fanout + (first - 1) * 4) : 0, hi = be32(fanout + first * 4);
    if (hi > count || lo > hi) return 0;
    auto compare = [&](std::uint64_t i) { return std::memcmp(names + i * 20, id.id, 20); };
    if (hi - lo > 8) {
      std::uint64_t fraction = 0;  // id bytes 1..8 as a fraction of 2^64
      for (int i = 1; i <= 8; ++i) fraction = fraction << 8 | id.id[i];
      const std::uint64_t guess = lo + static_cast<std::uint64_t>((static_cast<unsigned __int128>(fraction) * (hi - lo)) >> 64);
      int c = compare(guess);
      if (c == 0) return offset_at(guess);
      if (c < 0) {  // the id lies in (guess, hi)
        lo = static_cast<std::uint32_t>(guess + 1);
        for (std::uint64_t step = 1, probe; (probe = guess + step) < hi; step *= 2) {
          c = compare(probe);
          if (c == 0) return offset_at(probe);
          if (c > 0) { hi = static_cast<std::uint32_t>(probe); break; }
          lo = static_cast<std::uint32_t>(probe + 1);
        }
      } else {  // the id lies in [lo, guess)
        const std::uint64_t floor = lo;
        hi = static_cast<std::uint32_t>(guess);
        for (std::uint64_t step = 1; step <= guess - floor; step *= 2) {
          const std::uint64_t probe = guess - step;
          c = compare(probe);
          if (c == 0) return offset_at(probe);
          if (c < 0) { lo = static_cast<std::uint32_t>(probe + 1); break; }
          hi = static_cast<std::uint32_t>(probe);
        }
      }
    }
    while (lo < hi) {
      std::uint32_t mid = lo + (hi - lo) / 2;
      int c = compare(mid);
      if (c == 0) return offset_at(mid);
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return 0;
  }

  // The pack offset of the index's entry `i`, or 0 when the index is damaged.
  std::uint64_t offset_at(std::uint64_t i) const {
    std::uint32_t off = be32(offsets + i * 4);
    if (!(off & 0x80000000u)) return off;
    std::size_t k = off & 0x7fffffffu;
    if (k >= large_count) return 0;
    return std::uint64_t(be32(large + k * 8)) << 32 | be32(large + k * 8 + 4);
  }
};

PackReader::PackReader(const std::string& gitdir) {
  std::string objects = gitdir + "objects";
  add_packs(objects + "/pack");
  // The object folders its objects/info/alternates names (one level, as a
  // pull's quarantine names the store's): their packs are the repository's too.
  std::ifstream alternates(objects + "/info/alternates");
  for (std::string line; std::getline(alternates, line);) {
    if (line.empty() || line[0] == '#') continue;
    add_packs((line[0] == '/' ? line : objects + "/" + line) + "/pack");
  }
}

void PackReader::add_packs(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() <= 4 || name.compare(name.size() - 4, 4, ".idx") != 0) continue;
    auto pack = std::make_unique<Pack>();
    if (pack->open(dir + "/" + name.substr(0, name.size() - 4))) packs_.push_back(std::move(pack));
  }
  ::closedir(d);
}

PackReader::~PackReader() = default;

// The pack that lists `id` and the entry's offset there: the pack of the
// last hit first (reads come in runs from one pack), then the others.
const PackReader::Pack* PackReader::locate(const git_oid& id, std::uint64_t& at) const {
  const std::size_t hint = hint_.load(std::memory_order_relaxed);
  if (hint < packs_.size() && (at = packs_[hint]->find(id))) return packs_[hint].get();
  for (std::size_t i = 0; i < packs_.size(); ++i) {
    if (i == hint || !(at = packs_[i]->find(id))) continue;
    hint_.store(i, std::memory_order_relaxed);
    return packs_[i].get();
  }
  return nullptr;
}

std::uint64_t PackReader::object_count() const {
  std::uint64_t n = 0;
  for (const auto& pack : packs_) n += pack->count;
  return n;
}

bool PackReader::has(const git_oid& id) const {
  std::uint64_t at = 0;
  return locate(id, at) != nullptr;
}

namespace {

// A pack entry's header at `at` (before `end`, which it is below): its type
// and inflated size; `at` moves past it. False for a header that runs past
// `end` or declares more than 64 bits of size.
bool entry_header(const unsigned char* p, std::uint64_t end, std::uint64_t& at, int& type, std::uint64_t& size) {
  unsigned c = p[at++];
  type = (c >> 4) & 7;
  size = c & 15;
  for (int shift = 4; c & 0x80; shift += 7) {
    if (at >= end || shift > 56) return false;
    c = p[at++];
    size |= std::uint64_t(c & 0x7f) << shift;
  }
  return true;
}

}  // namespace


namespace {

// The whole (not delta) object whose entry starts at p[at], reading nothing
// at or past p[end]: stored blocks (their lengths and Adler-32 checked), or
// deflated to exactly its declared size (unless `stored_only`); at most
// `max_size` bytes. Sets `type` and `out`; false for anything else, or an
// entry cut short by `end`.
bool read_whole(const unsigned char* p, std::uint64_t at, std::uint64_t end, std::uint64_t max_size, git_object_t& type,
                std::string& out, bool stored_only = false) {
  if (at >= end) return false;
  int t = 0;
  std::uint64_t size = 0;
  if (!entry_header(p, end, at, t, size)) return false;
  if (t < GIT_OBJECT_COMMIT || t > GIT_OBJECT_TAG) return false;  // a delta: libgit2 resolves it
  // zlib header: deflate, no preset dictionary, check bits.
  if (at + 2 > end) return false;
  unsigned cmf = p[at], flg = p[at + 1];
  if ((cmf & 15) != 8 || (flg & 0x20) || (cmf * 256 + flg) % 31 != 0) return false;
  if (size > max_size) return false;
  if (at + 2 < end && (p[at + 2] & ~1u)) {
    if (stored_only) return false;
    // Compressed blocks (the trees of a small change, a commit, a store
    // after `git gc`): inflated to exactly the declared size, zlib
    // checking the Adler-32.
    if (!inflate_exact(p + at, end - at, size, out)) return false;
    type = static_cast<git_object_t>(t);
    return true;
  }
  at += 2;
  out.clear();
  // Stored blocks hold their bytes: an entry cannot have more than the
  // file has left (a hostile pack may declare any size).
  if (size > end - at) return false;
  out.reserve(size);
  uLong adler = adler32(0, nullptr, 0);
  for (bool last = false; !last;) {
    // A stored block starts on a byte: BFINAL, BTYPE 00, zero padding.
    if (at + 5 > end) return false;
    unsigned h = p[at];
    if (h & ~1u) return false;  // a stored block, then a compressed one: libgit2 reads it
    last = h & 1;
    unsigned len = p[at + 1] | p[at + 2] << 8, nlen = p[at + 3] | p[at + 4] << 8;
    if ((len ^ 0xffffu) != nlen) return false;
    at += 5;
    if (at + len > end || out.size() + len > size) return false;
    out.append(reinterpret_cast<const char*>(p + at), len);
    adler = adler32(adler, p + at, len);
    at += len;
  }
  if (out.size() != size || at + 4 > end || be32(p + at) != adler) return false;
  type = static_cast<git_object_t>(t);
  return true;
}

// read_whole of the stored entry at `at` of a big pack through one pread of
// its first KiB rather than through the mapping: a read through the mapping
// makes the pages around it resident too (the kernel's fault-around),
// 64 KiB for a 200-byte frame read in digest order, not pack order. False
// for an entry that does not end within that KiB or is deflated (inflating
// a prefix, then the whole through the mapping, made a million-run verify's
// walk 5 s slower), or any read_whole refuses: the mapped path then reads
// and judges it.
bool read_whole_by_pread(int fd, std::uint64_t at, std::uint64_t end, std::uint64_t max_size, git_object_t& type,
                         std::string& out) {
  constexpr std::size_t kProbe = 1024;  // most frames are smaller; a larger object takes the mapped path
  unsigned char buf[kProbe];
  if (at >= end) return false;
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kProbe, end - at));
  ssize_t n;
  do n = ::pread(fd, buf, want, static_cast<off_t>(at));
  while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(want) && read_whole(buf, 0, want, max_size, type, out, true);
}

}  // namespace

bool PackReader::read(const git_oid& id, git_object_t& type, std::string& out, std::uint64_t max_size) const {
  std::uint64_t at = 0;
  const Pack* pack = locate(id, at);
  if (!pack) return false;
  const std::uint64_t end = pack->pack.size - 20;  // the trailer (Pack::open: a pack has at least 32 bytes)
  if (pack->pack.fd >= 0 && read_whole_by_pread(pack->pack.fd, at, end, max_size, type, out)) return true;
  if (!read_whole(pack->pack.data, at, end, max_size, type, out)) return false;
  pack->pack.note_read(out.size());
  return true;
}

bool PackReader::read_any(const git_oid& id, git_object_t& type, std::string& out) const {
  return read_any_at(id, 0, type, out);
}

bool PackReader::read_any_at(const git_oid& id, unsigned depth, git_object_t& type, std::string& out) const {
  std::uint64_t at = 0;
  const Pack* pack = locate(id, at);
  return pack && read_entry(*pack, at, depth, type, out);
}

bool PackReader::read_entry(const Pack& pack, std::uint64_t at, unsigned depth, git_object_t& type,
                            std::string& out) const {
  if (depth > kMaxDeltaChain) return false;
  const unsigned char* p = pack.pack.data;
  const std::uint64_t entry = at, end = pack.pack.size - 20;  // before the trailer
  if (at >= end) return false;
  int t = 0;
  std::uint64_t size = 0;
  if (!entry_header(p, end, at, t, size)) return false;
  if (t >= GIT_OBJECT_COMMIT && t <= GIT_OBJECT_TAG) {
    if (!inflate_exact(p + at, end - at, size, out)) return false;
    pack.pack.note_read(size);
    type = static_cast<git_object_t>(t);
    return true;
  }
  std::string base;
  if (t == GIT_OBJECT_OFS_DELTA) {
    // The base's distance back, big-endian 7 bits a byte, plus one per
    // continuation byte (git's encoding).
    if (at >= end) return false;
    unsigned c = p[at++];
    std::uint64_t back = c & 0x7f;
    while (c & 0x80) {
      if (at >= end || back >= (std::uint64_t(1) << 56)) return false;
      c = p[at++];
      back = ((back + 1) << 7) | (c & 0x7f);
    }
    if (back == 0 || back >= entry) return false;
    if (!read_entry(pack, entry - back, depth + 1, type, base)) return false;
  } else if (t == GIT_OBJECT_REF_DELTA) {
    if (end - at < GIT_OID_RAWSZ) return false;
    git_oid base_id;
    std::memcpy(base_id.id, p + at, GIT_OID_RAWSZ);
    at += GIT_OID_RAWSZ;
    if (!read_any_at(base_id, depth + 1, type, base)) return false;
  } else {
    return false;
  }
  std::string delta;
  DeltaHeader header;
  if (!inflate_exact(p + at, end - at, size, delta) || !read_delta_header(delta, header) ||
      header.base_size != base.size() || header.result_size > inflate_bound(delta.size() + base.size()))
    return false;
  try {
    apply_delta(base, delta, header, out, entry);
  } catch (const Error&) {
    return false;  // libgit2 reports the damaged delta
  }
  return true;
}

}  // namespace kistore::git
