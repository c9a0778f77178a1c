// parse_json for a JSON text kistore itself wrote and may read back whole
// although it is over kMaxInputBytes: the manifest of a big static site
// (cli/site/site.cc). Documents, bundles and everything else from outside keep
// parse_json's 16 MiB bound.
//
// Thread-safety: a pure function.
#pragma once

#include <cstddef>
#include <string_view>

#include "objects/json.h"

namespace kistore {

// As parse_json (objects/json.h), with `max_bytes` in place of
// kMaxInputBytes: Error(kInvalidInput) naming `source` for a longer text.
Json parse_json_up_to(std::string_view text, std::string_view source, std::size_t max_bytes);

}  // namespace kistore
