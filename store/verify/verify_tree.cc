// verify's walk of the tree and its shape check (verify_state.h).
#include <algorithm>
#include <exception>
#include <functional>
#include <thread>
#include <type_traits>
#include <variant>

#include "objects/blob.h"
#include "refs/index_facts.h"
#include "refs/index_lines.h"
#include "store/git/commit_graph.h"
#include "store/git/raw_tree.h"
#include "store/verify/verify_state.h"

namespace kistore::verifying {
namespace {

// One index entry (or FORMAT), or a dictionary, into a part of the walk.
// Called from the walk's threads: reads only what is constant, and interns
// measurements' kinds (MeasurementKinds locks).
class Visitor {
 public:
  explicit Visitor(const VerifyState& state) : s_(state) {}

  // One index entry (or FORMAT), placed by the layout of the store's format,
  // into `out`. Called from the walk's threads: reads only what is constant.
  void visit(WalkPartResult& out, const std::string& path, std::string_view bytes) const {
    auto problem = [&](ProblemKind kind, const std::string& where, std::string detail) {
      out.problems.push_back({kind, where, std::move(detail)});
    };
    auto h = [&] { return std::string(s_.format == Format::k1 ? "<64 hex>" : "<2 hex>/<2 hex>/<60 hex>"); };
    auto outside = [&](const std::string& expected) { problem(ProblemKind::kLayout, path, "expected " + expected + ", found another name"); };
    IndexEntries& index = out.index;
    if (path == kFormatPath) return;  // its bytes are the format's own (Snapshot::format)
    if (s_.format == Format::k3 && path.starts_with("refs/")) return visit_index_file(out, path, bytes);
    if (path.starts_with("dictionaries/")) return check_dictionary(out, path, bytes);
    if (path.starts_with("refs/metadata/")) {
      auto d = parse_metadata_path(s_.format, path);
      if (!d) return outside("refs/metadata/" + h());
      index.metadata.push_back({*d});  // its bytes were checked while read
      return;
    }
    if (path.starts_with("refs/groups/")) {
      auto e = parse_group_path(s_.format, path);
      if (!e) return outside("refs/groups/" + h() + "/<64 hex>");
      index.groups.push_back(group_of(path, e->key, e->run, bytes));
      return;
    }
    if (path.starts_with("refs/attestations/")) {
      auto e = parse_attestation_path(s_.format, path);
      if (!e) return outside("refs/attestations/" + h() + "/<64 hex>");
      index.attestations.push_back({path, e->run, e->attestation, std::string(bytes)});
      return;
    }
    if (path.starts_with("refs/levels/")) {
      auto e = parse_level_path(s_.format, path);
      if (!e) return outside("refs/levels/<" + std::string(level_names()) + ">/" + h());
      index.levels.push_back({bytes == s_.null_entry ? std::string() : std::string(bytes), e->level, e->run});
      return;
    }
    if (s_.format == Format::k2 && path.starts_with("refs/reruns/")) {
      auto e = parse_rerun_path(s_.format, path);
      if (!e) return outside("refs/reruns/" + h() + "/<64 hex>");
      index.reruns.push_back({path, e->run, e->rerun, std::string(bytes)});
      return;
    }
    if (path.starts_with("refs/sources/")) return index.add_source(path, bytes);
    problem(ProblemKind::kLayout, path,
            std::string("path outside the store layout of ") + format_name(s_.format) +
                (s_.format == Format::k1 ? " (objects/sha256/…, refs/{metadata,groups,levels,attestations,sources}/…)"
                                       : " (FORMAT, objects/sha256/…, dictionaries/<id>, refs/{metadata,groups,levels,reruns,attestations,sources}/…)"));
  }

