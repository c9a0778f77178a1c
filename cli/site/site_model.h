// What the site's pages are made from (cli/site/site.h): the store's evidence as
// the queries give it, gathered once, then rendered into pages by pure
// functions (cli/site/site_pages.cc) that may run on several threads at once.
//
// For cli/site*.cc only. Thread-safety: built on one thread; read-only
// afterwards, so rendering may read it from any thread.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/output/describe.h"
#include "store/history/audit.h"
#include "store/query/group_view.h"
#include "store/query/run_story.h"
#include "store/query/series_view.h"

namespace kistore::cli::site {

// What a run page shows beyond its row of the group.
struct RunFacts {
  std::optional<Document> protocol, environment, workload, implementation;  // with metadata, where stored
  std::vector<Document> attestations;
  std::optional<Digest> level_evidence;  // the rerun the run's level entry names
  const std::vector<StoryEvent>* story = nullptr;  // newest first; null: none recorded
};

// A series of a group (docs/statistics.md, "Series"), as `kistore series`
// draws it (store/query/series_view.h), with its change points at the
// default threshold and alpha. The site keeps the series of 2 or more points.
struct SiteSeries {
  std::string label;                   // SeriesIdentity::label(): "Liger-Kernel/liger_tiled"
  std::vector<SeriesPoint> points;     // in order; SeriesPoint::row indexes view.rows
  std::vector<SeriesChange> changes;
};

struct SiteGroup {
  GroupView view;                 // with each run's metadata
  GroupLabel label;
  std::string benchmark_id;       // the SiteBenchmark it belongs to
  std::string workload_summary;   // "T=1024 bsz=2 …": the workload's parameters, short
  std::vector<RunFacts> facts;    // one per view.rows entry, same order
  RankScale scale;                // the group's scale (refs/rank.h): the series' values are on it
  std::vector<SiteSeries> series; // by SeriesIdentity::key, each of 2 or more points
};


// A benchmark definition: the workload's definition ("SwiGLU MLP"), or the
// source's benchmark name where the workload is not stored.
struct SiteBenchmark {
  std::string name;
  std::string id;                    // file name: a slug of the name and 8 hex of its sha256
  std::vector<std::size_t> groups;   // indexes into SiteData::groups
};

// The roles of the documents a run names, in RunFacts' order.
enum class Role { kProtocol, kEnvironment, kWorkload, kImplementation };
const char* role_name(Role role);  // "protocol", …
const std::optional<Document>& role_document(const RunFacts& f, Role role);
// The document every run of `g` names in `role`, when they all name the same
// stored one: the group page names it once, and no run section again.
std::optional<Digest> shared_document(const SiteGroup& g, Role role);

struct SiteData {
  std::vector<SiteGroup> groups;  // by key
  std::vector<SiteBenchmark> benchmarks;  // by name
  RunStories stories;
  std::vector<SignatureStatus> signatures;  // one per stories.entries entry
  std::string base_url;
  std::map<Digest, std::pair<std::size_t, std::size_t>> run_at;  // run -> (group, row)
  // Every document a run names, once: each is written as documents/<hex>.json.
  std::map<Digest, const Document*> documents;
};

// Fills data.documents with every document the runs name.
void collect_documents(SiteData& data);
// Fills each group's scale and series (SiteGroup::series), ties ordered by
// data.stories, on every core. Never fails.
void add_series(SiteData& data);

// The pages, each a complete file. `g` is an index into data.groups and `r`
// into its rows. A run has no page of its own: its record is its row of the
// ranking on its group's page (id run_anchor: "run-" and 12 hex), whose last
// cell (run_record) opens on its whole digest and the facts of section_facts
// that the group does not share. A run's facts, each a name and its HTML, in
// order: how its level was given, where it stands in its series, each
// member of its metadata and spec the page does not say otherwise (an
// object's members one level down, "sourceNative.source"; each value one
// line, its strings cut with "…"; left out: members that restate others,
// site_run_section.cc), the documents it names that are not the group's (but
// its implementation's, whose revision the row says), its reruns,
// attestations and history.
using RecordFacts = std::vector<std::pair<std::string, std::string>>;
RecordFacts section_facts(const SiteData& data, std::size_t g, std::size_t r);
// The facts every run of the group states alike (none for a group of one), in
// the first run's order: the page says them once, above the ranking, and no
// record again.
RecordFacts shared_facts(const SiteData& data, std::size_t g);
std::string facts_html(const RecordFacts& facts);  // <dt>/<dd> pairs
std::string run_record(const SiteData& data, std::size_t g, std::size_t r, const RecordFacts& shared);
// The revision of the run's implementation (its document's spec.revision,
// cut as every shown string), or "".
std::string revision_of(const RunFacts& f);
std::string run_anchor(const Digest& run);
// Whether the run's section shows a string cut: then its whole JSON is
// written beside the group, as runs/<hex>.json (run_json), and linked.
bool run_json_written(const GroupRow& row);
// The run with its metadata, canonical (RFC 8785): the "run" member of
// `show RUN --canonical`; the documents it names are documents/<hex>.json.
std::string run_json(const SiteData& data, std::size_t g, std::size_t r);
// A document with its metadata, canonical: what `show DIGEST --canonical`
// prints. Written once per document, however many runs name it.
std::string document_json(const Document& doc);
std::string group_page(const SiteData& data, std::size_t g);
std::string benchmark_page(const SiteData& data, std::size_t b);
std::string index_page(const SiteData& data);
std::string about_page();  // about.html: how to read the pages, what the levels mean, how to cite a run
extern const char* const kStyleSheet;  // style.css
extern const char* const kScript;      // site.js

// The keys of the pages (cli/site/site_keys.cc): a digest of everything the
// page is rendered from, as hex. Equal keys: equal pages, so a rebuild
// skips rendering a page whose key the manifest recorded. group_key is the
// digest of a group and all its rows; the pages made of groups take theirs
// in, one per data.groups entry (`group_keys`), and `what` names the file
// ("group.html", "index.html"). Never fail.
std::string run_json_key(const SiteData& data, std::size_t g, std::size_t r);
std::string group_key(const SiteData& data, std::size_t g);
std::string derived_key(std::string_view what, const std::string& group_key);
std::string benchmark_key(const SiteData& data, std::size_t b, const std::vector<std::string>& group_keys,
                          std::string_view what);
std::string index_key(const SiteData& data, const std::vector<std::string>& group_keys, std::string_view what);

}  // namespace kistore::cli::site

