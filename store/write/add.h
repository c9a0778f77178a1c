// Adding documents to a store: one commit for the whole call.
//
// The caller hands over validated documents (from bundles, single documents,
// imports); add_documents writes each new one as an object, its metadata and
// the index entries it implies (refs/index.h), all in one commit. A document
// already in the store changes nothing: its first metadata stays, and a
// differing one is reported. Nothing is written when nothing is new.
//
// Thread-safety: as Store.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "objects/document.h"
#include "store/core/index_trees.h"
#include "store/core/store.h"

namespace kistore {

struct AddedDocument {
  const Document* doc;
  std::string where;    // "file:line" or "file", for messages
  std::string pointer;  // where the document sits in that input ("/run", "/3/run"), or ""
};

struct AddReport {
  std::vector<Digest> added;    // new in this commit, in input order
  std::vector<Digest> present;  // already in the store (or repeated in the input)
  std::vector<std::string> notes;  // e.g. differing metadata kept as it was
  std::optional<std::string> commit;
};

struct AddOptions {
  std::string op = "add";              // Kistore-Op trailer
  std::vector<std::string> inputs;     // named in the commit body by their file names (input_name)
  std::string summary;                 // replaces the generated summary when set
  CommitOptions commit;
  // Further changes made in the same commit, computed on the same head (a
  // rerun moves a level). Called after the documents are staged; may throw.
  std::function<void(const Snapshot&, ChangeSet&)> also;
  // For a head of format 3 (refs/layout.h), called before `also`: changes
  // to the index in the same commit, beside the facts the new documents put
  // (a rerun puts its level and rerun lines and takes back its group line).
  std::function<void(const Snapshot&, IndexChanges&)> also_index;
  // Commit even when no document is new (the `also` change stands alone).
  bool commit_without_new_documents = false;
};

// Adds `docs` in one commit. Throws Error(kInvalidInput) and writes nothing
// when a document cannot be added: an attestation whose subject is neither in
// the store nor in `docs`, or a run whose source id already names another run.
AddReport add_documents(Store& store, const std::vector<AddedDocument>& docs, const AddOptions& options);

}  // namespace kistore