  // Format 3: an index file, its lines as the entries the checks weigh and
  // its summary for the trie's shape (check_trie_shape names a path that is
  // no trie path). Called from the walk's threads, as visit.
  void visit_index_file(WalkPartResult& out, const std::string& path, std::string_view bytes) const {
    const std::size_t slash = path.find('/', 5);
    const std::optional<Family> family =
        slash == std::string::npos ? std::nullopt : parse_family(std::string_view(path).substr(5, slash - 5));
    if (!family)
      return out.problems.push_back({ProblemKind::kLayout, path,
                                     "path outside the store layout of format 3 (FORMAT, objects/sha256/…, "
                                     "dictionaries/<id>, refs/{metadata,groups,levels,reruns,attestations,sources}/<trie path>)"});
    const std::string rel = path.substr(slash + 1);
    TrieFileSummary summary{rel, static_cast<std::size_t>(std::count(bytes.begin(), bytes.end(), '\n')), {}, {}};
    // A file with a fault gives none of its facts: read whole before any is kept.
    std::vector<IndexFact> facts;
    std::vector<std::string_view> keys;  // each fact's key, the line's own text
    try {
      for_each_index_line(*family, path, trie_prefix(rel), bytes, [&](IndexFact&& fact, std::string_view key) {
        facts.push_back(std::move(fact));
        keys.push_back(key);
      });
    } catch (const Error& e) {
      out.index.trie_files[*family].push_back(std::move(summary));
      return out.problems.push_back({ProblemKind::kLayout, path, e.what()});
    }
    summary.lines = facts.size();
    summary.first_key = keys.front();
    summary.last_key = keys.back();
    out.index.trie_files[*family].push_back(std::move(summary));
    IndexEntries& index = out.index;
    for (std::size_t i = 0; i < facts.size(); ++i) {
      std::visit(
          [&](auto& f) {
            using T = std::decay_t<decltype(f)>;
            if constexpr (std::is_same_v<T, MetadataFact>) {
              index.metadata.push_back({f.document});
            } else if constexpr (std::is_same_v<T, GroupFact>) {
              index.groups.push_back({f.key, f.run, s_.objects.kinds.primary(f.primary), nullptr});
            } else if constexpr (std::is_same_v<T, LevelFact>) {
              index.levels.push_back({level_entry(f.evidence), f.level, f.run});
            } else if constexpr (std::is_same_v<T, RerunFact>) {
              index.reruns.push_back({path + " @" + f.run.hex() + f.rerun.hex(), f.run, f.rerun, rerun_entry(f.verdict, f.ratio)});
            } else if constexpr (std::is_same_v<T, AttestationFact>) {
              index.attestations.push_back({path + " @" + f.run.hex() + f.attestation.hex(), f.run, f.attestation,
                                            attestation_entry(f.author, f.type)});
            } else {
              index.add_source(keys[i], f.run);  // a sources line's key is source_key(source, externalId)
            }
          },
          facts[i]);
    }
  }

  // Formats 1 and 2: a group entry's bytes as the primary measurement they
  // spell (as read into a GroupFact), or as themselves when they spell none.
  GroupEntry group_of(const std::string& path, const Digest& key, const Digest& run, std::string_view bytes) const {
    try {
      if (auto fact = entry_fact(s_.format, path, bytes))
        if (auto* g = std::get_if<GroupFact>(&*fact)) return {key, run, s_.objects.kinds.primary(g->primary), nullptr};
    } catch (const Error&) {
      // not a measurement's bytes: kept as they are, for the problem to quote
    }
    return {key, run, Primary{}, std::make_unique<std::string>(bytes)};
  }

  // dictionaries/<id>: a zstd dictionary whose Dictionary_ID is <id>, an
  // ID outside the ranges zstd reserves (objects/blob.h); one zstd cannot
  // compress with is a warning. Called from the walk's threads, as visit.
  void check_dictionary(WalkPartResult& out, const std::string& path, std::string_view bytes) const {
    std::optional<std::uint32_t> id = parse_dictionary_path(s_.format, path);
    if (!id)
      return out.problems.push_back({ProblemKind::kLayout, path,
                                     s_.format == Format::k1
                                         ? "a dictionary in a format-1 store, which has none"
                                         : "expected dictionaries/<Dictionary_ID, decimal, 1 to 4294967295>"});
    if (dictionary_id_reserved(*id))
      out.problems.push_back({ProblemKind::kLayout, path, reserved_dictionary_id_detail(*id)});
    try {
      Dictionary check(bytes, *id, path);
      // Frames that name it still decode, and writers pass it over
      // (store/core/frame_encoder.h): a warning, as it can never be removed.
      if (!check.compression_problem().empty())
        out.warnings.push_back({ProblemKind::kDictionaryReadOnly, path,
                                check.compression_problem() +
                                    "; writers compress with another dictionary or none, and a pull refuses it"});
    } catch (const Error& e) {
      out.problems.push_back({ProblemKind::kObjectCorrupt, path, e.what()});
    }
  }

