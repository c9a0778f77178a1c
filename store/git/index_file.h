// git's index file ($GIT_DIR/index, "DIRC"), parsed and rendered by
// kistore's own checkout of a write into a plain clone (work_tree.h).
//
// The format is git's (Documentation/gitformat-index.txt): a 12-byte header
// ("DIRC", version, entry count, big-endian), the entries sorted by path,
// extensions (a 4-byte signature, a 4-byte length, data), and the SHA-1 of
// everything before it (or 20 zero bytes under index.skipHash). Versions 2,
// 3 and 4 are read and written: 3 adds a second flags word to entries that
// set the "extended" flag, 4 writes each path as the number of bytes to cut
// from the previous one (git's offset varint) and the rest, unpadded.
//
// What parse_index accepts is exactly what it can render back without loss
// of the entries; extensions are listed by signature and never rendered: a
// writer drops them (every optional one, an uppercase signature, is a cache
// git rebuilds) and leaves an index with a mandatory one (lowercase: a split
// or sparse index) to git.
//
// Thread-safety: the functions are pure and reentrant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kistore::git {

// One entry of the index, its fields as stored.
struct IndexEntry {
  std::uint32_t ctime_s = 0, ctime_ns = 0, mtime_s = 0, mtime_ns = 0;
  std::uint32_t dev = 0, ino = 0, mode = 0, uid = 0, gid = 0, size = 0;
  unsigned char id[20] = {};
  std::uint16_t flags = 0;           // assume-valid, extended, stage, name length (as stored)
  std::uint16_t flags_extended = 0;  // version 3 and later, when "extended" is set; else 0
  std::string path;

  static constexpr std::uint16_t kAssumeValid = 0x8000, kExtended = 0x4000;
  unsigned stage() const { return (flags >> 12) & 3; }
};

struct IndexFile {
  std::uint32_t version = 2;
  std::vector<IndexEntry> entries;     // in the file's order
  std::vector<std::string> extensions;  // their signatures, in the file's order
};

// The index in `bytes`, or nullopt with `why` saying what is wrong (a bad
// signature or checksum, a version other than 2 to 4, an entry or extension
// that runs past the end, a path without its NUL).
std::optional<IndexFile> parse_index(std::string_view bytes, std::string& why);

// The bytes of an index of `version` (2, 3 or 4) holding `entries` (sorted
// by path, as git keeps them) and no extension, with its SHA-1. The name
// length bits of each entry's flags are set from its path; the "extended"
// bit and second flags word are written when flags_extended is not 0.
// parse_index(render_index(v, e)) gives back v and e.
std::string render_index(std::uint32_t version, const std::vector<IndexEntry>& entries);

}  // namespace kistore::git
