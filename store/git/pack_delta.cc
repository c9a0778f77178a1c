#include "store/git/pack_delta.h"

#include <cstdio>
#include <cstring>

#include "objects/error.h"

namespace kistore::git {
namespace {

std::string entry_at(std::uint64_t offset) { return "pack entry at offset " + std::to_string(offset); }

bool read_delta_size(std::string_view d, std::size_t& at, std::uint64_t& out) {
  out = 0;
  for (unsigned shift = 0; at < d.size(); shift += 7) {
    std::uint64_t part = static_cast<unsigned char>(d[at]) & 0x7f;
    if (shift >= 64 || (shift > 57 && (part >> (64 - shift)) != 0)) return false;
    out |= part << shift;
    if (!(static_cast<unsigned char>(d[at++]) & 0x80)) return true;
  }
  return false;
}
}  // namespace

bool read_delta_header(std::string_view d, DeltaHeader& h) {
  std::size_t at = 0;
  if (!read_delta_size(d, at, h.base_size) || !read_delta_size(d, at, h.result_size)) return false;
  h.length = at;
  return true;
}

// A copy instruction (high bit set) names which of 4 offset and 3 size bytes
// follow (a size of 0 means 65,536); an insert is its own length, 1-127.
void apply_delta(std::string_view base, std::string_view d, const DeltaHeader& h, std::string& out,
                 std::uint64_t offset) {
  out.resize(h.result_size);
  std::size_t at = h.length, made = 0;
  auto truncated = [&] {
    return Refused(entry_at(offset) + " is a delta whose instructions end inside an instruction");
  };
  while (at < d.size()) {
    unsigned char op = static_cast<unsigned char>(d[at++]);
    if (op & 0x80) {
      std::uint64_t from = 0, size = 0;
      for (int i = 0; i < 4; ++i) {
        if (!(op & (1 << i))) continue;
        if (at == d.size()) throw truncated();
        from |= std::uint64_t{static_cast<unsigned char>(d[at++])} << (8 * i);
      }
      for (int i = 0; i < 3; ++i) {
        if (!(op & (0x10 << i))) continue;
        if (at == d.size()) throw truncated();
        size |= std::uint64_t{static_cast<unsigned char>(d[at++])} << (8 * i);
      }
      if (size == 0) size = 0x10000;
      if (from + size > base.size())
        throw Refused(entry_at(offset) + " is a delta copying bytes [" + std::to_string(from) + ", " +
                      std::to_string(from + size) + ") from a base of " + bytes_text(base.size()));
      if (size > h.result_size - made)
        throw Refused(entry_at(offset) + " is a delta writing past the " + bytes_text(h.result_size) +
                      " it declares");
      std::memcpy(out.data() + made, base.data() + from, size);
      made += size;
    } else if (op != 0) {
      if (op > d.size() - at) throw truncated();
      if (op > h.result_size - made)
        throw Refused(entry_at(offset) + " is a delta writing past the " + bytes_text(h.result_size) +
                      " it declares");
      std::memcpy(out.data() + made, d.data() + at, op);
      at += op;
      made += op;
    } else {
      throw Refused(entry_at(offset) + " is a delta holding the reserved instruction 0");
    }
  }
  if (made != h.result_size)
    throw Refused(entry_at(offset) + " is a delta building " + bytes_text(made) + ", not the " +
                  bytes_text(h.result_size) + " it declares");
}

// "16842752 bytes (16.1 MiB)": exact for the record, rounded for a person.
std::string bytes_text(std::uint64_t n) {
  std::string exact = std::to_string(n) + (n == 1 ? " byte" : " bytes");
  if (n < 1024) return exact;
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(n) / 1024;
  int unit = 0;
  while (v >= 1024 && unit < 5) v /= 1024, ++unit;
  char buf[32];
  std::snprintf(buf, sizeof buf, " (%.1f %s)", v, units[unit]);
  return exact + buf;
}

}  // namespace kistore::git
