#include "store/write/bulk_add.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <variant>
#include <unordered_map>
#include <unordered_set>

#include "objects/blob.h"
#include "objects/error.h"
#include "objects/input.h"
#include "objects/parallel.h"
#include "objects/record_index.h"
#include "refs/index.h"
#include "refs/index_facts.h"
#include "refs/index_lines.h"
#include "refs/layout.h"
#include "store/core/frame_encoder.h"
#include "store/core/index_trees.h"
#include "store/edge/tempfiles.h"
#include "store/git/objwrite.h"

namespace kistore {
namespace {

// One document of the input, repeats aside: what it is, where it came from,
// and the git ids of what was written for it. About 90 bytes.
struct DocRecord {
  Digest digest;
  git_oid frame{};     // its object's blob (when written)
  git_oid metadata{};  // its metadata's blob (when it has metadata)
  std::uint32_t file = 0, line = 0;  // where: files[file] + ":" + line (line 0: the file alone)
  Kind kind = Kind::kRun;
  bool has_metadata = false;
  bool in_base = false;  // the store had it when the add began: nothing was written for it
};

// One index entry a new document implies, as the digests its path is made
// of (rendered through refs/layout.h when the tree is built), and its blob.
enum class EntryKind : std::uint8_t { kGroup, kLevel, kAttestation, kLiteral };
struct IndexRecord {
  git_oid blob;
  std::uint32_t doc;  // the document that implies it
  // kGroup: the key (aux); kLevel: the Level; kAttestation: the subject
  // (aux); kLiteral: the path (literals), its blob's bytes the literal after.
  std::uint32_t arg;
  EntryKind kind;
};

// What one new document writes, made on every core before it is written in order.
struct Prepared {
  std::vector<IndexFact> facts;  // format 3 (refs/layout.h): the document's lines, instead of entries
  std::string frame;
  std::string_view metadata;  // the document's own metadata_canonical()
  git_oid frame_id{}, metadata_id{};
  std::vector<IndexEntry> entries;
  std::vector<git_oid> entry_ids;
  std::vector<EntryKind> kinds;
  std::vector<std::optional<Digest>> others;  // key or subject
  std::vector<Level> levels;
};

std::string plural(std::size_t n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

// How an index entry's path is made, checked by rendering it again: a path
// the layout's parse and render do not give back is kept as text.
void classify(const IndexEntry& e, const Digest& doc, Prepared& p) {
  if (auto g = parse_group_path(Format::k2, e.path); g && g->run == doc && group_path(Format::k2, g->key, g->run) == e.path) {
    p.kinds.push_back(EntryKind::kGroup), p.others.push_back(g->key), p.levels.push_back(Level::kReported);
  } else if (auto l = parse_level_path(Format::k2, e.path); l && l->run == doc && level_path(Format::k2, l->level, l->run) == e.path) {
    p.kinds.push_back(EntryKind::kLevel), p.others.push_back(std::nullopt), p.levels.push_back(l->level);
  } else if (auto a = parse_attestation_path(Format::k2, e.path);
             a && a->attestation == doc && attestation_path(Format::k2, a->run, a->attestation) == e.path) {
    p.kinds.push_back(EntryKind::kAttestation), p.others.push_back(a->run), p.levels.push_back(Level::kReported);
  } else {
    p.kinds.push_back(EntryKind::kLiteral), p.others.push_back(std::nullopt), p.levels.push_back(Level::kReported);
  }
}

// Format 3's lines of the new documents, a temporary file per family in the
// store's objects/pack (made through the file gate: removed when the add
// ends, swept as a dead writer's if it is killed). At a million runs they are
// some 840 MB of text that the add would otherwise hold until the trees are
// built; this way it holds one family's lines at a time, and only then
// (docs/benchmarks.md "Format 3 at a million").
class LineSpill {
 public:
  explicit LineSpill(std::string dir) : dir_(std::move(dir)) {}

  void put(Family family, std::string_view line) {
    Part& part = parts_[static_cast<std::size_t>(family)];
    if (!part.file) part.file = std::make_unique<NewFile>(dir_, "lines", 0600);
    part.buffer += line;
    if (part.buffer.size() >= kFlushAt) flush(part);
  }
  // The family's lines, in the order they were put.
  std::string read(Family family) {
    Part& part = parts_[static_cast<std::size_t>(family)];
    if (!part.file) return {};
    flush(part);
    std::string bytes(part.size, '\0');
    for (std::size_t at = 0; at < bytes.size();) {
      const ssize_t n = ::pread(part.file->fd(), bytes.data() + at, bytes.size() - at, static_cast<off_t>(at));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        throw IOError(part.file->path() + ": cannot read: " + (n < 0 ? std::strerror(errno) : "the file is shorter than written"));
      at += static_cast<std::size_t>(n);
    }
    return bytes;
  }

 private:
  static constexpr std::size_t kFlushAt = 1u << 20;
  struct Part {
    std::unique_ptr<NewFile> file;
    std::string buffer;
    std::size_t size = 0;  // bytes written to the file
  };
  void flush(Part& part) {
    part.file->write(part.buffer);
    part.size += part.buffer.size();
    part.buffer.clear();
  }
  std::string dir_;
  std::array<Part, std::size(kFamilies)> parts_;
};

}  // namespace

struct BulkAdd::State {
  Store& store;
  BulkAddOptions options;
  Snapshot base;
  FrameEncoder encoder;  // the base's dictionary, or the one trained here
  // While the store has no dictionary and none was trained: the new
  // documents so far, held back (at most kTrainingSampleDocuments or
  // kTrainingSampleBytes of them) to train on, then written with what was
  // learnt. Everything after is written as it comes.
  struct Pending {
    std::uint32_t record;
    std::string canonical, metadata;
    Prepared prepared;  // all but the frame (and metadata, which points into `metadata` when written)
  };
  bool training = false;
  std::vector<Pending> pending;
  std::size_t pending_bytes = 0;
  git_oid dictionary_blob{};  // of encoder.trained(), once written into the pack
  std::unique_ptr<git::PackWriter> pack;  // the blobs, then (first attempt) the trees and the commit
  // Deques: they grow without copying, so a million records never exist twice.
  std::deque<DocRecord> docs;
  RecordIndex<Digest> doc_table;  // docs by digest
  std::deque<IndexRecord> index;
  std::vector<Digest> aux;  // group keys and attestation subjects
  std::unordered_map<Digest, std::uint32_t> aux_of;
  // Paths kept as text (source ids), in chunks of about 1 MiB that never move.
  struct Literal {
    std::uint32_t chunk, offset, size;
  };
  std::vector<std::string> literal_chunks;
  std::deque<Literal> literals;
  std::vector<std::string> files;
  std::unordered_map<std::string, std::uint32_t> file_of;
  std::size_t seen = 0, repeats = 0, written = 0;
  std::vector<std::uint32_t> repeat_list;  // the first list_limit + 1 repeats
  std::vector<std::string> repeat_notes;
  // Format 3 (refs/layout.h): the lines new documents imply, in `spill`,
  // and for each, in the same order, its document and family.
  const bool format3 = base.format() == Format::k3;
  struct LineRecord {
    std::uint32_t doc;
    Family family;
  };
  std::deque<LineRecord> lines;
  LineSpill spill{git::gitdir(store.repo()) + "objects/pack"};
  // The metadata a snapshot stores for `d`, as JCS bytes (either format).
  static std::optional<std::string> stored_metadata(const Snapshot& snap, const Digest& d) {
    if (snap.format() != Format::k3) return snap.read(metadata_path(snap.format(), d));
    if (auto json = snap.metadata(d)) return canonical(*json);
    return std::nullopt;
  }
  // Format 3: the base's metadata files read so far, each with the start of
  // every line, for a re-import, which asks of every document it holds
  // whether its metadata is the stored one: find_fact would read and inflate
  // the document's file (of up to T lines) each time. Bounded: emptied when
  // it holds more than kMetadataCacheBytes.
  struct MetadataFile {
    std::string bytes;
    std::vector<std::uint32_t> starts;  // of each line; empty when the file is not in its plain shape
  };
  static constexpr std::size_t kMetadataCacheBytes = 32u << 20;
  std::unordered_map<std::string, MetadataFile> metadata_files;
  std::size_t metadata_file_bytes = 0;
  const MetadataFile& metadata_file(const std::string& path);
  // Whether the base stores exactly `meta` (JCS) as the metadata of `d`.
  bool base_has_metadata(const Digest& d, std::string_view meta);
  void write_index(const Snapshot& head, const std::vector<char>& added, BulkAddReport& report,
                   std::map<std::string, git::PathChange>& paths, git::ObjectWriter& out);

