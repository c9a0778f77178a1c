#include "cli/site/site.h"

#include <cstdlib>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>

#include "cli/site/site_model.h"
#include "objects/error.h"
#include "objects/json_large.h"
#include "objects/parallel.h"
#include "objects/phase_timer.h"
#include "objects/shown_text.h"
#include "refs/layout.h"
#include "store/edge/beneath.h"
#include "store/edge/interrupt.h"
#include "store/history/level_audit.h"
#include "store/query/query.h"

namespace kistore::cli {
namespace {

namespace fs = std::filesystem;
using site::RunFacts;
using site::SiteData;
using site::SiteGroup;

constexpr const char* kManifest = "site-manifest.json";
constexpr std::size_t kMaxManifestBytes = std::size_t{1} << 30;  // 1 GiB: a site of millions of runs
// The largest file a rebuild reads back to see that it is still what it
// wrote before removing it; a larger one is left, with a warning.
constexpr std::size_t kMaxPageBytes = std::size_t{1} << 30;

// Documents several runs share (a protocol of a thousand runs), read once.
class DocumentCache {
 public:
  explicit DocumentCache(const Snapshot& snap) : snap_(snap) {}
  std::optional<Document> get(const std::optional<Digest>& d) {
    if (!d) return std::nullopt;
    auto it = docs_.find(*d);
    if (it == docs_.end()) {
      std::optional<Document> doc;
      if (snap_.has_object(*d)) doc = snap_.document(*d);
      it = docs_.emplace(*d, std::move(doc)).first;
    }
    return it->second;
  }

