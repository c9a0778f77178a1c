#include "store/git/index_file.h"

#include <cstring>

#include "objects/sha1.h"

namespace kistore::git {
namespace {

constexpr std::size_t kHeaderBytes = 12, kHashBytes = 20;
constexpr std::size_t kFixedBytes = 62;  // an entry's fields before its second flags word and path
constexpr std::uint16_t kNameMask = 0x0FFF;

std::uint32_t get32(const unsigned char* p) {
  return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | p[3];
}
std::uint16_t get16(const unsigned char* p) { return std::uint16_t(p[0] << 8 | p[1]); }
void put32(std::string& out, std::uint32_t v) {
  const char b[4] = {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
  out.append(b, 4);
}
void put16(std::string& out, std::uint16_t v) {
  const char b[2] = {char(v >> 8), char(v)};
  out.append(b, 2);
}

// git's offset varint (varint.c): seven bits a byte, most significant first,
// each continued byte standing for one more than its bits say, so that every
// number has one encoding.
bool get_varint(const unsigned char*& p, const unsigned char* end, std::uint64_t& value) {
  if (p >= end) return false;
  unsigned char c = *p++;
  value = c & 127;
  while (c & 128) {
    if (p >= end || value > (UINT64_MAX >> 8)) return false;
    c = *p++;
    value = ((value + 1) << 7) | (c & 127);
  }
  return true;
}
void put_varint(std::string& out, std::uint64_t value) {
  unsigned char buf[16];
  std::size_t pos = sizeof buf - 1;
  buf[pos] = value & 127;
  while (value >>= 7) buf[--pos] = static_cast<unsigned char>(128 | (--value & 127));
  out.append(reinterpret_cast<const char*>(buf + pos), sizeof buf - pos);
}

}  // namespace

std::optional<IndexFile> parse_index(std::string_view bytes, std::string& why) {
  if (bytes.size() < kHeaderBytes + kHashBytes || bytes.substr(0, 4) != "DIRC") {
    why = "expected an index (\"DIRC\" and a header), found " + std::to_string(bytes.size()) + " bytes of something else";
    return std::nullopt;
  }
  const auto* base = reinterpret_cast<const unsigned char*>(bytes.data());
  const unsigned char* end = base + bytes.size() - kHashBytes;
  static const unsigned char kZero[kHashBytes] = {};
  if (std::memcmp(end, kZero, kHashBytes) != 0) {  // index.skipHash writes zeros
    unsigned char sum[kHashBytes];
    Sha1 sha;
    sha.update(base, bytes.size() - kHashBytes);
    sha.final(sum);
    if (std::memcmp(sum, end, kHashBytes) != 0) {
      why = "its checksum does not match its content";
      return std::nullopt;
    }
  }
  IndexFile out;
  out.version = get32(base + 4);
  if (out.version < 2 || out.version > 4) {
    why = "expected index version 2, 3 or 4, found " + std::to_string(out.version);
    return std::nullopt;
  }
  const std::uint32_t count = get32(base + 8);
  if (count > (bytes.size() - kHeaderBytes) / (kFixedBytes - 20 + 2)) {  // v4 entries are at least 42 bytes
    why = "it says it holds " + std::to_string(count) + " entries, more than its size allows";
    return std::nullopt;
  }
  out.entries.reserve(count);
  const unsigned char* p = base + kHeaderBytes;
  std::string previous;
  for (std::uint32_t i = 0; i < count; ++i) {
    const unsigned char* start = p;
    if (std::size_t(end - p) < kFixedBytes) {
      why = "entry " + std::to_string(i) + " runs past the end";
      return std::nullopt;
    }
    IndexEntry e;
    std::uint32_t* fields[] = {&e.ctime_s, &e.ctime_ns, &e.mtime_s, &e.mtime_ns, &e.dev,
                               &e.ino,     &e.mode,     &e.uid,     &e.gid,      &e.size};
    for (std::uint32_t* f : fields) {
      *f = get32(p);
      p += 4;
    }
    std::memcpy(e.id, p, 20);
    p += 20;
    e.flags = get16(p);
    p += 2;
    if (e.flags & IndexEntry::kExtended) {
      if (out.version < 3 || end - p < 2) {
        why = "entry " + std::to_string(i) + " is extended in a version-" + std::to_string(out.version) + " index";
        return std::nullopt;
      }
      e.flags_extended = get16(p);
      p += 2;
    }
    if (out.version == 4) {
      std::uint64_t cut = 0;
      if (!get_varint(p, end, cut) || cut > previous.size()) {
        why = "entry " + std::to_string(i) + "'s path cuts more than the previous path holds";
        return std::nullopt;
      }
      const void* nul = std::memchr(p, 0, std::size_t(end - p));
      if (!nul) {
        why = "entry " + std::to_string(i) + "'s path has no end";
        return std::nullopt;
      }
      const auto* stop = static_cast<const unsigned char*>(nul);
      e.path = previous.substr(0, previous.size() - cut);
      e.path.append(reinterpret_cast<const char*>(p), std::size_t(stop - p));
      p = stop + 1;
    } else {
      std::size_t length = e.flags & kNameMask;
      const void* nul = std::memchr(p, 0, std::size_t(end - p));
      if (!nul || (length < kNameMask && static_cast<const unsigned char*>(nul) != p + length)) {
        why = "entry " + std::to_string(i) + "'s path does not end where its length says";
        return std::nullopt;
      }
      length = std::size_t(static_cast<const unsigned char*>(nul) - p);
      e.path.assign(reinterpret_cast<const char*>(p), length);
      const std::size_t size = (std::size_t(p - start) + length + 8) & ~std::size_t(7);
      if (std::size_t(end - start) < size) {
        why = "entry " + std::to_string(i) + " runs past the end";
        return std::nullopt;
      }
      p = start + size;
    }
    if (e.path.empty() || ((e.flags & kNameMask) != std::min<std::size_t>(e.path.size(), kNameMask))) {
      why = "entry " + std::to_string(i) + "'s path length does not match its flags";
      return std::nullopt;
    }
    previous = e.path;
    out.entries.push_back(std::move(e));
  }
  while (p < end) {
    if (end - p < 8 || get32(p + 4) > std::size_t(end - p) - 8) {
      why = "an extension runs past the end";
      return std::nullopt;
    }
    out.extensions.emplace_back(reinterpret_cast<const char*>(p), 4);
    p += 8 + get32(p + 4);
  }
  return out;
}

std::string render_index(std::uint32_t version, const std::vector<IndexEntry>& entries) {
  std::string out;
  out.reserve(kHeaderBytes + entries.size() * 96 + kHashBytes);
  out.append("DIRC", 4);
  put32(out, version);
  put32(out, static_cast<std::uint32_t>(entries.size()));
  const std::string* previous = nullptr;
  for (const IndexEntry& e : entries) {
    const std::size_t start = out.size();
    for (std::uint32_t f : {e.ctime_s, e.ctime_ns, e.mtime_s, e.mtime_ns, e.dev, e.ino, e.mode, e.uid, e.gid, e.size})
      put32(out, f);
    out.append(reinterpret_cast<const char*>(e.id), 20);
    std::uint16_t flags = static_cast<std::uint16_t>((e.flags & ~(kNameMask | IndexEntry::kExtended)) |
                                                     std::min<std::size_t>(e.path.size(), kNameMask));
    if (e.flags_extended) flags |= IndexEntry::kExtended;
    put16(out, flags);
    if (e.flags_extended) put16(out, e.flags_extended);
    if (version == 4) {
      std::size_t common = 0;
      if (previous)
        while (common < previous->size() && common < e.path.size() && (*previous)[common] == e.path[common]) ++common;
      put_varint(out, previous ? previous->size() - common : 0);
      out.append(e.path, common, std::string::npos);
      out.push_back('\0');
      previous = &e.path;
    } else {
      out.append(e.path);
      const std::size_t size = (out.size() - start + 8) & ~std::size_t(7);
      out.append(start + size - out.size(), '\0');
    }
  }
  unsigned char sum[kHashBytes];
  Sha1 sha;
  sha.update(out.data(), out.size());
  sha.final(sum);
  out.append(reinterpret_cast<const char*>(sum), kHashBytes);
  return out;
}

}  // namespace kistore::git