  State(Store& s, BulkAddOptions o)
      : store(s), options(std::move(o)), base(s.snapshot()), encoder(base), training(encoder.may_train()) {}

  const Digest& digest_of(std::uint32_t r) const { return docs[r].digest; }
  std::optional<std::uint32_t> find(const Digest& d) const {
    return doc_table.find(d, [&](std::uint32_t r) -> const Digest& { return docs[r].digest; });
  }
  std::uint32_t aux_index(const Digest& d) {
    auto [it, fresh] = aux_of.emplace(d, static_cast<std::uint32_t>(aux.size()));
    if (fresh) aux.push_back(d);
    return it->second;
  }
  std::string_view literal(std::uint32_t i) const {
    const Literal& l = literals[i];
    return std::string_view(literal_chunks[l.chunk]).substr(l.offset, l.size);
  }
  std::uint32_t add_literal(std::string_view text) {
    constexpr std::size_t kChunk = 1u << 20;
    if (literal_chunks.empty() || literal_chunks.back().size() + text.size() > literal_chunks.back().capacity()) {
      literal_chunks.emplace_back();
      literal_chunks.back().reserve(std::max(kChunk, text.size()));
    }
    std::string& chunk = literal_chunks.back();
    literals.push_back({static_cast<std::uint32_t>(literal_chunks.size() - 1), static_cast<std::uint32_t>(chunk.size()),
                        static_cast<std::uint32_t>(text.size())});
    chunk += text;
    return static_cast<std::uint32_t>(literals.size() - 1);
  }

