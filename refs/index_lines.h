// Format 3's index lines (SPEC §2, docs/format.md "Format 3"): every index
// fact as one line of an index file, and the strict reading of such a line
// and of a whole file.
//
// A line is the RFC 8785 (JCS) form of one JSON object followed by "\n". Its
// first member in JCS order is "@key" ('@' sorts before every letter), the
// fact's key as lowercase hex: 64 digits, or 128 for the families keyed by two
// digests. The other members are exactly those of the fact's family, each of
// one type. render_line and parse_line are inverses: parse_line accepts a line
// only when it is byte for byte render_line of what it parses to, so two
// writers that hold the same facts write the same bytes.
//
// For the store's index writers (which render lines), and for verify and pull
// (which read index files they do not trust). Thread-safety: plain values and
// pure functions.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "objects/digest.h"
#include "objects/json.h"
#include "refs/index.h"
#include "refs/level.h"

namespace kistore {

// The index families of SPEC §2, each the folder refs/<family_name>/.
enum class Family { kMetadata, kGroups, kLevels, kReruns, kAttestations, kSources };
inline constexpr Family kFamilies[] = {Family::kMetadata, Family::kGroups,       Family::kLevels,
                                       Family::kReruns,   Family::kAttestations, Family::kSources};
// "metadata", "groups", "levels", "reruns", "attestations", "sources".
std::string_view family_name(Family family);
// The inverse of family_name; nullopt for any other name.
std::optional<Family> parse_family(std::string_view name);
// How many hex digits the family's keys have: 128 for groups, reruns and
// attestations (two digests), 64 for the others.
std::size_t key_digits(Family family);
// Whether `s` is one or more lowercase hex digits (a key, or a trie name).
bool lowercase_hex(std::string_view s);

// The name of the key member, the first of every line.
inline constexpr std::string_view kKeyMember = "@key";

// refs/metadata: a document's metadata (the first one added). Key: the
// document's digest. Line: {"@key","metadata": an object}.
struct MetadataFact {
  Digest document;
  std::string metadata;  // the metadata, an object, in its RFC 8785 form
  friend bool operator==(const MetadataFact&, const MetadataFact&) = default;
};
// refs/groups: a run in its comparison group. Key: the group key's digest,
// then the run's. Line: {"@key","metric","statistic","unit","value"}, the
// run's primary measurement, all four null when it has none.
struct GroupFact {
  Digest key;
  Digest run;
  std::optional<Measurement> primary;
  friend bool operator==(const GroupFact&, const GroupFact&) = default;
};
// refs/levels: a run whose level is not its default, which only a controlled
// rerun gives. Key: the run's digest. Line: {"@key","evidence": the rerun's
// digest "sha256:<hex>","level": "disputed" or "reproduced"}.
struct LevelFact {
  Digest run;
  Level level;  // kDisputed or kReproduced
  Digest evidence;
  friend bool operator==(const LevelFact&, const LevelFact&) = default;
};
// refs/reruns: a controlled rerun of a run. Key: the run's digest, then the
// rerun's. Line: {"@key","level": the verdict it gave, "disputed" or
// "reproduced","ratio": the rerun's primary value over the run's}.
struct RerunFact {
  Digest run;
  Digest rerun;
  Level verdict;  // kDisputed or kReproduced
  double ratio;   // finite
  friend bool operator==(const RerunFact&, const RerunFact&) = default;
};
// refs/attestations: an attestation of a run. Key: the run's digest, then
// the attestation's. Line: {"@key","author","type": "note" or "reproduction"}.
struct AttestationFact {
  Digest run;
  Digest attestation;
  std::string author;
  std::string type;  // "note" or "reproduction"
  friend bool operator==(const AttestationFact&, const AttestationFact&) = default;
};
// refs/sources: the run that claimed an upstream id first. Key:
// source_key(source, externalId). Line: {"@key","externalId","run":
// "sha256:<hex>","source"}.
struct SourceFact {
  std::string source;       // no U+0000
  std::string external_id;  // no U+0000
  Digest run;
  friend bool operator==(const SourceFact&, const SourceFact&) = default;
};

// One fact of any family; the alternatives are in Family's order.
using IndexFact = std::variant<MetadataFact, GroupFact, LevelFact, RerunFact, AttestationFact, SourceFact>;

Family family_of(const IndexFact& fact);

// Lowercase hex of SHA-256(source || 0x00 || externalId): the key of an
// upstream id in refs/sources.
std::string source_key(std::string_view source, std::string_view external_id);

// The fact's key: key_digits(family_of(fact)) lowercase hex digits.
std::string fact_key(const IndexFact& fact);

// The fact's line: JCS of its object, then "\n". Throws std::logic_error for a
// fact outside its documented values (a level other than disputed or
// reproduced, metadata that is not an object, a ratio that is not finite, an
// attestation type other than note or reproduction, a NUL in a source): a
// programming error, since facts come from validated documents.
std::string render_line(const IndexFact& fact);

// Reads one line of the file `path` (its line number `line_number`, from 1),
// "\n" included, as a fact of `family`. Throws Error(kCorruption) with a
// message "<path>:<line>: ..." (or "<path>:<line>:<column>: ..." for text that
// is not JSON) naming what was expected and what was found: a missing "\n",
// a line that is not one JSON object, a missing or unexpected member, a key
// not of the family's length of lowercase hex, a member of the wrong type or
// value, a sources key that is not source_key of its line, or bytes that are
// not exactly render_line of what they hold.
IndexFact parse_line(Family family, std::string_view line, std::string_view path, std::size_t line_number);

// The reading parse_line tries first, without building a JSON value: the
// fact of a line in the plain shape render_line writes (strings outside a
// metadata object printable ASCII without '"' or '\\', metadata canonical),
// or nullopt for any other line, which parse_line then reads in full and
// names its fault. A fact it gives is the one parse_line gives, once
// parse_line has checked that it renders to the line.
std::optional<IndexFact> read_plain_line(Family family, std::string_view line);

// Reads a whole index file of `family` at `path` whose trie prefix (the hex
// digits its path stands for, docs/format.md) is `prefix`: at least one line,
// each as parse_line reads it, every key starting with `prefix`, keys
// strictly ascending (sorted and unique). Throws Error(kCorruption) naming the
// path and line of the first fault, what was expected and what was found.
std::vector<IndexFact> parse_index_file(Family family, std::string_view path, std::string_view prefix,
                                        std::string_view bytes);

// As parse_index_file, handing each fact to `fn` as it is read, with its
// key (the line's own "@key" text, a view into `bytes`), in place of a list.
void for_each_index_line(Family family, std::string_view path, std::string_view prefix, std::string_view bytes,
                         const std::function<void(IndexFact&&, std::string_view key)>& fn);

}  // namespace kistore