namespace kistore::cli::site {

// Pieces every page uses (cli/site/site_html.cc).
// `depth` is how many folders below the site's root the page is (0: index).
std::string page_start(const std::string& title, int depth);
std::string page_end(int depth);
// A digest shown short (12 hex digits) with the full value one click away:
// a <details>, which HTML allows where a <div> goes, never inside a <p>.
std::string digest_html(const Digest& d);
// html_text, for brevity.
std::string esc(std::string_view text);
// A level as the class of its bar in the ranking: "sn", "ok", "ds", "rp".
const char* level_code(Level level);
// The primary value as the terminal shows it ("2.606 ms"), or "-".
std::string value_text(const std::optional<Measurement>& primary);
// The page names, relative to a page `depth` folders down.
// A run's address: its section of its group's page.
std::string run_href(const SiteData& data, const Digest& run, int depth);
std::string run_json_href(const Digest& run, int depth);  // runs/<hex>.json
std::string group_href(const Digest& key, int depth);
std::string benchmark_href(const std::string& id, int depth);
std::string document_href(const Digest& doc, int depth);  // documents/<hex>.json
// The group's series over time (an inline SVG, no script): a line per
// series, its spread as a band, its change points and controlled reruns
// marked, a legend and the change points in words; empty when no series of
// the group has 2 points.
std::string series_chart(const SiteGroup& group);
// Where the run of row `r` stands in its series: "point 4 of 7; after a
// change point: …" (the series' label too where two series of the group have
// an implementation of the row's name), as HTML; empty when its series has
// fewer than 2 points.
std::string series_position_html(const SiteGroup& group, std::size_t r);
// `text` cut at `max_chars` with "…", as HTML; when cut, inside a <span> whose
// title holds it as the site shows any string (cut_text: 200 characters), so
// that the whole is a hover away.
std::string cut_html(std::string_view text, std::size_t max_chars);
// The chart of a group, a bar per row of its ranking table (an inline SVG;
// empty for a member that does not rank): the primary value on the group's
// scale, its p20-p80 spread as a whisker, its reruns as marks; its level as
// the bar's class where `level_classes` (else the table's class says the
// level all its runs share). The table beside it says the values: the bars
// say nothing again.
std::vector<std::string> member_bars(const SiteGroup& group, bool level_classes);
// The label of a group in words: "tiled_geglu/backward · backward pass · RTX 4090".
std::string group_title(const SiteGroup& group);

}  // namespace kistore::cli::site