 private:
  const VerifyState& s_;
};

}  // namespace

// Reading, decoding, hashing and parsing run on every core; what the
// objects imply is then merged in tree order, so reports are the same
// whatever the thread count. Submodule links go to `links`.
void walk_tree(VerifyState& state, std::vector<WalkPartResult>& parts, std::vector<Problem>& links, bool trees_checked) {
const Visitor visitor(state);
  std::mutex links_mutex;
  // Frames that name a dictionary decode with the tree's (loaded once, on
  // the first frame that names it, by whichever thread meets it first).
  const DictionaryLookup dictionaries = state.snap.dictionaries();
  state.snap.walk_parallel(
      "", 0, [&](std::size_t n) { parts.resize(n); },
      [&](std::size_t part, const std::string& path, const std::string_view* bytes, const std::string& error) {
        WalkPartResult& out = parts[part];
        if (!bytes) {
          out.problems.push_back({ProblemKind::kObjectCorrupt, path, error});
        } else if (path.starts_with("objects/")) {
          ObjectFacts facts = object_facts(state.format, path, *bytes,
                                           state.options.deep ? ObjectCheck::kDeep : ObjectCheck::kShallow, dictionaries);
          if (facts.problem) out.problems.push_back(std::move(*facts.problem));  // facts.problem stays set: invalid
          // Into its shard here, on every core; a part holds one shard's objects (objects/sha256/<first byte>),
          // in tree order, so the last of a digest listed twice stays, as in one map filled in tree order.
          if (facts.digest) state.objects.put(std::move(facts));
        } else {
          // Metadata documents are checked here, on every core: a parse per
          // document (format 3: as its lines are read).
          if (state.format != Format::k3 && parse_metadata_path(state.format, path))
            if (auto p = metadata_problem(path, *bytes)) out.problems.push_back(std::move(*p));
          visitor.visit(out, path, *bytes);
        }
      },
      [&](const std::string& path) {
        std::lock_guard lock(links_mutex);
        links.push_back({ProblemKind::kLayout, path, "expected only blobs and trees, found a submodule or link entry"});
      },
      [](const std::string& path) { return path.starts_with("objects/"); },
      state.options.progress ? std::function<void(std::size_t, std::size_t)>(
                              [&](std::size_t done, std::size_t total) { state.options.progress(done, total); })
                        : nullptr,
      trees_checked);
}

// The parts' findings, in part order (tree order), into the report and
// state.index (the objects went into state.objects during the walk).
void merge_parts(VerifyState& state, std::vector<WalkPartResult>& parts) {
  // Each list made once at its whole size: grown part by part, a list of a
  // million entries would be copied as it doubles, twice its size at once
  // beside the parts (the pages of a reservation are taken as they are filled,
  // while each part's are freed).
  IndexEntries& index = state.index;
  auto reserve = [&](auto member) {
    std::size_t n = (index.*member).size();
    for (const WalkPartResult& part : parts) n += (part.index.*member).size();
    (index.*member).reserve(n);
  };
  reserve(&IndexEntries::metadata);
  reserve(&IndexEntries::groups);
  reserve(&IndexEntries::levels);
  reserve(&IndexEntries::sources);
  reserve(&IndexEntries::source_text);
  for (WalkPartResult& part : parts) {
    append(state.report.problems, part.problems);
    append(state.report.warnings, part.warnings);
    append(state.index.metadata, part.index.metadata);
    append(state.index.groups, part.index.groups);
    append(state.index.attestations, part.index.attestations);
    append(state.index.reruns, part.index.reruns);
    append(state.index.levels, part.index.levels);
    // A part's source entries point into its text: moved past what is already there.
    const std::uint64_t base = state.index.source_text.size();
    for (SourceEntry& e : part.index.sources) e.path_at += base, e.other_at += base;
    append(state.index.sources, part.index.sources);
    state.index.source_text += part.index.source_text;
    for (auto& [family, files] : part.index.trie_files) append(state.index.trie_files[family], files);
    part = WalkPartResult();
  }
  std::vector<WalkPartResult>().swap(parts);
}

Shape check_shape(const VerifyState& state) {
  Shape out;
  if (state.snap.empty()) return out;
  git::WalkResult shape = git::check_commit_tree_shape(state.store.repo(), state.snap.commit(),
                                                      "the tree of " + state.snap.commit_id().substr(0, 12));
  out.hashed = shape.problems.empty() && !shape.too_deep;
  out.too_deep = shape.too_deep;
  for (std::size_t i = 0; i < shape.problems.size(); ++i) {
    // Names, modes and depth are reported here, and a tree whose entries
    // are out of order or listed twice: the walk takes entries as they
    // come and sees neither (an index entry listed twice would then count
    // once). Submodules and unreadable objects are the walk's to report.
    switch (shape.faults[i]) {
      case git::WalkFault::kBadName:
      case git::WalkFault::kBadMode:
      case git::WalkFault::kTooDeep:
      case git::WalkFault::kTreeOrder:
      case git::WalkFault::kEmptyTree:
        out.problems.push_back(std::move(shape.problems[i]));
        break;
      case git::WalkFault::kSubmodule:
      case git::WalkFault::kUnreadable:
      case git::WalkFault::kBadCommit:
      case git::WalkFault::kTreeFormat:
        break;
    }
  }
  return out;
}

}  // namespace kistore::verifying