  // "file:line" kept as a file number and a line.
  void set_where(DocRecord& r, const std::string& where) {
    std::string_view file = where;
    std::uint32_t line = 0;
    std::size_t colon = where.rfind(':');
    if (colon != std::string::npos && colon + 1 < where.size() && where.size() - colon <= 10 &&
        where.find_first_not_of("0123456789", colon + 1) == std::string::npos && where[colon + 1] != '0') {
      file = std::string_view(where).substr(0, colon);
      line = static_cast<std::uint32_t>(std::stoul(where.substr(colon + 1)));
    }
    auto [it, fresh] = file_of.emplace(std::string(file), static_cast<std::uint32_t>(files.size()));
    if (fresh) files.emplace_back(file);
    r.file = it->second;
    r.line = line;
  }
  std::string where(std::uint32_t doc) const {
    const DocRecord& r = docs[doc];
    return r.line ? files[r.file] + ":" + std::to_string(r.line) : files[r.file];
  }

  void add(const std::vector<AddedDocument>& batch);
  std::vector<std::uint32_t> take_new(const std::vector<AddedDocument>& batch, const std::vector<git_oid>& meta_ids,
                                      const std::vector<std::string_view>& metas);
  void write_new(std::uint32_t record, Prepared& p);
  void settle_dictionary();
  std::optional<std::string> write_commit(const Snapshot& head, BulkAddReport& report);
  std::vector<char> resolve(const Snapshot& head, BulkAddReport& report);
  std::vector<char> claim_sources(const Snapshot& head, const std::vector<char>& added, BulkAddReport& report);
  void check_attestations(const Snapshot& head, const std::vector<char>& added);
  git_oid build_tree(const Snapshot& head, const std::vector<char>& added, const std::vector<char>& dropped,
                     git::ObjectWriter& out, BulkAddReport& report);
};

BulkAdd::BulkAdd(Store& store, BulkAddOptions options) {
  store.check_writable();
  if (!options.commit.author.empty()) store.author(options.commit.author);  // refused before any pack is begun
  store.sweep_temp_files();
  state_ = std::make_unique<State>(store, std::move(options));
  state_->pack = std::make_unique<git::PackWriter>(git::gitdir(store.repo()) + "objects/pack");
}

BulkAdd::~BulkAdd() = default;

std::size_t BulkAdd::documents() const { return state_->seen; }

void BulkAdd::add(const std::vector<AddedDocument>& batch) { state_->add(batch); }

void BulkAdd::State::add(const std::vector<AddedDocument>& batch) {
  // Metadata of every document, on every core: a repeat's is compared with
  // the first's by its blob id. A document handed over again as the very
  // same value (its canonical metadata at one address: the protocol an
  // importer's DocumentCache gives every run) is hashed once a batch.
  std::vector<std::string_view> metas(batch.size());
  std::vector<git_oid> meta_ids(batch.size());
  std::vector<std::size_t> first(batch.size());
  std::unordered_map<const std::string*, std::size_t> first_of;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    first[i] = i;
    if (batch[i].doc->metadata()) first[i] = first_of.emplace(&batch[i].doc->metadata_canonical(), i).first->second;
  }
  parallel_for(batch.size(), [&](std::size_t i) {
    if (!batch[i].doc->metadata() || first[i] != i) return;
    metas[i] = batch[i].doc->metadata_canonical();
    meta_ids[i] = git::object_id(GIT_OBJECT_BLOB, metas[i]);
  });
  for (std::size_t i = 0; i < batch.size(); ++i)
    if (first[i] != i) metas[i] = metas[first[i]], meta_ids[i] = meta_ids[first[i]];
  std::vector<std::uint32_t> fresh = take_new(batch, meta_ids, metas);
  // Compressing, hashing and indexing each new document, on every core;
  // then written in input order (or held back to train a dictionary on).
  const bool hold = training;
  std::vector<Prepared> prepared(fresh.size());
  parallel_for(fresh.size(), [&](std::size_t k) {
    const AddedDocument& in = batch[docs[fresh[k]].file];  // (the batch position, until set_where below)
    Prepared& p = prepared[k];
    if (!hold) {
      p.frame = encoder.encode(in.doc->canonical());
      p.frame_id = git::object_id(GIT_OBJECT_BLOB, p.frame);
    }
    if (format3) {
      p.facts = document_facts(*in.doc, in.where, in.pointer);
      return;
    }
    p.entries = index_entries(Format::k2, *in.doc, in.where, in.pointer);
    for (const IndexEntry& e : p.entries) {
      p.entry_ids.push_back(git::object_id(GIT_OBJECT_BLOB, e.bytes));
      classify(e, in.doc->digest(), p);
    }
  });
  for (std::size_t k = 0; k < fresh.size(); ++k) {
    DocRecord& r = docs[fresh[k]];
    const std::uint32_t at = r.file;
    const AddedDocument& in = batch[at];
    set_where(r, in.where);
    prepared[k].metadata = metas[at];
    prepared[k].metadata_id = meta_ids[at];
    if (!hold) {
      write_new(fresh[k], prepared[k]);
      continue;
    }
    pending_bytes += in.doc->canonical().size();
    pending.push_back(Pending{fresh[k], in.doc->canonical(), std::string(metas[at]), std::move(prepared[k])});
  }
  if (hold && (pending.size() >= kTrainingSampleDocuments || pending_bytes >= kTrainingSampleBytes)) settle_dictionary();
  if (options.commit.progress) options.commit.progress(written, 0);
}

// Trains the store's dictionary on the documents held back (with the
// store's own when they are too few: FrameEncoder::train_from), writes it
// into the pack, and writes those
// documents with it (or without, when none was made), in input order.
void BulkAdd::State::settle_dictionary() {
  training = false;
  std::vector<std::string_view> samples;
  samples.reserve(pending.size());
  for (const Pending& q : pending) samples.push_back(q.canonical);
  if (!pending.empty() && encoder.train_from(base, samples)) dictionary_blob = pack->write_blob(encoder.trained()->bytes());
  parallel_for(pending.size(), [&](std::size_t i) {
    Prepared& p = pending[i].prepared;
    p.frame = encoder.encode(pending[i].canonical);
    p.frame_id = git::object_id(GIT_OBJECT_BLOB, p.frame);
  });
  for (Pending& q : pending) {
    q.prepared.metadata = q.metadata;
    write_new(q.record, q.prepared);
  }
  std::vector<Pending>().swap(pending);
  pending_bytes = 0;
}

// Records the batch's documents that are new to the input, notes repeats
// and those the store has; returns the records still to be written, whose
// `file` holds their batch position until add() sets where they came from.
std::vector<std::uint32_t> BulkAdd::State::take_new(const std::vector<AddedDocument>& batch,
                                                    const std::vector<git_oid>& meta_ids,
                                                    const std::vector<std::string_view>& metas) {
  std::vector<std::uint32_t> fresh;
  const auto first_of_batch = static_cast<std::uint32_t>(docs.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const AddedDocument& in = batch[i];
    const Digest& d = in.doc->digest();
    ++seen;
    if (auto r = find(d)) {
      ++repeats;
      if (repeat_list.size() <= options.list_limit) repeat_list.push_back(*r);
      // A first sighting in this very batch still holds its batch position
      // in `file` (add() sets where it came from afterwards).
      const bool in_this_batch = *r >= first_of_batch && !docs[*r].in_base;
      if (in.doc->metadata() && docs[*r].has_metadata && !git::same_id(docs[*r].metadata, meta_ids[i]))
        repeat_notes.push_back(in.where + ": " + d.str() + " appears again with other metadata than at " +
                               (in_this_batch ? batch[docs[*r].file].where : where(*r)) +
                               "; the first metadata is kept");
      continue;
    }
    auto record = static_cast<std::uint32_t>(docs.size());
    DocRecord& rec = docs.emplace_back(DocRecord{d});
    rec.kind = in.doc->kind();
    rec.has_metadata = in.doc->metadata().has_value();
    if (rec.has_metadata) rec.metadata = meta_ids[i];
    doc_table.insert(record, [&](std::uint32_t r) -> const Digest& { return docs[r].digest; });
    rec.in_base = base.has_object(d);
    if (rec.in_base) {
      set_where(rec, in.where);
      if (rec.has_metadata && !base_has_metadata(d, metas[i])) {
        auto old = stored_metadata(base, d);
        if (old && *old != metas[i])
          repeat_notes.push_back(in.where + ": " + d.str() +
                                 " is already in the store with other metadata; the first metadata stays");
      }
      continue;
    }
    rec.file = static_cast<std::uint32_t>(i);
    fresh.push_back(record);
  }
  return fresh;
}

const BulkAdd::State::MetadataFile& BulkAdd::State::metadata_file(const std::string& path) {
  if (auto it = metadata_files.find(path); it != metadata_files.end()) return it->second;
  MetadataFile file;
  if (auto bytes = base.read(path)) file.bytes = std::move(*bytes);
  // The shape lines_for checks (store/core/index_trees.cc): each line starts
  // with its key, 64 hex digits, in strictly ascending order. A file out of
  // it keeps no starts, and its documents take the full reading.
  constexpr std::string_view kHead = "{\"@key\":\"";
  constexpr std::size_t kKey = 64;
  std::string_view text = file.bytes, previous;
  bool shaped = !text.empty() && text.size() < UINT32_MAX;
  for (std::size_t start = 0; shaped && start < text.size();) {
    const std::size_t end = text.find('\n', start);
    const std::string_view line = text.substr(start, end == std::string_view::npos ? end : end + 1 - start);
    const std::string_view key = line.substr(std::min(line.size(), kHead.size()), kKey);
    shaped = end != std::string_view::npos && line.starts_with(kHead) && key.size() == kKey &&
             line.size() > kHead.size() + kKey && line[kHead.size() + kKey] == '"' &&
             std::all_of(key.begin(), key.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }) &&
             (previous.empty() || previous < key);
    previous = key;
    file.starts.push_back(static_cast<std::uint32_t>(start));
    start += line.size();
  }
  if (!shaped) file.starts.clear();
  if (metadata_file_bytes + file.bytes.size() > kMetadataCacheBytes) {
    metadata_files.clear();
    metadata_file_bytes = 0;
  }
  metadata_file_bytes += file.bytes.size();
  return metadata_files.emplace(path, std::move(file)).first->second;
}

