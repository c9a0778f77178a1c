// Adding any number of documents in one commit, with memory that does not
// grow with what they hold (`kistore add` of a million bundles).
//
// A BulkAdd takes documents in batches, in input order, as a reader parses
// them. Each new document is compressed and written at once, with its
// metadata and index entries (refs/index.h), into one temporary pack; of it
// only a compact record stays in memory (its digest, the git ids of what was
// written, the index entries as the digests their paths are made of, where it
// came from: about 200 bytes a run). commit() then decides what is new
// against the branch head, streams the sorted paths into the tree builder
// (objwrite.h TreeStream), writes the trees and the commit into the same
// pack and moves the branch once. The semantics are add_documents'
// (store/write/add.h): repeats within the input and documents already in the store
// count as present, the first metadata stays (a differing one is noted), a
// source id names the first run that claims it, an attestation needs its
// subject run, and nothing is written until everything holds: a BulkAdd
// destroyed before commit() leaves no file behind (its temporary pack is
// removed; a crash's is removed by the next writer, store/edge/tempfiles.h).
// What is stored of a document is exactly its canonical() bytes, under the
// digest that objects/document.h computed from those very bytes when the
// Document was made: a Document cannot be built from a digest or bytes taken
// on trust, so the bulk add never stores a digest it could not recompute.
//
// Thread-safety: as Store; a BulkAdd uses every core inside add().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/write/add.h"
#include "store/core/store.h"

namespace kistore {

struct BulkAddOptions {
  std::string op = "add";           // Kistore-Op trailer
  std::vector<std::string> inputs;  // named in the commit body by their file names (input_name)
  CommitOptions commit;             // progress: (documents written, 0), then (paths, total) for the trees
  // Documents are listed one by one in the report up to this many (new and
  // present together); beyond, only counted.
  std::size_t list_limit = 50;
};

struct BulkAddReport {
  std::size_t added = 0;    // documents new in this commit
  std::size_t present = 0;  // already in the store, or repeated in the input
  // When added + present <= list_limit: each document with its kind, new ones
  // in input order, then present ones (repeats first, then those the store
  // had), as AddReport lists them. Empty otherwise.
  std::vector<std::pair<Digest, Kind>> added_list, present_list;
  std::vector<std::string> notes;  // e.g. differing metadata kept as it was
  std::optional<std::string> commit;
};

class BulkAdd {
 public:
  // Error(kIO) before anything is written when the store refuses writes
  // (store/core/store_shape.h) or the temporary pack cannot be made.
  BulkAdd(Store& store, BulkAddOptions options);
  ~BulkAdd();  // removes the temporary pack unless commit() placed it
  BulkAdd(const BulkAdd&) = delete;
  BulkAdd& operator=(const BulkAdd&) = delete;

  // Adds `batch` (in input order, after every earlier batch). The documents
  // may be freed once it returns. Error(kInvalidInput) naming the input when
  // a document's index entries cannot be made (refs/index.h), Error(kIO)
  // when the pack cannot be written; after a throw, only destroy it.
  void add(const std::vector<AddedDocument>& batch);

  // Writes the commit (none when nothing is new: report.commit is empty and
  // the pack is removed). Error(kInvalidInput), writing nothing, for an
  // attestation whose subject is neither a run in the store nor one in the
  // input; errors of Store::commit_written otherwise. Call once.
  BulkAddReport commit();

  // Documents handed over so far, repeats included.
  std::size_t documents() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kistore
