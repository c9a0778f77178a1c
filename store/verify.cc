#include "store/verify.h"

#include <map>
#include <set>
#include <unordered_map>

#include "objects/blob.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "store/git.h"
#include "store/incoming_walk.h"
#include "store/objwrite.h"

namespace kistore {
namespace {

// What verify keeps of each object to check the index against.
struct ObjectFacts {
  Kind kind = Kind::kRun;
  bool valid = false;          // decoded, hashed and validated
  std::string group_path;      // runs: where the group entry must be
  std::string group_bytes;
  Level default_level = Level::kReported;
  std::optional<std::string> source_path;
  std::optional<Digest> subject;  // attestations
  std::string attestation_bytes;
  std::vector<std::pair<std::string, Digest>> references;  // runs: role -> digest
};


struct Outcome {
  std::string path;
  bool object = false;
  bool read = false;  // an index entry whose bytes were read
  bool deep = false;
  std::optional<Digest> digest;
  ObjectFacts facts;
  std::vector<Problem> problems;
  std::string bytes;  // index entries: kept for the merge
};


class Verifier {
 public:
  Verifier(const Store& store, const VerifyOptions& options)
      : store_(store), options_(options), snap_(store.snapshot()) {}

  VerifyReport run() {
    if (!check_shape()) {
      // A tree too deep or malformed to walk: report that, and the history.
      check_history();
      return std::move(report_);
    }
    // Reading, decoding, hashing and parsing run on every core; what the
    // objects imply is then merged in tree order, so reports are the same
    // whatever the thread count.
    std::vector<std::vector<Outcome>> parts;
    snap_.walk_parallel(
        "", 0, [&](std::size_t n) { parts.resize(n); },
        [&](std::size_t part, const std::string& path, const std::string_view* bytes, const std::string& error) {
          Outcome& o = parts[part].emplace_back();
          o.path = path;
          if (!bytes) {
            o.problems.push_back({"object-corrupt", path, error});
          } else if (path.starts_with("objects/")) {
            o.object = true;
            o.deep = options_.deep;
            examine_object(path, *bytes, o);
          } else {
            o.read = true;
            if (path.starts_with("refs/metadata/") && Digest::parse_hex(std::string_view(path).substr(14)))
              check_metadata(path, *bytes, o.problems);  // here, on every core: a parse per document
            else
              o.bytes.assign(bytes->data(), bytes->size());
          }
        },
        [&](const std::string& path) {
          problem("layout", path, "expected only blobs and trees, found a submodule or link entry");
        },
        [](const std::string& path) { return path.starts_with("objects/"); },
        options_.progress ? std::function<void(std::size_t, std::size_t)>(
                                [&](std::size_t done, std::size_t total) { options_.progress(done, total); })
                          : nullptr);
    for (std::vector<Outcome>& part : parts) {
      for (Outcome& o : part) {
        if (o.object && o.digest) objects_[*o.digest] = std::move(o.facts);
        for (Problem& p : o.problems) report_.problems.push_back(std::move(p));
        if (o.read) visit(o.path, o.bytes);
      }
      std::vector<Outcome>().swap(part);
    }
    check_index();
    check_history();
    report_.objects = objects_.size();
    return std::move(report_);
  }

 private:
  void problem(std::string kind, std::string path, std::string detail) {
    report_.problems.push_back({std::move(kind), std::move(path), std::move(detail)});
  }

  // The head tree's shape (incoming_walk.h): every mode 100644 or 040000, no
  // path more than 16 folders deep, every tree well formed. False when the
  // tree cannot be walked (too deep, malformed, missing trees).
  bool check_shape() {
    if (snap_.empty()) return true;
    git_oid head;
    git_oid_fromstr(&head, snap_.commit_id().c_str());
    git_commit* raw = nullptr;
    git::check(git_commit_lookup(&raw, store_.repo(), &head), "reading the head commit " + snap_.commit_id());
    git::Commit commit(raw);
    git::StoreTreeSource source(store_.repo());
    git::WalkResult shape =
        git::check_tree_shape(source, *git_commit_tree_id(raw), "the tree of " + snap_.commit_id().substr(0, 12));
    bool walkable = true;
    for (git::WalkProblem& p : shape.problems) {
      // Trees that cannot be read, and submodule links, the walk reports
      // itself, naming the path.
      if (p.kind.starts_with("object-") || p.kind.starts_with("git-object-")) continue;
      if (p.kind == "mode" && p.detail.find("mode 160000") != std::string::npos) continue;
      walkable = walkable && (p.kind == "mode" || p.kind == "name");
      problem(p.kind == "name" ? "layout" : std::move(p.kind), std::move(p.path), std::move(p.detail));
    }
    return walkable;
  }
  void warning(std::string kind, std::string path, std::string detail) {
    report_.warnings.push_back({std::move(kind), std::move(path), std::move(detail)});
  }