bool BulkAdd::State::base_has_metadata(const Digest& d, std::string_view meta) {
  if (base.format() != Format::k3) return false;
  const std::string hex = d.hex();
  const MetadataFile& file = metadata_file(fact_file(base, Family::kMetadata, hex));
  // The line a document with this metadata has (refs/index_lines.h): found
  // byte for byte, the stored metadata is `meta`; anything else takes the
  // full reading (stored_metadata).
  std::string line;
  line.reserve(hex.size() + meta.size() + 24);
  line.append("{\"@key\":\"").append(hex).append("\",\"metadata\":").append(meta).append("}\n");
  const std::string_view text = file.bytes;
  auto key_at = [&](std::uint32_t start) { return text.substr(start + 9, 64); };
  auto it = std::lower_bound(file.starts.begin(), file.starts.end(), hex,
                             [&](std::uint32_t start, const std::string& k) { return key_at(start) < k; });
  return it != file.starts.end() && text.substr(*it).starts_with(line);
}

void BulkAdd::State::write_new(std::uint32_t record, Prepared& p) {
  pack->write_blob(p.frame_id, p.frame);
  docs[record].frame = p.frame_id;
  if (format3) {
    // Lines, written into files when the tree is built; an attestation's
    // subject also as a record, for check_attestations.
    for (const IndexFact& fact : p.facts) {
      const Family family = family_of(fact);
      spill.put(family, render_line(fact));
      lines.push_back(LineRecord{record, family});
      if (const auto* a = std::get_if<AttestationFact>(&fact))
        index.push_back(IndexRecord{git_oid{}, record, aux_index(a->run), EntryKind::kAttestation});
    }
    ++written;
    return;
  }
  if (docs[record].has_metadata) pack->write_blob(p.metadata_id, p.metadata);
  for (std::size_t j = 0; j < p.entries.size(); ++j) {
    // A source id's blob waits for the tree (build_tree): another run may
    // hold the id, and a blob written for nothing would dangle in the store.
    if (p.kinds[j] != EntryKind::kLiteral) pack->write(p.entry_ids[j], GIT_OBJECT_BLOB, p.entries[j].bytes, 0);
    IndexRecord r{p.entry_ids[j], record, 0, p.kinds[j]};
    switch (p.kinds[j]) {
      case EntryKind::kGroup:
      case EntryKind::kAttestation: r.arg = aux_index(*p.others[j]); break;
      case EntryKind::kLevel: r.arg = static_cast<std::uint32_t>(p.levels[j]); break;
      case EntryKind::kLiteral:
        r.arg = add_literal(p.entries[j].path);
        add_literal(p.entries[j].bytes);  // at r.arg + 1
        break;
    }
    index.push_back(r);
  }
  ++written;
}