 private:
  const Snapshot& snap_;
  std::map<Digest, std::optional<Document>> docs_;
};

// "tiled-geglu-mlp-1a2b3c4d": a file name for a benchmark's name, whatever it holds.
std::string benchmark_id(const std::string& name) {
  std::string slug;
  for (char c : name) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a'), alnum = true;
    if (alnum) slug += c;
    else if (!slug.empty() && slug.back() != '-') slug += '-';
    if (slug.size() >= 48) break;
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return (slug.empty() ? "benchmark" : slug) + "-" + Digest::of(name).hex().substr(0, 8);
}

// Every parameter, each name and value cut at 24 characters with "…"; after
// kSummaryParameters of them, " …" (the group's page shows them all).
std::string workload_summary(const std::optional<Document>& workload) {
  constexpr std::size_t kSummaryParameters = 16;
  if (!workload) return "";
  const Json* params = workload->spec().find("parameters");
  if (!params || !params->is_object()) return "";
  std::string out;
  std::size_t shown = 0;
  for (const auto& [name, value] : params->as_object()) {
    if (shown++ == kSummaryParameters) return out + " " + std::string(kCutMark);
    std::string v = value.is_string() ? cut_text(value.as_string(), 24) : cut_text(canonical(cut_json(value)), 24);
    if (!out.empty()) out += ' ';
    out.append(cut_text(name, 24)).append("=").append(v);
  }
  return out;
}

// What a run page shows of `row` beyond the group's view; its story is set
// by the caller (the history is read beside the groups).
RunFacts run_facts(const Snapshot& snap, DocumentCache& docs, const GroupRow& row) {
  RunFacts f;
  const Document& run = row.run;
  f.protocol = docs.get(run_reference(run, "protocol"));
  f.environment = docs.get(run_reference(run, "environment"));
  f.workload = docs.get(run_reference(run, "workload"));
  f.implementation = docs.get(run_reference(run, "implementation"));
  for (const Digest& a : attestations_of(snap, run.digest()))
    if (snap.has_object(a)) f.attestations.push_back(snap.document(a));
  // The evidence of the level shown: the stored entry's, when the trust list
  // justifies it.
  Level level = row.standing.level;
  if (row.standing.justified && (level == Level::kReproduced || level == Level::kDisputed))
    if (auto entry = recorded_entry(snap, run.digest()); entry && entry->level == level) f.level_evidence = entry->evidence;
  return f;
}

// The groups `keys` as the site shows them (those with runs), read through
// `snap`, a snapshot of `store`; benchmark_id is left to the caller.
std::vector<SiteGroup> gather_groups(const Store& store, const Snapshot& snap, const std::vector<AllowedSigner>& trust,
                                     const Digest* keys, std::size_t count) {
  AuditOnDemand audit(store, trust);
  DocumentCache docs(snap);
  std::vector<SiteGroup> out;
  for (const Digest* key = keys; key != keys + count; ++key) {
    SiteGroup g{group_view(snap, audit, *key, std::nullopt, true), {}, "", "", {}};
    if (g.view.rows.empty()) continue;
    for (const GroupRow& row : g.view.rows) g.facts.push_back(run_facts(snap, docs, row));
    const RunFacts& front = g.facts.front();  // the documents group_label(snap, run) would read again
    g.label = group_label(g.view.rows.front().run, front.workload, front.environment, front.protocol);
    g.workload_summary = workload_summary(front.workload);
    out.push_back(std::move(g));
  }
  return out;
}

// Reading the groups is most of a build's reading (every run, its
// documents, levels, reruns, attestations): it is split into parts, each
// read through a Store of its own (a Store belongs to one thread) at the
// same commit, beside the history, on every core. Stores of fewer groups
// than this are read on one thread.
constexpr std::size_t kGroupsPerPart = 256;

SiteData gather(const Store& store, const std::vector<AllowedSigner>& trust, const SiteOptions& options,
                PhaseTimer& timer) {
  SiteData data;
  data.base_url = options.base_url;
  Snapshot snap = store.snapshot();
  const std::vector<Digest> keys = snap.empty() ? std::vector<Digest>() : group_keys(snap);
  const unsigned cores = worker_threads();
  std::size_t parts = std::clamp<std::size_t>(keys.size() / kGroupsPerPart, 1, 4 * cores);
  // With more than one part, each reads through a Store of its own and
  // `store` reads the history; with one, `store` reads everything on this thread.
  std::vector<Store> stores;
  std::vector<Snapshot> snaps;
  stores.reserve(parts), snaps.reserve(parts);  // a Snapshot's Store stays where it is
  for (std::size_t p = 0; parts > 1 && p < parts; ++p) {
    stores.push_back(Store::open(store.dir(), Store::Use::kReading));
    snaps.push_back(stores.back().snapshot());
    if (snaps.back().commit_id() != snap.commit_id()) {  // a writer moved the branch: read `snap` only
      stores.clear(), snaps.clear();
      parts = 1;
    }
  }
  std::vector<std::vector<SiteGroup>> gathered(parts);
  // Item 0 is the history; item 1 + p is part p.
  parallel_for(parts + 1, [&](std::size_t item) {
    if (item == 0) {
      if (!snap.empty()) data.stories = read_run_stories(store);
      return;
    }
    const std::size_t p = item - 1, begin = keys.size() * p / parts, end = keys.size() * (p + 1) / parts;
    gathered[p] = snaps.empty() ? gather_groups(store, snap, trust, keys.data() + begin, end - begin)
                                : gather_groups(stores[p], snaps[p], trust, keys.data() + begin, end - begin);
  }, parts == 1 ? 1 : 0);
  for (const LogEntry& e : data.stories.entries) data.signatures.push_back(judge_signature(e, trust));
  timer.lap("history and groups");
  std::map<std::string, std::size_t> benchmark_at;
  for (std::vector<SiteGroup>& part : gathered)
    for (SiteGroup& g : part) {
      const std::string& name = !g.label.definition.empty() ? g.label.definition : g.label.benchmark;
      auto [it, fresh] = benchmark_at.emplace(name, 0);
      if (fresh) {
        it->second = data.benchmarks.size();
        data.benchmarks.push_back({name, benchmark_id(name), {}});
      }
      g.benchmark_id = data.benchmarks[it->second].id;
      data.benchmarks[it->second].groups.push_back(data.groups.size());
      for (std::size_t r = 0; r < g.view.rows.size(); ++r) {
        const Digest& run = g.view.rows[r].run.digest();
        if (auto story = data.stories.by_run.find(run); story != data.stories.by_run.end())
          g.facts[r].story = &story->second;
        data.run_at.emplace(run, std::make_pair(data.groups.size(), r));
      }
      data.groups.push_back(std::move(g));
    }
  std::sort(data.benchmarks.begin(), data.benchmarks.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  // A benchmark's groups by GPU, then timed pass, then workload: the order
  // of the index and of the benchmark's page.
  for (site::SiteBenchmark& b : data.benchmarks)
    std::sort(b.groups.begin(), b.groups.end(), [&data](std::size_t x, std::size_t y) {
      const SiteGroup &a = data.groups[x], &c = data.groups[y];
      return std::tie(a.label.gpu, a.label.pass, a.workload_summary, a.view.key) <
             std::tie(c.label.gpu, c.label.pass, c.workload_summary, c.view.key);
    });
  site::collect_documents(data);
  timer.lap("merged");
  site::add_series(data);
  timer.lap("series");
  return data;
}

struct PageJob {
  std::string path;  // relative to the site's folder
  std::function<std::string()> render;
  // The page's inputs as a digest (site_keys.cc); none: rendered on every build.
  std::function<std::string()> key = nullptr;
};

// `group_keys`: site::group_key of each group.
std::vector<PageJob> page_jobs(const SiteData& data, const std::vector<std::string>& group_keys) {
  const auto& gk = group_keys;
  std::vector<PageJob> jobs;
  jobs.push_back({"style.css", [] { return std::string(site::kStyleSheet); }});
  jobs.push_back({"site.js", [] { return std::string(site::kScript); }});
  jobs.push_back({"about.html", [] { return site::about_page(); }});
  jobs.push_back({"index.html", [&] { return site::index_page(data); },
                  [&] { return site::index_key(data, gk, "index.html"); }});
  for (std::size_t b = 0; b < data.benchmarks.size(); ++b) {
    const std::string base = "benchmarks/" + data.benchmarks[b].id;
    jobs.push_back({base + ".html", [&data, b] { return site::benchmark_page(data, b); },
                    [&data, &gk, b] { return site::benchmark_key(data, b, gk, "benchmark.html"); }});
  }
  // A document's JSON is its canonical form, cheaper to make again than a
  // key: it has none (the manifest says only its hash).
  for (const auto& [digest, doc] : data.documents)
    jobs.push_back({"documents/" + digest.hex() + ".json", [doc = doc] { return site::document_json(*doc); }});
  for (std::size_t g = 0; g < data.groups.size(); ++g) {
    const std::string base = "groups/" + data.groups[g].view.key.hex();
    jobs.push_back({base + ".html", [&data, g] { return site::group_page(data, g); },
                    [&gk, g] { return site::derived_key("group.html", gk[g]); }});
    for (std::size_t r = 0; r < data.groups[g].view.rows.size(); ++r) {
      const GroupRow& row = data.groups[g].view.rows[r];
      if (!site::run_json_written(row)) continue;
      jobs.push_back({"runs/" + row.run.digest().hex() + ".json", [&data, g, r] { return site::run_json(data, g, r); },
                      [&data, g, r] { return site::run_json_key(data, g, r); }});
    }
  }
  return jobs;
}

// What the manifest records of a file's bytes: the first 32 hex digits (128
// bits) of their sha256. It tells whether a file is still what a build wrote
// (someone's edit, a page to write again); whoever can write the folder can
// write the manifest too, so more bits would authenticate nothing more.
constexpr std::size_t kHashHex = 32;
std::string file_hash(std::string_view bytes) { return Digest::of(bytes).hex().substr(0, kHashHex); }
// Whether `bytes` are what `recorded` (kHashHex or more hex digits of their
// sha256: an older build recorded all 64) says.
bool matches(const std::string& recorded, std::string_view bytes) {
  const std::string hex = Digest::of(bytes).hex();
  return recorded.size() >= kHashHex && recorded.size() <= hex.size() && hex.compare(0, recorded.size(), recorded) == 0;
}

// The manifest of an earlier build: path -> sha256 hex of the bytes written,
// and path -> the key of the page's inputs (site_keys.cc) where it had one.
struct Manifest {
  bool found = false;  // false: no site was built in the folder yet
  std::string text;    // the manifest's bytes
  std::map<std::string, std::string> files, keys;
};

// The manifest of the folder `out` (nullopt: the folder does not exist yet).
Manifest read_manifest(const std::optional<BeneathDir>& out) {
  Manifest result;
  if (!out) return result;
  const std::string file = out->path() + "/" + kManifest;
  switch (out->entry(kManifest)) {
    case BeneathDir::Entry::kMissing: {
      std::error_code ec;
      if (fs::directory_iterator(out->path(), ec) != fs::directory_iterator())
        throw InvalidInput(out->path() + ": the folder is not empty and holds no " + kManifest +
                           " (no site was built there); name an empty or new folder");
      return result;
    }
    case BeneathDir::Entry::kFile: break;
    default:
      throw InvalidInput(file + ": expected the manifest of a site (a file), found a symbolic link or something else; "
                         "a site's folder holds no links of its own");
  }
  // A site's manifest names every file it wrote (a store of 100,000 runs:
  // 227,000 files, 33 MB): over parse_json's 16 MiB, bounded by its own limit.
  std::optional<std::string> text;
  try {
    text = out->read(kManifest, kMaxManifestBytes);
  } catch (const Error& e) {
    throw InvalidInput(e.what());
  }
  if (!text) throw InvalidInput(file + ": expected the manifest of a site (a file), found something else");
  result.found = true;
  result.text = std::move(*text);
  Json manifest = parse_json_up_to(result.text, file, kMaxManifestBytes);
  const Json* files = manifest.find("files");
  if (!files || !files->is_object()) throw InvalidInput(file + ": expected {\"files\":{…}}");
  // Each file's entry: the sha256 of its bytes, then, for a page with a key,
  // a space and the key ("<hash> <key>"). An older build's manifest held the
  // keys apart ("keys": {path: key}); one without keys makes every page render.
  for (const auto& [path, entry] : files->as_object()) {
    if (!entry.is_string()) continue;
    const std::string& text = entry.as_string();
    const std::size_t space = text.find(' ');
    result.files[path] = text.substr(0, space);
    if (space != std::string::npos) result.keys[path] = text.substr(space + 1);
  }
  if (const Json* keys = manifest.find("keys"); keys && keys->is_object())
    for (const auto& [path, key] : keys->as_object())
      if (key.is_string()) result.keys[path] = key.as_string();
  return result;
}

// The hash of the page an earlier build wrote at `path` when its key is
// `key` and the file is still there; empty when the page must be rendered.
std::string unchanged_hash(const Manifest& before, const BeneathDir& out, const std::string& path,
                           const std::string& key) {
  auto k = before.keys.find(path);
  if (k == before.keys.end() || k->second != key) return "";
  auto f = before.files.find(path);
  if (f == before.files.end() || f->second.empty() || out.entry(path) != BeneathDir::Entry::kFile) return "";
  return f->second;
}

// The pages' files, hashes and keys (empty: none) as the manifest records them.
struct ManifestEntry {
  std::string path, hash, key;
};

// The manifest of `entries` (sorted by path, each path once): canonical
// JSON (RFC 8785) of {"files": {path: "<hash>" or "<hash> <key>"},
// "generator"} (file_hash: 32 hex; a key: 32 hex): a line of about 150
// bytes a page, 120 a document. Written
// here, not through a Json value: a big site's is tens of megabytes. The
// site's paths are ASCII (hex digests, slugs, fixed names), whose byte order
// is canonical JSON's UTF-16 order; a path that is not falls back to canonical().
std::string manifest_text(const std::vector<ManifestEntry>& entries) {
  auto value = [](const ManifestEntry& e) { return e.key.empty() ? e.hash : e.hash + " " + e.key; };
  bool ascii = true;
  for (const ManifestEntry& e : entries)
    for (char c : e.path) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (!ascii) {
    Json::Object files;
    for (const ManifestEntry& e : entries) files.emplace_back(e.path, Json(value(e)));
    Json manifest = Json::object();
    manifest.set("generator", "kistore site");
    manifest.set("files", Json(std::move(files)));
    return canonical(manifest) + "\n";
  }
  std::string out = "{\"files\":{";
  out.reserve(entries.size() * 180);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i) out += ',';
    write_json_string(entries[i].path, out);
    out += ':';
    write_json_string(value(entries[i]), out);
  }
  return out + "},\"generator\":\"kistore site\"}\n";
}

// A page of this build: what the manifest records of it, and its bytes
// when they must be written (new or changed, or its file gone).
struct RenderedPage {
  ManifestEntry entry;
  std::optional<std::string> bytes;
};

// `job`'s page, rendered unless its key and file say that the page written
// before stands (then its recorded hash stands too).
RenderedPage render_page(const PageJob& job, const Manifest& before, const BeneathDir& out) {
  RenderedPage rendered;
  ManifestEntry& e = rendered.entry;
  e.path = job.path;
  e.key = job.key ? job.key() : "";
  e.hash = e.key.empty() ? "" : unchanged_hash(before, out, job.path, e.key);
  if (!e.hash.empty()) return rendered;
  std::string page = job.render();
  e.hash = file_hash(page);
  auto old = before.files.find(job.path);
  // A link at the page's place (planted there) is replaced, never kept.
  if (old == before.files.end() || !matches(old->second, page) || out.entry(job.path) != BeneathDir::Entry::kFile)
    rendered.bytes = std::move(page);
  return rendered;
}

// Removes the file an earlier build wrote at `path` (named by its manifest,
// with the sha256 `hash` of what it wrote) and this one does not, when it is
// still what was written. Anything else is left where it is, with a warning
// in `report`: a path that is not beneath the folder (absolute, "..", an
// empty or "." component), a link (at the path or on the way to it), a
// folder, and a file changed since (someone's edit); a manifest is data,
// never a list of files to remove wherever it says.
void remove_old_file(const BeneathDir& out, const std::string& path, const std::string& hash, SiteReport& report) {
  const std::string where = out.path() + "/" + kManifest + ": names " + quoted_excerpt(path, 200) + ", ";
  if (std::string why = check_relative_path(path); !why.empty()) {
    report.warnings.push_back(where + "a path that " + why + "; expected a path beneath the folder; left alone");
    return;
  }
  switch (out.entry(path)) {
    case BeneathDir::Entry::kMissing: return;
    case BeneathDir::Entry::kLink:
      report.warnings.push_back(where + "which is a symbolic link, not a file the site wrote; left alone");
      return;
    case BeneathDir::Entry::kOther:
      report.warnings.push_back(where + "which is not a regular file beneath the folder (a link or a folder on "
                                        "the way to it, or a folder); left alone");
      return;
    case BeneathDir::Entry::kFile: break;
  }
  std::optional<std::string> bytes;
  try {
    bytes = out.read(path, kMaxPageBytes);
  } catch (const Error& e) {
    report.warnings.push_back(where + "which cannot be read back (" + e.what() + "); left alone");
    return;
  }
  if (!bytes) return;
  if (!matches(hash, *bytes)) {
    report.warnings.push_back(where + "a file changed since the site wrote it (expected sha256 " +
                              hash.substr(0, 64) + ", found " + Digest::of(*bytes).hex() + "); left alone");
    return;
  }
  if (out.remove_file(path)) ++report.removed;
}

}  // namespace