  void visit(const std::string& path, std::string_view bytes) {
    std::string_view rest = path;
    auto take = [&](std::string_view prefix) {
      if (!rest.starts_with(prefix)) return false;
      rest.remove_prefix(prefix.size());
      return true;
    };
    if (take("refs/metadata/")) {
      auto d = Digest::parse_hex(rest);
      if (!d) return problem("layout", path, "expected refs/metadata/<64 hex>, found another name");
      metadata_.emplace(*d, path);  // its bytes were checked while read (check_metadata)
      return;
    }
    if (take("refs/groups/") || take("refs/attestations/")) {
      std::size_t slash = rest.find('/');
      auto a = Digest::parse_hex(rest.substr(0, slash));
      auto b = slash == rest.npos ? std::nullopt : Digest::parse_hex(rest.substr(slash + 1));
      if (!a || !b) return problem("layout", path, "expected <64 hex>/<64 hex> below " + path.substr(0, path.find('/', 5)));
      if (path.starts_with("refs/groups/")) groups_.push_back({path, *a, *b, std::string(bytes)});
      else attestations_.push_back({path, *a, *b, std::string(bytes)});
      return;
    }
    if (take("refs/levels/")) {
      std::size_t slash = rest.find('/');
      auto level = parse_level(rest.substr(0, slash));
      auto run = slash == rest.npos ? std::nullopt : Digest::parse_hex(rest.substr(slash + 1));
      if (!level || !run) return problem("layout", path, "expected refs/levels/<" + std::string(level_names()) + ">/<64 hex>");
      levels_.push_back({path, *level, *run, std::string(bytes)});
      return;
    }
    if (path.starts_with("refs/sources/")) {
      sources_.emplace(path, std::string(bytes));
      return;
    }
    problem("layout", path, "path outside the store layout (objects/sha256/…, refs/{metadata,groups,levels,attestations,sources}/…)");
  }

  // A metadata entry is the JCS of a JSON object (called from many threads).
  static void check_metadata(const std::string& path, std::string_view bytes, std::vector<Problem>& out) {
    try {
      Json meta = parse_json(bytes, path);
      if (!meta.is_object()) out.push_back({"metadata-invalid", path, "expected a JSON object"});
      else if (canonical(meta) != bytes) out.push_back({"metadata-invalid", path, "expected RFC 8785 bytes, found another form"});
    } catch (const Error& e) {
      out.push_back({"metadata-invalid", path, e.what()});
    }
  }

  // Everything one object implies, on its own (called from many threads).
  static void examine_object(const std::string& path, std::string_view frame, Outcome& out) {
    auto problem = [&](std::string kind, std::string where, std::string detail) {
      out.problems.push_back({std::move(kind), std::move(where), std::move(detail)});
    };
    auto d = parse_object_path(path);
    if (!d) return problem("layout", path, "expected objects/sha256/<2 hex>/<2 hex>/<60 hex>");
    out.digest = d;
    ObjectFacts& facts = out.facts;
    std::string bytes;
    try {
      bytes = decode_object(frame, path);
    } catch (const Error& e) {
      return problem("object-corrupt", path, e.what());
    }
    Digest actual = Digest::of(bytes);
    if (actual != *d)
      return problem("object-hash-mismatch", path, "expected bytes hashing to " + d->str() + ", found " + actual.str());
    Json body;
    try {
      body = parse_json(bytes, path);
    } catch (const Error& e) {
      return problem("object-invalid", path, e.what());
    }
    if (out.deep) {
      try {
        Document::from_json(body, Location{path, ""});
      } catch (const Error& e) {
        return problem("object-invalid", path, e.what());
      }
      if (canonical(body) != bytes) return problem("object-not-canonical", path, "expected RFC 8785 bytes, found another form");
    }
    const Json* kind_json = body.find("kind");
    std::optional<Kind> parsed_kind;
    if (kind_json && kind_json->is_string()) parsed_kind = parse_kind(kind_json->as_string());
    const Json* spec = body.find("spec");
    if (!parsed_kind || !spec || !spec->is_object())
      return problem("object-invalid", path, "expected a document with a known kind and a spec");
    const Kind kind = *parsed_kind;
    facts.kind = kind;
    facts.valid = true;
    if (kind == Kind::kRun) {
      facts.group_path = group_path(comparison_key(*spec), *d);
      facts.group_bytes = group_entry(*spec);
      facts.default_level = default_level(*spec);
      try {
        facts.source_path = source_path(*spec, path);
      } catch (const Error& e) {
        problem("object-invalid", path, e.what());
      }
      for (const char* role : {"protocol", "environment", "workload", "implementation"}) {
        const Json* ref = spec->find(std::string(role) + "Digest");
        if (ref && ref->is_string())
          if (auto rd = Digest::parse(ref->as_string())) facts.references.emplace_back(role, *rd);
      }
    } else if (kind == Kind::kAttestation) {
      const Json* subject = spec->find("subject");
      if (subject && subject->is_string()) facts.subject = Digest::parse(subject->as_string());
      if (spec->find("author") && spec->find("type")) facts.attestation_bytes = attestation_entry(*spec);
    }
  }