// Which records are new on `head`: 1 for those to be committed, 0 for those
// it already holds (the base's, and any another writer added since).
std::vector<char> BulkAdd::State::resolve(const Snapshot& head, BulkAddReport& report) {
  const bool moved = head.commit_id() != base.commit_id();
  std::vector<char> added(docs.size(), 0);
  std::vector<std::uint32_t> present;
  report.notes = repeat_notes;
  for (std::uint32_t r = 0; r < docs.size(); ++r) {
    const DocRecord& d = docs[r];
    bool there = d.in_base || (moved && head.has_object(d.digest));
    if (!there) {
      added[r] = 1;
      ++report.added;
      continue;
    }
    present.push_back(r);
    if (!d.in_base && d.has_metadata)
      if (auto old = stored_metadata(head, d.digest); old) {
        git_oid old_id = git::object_id(GIT_OBJECT_BLOB, *old);
        if (!git::same_id(old_id, d.metadata))
          report.notes.push_back(where(r) + ": " + d.digest.str() +
                                 " is already in the store with other metadata; the first metadata stays");
      }
  }
  report.present = repeats + present.size();
  if (report.added + report.present <= options.list_limit) {
    for (std::uint32_t r = 0; r < docs.size(); ++r)
      if (added[r]) report.added_list.emplace_back(docs[r].digest, docs[r].kind);
    for (std::uint32_t r : repeat_list) report.present_list.emplace_back(docs[r].digest, docs[r].kind);
    for (std::uint32_t r : present) report.present_list.emplace_back(docs[r].digest, docs[r].kind);
  }
  return added;
}

namespace {

// The source ids claimed so far in the input: each path, and every folder
// above one (so that "is there a staged id below this path" is one lookup
// rather than a walk of a sorted map with long shared prefixes). Views into
// the add's literal chunks, which never move.
struct StagedSources {
  std::unordered_map<std::string_view, const Digest*> paths;
  std::unordered_set<std::string_view> folders;

