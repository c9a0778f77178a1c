// Where things live in a store's tree (SPEC §2), as pure path functions.
//
// For the store layer (which reads and writes these paths), verify and pull
// (which must tell a path inside the layout from one outside it) and the
// command line (which describes changes to them in `kistore log`).
//
//   objects/sha256/ab/cd/<remaining 60 hex>    an object (zstd frame of JCS bytes)
//   refs/metadata/<64 hex>                     JCS of a document's metadata
//   refs/groups/<key hex>/<run hex>            JCS of the run's primary measurement
//   refs/levels/<level>/<run hex>              JCS {"evidence": digest|null}
//   refs/attestations/<run hex>/<att hex>      JCS {"author","type"}
//   refs/sources/<source>/<externalId parts>   the run digest as text
//
// The render functions never fail, except source_path (below), whose input is
// a document's text. Every path function has an inverse parse_* that accepts
// exactly what it renders and returns nullopt for anything else (never
// throws), so verify can tell a path outside the layout: parse_x(x_path(v))
// == v for every v, and x_path(*parse_x(p)) == p for every p that parses.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "objects/digest.h"
#include "objects/json.h"
#include "refs/level.h"

namespace kistore {

std::string object_path(const Digest& d);
std::optional<Digest> parse_object_path(std::string_view path);

// refs/metadata/<hex>; parse_metadata_path gives back the digest.
std::string metadata_path(const Digest& d);
std::optional<Digest> parse_metadata_path(std::string_view path);

// refs/groups/<key hex>/<run hex>: the run's entry in its comparison group.
struct GroupEntryPath {
  Digest key;
  Digest run;
  friend bool operator==(const GroupEntryPath&, const GroupEntryPath&) = default;
};
std::string group_path(const Digest& key, const Digest& run);
std::optional<GroupEntryPath> parse_group_path(std::string_view path);

// refs/levels/<level>/<run hex>: the run's level entry.
struct LevelEntryPath {
  Level level;
  Digest run;
  friend bool operator==(const LevelEntryPath&, const LevelEntryPath&) = default;
};
std::string level_path(Level level, const Digest& run);
std::optional<LevelEntryPath> parse_level_path(std::string_view path);

// refs/attestations/<run hex>/<attestation hex>.
struct AttestationEntryPath {
  Digest run;
  Digest attestation;
  friend bool operator==(const AttestationEntryPath&, const AttestationEntryPath&) = default;
};
std::string attestation_path(const Digest& run, const Digest& attestation);
std::optional<AttestationEntryPath> parse_attestation_path(std::string_view path);

// The folders that hold the entries above, without a trailing "/":
// "refs/groups", "refs/groups/<key hex>", "refs/levels/<level>",
// "refs/attestations/<run hex>". Snapshot::list takes them.
inline constexpr std::string_view kGroupsDir = "refs/groups";
std::string group_dir(const Digest& key);
std::string level_dir(Level level);
std::string attestations_dir(const Digest& run);

// refs/sources/<source>/<externalId> for a run spec with sourceNative, or
// nullopt without one. Throws Error(kInvalidInput) (naming `where` and the
// pointer) when the source or externalId cannot be a path: empty segments,
// "." or "..", ".git", NUL or control characters, a leading/trailing "/",
// a segment over 255 bytes (what file systems take) or an externalId of more
// than 13 segments (so the path stays within a store's 16 tree levels).
// `pointer` is where the run sits in its input ("/run" in a bundle), so the
// message names /run/spec/sourceNative/... from the input's root.
std::optional<std::string> source_path(const Json& run_spec, std::string_view where,
                                       std::string_view pointer = "");

// The source and externalId that a path source_path renders names.
struct SourceEntryPath {
  std::string source;
  std::string external_id;
  friend bool operator==(const SourceEntryPath&, const SourceEntryPath&) = default;
};
// The inverse of source_path: nullopt for a path that source_path would not
// render (outside refs/sources/, no externalId, too many segments, or a
// segment source_path refuses: empty, ".", "..", a spelling of ".git", a
// control character, over 255 bytes).
std::optional<SourceEntryPath> parse_source_path(std::string_view path);

}  // namespace kistore
