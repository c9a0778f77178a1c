// Which format-3 index facts (refs/index_lines.h) a store holds: those a
// document implies when it is added, and those a format 1 or 2 index entry
// stands for (what `kistore upgrade` carries over).
//
// A run implies its line in refs/groups and, with spec.sourceNative, a
// claim of its upstream id in refs/sources; an attestation its line under
// its subject; any document with metadata its line in refs/metadata. A
// default level has no line (SPEC §2): refs/levels and refs/reruns hold only
// what a controlled rerun gives (store/write/rerun.h).
//
// For the store's writers (add, import, upgrade) and verify (which
// recomputes the facts of every object). Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "objects/document.h"
#include "refs/index_lines.h"
#include "refs/layout.h"

namespace kistore {

// The facts a document implies beside its object, in Family order: its
// metadata (when it has any), a run's group and source facts, an
// attestation's fact. Throws Error(kInvalidInput), naming `where` and the
// JSON pointer below `pointer` (where the document sits in its input: "/run"
// in a bundle), for a source or externalId holding U+0000, which a sources
// key cannot separate. The document has passed Document's validation.
std::vector<IndexFact> document_facts(const Document& doc, std::string_view where, std::string_view pointer = "");

// The format-3 fact that the format 1 or 2 index entry at `path`, holding
// `bytes`, stands for; nullopt for an entry format 3 writes no line for (a
// level entry without evidence: a default level). Throws Error(kCorruption)
// naming the path, what was expected and what was found, for a path outside
// the format's index or bytes that are not what that entry holds (verify
// reports such a store; upgrade refuses it).
std::optional<IndexFact> entry_fact(Format f, std::string_view path, std::string_view bytes);

}  // namespace kistore