  const Digest* find(std::string_view path) const {
    auto it = paths.find(path);
    return it == paths.end() ? nullptr : it->second;
  }
  void add(std::string_view path, const Digest* run) {
    paths.emplace(path, run);
    for (std::size_t slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/', slash + 1))
      folders.insert(path.substr(0, slash));
  }
};

// Who already holds the source id `path`, as add.cc's source_holder says: the
// run digest text at it, "a folder of other source ids", the id of a run
// whose id is a prefix of it, or "" if it is free.
std::string source_holder(const Snapshot& head, std::string_view path, const StagedSources& staged) {
  // An empty store (the first bulk add) holds no source ids: only the input's
  // own are looked at, without a tree read per path and per prefix.
  const bool in_head = !head.empty();
  if (const Digest* run = staged.find(path)) return run->str();
  if (in_head)
    if (auto bytes = head.read(path)) return *bytes;
  if (in_head && head.exists(path)) return "a folder of other source ids";
  if (staged.folders.count(path)) return "a folder of other source ids";
  for (std::size_t slash = path.find('/', 13); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    std::string_view prefix = path.substr(0, slash);
    if (const Digest* run = staged.find(prefix)) return "the source id of run " + run->str();
    if (in_head)
      if (auto bytes = head.read(prefix)) return "the source id of run " + *bytes;
  }
  return "";
}

}  // namespace

// The index records of new documents that are not written: source ids that
// another run claimed first (in the store, or earlier in the input).
std::vector<char> BulkAdd::State::claim_sources(const Snapshot& head, const std::vector<char>& added,
                                               BulkAddReport& report) {
  std::vector<char> dropped(index.size(), 0);
  if (format3) return dropped;  // write_index claims format 3's ids
  StagedSources staged;  // into docs, which no longer grows
  for (std::size_t i = 0; i < index.size(); ++i) {
    const IndexRecord& r = index[i];
    if (r.kind != EntryKind::kLiteral || !added[r.doc]) continue;
    std::string_view path = literal(r.arg);
    if (!parse_source_path(path)) continue;
    const Digest& run = docs[r.doc].digest;
    std::string holder = source_holder(head, path, staged);
    if (holder.empty()) {
      staged.add(path, &run);
      continue;
    }
    dropped[i] = 1;
    if (holder != run.str())
      report.notes.push_back(where(r.doc) + ": " + std::string(path) + " already names " + holder + "; run " +
                             run.str() + " is added but not indexed under that source id");
  }
  return dropped;
}

void BulkAdd::State::check_attestations(const Snapshot& head, const std::vector<char>& added) {
  for (const IndexRecord& r : index) {
    if (r.kind != EntryKind::kAttestation || !added[r.doc]) continue;
    const Digest& subject = aux[r.arg];
    auto staged = find(subject);
    bool in_store = !staged && head.has_object(subject);
    bool is_run = staged ? docs[*staged].kind == Kind::kRun
                         : in_store && head.document(subject, false).kind() == Kind::kRun;
    if (!is_run)
      throw InvalidInput(where(r.doc) + ": /spec/subject: expected a run in the store, found " + subject.str() +
                         (staged || in_store ? ", which is not a run" : ", which is not there"));
  }
}

namespace {

// One sorted sequence of paths of one kind, rendered on demand.
struct PathStream {
  std::vector<std::uint32_t> items;
  std::function<void(std::uint32_t, std::string&)> render;
  std::function<git_oid(std::uint32_t)> blob;
  std::size_t at = 0;
  std::string path;

