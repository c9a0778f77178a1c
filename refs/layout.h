// Where things live in a store's tree (SPEC §2), as pure path functions.
//
//   objects/sha256/ab/cd/<remaining 60 hex>    an object (zstd frame of JCS bytes)
//   refs/metadata/<64 hex>                     JCS of a document's metadata
//   refs/groups/<key hex>/<run hex>            JCS of the run's primary measurement
//   refs/levels/<level>/<run hex>              JCS {"evidence": digest|null}
//   refs/attestations/<run hex>/<att hex>      JCS {"author","type"}
//   refs/sources/<source>/<externalId parts>   the run digest as text
//
// Every path function has an inverse parse_* that accepts exactly what it
// renders, so verify can tell a path outside the layout.
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

std::string metadata_path(const Digest& d);
std::string group_path(const Digest& key, const Digest& run);
std::string level_path(Level level, const Digest& run);
std::string attestation_path(const Digest& run, const Digest& attestation);

// refs/sources/<source>/<externalId> for a run spec with sourceNative, or
// nullopt without one. Throws Error(kInvalidInput) (naming `where` and the
// pointer) when the source or externalId cannot be a path: empty segments,
// "." or "..", ".git", NUL or control characters, or a leading/trailing "/".
// `pointer` is where the run sits in its input ("/run" in a bundle), so the
// message names /run/spec/sourceNative/... from the input's root.
std::optional<std::string> source_path(const Json& run_spec, std::string_view where,
                                       std::string_view pointer = "");

}  // namespace kistore
