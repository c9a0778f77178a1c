#include "store/write/add.h"

#include "objects/parallel.h"

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "objects/blob.h"
#include "objects/error.h"
#include "objects/input.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "refs/index_facts.h"
#include "store/core/frame_encoder.h"
#include "store/core/index_trees.h"

namespace kistore {
namespace {

// What one new document writes, computed once (compression is the costly
// part) and reused if the commit has to be rebuilt on a newer head.
struct Prepared {
  const AddedDocument* input;
  std::string frame;
  std::string metadata;  // JCS, empty if none
  std::vector<IndexEntry> index;  // format 2's entries
  std::vector<IndexFact> facts;    // format 3's (refs/index_facts.h), made when a head of format 3 asks
};

std::string plural(std::size_t n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

std::string summarize(const std::vector<const Prepared*>& added) {
  std::map<Kind, std::size_t> counts;
  for (const Prepared* p : added) ++counts[p->input->doc->kind()];
  if (added.empty()) return "no new documents";
  std::string parts;
  for (const auto& [kind, n] : counts) {
    if (!parts.empty()) parts += ", ";
    parts += std::to_string(n) + " " + std::string(role_name(kind));
  }
  return plural(added.size(), "document") + " (" + parts + ")";
}

// Who already holds the source id `path`: the run digest text at it, "a
// folder of other ids" if it is a folder, the id of a run whose id is a
// prefix of it (a blob where `path` needs a folder), or "" if it is free.
std::string source_holder(const Snapshot& head, const std::string& path,
                          const std::map<std::string, Digest>& staged) {
  if (auto it = staged.find(path); it != staged.end()) return it->second.str();
  if (auto bytes = head.read(path)) return *bytes;
  if (head.exists(path)) return "a folder of other source ids";
  auto below = staged.lower_bound(path + "/");
  if (below != staged.end() && below->first.starts_with(path + "/")) return "a folder of other source ids";
  for (std::size_t slash = path.find('/', 13); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    std::string prefix = path.substr(0, slash);
    if (auto it = staged.find(prefix); it != staged.end()) return "the source id of run " + it->second.str();
    if (auto bytes = head.read(prefix)) return "the source id of run " + *bytes;
  }
  return "";
}

// Stages p's index facts for a head of format 3 (refs/layout.h): a claim of
// an upstream id that a run (of the head, or staged before) already holds is
// a note, not a line; every other fact a line.
void stage_facts(const Snapshot& head, Prepared& p, std::map<std::string, Digest>& claims, IndexChanges& changes,
                 std::vector<std::string>& notes) {
  const Document& doc = *p.input->doc;
  if (p.facts.empty()) p.facts = document_facts(doc, p.input->where, p.input->pointer);
  for (const IndexFact& fact : p.facts) {
    if (const auto* claim = std::get_if<SourceFact>(&fact)) {
      const std::string key = fact_key(fact);
      std::optional<Digest> holder;
      if (auto it = claims.find(key); it != claims.end()) holder = it->second;
      else if (auto line = find_fact(head, Family::kSources, key)) holder = std::get<SourceFact>(*line).run;
      if (holder) {
        if (*holder != doc.digest())
          notes.push_back(p.input->where + ": the upstream id " + quoted_excerpt(claim->source) + " " +
                          quoted_excerpt(claim->external_id) + " already names " + holder->str() + "; run " +
                          doc.digest().str() + " is added but not indexed under that source id");
        continue;
      }
      claims.emplace(key, doc.digest());
    }
    changes.put(fact);
  }
}

// How this add's frames are made: with the store's dictionary, or one
// trained on the add's new documents (and the store's, when they are few).
FrameEncoder encoder_for(const Snapshot& base, const std::vector<Prepared>& prepared) {
  FrameEncoder encoder(base);
  if (!encoder.may_train()) return encoder;
  std::vector<std::string_view> samples;
  for (const Prepared& p : prepared) {
    if (samples.size() >= kTrainingSampleDocuments) break;
    if (!base.has_object(p.input->doc->digest())) samples.push_back(p.input->doc->canonical());
  }
  if (!samples.empty()) encoder.train_from(base, samples);
  return encoder;
}

}  // namespace

AddReport add_documents(Store& store, const std::vector<AddedDocument>& docs, const AddOptions& options) {
  // Unique documents in input order; repeats within the call count as present.
  std::vector<Prepared> prepared;
  std::unordered_map<Digest, std::size_t> index_of;
  AddReport report;
  std::vector<Digest> repeats;
  std::vector<std::string> repeat_notes;
  for (const AddedDocument& in : docs) {
    auto [it, fresh] = index_of.emplace(in.doc->digest(), prepared.size());
    if (!fresh) {
      repeats.push_back(in.doc->digest());
      const AddedDocument& first = *prepared[it->second].input;
      if (in.doc->metadata() && first.doc->metadata() && !(*in.doc->metadata() == *first.doc->metadata()))
        repeat_notes.push_back(in.where + ": " + in.doc->digest().str() + " appears again with other metadata than at " +
                               first.where + "; the first metadata is kept");
      continue;
    }
    prepared.push_back(Prepared{&in, "", "", {}});
  }
  // New frames use the store's dictionary; a store without one trains one
  // when this add brings enough new documents, or the store holds enough
  // (store/core/frame_encoder.h), and the commit records it. Dictionaries are
  // immutable, so one the base has is in any newer head too.
  const Snapshot first_head = store.snapshot();
  const FrameEncoder encoder = encoder_for(first_head, prepared);
  const bool format3 = first_head.format() == Format::k3;
  // Compressing, canonicalizing and indexing each document is independent
  // work: on every core.
  parallel_for(prepared.size(), [&](std::size_t i) {
    Prepared& p = prepared[i];
    const AddedDocument& in = *p.input;
    p.frame = encoder.encode(in.doc->canonical());
    if (format3) p.facts = document_facts(*in.doc, in.where, in.pointer);
    else p.index = index_entries(Format::k2, *in.doc, in.where, in.pointer);
    if (in.doc->metadata()) p.metadata = in.doc->metadata_canonical();
  });

  auto build = [&](const Snapshot& head) -> std::optional<ChangeSet> {
    report.added.clear();
    report.present = repeats;
    report.notes = repeat_notes;
    std::vector<const Prepared*> added;
    ChangeSet change;
    std::map<std::string, Digest> source_claims, source_claims_by_key;
    const bool facts = head.format() == Format::k3;
    IndexChanges changes;
    for (Prepared& p : prepared) {
      const Document& doc = *p.input->doc;
      if (head.has_object(doc.digest())) {
        report.present.push_back(doc.digest());
        if (!p.metadata.empty()) {
          std::optional<std::string> old;
          if (facts) {
            if (auto json = head.metadata(doc.digest())) old = canonical(*json);
          } else {
            old = head.read(metadata_path(Format::k2, doc.digest()));
          }
          if (old && *old != p.metadata)
            report.notes.push_back(p.input->where + ": " + doc.digest().str() +
                                   " is already in the store with other metadata; the first metadata stays");
        }
        continue;
      }
      if (doc.kind() == Kind::kAttestation) {
        Digest subject = *Digest::parse(doc.spec().find("subject")->as_string());
        auto staged = index_of.find(subject);
        bool is_run = staged != index_of.end()
                          ? prepared[staged->second].input->doc->kind() == Kind::kRun
                          : head.has_object(subject) && head.document(subject).kind() == Kind::kRun;
        if (!is_run)
          throw InvalidInput(p.input->where + ": /spec/subject: expected a run in the store, found " +
                             subject.str() + (head.has_object(subject) || staged != index_of.end()
                                                  ? ", which is not a run"
                                                  : ", which is not there"));
      }
      std::string path = object_path(doc.digest());
      // The frame moves into the change (a bulk add's frames are most of
      // its memory); when another writer wins and this runs again, it is
      // compressed again.
      if (p.frame.empty()) p.frame = encoder.encode(doc.canonical());
      change.upserts.emplace(std::move(path), std::move(p.frame));
      p.frame.clear();
      report.added.push_back(doc.digest());
      added.push_back(&p);
      if (facts) {
        stage_facts(head, p, source_claims_by_key, changes, report.notes);
        continue;
      }
      if (!p.metadata.empty()) change.upserts.emplace(metadata_path(Format::k2, doc.digest()), p.metadata);
      for (const IndexEntry& e : p.index) {
        if (e.path.starts_with("refs/sources/")) {
          // An upstream id names one run: the first claim stays (as metadata
          // does), and a different run claiming it is reported, not indexed.
          std::string holder = source_holder(head, e.path, source_claims);
          if (!holder.empty()) {
            if (holder != e.bytes)
              report.notes.push_back(p.input->where + ": " + e.path + " already names " + holder + "; run " +
                                     doc.digest().str() + " is added but not indexed under that source id");
            continue;
          }
          source_claims.emplace(e.path, doc.digest());
        }
        change.upserts.emplace(e.path, e.bytes);
      }
    }
    if (facts) {
      if (options.also_index) options.also_index(head, changes);
      apply_index_changes(head, changes, change);
    }
    if (encoder.trained() && !added.empty()) {
      encoder.check_head(head);
      change.upserts.emplace(encoder.trained_path(), encoder.trained()->bytes());
    }
    if (options.also) options.also(head, change);
    if (added.empty() && !options.commit_without_new_documents) return std::nullopt;
    change.op = options.op;
    change.summary = !options.summary.empty() ? options.summary : options.op + ": " + summarize(added);
    for (const std::string& input : options.inputs) change.body += "from " + input_name(input) + "\n";
    return change;
  };

  report.commit = store.commit(build, options.commit);
  return report;
}

}  // namespace kistore
