// Output shared by the commands that add documents (add, import, attest, rerun).
#pragma once

#include "cli/common.h"
#include "store/write/add.h"
#include "store/write/bulk_add.h"

namespace kistore::cli {

// Prints input errors on stderr (all of them) and, with --json, the add
// summary with nothing added.
void print_rejections(const Globals& g, const std::vector<InputError>& errors);

// Prints what was new and what was already there: with --json, SPEC's
// {"added","present","rejected","commit"}; else a line per document for small
// calls and a summary line.
void print_add_report(const Globals& g, const AddReport& report, const std::vector<InputError>& rejected,
                      const std::vector<AddedDocument>& docs);
// The same for a bulk add (store/write/bulk_add.h), whose report lists documents
// only when there are few (kListLimit).
void print_add_report(const Globals& g, const BulkAddReport& report, const std::vector<InputError>& rejected);
// Up to this many documents, add reports list each; beyond, a summary only.
inline constexpr std::size_t kListLimit = 50;

}  // namespace kistore::cli