  // Sorted by digests, which the layout's paths follow; checked by
  // rendering each path once, and sorted by the paths themselves otherwise.
  template <typename Less>
  void sort(Less&& less) {
    std::sort(items.begin(), items.end(), less);
    std::string prev, cur;
    for (std::size_t i = 0; i < items.size(); ++i, prev.swap(cur)) {
      render(items[i], cur);
      if (i && !(prev < cur)) {
        std::sort(items.begin(), items.end(), [&](std::uint32_t a, std::uint32_t b) {
          std::string pa, pb;
          render(a, pa), render(b, pb);
          return pa < pb;
        });
        break;
      }
    }
  }
  bool next() {
    if (at >= items.size()) return false;
    render(items[at], path);
    return true;
  }
};

}  // namespace

git_oid BulkAdd::State::build_tree(const Snapshot& head, const std::vector<char>& added,
                                   const std::vector<char>& dropped, git::ObjectWriter& out, BulkAddReport& report) {
  auto by_digest = [&](std::uint32_t a, std::uint32_t b) { return docs[a].digest < docs[b].digest; };
  PathStream objects, metadata, groups, levels, attestations, texts;
  objects.render = [&](std::uint32_t r, std::string& p) { p = object_path(docs[r].digest); };
  objects.blob = [&](std::uint32_t r) { return docs[r].frame; };
  metadata.render = [&](std::uint32_t r, std::string& p) { p = metadata_path(Format::k2, docs[r].digest); };
  metadata.blob = [&](std::uint32_t r) { return docs[r].metadata; };
  for (std::uint32_t r = 0; r < docs.size(); ++r) {
    if (!added[r]) continue;
    objects.items.push_back(r);
    if (docs[r].has_metadata && !format3) metadata.items.push_back(r);  // format 3: a line (write_index)
  }
  objects.sort(by_digest);
  metadata.sort(by_digest);
  auto index_blob = [&](std::uint32_t i) { return index[i].blob; };
  for (PathStream* s : {&groups, &levels, &attestations, &texts}) s->blob = index_blob;
  groups.render = [&](std::uint32_t i, std::string& p) { p = group_path(Format::k2, aux[index[i].arg], docs[index[i].doc].digest); };
  levels.render = [&](std::uint32_t i, std::string& p) {
    p = level_path(Format::k2, static_cast<Level>(index[i].arg), docs[index[i].doc].digest);
  };
  attestations.render = [&](std::uint32_t i, std::string& p) {
    p = attestation_path(Format::k2, aux[index[i].arg], docs[index[i].doc].digest);
  };
  texts.render = [&](std::uint32_t i, std::string& p) { p = literal(index[i].arg); };
  // Written only now that the id is known to be this run's (write_new).
  texts.blob = [&](std::uint32_t i) {
    out.write(index[i].blob, GIT_OBJECT_BLOB, literal(index[i].arg + 1), 0);
    return index[i].blob;
  };
  for (std::uint32_t i = 0; i < index.size(); ++i) {
    if (format3 || !added[index[i].doc] || dropped[i]) continue;
    PathStream* s[] = {&groups, &levels, &attestations, &texts};
    s[static_cast<int>(index[i].kind)]->items.push_back(i);
  }
  auto by_arg_then_doc = [&](std::uint32_t a, std::uint32_t b) {
    const IndexRecord &x = index[a], &y = index[b];
    if (x.arg != y.arg) return x.kind == EntryKind::kLevel ? x.arg < y.arg : aux[x.arg] < aux[y.arg];
    return docs[x.doc].digest < docs[y.doc].digest;
  };
  groups.sort(by_arg_then_doc);
  levels.sort(by_arg_then_doc);
  attestations.sort(by_arg_then_doc);
  texts.sort([&](std::uint32_t a, std::uint32_t b) { return literal(index[a].arg) < literal(index[b].arg); });

  // Merged in path order into the tree builder.
  std::vector<PathStream*> streams;
  std::size_t total = 0;
  for (PathStream* s : {&objects, &metadata, &groups, &levels, &attestations, &texts}) {
    total += s->items.size();
    if (s->next()) streams.push_back(s);
  }
  git::TreeStream tree(store.repo(), head.tree_id(), out, total <= git::kSmallTreeChange);
  // A new store's first tree says its format; "FORMAT" sorts before every
  // other path of the layout.
  if (head.empty()) tree.change(std::string(kFormatPath), git::PathChange{out.write(GIT_OBJECT_BLOB, kFormat3Bytes, 0)});
  // Format 3: the index files' changes, after every object ("refs/" sorts
  // after "objects/").
  std::map<std::string, git::PathChange> index_paths;
  if (format3) {
    write_index(head, added, report, index_paths, out);
    total += index_paths.size();
  }
  // The dictionary this add trained, which its frames name; "dictionaries/"
  // sorts after FORMAT and before "objects/".
  if (encoder.trained()) tree.change(encoder.trained_path(), git::PathChange{dictionary_blob});
  for (std::size_t done = 0; !streams.empty(); ++done) {
    auto lowest = std::min_element(streams.begin(), streams.end(),
                                   [](const PathStream* a, const PathStream* b) { return a->path < b->path; });
    PathStream& s = **lowest;
    tree.change(s.path, git::PathChange{s.blob(s.items[s.at])});
    ++s.at;
    if (!s.next()) streams.erase(lowest);
    if (options.commit.progress && (done % 4096 == 0)) options.commit.progress(done, total);
  }
  for (const auto& [path, change] : index_paths) tree.change(path, change);
  if (options.commit.progress) options.commit.progress(total, total);
  return tree.finish();
}

// Format 3: the lines of the added documents into the trie, each file a blob
// of `out`, one family at a time (its lines read back from `spill`). A claim
// of an upstream id that a run (of the head, or earlier in the input) holds
// is a note, not a line. A family changed in at most kRebuildAbove keys takes
// the plan every writer uses (index_trees.h); a bigger change rebuilds the
// family from its old lines and the new, as views of the files' bytes and of
// the spilled lines, one file's bytes at a time (build_trie_files): memory
// for one family's lines once, not for copies of them.
// How many bytes of index files write_index holds before it writes them.
constexpr std::size_t kIndexGroupBytes = 8u << 20;

void BulkAdd::State::write_index(const Snapshot& head, const std::vector<char>& added, BulkAddReport& report,
                                 std::map<std::string, git::PathChange>& paths, git::ObjectWriter& out) {
  IndexChanges small;  // the families the plan changes
  for (const Family family : kFamilies) {
    const std::string spilled = spill.read(family);
    if (spilled.empty()) continue;
    std::vector<LineView> views;
    std::unordered_map<std::string_view, const Digest*> claims;
    std::size_t at = 0;
    for (const LineRecord& l : lines) {
      if (l.family != family) continue;
      const std::size_t end = spilled.find('\n', at);
      const std::string_view line = std::string_view(spilled).substr(at, end + 1 - at);
      at = end + 1;
      if (!added[l.doc]) continue;
      const std::string_view key = line.substr(9, line.find('"', 9) - 9);  // {"@key":"<hex>"
      const Digest& doc = docs[l.doc].digest;
      if (family == Family::kSources) {
        std::optional<Digest> holder;
        if (auto it = claims.find(key); it != claims.end()) holder = *it->second;
        else if (!head.empty())
          if (auto held = find_fact(head, Family::kSources, std::string(key))) holder = std::get<SourceFact>(*held).run;
        if (holder) {
          if (*holder != doc)
            report.notes.push_back(where(l.doc) + ": the upstream id of run " + doc.str() + " already names " +
                                   holder->str() + "; the run is added but not indexed under that source id");
          continue;
        }
        claims.emplace(key, &doc);
      }
      views.push_back(LineView{key, line});
    }
    claims = {};
    const std::string dir = family_dir(family);
    if (views.size() <= kRebuildAbove) {
      for (const LineView& v : views) small.put_line(family, std::string(v.key), std::string(v.line));
      continue;
    }
    // The old lines, as views of the family's files (kept in `old` until the
    // family is written).
    std::vector<std::string> old;
    std::vector<LineView> merged;
    if (!head.empty())
      head.walk(dir, [&](const std::string&, std::string_view bytes) { old.emplace_back(bytes); });
    if (!old.empty()) paths[dir] = git::PathChange{};  // the family is written afresh
    std::size_t old_lines = 0;
    for (const std::string& file : old) old_lines += static_cast<std::size_t>(std::count(file.begin(), file.end(), '\n'));
    merged.reserve(old_lines + views.size());
    for (const std::string& file : old)
      for (std::size_t from = 0; from < file.size();) {
        const std::size_t end = file.find('\n', from);
        if (end == std::string::npos) throw Corruption(dir + ": an index file whose last line has no \"\\n\"");
        const std::string_view line = std::string_view(file).substr(from, end + 1 - from);
        merged.push_back(LineView{line.substr(9, line.find('"', 9) - 9), line});
        from = end + 1;
      }
    merged.insert(merged.end(), views.begin(), views.end());
    views = {};
    std::stable_sort(merged.begin(), merged.end(), [](const LineView& a, const LineView& b) { return a.key < b.key; });
    // A key twice: the head's line stays (documents the head has are not
    // added again, so only a damaged head gets here; verify says why).
    merged.erase(std::unique(merged.begin(), merged.end(), [](const LineView& a, const LineView& b) { return a.key == b.key; }),
                 merged.end());
    // The files a group at a time, hashed and deflated on every core
    // (ObjectWriter::write_blobs), written in the order made.
    std::vector<std::pair<std::string, std::string>> files;
    std::size_t file_bytes = 0;
    auto write_files = [&] {
      std::vector<std::string_view> blobs;
      blobs.reserve(files.size());
      for (const auto& f : files) blobs.push_back(f.second);
      const std::vector<git_oid> ids = out.write_blobs(blobs);
      for (std::size_t i = 0; i < files.size(); ++i) paths[dir + "/" + files[i].first] = git::PathChange{ids[i]};
      files.clear();
      file_bytes = 0;
    };
    try {
      build_trie_files(merged, [&](const std::string& path, std::string&& bytes) {
        file_bytes += bytes.size();
        files.emplace_back(path, std::move(bytes));
        if (file_bytes >= kIndexGroupBytes) write_files();
      });
      write_files();
    } catch (const std::invalid_argument& e) {
      throw Corruption(dir + ": " + e.what());
    }
  }
  if (small.empty()) return;
  ChangeSet change;
  apply_index_changes(head, small, change);
  for (const std::string& path : change.removals) paths[path] = git::PathChange{};
  for (const auto& [path, bytes] : change.upserts)
    paths[path] = git::PathChange{out.write_blob(bytes)};
  for (const auto& [path, id] : change.links) paths[path] = git::PathChange{git::parse_oid(id)};
  for (const auto& [path, id] : change.folders) paths[path + "/"] = git::PathChange{git::parse_oid(id), true};
}

std::optional<std::string> BulkAdd::State::write_commit(const Snapshot& head, BulkAddReport& report) {
  report = BulkAddReport{};
  std::vector<char> added = resolve(head, report);
  check_attestations(head, added);
  std::vector<char> dropped = claim_sources(head, added, report);
  if (report.added == 0) return std::nullopt;
  encoder.check_head(head);
  // The first attempt completes the pack that holds the blobs; a later one
  // (another writer moved the branch) writes its trees into a pack of its own.
  std::unique_ptr<git::PackWriter> trees;
  if (!pack) trees = std::make_unique<git::PackWriter>(git::gitdir(store.repo()) + "objects/pack");
  git::PackWriter& out = pack ? *pack : *trees;
  git_oid tree_id = build_tree(head, added, dropped, out, report);
  ChangeSet message;
  message.op = options.op;
  std::map<Kind, std::size_t> counts;
  for (std::uint32_t r = 0; r < docs.size(); ++r)
    if (added[r]) ++counts[docs[r].kind];
  std::string parts;
  for (const auto& [kind, n] : counts) parts += (parts.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(role_name(kind));
  message.summary = options.op + ": " + plural(report.added, "document") + " (" + parts + ")";
  for (const std::string& input : options.inputs) message.body += "from " + input_name(input) + "\n";
  std::string content = store.commit_text(head, tree_id, message, options.commit);
  git_oid commit_id = out.write(GIT_OBJECT_COMMIT, content, 1);
  out.finish();
  pack.reset();
  return git::oid_str(commit_id);
}

BulkAddReport BulkAdd::commit() {
  State& s = *state_;
#ifdef __GLIBC__
  // The batches' parsed documents are freed but still resident (in every
  // thread's malloc arena): hand them back before the trees are built, the
  // add's peak.
  malloc_trim(0);
#endif
  // Fewer new documents than a full training sample: train on what there is
  // (or write them without a dictionary when too few).
  if (s.training) s.settle_dictionary();
  BulkAddReport report;
  report.commit =
      s.store.commit_written([&](const Snapshot& head) { return s.write_commit(head, report); }, s.options.op);
  // Each add writes one pack; many single adds would leave thousands. The
  // commit stands either way: a merge that fails leaves the small packs.
  if (report.commit) try {
      git::merge_small_packs(s.store.repo(), git::gitdir(s.store.repo()) + "objects/pack");
    } catch (const Error&) {
    }
  return report;
}

}  // namespace kistore
