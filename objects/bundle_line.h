// A quick way through a JSON Lines line that holds a bundle, for the
// readers of objects/input.h.
//
// Bundles of one input mostly repeat their protocol, environment,
// implementation and workload documents (a million runs name a few dozen
// protocols and GPUs). parse_bundle_line finds the text of each of the
// bundle's member documents with a cheap scan, parses and validates each
// on its own, and keeps the last few hundred documents it made, by their
// exact text, so that a repeated one costs a comparison instead of a parse,
// a validation, a canonical form and a SHA-256. The result is the Bundle
// that Bundle::from_json makes of the whole line (the same documents, in
// the same order), or nothing: whenever the line is not plainly a valid
// bundle (bad JSON, an unknown member, a failed check, escapes in a role's
// name, deep nesting), it returns nullopt and the caller parses the line the
// ordinary way, which finds and words the error.
//
// Thread-safety: reentrant; each thread keeps its own documents.
#pragma once

#include <optional>
#include <string_view>

#include "objects/document.h"

namespace kistore {

// The bundle on `line` (one line of JSON Lines, without its "\n"), or
// nullopt when the line is not plainly one (see above). Never throws for
// bad input.
std::optional<Bundle> parse_bundle_line(std::string_view line);

}  // namespace kistore
