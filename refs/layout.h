// Where things live in a store's tree (SPEC §2), as pure path functions, for
// each format a reader meets.
//
// For the store layer (which reads and writes these paths), verify and pull
// (which must tell a path inside the layout from one outside it) and the
// command line (which describes changes to them in `kistore log`).
//
// Format 2 (read, and rewritten as format 3 by `kistore upgrade`; <h> is
// <h0h1>/<h2h3>/<h4…h63>):
//   FORMAT                                     "kistore 2\n"
//   objects/sha256/<h>                         an object (zstd frame of JCS bytes)
//   dictionaries/<id>                          a zstd dictionary (raw) an object's frame may name
//   refs/metadata/<h>                          JCS of a document's metadata
//   refs/groups/<key h>/<run hex>              JCS of the run's primary measurement
//   refs/levels/<level>/<run h>                JCS {"evidence": digest|null}
//   refs/reruns/<run h>/<rerun hex>            JCS {"level","ratio"}
//   refs/attestations/<run h>/<att hex>        JCS {"author","type"}
//   refs/sources/<source>/<externalId parts>   the run digest as text
// Format 1 (read, and rewritten by `kistore upgrade`): no FORMAT, no
// refs/reruns, and every refs/ digest a flat 64-hex name.
//
// The functions that differ between formats take the Format explicitly. The
// render functions never fail, except source_path (below), whose input is
// a document's text, and rerun_path, which format 1 lacks. Every path
// function has an inverse parse_* that accepts exactly what it renders for
// that format and returns nullopt for anything else (never throws), so
// verify can tell a path outside the layout: parse_x(f, x_path(f, v)) == v
// for every v, and x_path(f, *parse_x(f, p)) == p for every p that parses.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "objects/digest.h"
#include "objects/json.h"
#include "refs/level.h"

namespace kistore {

// The layout version of a store's tree.
//
// Format 3 (SPEC §2: the index as JSON Lines files in a trie,
// refs/index_trie.h) is what writers write. Formats 1 and 2 (the paths
// below) are read, and `kistore upgrade` rewrites them as format 3;
// writers, pull and push refuse them until then.
enum class Format { k1 = 1, k2 = 2, k3 = 3 };
// What writers write.
inline constexpr Format kCurrentFormat = Format::k3;
// The root blob that names a tree's format, and its exact bytes in format 2.
inline constexpr std::string_view kFormatPath = "FORMAT";
inline constexpr std::string_view kFormat2Bytes = "kistore 2\n";
// Format 3's (SPEC §2).
inline constexpr std::string_view kFormat3Bytes = "kistore 3\n";
// "format 1" / "format 2" / "format 3".
std::string format_name(Format format);
// The format that FORMAT's bytes name, or nullopt for any bytes but exactly
// kFormat2Bytes or kFormat3Bytes (a higher format, or none kistore knows).
std::optional<Format> parse_format_bytes(std::string_view bytes);

// Why a FORMAT blob holding `bytes` cannot be read: it names a format this
// kistore does not know (a later one), quoting what it holds.
std::string unknown_format_problem(std::string_view bytes);

// <h0h1>/<h2h3>/<h4…h63> of the digest's 64 hex digits; parse_fanout is the
// inverse (nullopt for anything else).
std::string fanout(const Digest& d);
std::optional<Digest> parse_fanout(std::string_view path);

// The same in every format.
std::string object_path(const Digest& d);
std::optional<Digest> parse_object_path(std::string_view path);

// dictionaries/<id>: a zstd dictionary a frame may name by its Dictionary_ID
// (format 2), <id> in decimal without leading zeros, 1 to 4294967295.
// parse_dictionary_path gives back the ID (nullopt for format 1, which has
// no dictionaries, and for any other name).
inline constexpr std::string_view kDictionariesDir = "dictionaries";
std::string dictionary_path(std::uint32_t id);
std::optional<std::uint32_t> parse_dictionary_path(Format f, std::string_view path);

// refs/metadata/<h> (format 1: <64 hex>); parse_metadata_path gives back the digest.
std::string metadata_path(Format f, const Digest& d);
std::optional<Digest> parse_metadata_path(Format f, std::string_view path);

// refs/groups/<key h>/<run hex> (format 1: <key hex>/<run hex>): the run's
// entry in its comparison group.
struct GroupEntryPath {
  Digest key;
  Digest run;
  friend bool operator==(const GroupEntryPath&, const GroupEntryPath&) = default;
};
std::string group_path(Format f, const Digest& key, const Digest& run);
std::optional<GroupEntryPath> parse_group_path(Format f, std::string_view path);

// refs/levels/<level>/<run h> (format 1: <run hex>): the run's level entry.
struct LevelEntryPath {
  Level level;
  Digest run;
  friend bool operator==(const LevelEntryPath&, const LevelEntryPath&) = default;
};
std::string level_path(Format f, Level level, const Digest& run);
std::optional<LevelEntryPath> parse_level_path(Format f, std::string_view path);

// refs/reruns/<run h>/<rerun hex>: a controlled rerun of a run (format 2 only;
// parse_rerun_path of format 1 is always nullopt).
struct RerunEntryPath {
  Digest run;
  Digest rerun;
  friend bool operator==(const RerunEntryPath&, const RerunEntryPath&) = default;
};
std::string rerun_path(const Digest& run, const Digest& rerun);
std::optional<RerunEntryPath> parse_rerun_path(Format f, std::string_view path);

// refs/attestations/<run h>/<attestation hex> (format 1: <run hex>/<attestation hex>).
struct AttestationEntryPath {
  Digest run;
  Digest attestation;
  friend bool operator==(const AttestationEntryPath&, const AttestationEntryPath&) = default;
};
std::string attestation_path(Format f, const Digest& run, const Digest& attestation);
std::optional<AttestationEntryPath> parse_attestation_path(Format f, std::string_view path);

// The folders that hold the entries above, without a trailing "/":
// "refs/groups", "refs/groups/<key h>", "refs/levels/<level>",
// "refs/reruns/<run h>", "refs/attestations/<run h>". Snapshot::list takes
// them. Below kGroupsDir and level_dir, format 2 fans the digests out
// (three folders per digest), format 1 lists them flat.
inline constexpr std::string_view kGroupsDir = "refs/groups";
inline constexpr std::string_view kRerunsDir = "refs/reruns";
std::string group_dir(Format f, const Digest& key);
std::string level_dir(Level level);
std::string reruns_dir(const Digest& run);
std::string attestations_dir(Format f, const Digest& run);

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
