// Checking bundle files offline, without a store (SPEC §3 `kistore verify
// FILE...`): every digest a run records against the document its bundle
// carries.
//
// For anyone handed a KernelIndex canonical manifest who wants to know that
// it is internally consistent before trusting or adding it. A reference to a
// document the bundle does not carry is allowed (SPEC §1: external) and is a
// warning; a carried document that hashes to another digest than the run
// records is a problem. Pure: the caller reads the file and passes its bytes.
//
// Thread-safety: reentrant; a BundleFileCheck belongs to one thread.
#pragma once

#include "objects/input.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kistore {

struct BundleFinding {
  std::string kind;    // "digest-mismatch" (a problem) or "external-reference" (a warning)
  std::string path;    // "<source>: <JSON pointer>", e.g. "b.json: /run/spec/protocolDigest"
  std::string detail;  // what was expected and what was found
};

struct BundleFileCheck {
  std::size_t documents = 0;  // documents read, carried ones included
  std::vector<BundleFinding> problems;
  std::vector<BundleFinding> warnings;
  bool ok() const { return problems.empty(); }
};

// Checks one input: a bundle, a document, or a JSON array of them. Each
// carried document is hashed on its own, so a mismatch is reported as such
// rather than as a rejected bundle. Appends to `out`. `source` names the
// input in paths and messages. Throws Error(kInvalidInput), naming source
// and pointer, for text that is not JSON or an item that is not a valid
// document (a bundle member included); what was appended to `out` before
// stays.
// `format` as add reads its inputs (objects/input.h): JSON Lines are checked
// line by line, each line named "<source>:<line>", as add names them.
void check_bundle_text(std::string_view text, std::string_view source, BundleFileCheck& out,
                       InputFormat format = InputFormat::kJson);

}  // namespace kistore