  // The entry that keeps a source id from being a path of its own (a
  // shorter id that is a prefix of it, or longer ids below it), or "".
  std::string source_holder(const std::string& path) const {
    for (std::size_t slash = path.find('/', 13); slash != std::string::npos; slash = path.find('/', slash + 1))
      if (auto it = sources_.find(path.substr(0, slash)); it != sources_.end()) return it->first;
    auto below = sources_.lower_bound(path + "/");
    if (below != sources_.end() && below->first.starts_with(path + "/")) return below->first;
    return "";
  }

  const ObjectFacts* object(const Digest& d) const {
    auto it = objects_.find(d);
    return it == objects_.end() ? nullptr : &it->second;
  }

  void check_index() {
    for (const auto& [digest, path] : metadata_)
      if (!object(digest)) problem("dangling-ref", path, "names " + digest.str() + ", which is not in the store");

    std::unordered_map<Digest, int> group_count, level_count;
    std::set<Digest> attested;
    for (const auto& g : groups_) {
      const ObjectFacts* run = object(g.second);
      if (!run) { problem("dangling-ref", g.path, "names run " + g.second.str() + ", which is not in the store"); continue; }
      if (!run->valid) continue;
      if (run->kind != Kind::kRun) { problem("group-mismatch", g.path, "expected a run, found a " + std::string(kind_name(run->kind))); continue; }
      ++group_count[g.second];
      if (g.path != run->group_path)
        problem("group-mismatch", g.path, "the run's comparison key puts it at " + run->group_path);
      else if (g.bytes != run->group_bytes)
        problem("group-mismatch", g.path, "expected the run's primary measurement " + run->group_bytes + ", found " + g.bytes);
    }
    for (const auto& l : levels_) {
      const ObjectFacts* run = object(l.run);
      if (!run) { problem("dangling-ref", l.path, "names run " + l.run.str() + ", which is not in the store"); continue; }
      if (!run->valid) continue;
      if (run->kind != Kind::kRun) { problem("level-mismatch", l.path, "expected a run, found a " + std::string(kind_name(run->kind))); continue; }
      ++level_count[l.run];
      if (l.level == run->default_level) {
        if (l.bytes != level_entry(std::nullopt))
          problem("level-mismatch", l.path, "expected {\"evidence\":null} for a default level, found " + l.bytes);
        continue;
      }
      std::string why = options_.justify_level ? options_.justify_level(l.run, l.path)
                                               : "no signed controlled rerun set this level";
      if (!why.empty())
        problem("level-unjustified", l.path,
                "expected the default level " + std::string(level_name(run->default_level)) + " (" + why + ")");
    }
    for (const auto& a : attestations_) {
      const ObjectFacts* run = object(a.first);
      const ObjectFacts* att = object(a.second);
      if (!run) problem("dangling-ref", a.path, "attests run " + a.first.str() + ", which is not in the store");
      else if (run->valid && run->kind != Kind::kRun)
        problem("attestation-mismatch", a.path, "attests a " + std::string(kind_name(run->kind)) + ", not a run");
      if (!att) { problem("dangling-ref", a.path, "names attestation " + a.second.str() + ", which is not in the store"); continue; }
      if (!att->valid) continue;
      if (att->kind != Kind::kAttestation) { problem("attestation-mismatch", a.path, "expected an Attestation, found a " + std::string(kind_name(att->kind))); continue; }
      attested.insert(a.second);
      if (!att->subject || *att->subject != a.first)
        problem("attestation-mismatch", a.path, "the attestation's subject is " + (att->subject ? att->subject->str() : std::string("missing")));
      else if (a.bytes != att->attestation_bytes)
        problem("attestation-mismatch", a.path, "expected " + att->attestation_bytes + ", found " + a.bytes);
    }
    for (const auto& [digest, facts] : objects_) {
      if (!facts.valid) continue;
      if (facts.kind == Kind::kRun) {
        if (!group_count.count(digest))
          problem("missing-group", facts.group_path, "run " + digest.str() + " is missing from its group");
        else if (group_count[digest] > 1)
          problem("group-mismatch", "refs/groups", "run " + digest.str() + " is in " + std::to_string(group_count[digest]) + " groups");
        if (!level_count.count(digest))
          problem("missing-level", level_path(facts.default_level, digest), "run " + digest.str() + " has no level");
        else if (level_count[digest] > 1)
          problem("level-mismatch", "refs/levels", "run " + digest.str() + " has " + std::to_string(level_count[digest]) + " levels");
        if (facts.source_path) {
          auto it = sources_.find(*facts.source_path);
          if (it == sources_.end()) {
            std::string holder = source_holder(*facts.source_path);
            if (holder.empty())
              problem("missing-source", *facts.source_path, "run " + digest.str() + " is missing from the source index");
            else
              warning("source-claimed", *facts.source_path,
                      "run " + digest.str() + " claims this source id, which is blocked by " + holder);
          }
          else if (it->second != digest.str())
            warning("source-claimed", *facts.source_path,
                    "run " + digest.str() + " claims this source id, which names " + it->second + " (the first claim)");
        }
        for (const auto& [role, ref] : facts.references)
          if (!object(ref))
            warning("external-reference", object_path(digest), "the run's " + role + " " + ref.str() + " is not in the store");
      } else if (facts.kind == Kind::kAttestation && !attested.count(digest)) {
        problem("missing-attestation", object_path(digest), "attestation " + digest.str() + " is not indexed under its subject");
      }
    }
    for (const auto& [path, bytes] : sources_) {
      auto d = Digest::parse(bytes);
      const ObjectFacts* run = d ? object(*d) : nullptr;
      if (!run || !run->valid || run->kind != Kind::kRun)
        problem("source-mismatch", path, "names " + bytes + ", which is not a run in the store");
      else if (run->source_path != path) {
        std::string claimant;
        for (const auto& [digest, facts] : objects_)
          if (facts.valid && facts.source_path == path) claimant = "; run " + digest.str() + " does";
        problem("source-mismatch", path, "the run " + bytes + " does not have this source id" + claimant);
      }
    }
  }

