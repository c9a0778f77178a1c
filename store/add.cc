#include "store/add.h"

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "objects/blob.h"
#include "objects/error.h"
#include "refs/index.h"
#include "refs/layout.h"

namespace kistore {
namespace {

// What one new document writes, computed once (compression is the costly
// part) and reused if the commit has to be rebuilt on a newer head.
struct Prepared {
  const AddedDocument* input;
  std::string frame;
  std::string metadata;  // JCS, empty if none
  std::vector<IndexEntry> index;
};

std::string plural(std::size_t n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

std::string summarize(const std::vector<const Prepared*>& added) {
  std::map<Kind, std::size_t> counts;
  for (const Prepared* p : added) ++counts[p->input->doc->kind()];
  std::string parts;
  for (const auto& [kind, n] : counts) {
    if (!parts.empty()) parts += ", ";
    parts += std::to_string(n) + " " + std::string(role_name(kind));
  }
  return plural(added.size(), "document") + " (" + parts + ")";
}

}  // namespace

AddReport add_documents(Store& store, const std::vector<AddedDocument>& docs, const AddOptions& options) {
  // Unique documents in input order; repeats within the call count as present.
  std::vector<Prepared> prepared;
  std::unordered_map<Digest, std::size_t> index_of;
  AddReport report;
  std::vector<Digest> repeats;
  for (const AddedDocument& in : docs) {
    auto [it, fresh] = index_of.emplace(in.doc->digest(), prepared.size());
    if (!fresh) {
      repeats.push_back(in.doc->digest());
      continue;
    }
    Prepared p{&in, encode_object(in.doc->canonical()), "", index_entries(*in.doc, in.where)};
    if (in.doc->metadata()) p.metadata = canonical(*in.doc->metadata());
    prepared.push_back(std::move(p));
  }

  auto build = [&](const Snapshot& head) -> std::optional<ChangeSet> {
    report.added.clear();
    report.present = repeats;
    report.notes.clear();
    std::vector<const Prepared*> added;
    std::unordered_set<Digest> in_call;
    for (const Prepared& p : prepared) in_call.insert(p.input->doc->digest());
    ChangeSet change;
    std::map<std::string, Digest> source_claims;
    for (const Prepared& p : prepared) {
      const Document& doc = *p.input->doc;
      if (head.has_object(doc.digest())) {
        report.present.push_back(doc.digest());
        if (!p.metadata.empty()) {
          auto old = head.read(metadata_path(doc.digest()));
          if (old && *old != p.metadata)
            report.notes.push_back(p.input->where + ": " + doc.digest().str() +
                                   " is already in the store with other metadata; the first metadata stays");
        }
        continue;
      }
      if (doc.kind() == Kind::kAttestation) {
        Digest subject = *Digest::parse(doc.spec().find("subject")->as_string());
        if (!in_call.count(subject) && !head.has_object(subject))
          throw InvalidInput(p.input->where + ": /spec/subject: expected a run in the store, found " +
                             subject.str() + ", which is not there");
      }
      std::string path = object_path(doc.digest());
      change.upserts.emplace(path, p.frame);
      if (!p.metadata.empty()) change.upserts.emplace(metadata_path(doc.digest()), p.metadata);
      for (const IndexEntry& e : p.index) {
        if (e.path.starts_with("refs/sources/")) {
          auto [claim, fresh] = source_claims.emplace(e.path, doc.digest());
          std::optional<std::string> existing = head.read(e.path);
          if (!fresh || (existing && *existing != e.bytes))
            throw InvalidInput(p.input->where + ": /spec/sourceNative/externalId: " + e.path +
                               " already names run " + (fresh ? *existing : claim->second.str()) +
                               ", not " + doc.digest().str());
        }
        change.upserts.emplace(e.path, e.bytes);
      }
      report.added.push_back(doc.digest());
      added.push_back(&p);
    }
    if (added.empty()) return std::nullopt;
    change.op = options.op;
    change.summary = options.op + ": " + summarize(added);
    for (const std::string& input : options.inputs) change.body += "from " + input + "\n";
    return change;
  };

  report.commit = store.commit(build, options.commit);
  return report;
}

}  // namespace kistore