SiteReport build_site(const Store& store, const std::vector<AllowedSigner>& trust, const SiteOptions& options,
                      const std::function<void(std::size_t, std::size_t)>& progress) {
  PhaseTimer timer(std::getenv("KISTORE_SITE_TIMING") != nullptr, "site");
  // Every file is written, read and removed beneath the folder, never
  // through a link (store/edge/beneath.h); the folder is made once there is a site to write.
  std::optional<BeneathDir> opened;
  {
    std::error_code ec;
    if (fs::symlink_status(options.out_dir, ec).type() != fs::file_type::not_found)
      opened.emplace(BeneathDir::open(options.out_dir, false));
  }
  const Manifest before = read_manifest(opened);
  timer.lap("manifest read");
  SiteData data = gather(store, trust, options, timer);
  std::vector<std::string> group_keys(data.groups.size());
  parallel_for(group_keys.size(), [&](std::size_t g) { group_keys[g] = site::group_key(data, g); });
  std::vector<PageJob> jobs = page_jobs(data, group_keys);
  // Interrupted (store/edge/interrupt.h), a first build leaves no half site:
  // a folder it made goes whole, in a folder it found empty what it made
  // goes. A rebuild is said to have rewritten part of the site.
  TemporaryPaths first_build;
  const bool made_here = !opened;
  if (!opened) opened.emplace(BeneathDir::open(options.out_dir, true));
  const BeneathDir& out = *opened;
  if (made_here) first_build.add(options.out_dir);
  else if (before.found) note_written("part of the site in " + options.out_dir + " (build it again to finish it)");
  for (const char* sub : {"runs", "groups", "benchmarks", "documents"}) {
    if (!made_here && !before.found) first_build.add((fs::path(options.out_dir) / sub).string());
    out.make_dirs(sub);
  }
  SiteReport report{jobs.size() + 1, 0, 0, 0, data.groups.size(), data.benchmarks.size(), {}};
  for (const auto& g : data.groups) report.runs += g.view.rows.size();
  std::vector<ManifestEntry> entries;
  entries.reserve(jobs.size());
  // Rendering is pure (the data is read-only now): every core renders a
  // block of pages while one thread writes the block before it. One writer:
  // files made at once in one folder (runs/ holds nearly all) wait for each
  // other in the kernel, and two threads creating them there spend twice the
  // system time of one, for no gain.
  constexpr std::size_t kBlock = 2048;
  std::vector<RenderedPage> rendering, writing;
  for (std::size_t first = 0; first < jobs.size() || !writing.empty(); first += kBlock) {
    const std::size_t n = first < jobs.size() ? std::min(kBlock, jobs.size() - first) : 0;
    rendering.resize(n);
    parallel_for(n + 1, [&](std::size_t item) {
      if (item > 0) {
        rendering[item - 1] = render_page(jobs[first + item - 1], before, out);
        return;
      }
      for (RenderedPage& page : writing) {
        if (!page.bytes) continue;
        // A first build creates its files in place: the folder holds no site
        // yet (the manifest, written last, makes it one), so no reader can
        // see a page change under it.
        const std::string& path = page.entry.path;
        if (!made_here && !before.found && path.find('/') == std::string::npos)
          first_build.add((fs::path(options.out_dir) / path).string());
        if (before.found || !out.create(path, *page.bytes)) out.replace(path, *page.bytes);
      }
    });
    for (RenderedPage& page : writing) {
      report.written += page.bytes ? 1 : 0;
      entries.push_back(std::move(page.entry));
    }
    if (progress && !writing.empty()) progress(entries.size(), jobs.size());
    writing.swap(rendering);
  }
  std::sort(entries.begin(), entries.end(),
            [](const ManifestEntry& a, const ManifestEntry& b) { return a.path < b.path; });
  auto in_site = [&entries](const std::string& path) {
    auto it = std::lower_bound(entries.begin(), entries.end(), path,
                               [](const ManifestEntry& e, const std::string& p) { return e.path < p; });
    return it != entries.end() && it->path == path;
  };
  for (const auto& [path, hash] : before.files)
    if (!in_site(path)) remove_old_file(out, path, hash, report);
  timer.lap("pages");
  const std::string text = manifest_text(entries);
  if (before.text != text) {
    out.replace(kManifest, text);
    ++report.written;
  }
  timer.lap("manifest written");
  return report;
}

}  // namespace kistore::cli