  // No commit reachable from the head may lose or change an object its
  // parent had: objects are immutable, so history is append-only.
  void check_history() {
    if (snap_.empty()) return;
    git_repository* repo = store_.repo();
    git_revwalk* raw = nullptr;
    git::check(git_revwalk_new(&raw, repo), "walking history");
    git::Revwalk walk(raw);
    git_oid head;
    git_oid_fromstr(&head, snap_.commit_id().c_str());
    git::check(git_revwalk_push(walk.get(), &head), "walking history");
    git_odb* raw_odb = nullptr;
    git::check(git_repository_odb(&raw_odb, repo), "opening the object database");
    git::Odb odb(raw_odb);
    git_oid id;
    while (git_revwalk_next(&id, walk.get()) == 0) {
      git_commit* c = nullptr;
      if (git_commit_lookup(&c, repo, &id) < 0) {
        problem("history-missing", git::oid_str(id), "a commit in the history cannot be read: " + git::last_error());
        continue;
      }
      git::Commit commit(c);
      for (unsigned i = 0; i < git_commit_parentcount(c); ++i) {
        git_commit* p = nullptr;
        if (git_commit_parent(&p, c, i) < 0) {
          problem("history-missing", git::oid_str(*git_commit_parent_id(c, i)),
                  "a parent of commit " + git::oid_str(id) + " cannot be read: " + git::last_error());
          continue;
        }
        git::Commit parent(p);
        try {
          git::removed_or_changed(odb.get(), *git_commit_tree_id(p), *git_commit_tree_id(c), "objects/",
                                  [&](const std::string& path, const git_oid&, const git_oid* now) {
                                    problem("history-rewritten", path,
                                            "commit " + git::oid_str(id) + " " + (now ? "changed" : "removed") +
                                                " an object its parent " + git::oid_str(*git_commit_id(p)) + " had");
                                  });
        } catch (const Error& e) {
          problem("history-missing", git::oid_str(id), e.what());
        }
      }
    }
  }
  struct PairEntry {
    std::string path;
    Digest first, second;
    std::string bytes;
  };
  struct LevelEntry {
    std::string path;
    Level level;
    Digest run;
    std::string bytes;
  };

  const Store& store_;
  const VerifyOptions& options_;
  Snapshot snap_;
  VerifyReport report_;
  std::unordered_map<Digest, ObjectFacts> objects_;
  std::map<Digest, std::string> metadata_;
  std::vector<PairEntry> groups_, attestations_;
  std::vector<LevelEntry> levels_;
  std::map<std::string, std::string> sources_;
};

}  // namespace

VerifyReport verify_store(const Store& store, const VerifyOptions& options) {
  git::HashCheck hashes(true);  // every commit and tree of the history is checked against its id
  return Verifier(store, options).run();
}

}  // namespace kistore
