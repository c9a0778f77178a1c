// The page of one run (cli/site/site.h), section by section.
#include <cstdio>
#include <ctime>

#include "cli/site/site_model.h"
#include "objects/parallel.h"
#include "objects/shown_text.h"
#include "refs/compare.h"

namespace kistore::cli::site {
namespace {

constexpr int kDepth = 1;  // runs/<hex>.html

// A page shows every string of the store cut (objects/shown_text.h): a
// document's whole bytes are in its JSON, written once (documents/, runs/).
std::string string_at(const Json& obj, std::string_view name) {
  const Json* v = obj.find(name);
  return v && v->is_string() ? cut_text(v->as_string()) : "";
}

// The budget of one document's or value's pretty text on a page, in characters.
constexpr std::size_t kShownDocumentChars = 16384;

// `value` pretty-printed as a page shows it: its strings cut, its size bounded.
std::string shown_pretty(const Json& value) { return pretty(cut_json(value, kShownChars, kShownDocumentChars)); }

std::string meta_string(const std::optional<Document>& doc, std::string_view name) {
  return doc && doc->metadata() ? string_at(*doc->metadata(), name) : "";
}

std::string scalar_text(const Json& v) { return v.is_string() ? cut_text(v.as_string()) : canonical(cut_json(v)); }

std::string fact(const std::string& name, const std::string& html) {
  return html.empty() ? "" : "<dt>" + name + "</dt><dd>" + html + "</dd>\n";
}

std::string date_time(std::int64_t t) {
  std::time_t shifted = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&shifted, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string level_badge(const LevelStanding& standing) {
  std::string name(level_name(standing.level));
  std::string out = "<span class=\"level " + name + "\">" + name + "</span>";
  if (!standing.justified) out += " <span class=\"unverified\">" + esc(stored_text(standing)) + "</span>";
  return out;
}

std::string heading(const SiteGroup& g, const GroupRow& row) {
  std::string title = meta_string(row.run, "title");
  if (title.empty()) title = row.implementation + " · " + g.label.benchmark;
  const auto& p = row.ranked.member.primary;
  std::string out = "<h1>" + esc(title) + "</h1>\n<p class=\"muted\">" + esc(group_title(g)) + "</p>\n";
  out += "<p class=\"primary\">" + esc(value_text(p));
  if (p)
    if (std::string s = spread_text(row.run, p->unit); !s.empty())
      out += " <span class=\"spread-text\">p20 – p80 " + esc(s) + "</span>";
  out += "</p>\n<p class=\"rankline\" id=\"rank\">";
  if (row.ranked.rank)
    out += "<strong>Rank " + std::to_string(row.ranked.rank) + "</strong> of " + std::to_string(g.view.ranked) +
           " in its <a href=\"" + group_href(g.view.key, kDepth) + "\">comparison group</a>";
  else
    out += "<strong>Unranked</strong> in its <a href=\"" + group_href(g.view.key, kDepth) +
           "\">comparison group</a>: " + esc(row.ranked.unrankable);
  out += " · " + level_badge(row.standing) + "</p>\n<p>";
  const GroupRow& first = g.view.rows.front();
  if (first.ranked.rank == 1 && first.run.digest() != row.run.digest())
    out += "<a id=\"compare-first\" href=\"#compare\">Compare with #1</a> · ";
  out += "<a href=\"" + benchmark_href(g.benchmark_id, kDepth) + "\">All results for " +
         esc(g.label.definition.empty() ? g.label.benchmark : g.label.definition) +
         "</a> · <a href=\"" + row.run.digest().hex() + ".json\">JSON</a></p>\n";
  return out;
}

std::string identity(const SiteGroup& g, const GroupRow& row, const RunFacts& f) {
  const Json& spec = row.run.spec();
  std::string out = "<h2>Identity</h2>\n<dl class=\"facts\">\n";
  out += fact("Implementation", esc(row.implementation));
  if (f.implementation) {
    out += fact("Project", esc(string_at(f.implementation->spec(), "project")));
    out += fact("Revision", esc(string_at(f.implementation->spec(), "revision")));
  }
  std::string workload = f.workload ? string_at(f.workload->spec(), "definition") : "";
  if (std::string t = meta_string(f.workload, "title"); !t.empty()) workload += workload.empty() ? t : " (" + t + ")";
  out += fact("Workload", esc(workload));
  out += fact("Comparison key", "<a href=\"" + group_href(g.view.key, kDepth) + "\">" + g.view.key.hex().substr(0, 12) +
                                    "</a> " + digest_html(g.view.key));
  if (const Json* native = spec.find("sourceNative"); native && native->is_object()) {
    out += fact("Source", esc(string_at(*native, "source")));
    out += fact("Source benchmark", esc(string_at(*native, "benchmark")));
    out += fact("External id", "<code>" + esc(string_at(*native, "externalId")) + "</code>");
  }
  out += fact("Status", esc(string_at(spec, "status")));
  out += fact("Observed", esc(string_at(spec, "observedAt")));
  out += fact("Digest", digest_html(row.run.digest()));
  return out + "</dl>\n";
}

std::string workload_section(const std::optional<Document>& workload) {
  std::string out = "<h2>Workload parameters</h2>\n";
  if (!workload) return out + "<p class=\"muted\">The store does not hold this run's workload document.</p>\n";
  const Json* whole = workload->spec().find("parameters");
  const Json shown = whole && whole->is_object() ? cut_json(*whole) : Json();
  const Json* params = whole ? &shown : nullptr;
  if (params && params->is_object() && !params->as_object().empty()) {
    out += "<table><thead><tr><th>parameter</th><th>value</th></tr></thead><tbody>\n";
    for (const auto& [name, value] : params->as_object())
      out += "<tr><td>" + esc(name) + "</td><td><code>" + esc(scalar_text(value)) + "</code></td></tr>\n";
    out += "</tbody></table>\n";
  }
  if (const Json* tensors = workload->spec().find("tensors"))
    out += "<h3>Tensors</h3>\n<pre>" + esc(shown_pretty(*tensors)) + "</pre>\n";
  return out;
}

std::string measurements_section(const GroupRow& row) {
  std::string out = "<h2>Measurements</h2>\n";
  const auto& p = row.ranked.member.primary;
  if (p)
    out += "<p>Primary: " + esc(p->metric) + " " + esc(p->statistic) + " = <strong>" + esc(value_text(p)) +
           "</strong></p>\n";
  out += "<table><thead><tr><th>metric</th><th>statistic</th><th class=\"num\">value</th><th>unit</th>"
         "<th class=\"num\">as shown</th></tr></thead><tbody>\n";
  if (const Json* list = row.run.spec().find("measurements"); list && list->is_array())
    for (const Json& m : list->as_array())
      if (auto parsed = Measurement::from_json(m))
        out += "<tr><td>" + esc(cut_text(parsed->metric)) + "</td><td>" + esc(cut_text(parsed->statistic)) +
               "</td><td class=\"num\">" + esc(canonical(Json(parsed->value))) + "</td><td>" +
               esc(cut_text(parsed->unit)) + "</td><td class=\"num\">" +
               esc(human_value(parsed->value, parsed->unit)) + "</td></tr>\n";
  out += "</tbody></table>\n";
  if (const Json* timing = row.run.spec().find("timing"))
    out += "<h3>Timing</h3>\n<pre>" + esc(shown_pretty(*timing)) + "</pre>\n";
  return out;
}

std::string document_section(const char* title, const char* role, const std::optional<Document>& doc) {
  std::string out = std::string("<h2>") + title + "</h2>\n";
  if (!doc) return out + "<p class=\"muted\">The store does not hold this run's " + role + " document.</p>\n";
  if (std::string t = meta_string(doc, "title"); !t.empty()) out += "<p>" + esc(t) + "</p>\n";
  out += "<div class=\"muted para\">" + std::string(role) + " " + digest_html(doc->digest()) + "</div>\n";
  out += "<pre>" + esc(shown_pretty(doc->spec())) + "</pre>\n";
  if (json_needs_cut(doc->spec(), kShownChars, kShownDocumentChars))
    out += "<p class=\"muted\">Shown cut (\"…\"); the whole document: <a href=\"" + document_href(doc->digest(), kDepth) +
           "\">" + doc->digest().hex().substr(0, 12) + ".json</a>.</p>\n";
  return out;
}

std::string level_section(const SiteData& data, const GroupRow& row, const RunFacts& f) {
  std::string out = "<h2>Evidence level</h2>\n<p id=\"level\">" + level_badge(row.standing) + "</p>\n<p>";
  switch (row.standing.level) {
    case Level::kSourceNative: out += "The source's own published measurement, marked passed by the source."; break;
    case Level::kReported: out += "A claim without a source's own record (or not marked passed)."; break;
    case Level::kReproduced: out += "A controlled rerun, signed by a controller, reproduced the primary measurement."; break;
    case Level::kDisputed: out += "A controlled rerun, signed by a controller, failed to reproduce it."; break;
  }
  out += "</p>\n";
  std::string why;
  if (f.level_evidence) why = "Justified by the rerun " + digest_html(*f.level_evidence);
  // The commit that gave the level: the newest of the run's story that entered it.
  if (f.story && (row.standing.level == Level::kReproduced || row.standing.level == Level::kDisputed)) {
    const std::string entered = "entered level " + std::string(level_name(row.standing.level));
    for (const StoryEvent& ev : *f.story) {
      bool gives = false;
      for (const PathChange& c : ev.changes) gives = gives || story_change_text(c) == entered;
      if (!gives) continue;
      const LogEntry& e = data.stories.entries[ev.entry];
      why += std::string(why.empty() ? "Given" : ",") + " in commit <code>" + e.id.substr(0, 12) + "</code> (" +
             esc(date_time(e.time)) + "), signed: " + esc(data.signatures[ev.entry].text());
      break;
    }
  }
  if (!why.empty()) out += "<div class=\"para\" id=\"justification\">" + why + ".</div>\n";
  return out;
}

std::string replications(const GroupRow& row, const RunFacts& f) {
  std::string out = "<h2 id=\"replications\">Replications and notes</h2>\n";
  out += "<h3>Controlled reruns</h3>\n";
  if (row.reruns.empty()) out += "<p class=\"muted\">None.</p>\n";
  else {
    out += "<table><thead><tr><th>verdict</th><th class=\"num\">ratio to this run</th><th>rerun</th></tr></thead><tbody>\n";
    for (const RerunInfo& r : row.reruns) {
      char ratio[32] = "-";
      if (r.readable) std::snprintf(ratio, sizeof ratio, "x%.3f", r.ratio);
      out += "<tr class=\"rerun\"><td>" + std::string(r.readable ? level_name(r.verdict) : "unreadable entry") +
             "</td><td class=\"num\">" + ratio + "</td><td>" + digest_html(r.rerun) + "</td></tr>\n";
    }
    out += "</tbody></table>\n";
  }
  out += "<h3>Attestations</h3>\n<p class=\"muted\">Attestations are community notes and reproductions; they never "
         "change the evidence level.</p>\n";
  if (f.attestations.empty()) return out + "<p class=\"muted\">None.</p>\n";
  out += "<ul class=\"attestations\">\n";
  for (const Document& a : f.attestations) {
    const Json& spec = a.spec();
    const Json* body = spec.find("body");
    out += "<li class=\"attestation\"><strong>" + esc(string_at(spec, "type")) + "</strong> by " +
           esc(string_at(spec, "author")) + " " + digest_html(a.digest()) + "<div class=\"note\">" +
           esc(body ? scalar_text(*body) : "") + "</div></li>\n";  // cut: the attestation's JSON holds it whole
  }
  return out + "</ul>\n";
}

std::string compare_section(const SiteGroup& g, const GroupRow& row) {
  const GroupRow& first = g.view.rows.front();
  if (first.ranked.rank != 1 || first.run.digest() == row.run.digest()) return "";
  RunComparison c = compare_runs(first.run.spec(), row.run.spec());
  std::string out = "<h2 id=\"compare\">Compared with #1</h2>\n<table><thead><tr><th></th><th>#1: <a href=\"" +
                    first.run.digest().hex() + ".html\">" + esc(first.implementation) + "</a></th><th>this run: " +
                    esc(row.implementation) + "</th></tr></thead><tbody>\n";
  out += "<tr><td>primary</td><td>" + esc(value_text(c.primary_a)) + "</td><td>" + esc(value_text(c.primary_b)) +
         "</td></tr>\n";
  auto spread = [](const std::optional<Spread>& s, const std::optional<Measurement>& p) {
    return s && p ? human_value(s->low, p->unit) + " - " + human_value(s->high, p->unit) : std::string("-");
  };
  out += "<tr><td>p20 – p80</td><td>" + esc(spread(c.spread_a, c.primary_a)) + "</td><td>" +
         esc(spread(c.spread_b, c.primary_b)) + "</td></tr>\n";
  out += "<tr><td>level</td><td>" + level_badge(first.standing) + "</td><td>" + level_badge(row.standing) +
         "</td></tr>\n</tbody></table>\n<p>";
  char ratio[48] = "";
  if (c.ratio) std::snprintf(ratio, sizeof ratio, "%.3f", *c.ratio);
  out += c.ratio ? "This run's primary value is <strong>" + std::string(ratio) + "×</strong> #1's"
                 : "No ratio: " + esc(c.no_ratio);
  if (c.spreads_overlap) out += *c.spreads_overlap ? "; their spreads overlap" : "; their spreads do not overlap";
  return out + ".</p>\n";
}

std::string cite_section(const SiteData& data, const GroupRow& row) {
  const std::string hex = row.run.digest().hex();
  std::string link = data.base_url.empty() ? hex + ".html" : data.base_url + "runs/" + hex + ".html";
  return "<h2 id=\"cite\">Cite this record</h2>\n<div class=\"cite\">" + esc(row.implementation) +
         ". Benchmark run " + row.run.digest().str() + ". kistore evidence record, <a href=\"" + esc(link) + "\">" +
         esc(link) + "</a>. Digest <code>" + row.run.digest().str() +
         "</code>. Accessed <span data-accessed>(the date you read this)</span>.</div>\n";
}

std::string history_section(const SiteData& data, const RunFacts& f) {
  std::string out = "<h2 id=\"history\">History</h2>\n<p class=\"muted\">As <code>kistore log --run</code> "
                    "tells it, newest first.</p>\n";
  if (!f.story) return out + "<p class=\"muted\">No commit names this run.</p>\n";
  out += "<ol class=\"timeline\">\n";
  for (const StoryEvent& ev : *f.story) {
    const LogEntry& e = data.stories.entries[ev.entry];
    out += "<li class=\"event\" data-commit=\"" + e.id + "\"><strong>" + esc(e.op.empty() ? "(no op)" : cut_text(e.op)) +
           "</strong> " + esc(date_time(e.time)) + " · commit <code>" + e.id.substr(0, 12) + "</code> · " +
           esc(cut_text(e.author)) + " · " + esc(cut_text(data.signatures[ev.entry].text())) + "<br>" +
           esc(cut_text(e.summary)) + "<ul>";
    for (const PathChange& c : ev.changes) out += "<li>" + esc(story_change_text(c)) + "</li>";
    out += "</ul></li>\n";
  }
  return out + "</ol>\n";
}

}  // namespace
}  // namespace kistore::cli::site

namespace kistore::cli::site {
namespace {

constexpr const char* kRoleNames[] = {"protocol", "environment", "workload", "implementation"};

// `text`, pretty-printed JSON, as it reads indented by two spaces more (as a
// member of an object): pretty() writes no newline inside a string.
std::string indented(const std::string& text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

// `  "name": <pretty value>` as HTML, and `"name":<canonical value>`: one
// member of the bundle, as pretty() and canonical() write an object's.
std::string bundle_member_html(const char* name, const Json& value) {
  std::string member = "  ";
  write_json_string(name, member);
  return esc(member + ": " + indented(shown_pretty(value)));
}

DocumentTexts texts_of(Role role, const Document& doc) {
  DocumentTexts t;
  switch (role) {
    case Role::kProtocol: t.section = document_section("Protocol", "protocol", doc); break;
    case Role::kEnvironment: t.section = document_section("Environment", "environment", doc); break;
    case Role::kWorkload: t.section = workload_section(doc); break;
    case Role::kImplementation: break;
  }
  const char* name = kRoleNames[static_cast<int>(role)];
  t.bundle_member = bundle_member_html(name, doc.with_metadata());
  return t;
}

// The texts of the document `doc` plays `role` in: made once (make_document_texts),
// or here for a document that was not.
const DocumentTexts& texts(const SiteData& data, Role role, const Document& doc, DocumentTexts& scratch) {
  auto it = data.document_texts.find({role, doc.digest()});
  if (it != data.document_texts.end()) return it->second;
  return scratch = texts_of(role, doc);
}

// The documents of a run's bundle with their roles, in the order of their
// names (canonical and pretty JSON sort members): environment,
// implementation, protocol, (run,) workload.
std::vector<std::pair<Role, const Document*>> bundle_documents(const RunFacts& f) {
  std::vector<std::pair<Role, const Document*>> out;
  for (auto [role, doc] : {std::pair{Role::kEnvironment, &f.environment}, {Role::kImplementation, &f.implementation},
                           {Role::kProtocol, &f.protocol}, {Role::kWorkload, &f.workload}})
    if (*doc) out.emplace_back(role, &**doc);
  return out;
}

// The run's bundle as `show --canonical` prints it (describe.h's
// stored_bundle), pretty-printed as HTML with its strings cut (shown_pretty).
std::string bundle_html(const SiteData& data, const GroupRow& row, const RunFacts& f) {
  const std::string run_member = bundle_member_html("run", row.run.with_metadata());
  std::string out = "{\n";
  const char* comma = ",\n";
  bool first = true;
  DocumentTexts scratch;
  for (auto [role, doc] : bundle_documents(f)) {
    if (role == Role::kWorkload) out += (first ? "" : comma) + run_member, first = false;
    out += (first ? "" : comma) + texts(data, role, *doc, scratch).bundle_member;
    first = false;
  }
  if (!f.workload) out += (first ? "" : comma) + run_member;
  return out + "\n}";
}

// The links to the whole JSON of the run and of each document it names.
std::string bundle_links(const GroupRow& row, const RunFacts& f) {
  std::string out = "<ul class=\"documents\">\n<li>run: <a href=\"" + row.run.digest().hex() + ".json\">" +
                    row.run.digest().hex() + ".json</a></li>\n";
  for (auto [role, doc] : bundle_documents(f))
    out += "<li>" + std::string(kRoleNames[static_cast<int>(role)]) + ": <a href=\"" +
           document_href(doc->digest(), kDepth) + "\">" + doc->digest().hex() + ".json</a></li>\n";
  return out + "</ul>\n";
}

std::string document_part(const SiteData& data, Role role, const std::optional<Document>& doc) {
  if (!doc) {
    switch (role) {
      case Role::kProtocol: return document_section("Protocol", "protocol", std::nullopt);
      case Role::kEnvironment: return document_section("Environment", "environment", std::nullopt);
      default: return workload_section(std::nullopt);
    }
  }
  DocumentTexts scratch;
  return texts(data, role, *doc, scratch).section;
}

}  // namespace

void make_document_texts(SiteData& data) {
  std::vector<std::pair<std::pair<Role, Digest>, const Document*>> wanted;
  for (const SiteGroup& g : data.groups)
    for (const RunFacts& f : g.facts)
      for (auto [role, doc] : bundle_documents(f)) {
        if (data.document_texts.try_emplace({role, doc->digest()}).second)
          wanted.emplace_back(std::pair{role, doc->digest()}, doc);
        data.documents.emplace(doc->digest(), doc);
      }
  // Each thread fills entries of its own: the map itself does not change.
  parallel_for(wanted.size(), [&](std::size_t i) {
    data.document_texts.at(wanted[i].first) = texts_of(wanted[i].first.first, *wanted[i].second);
  });
}

std::string run_json(const SiteData& data, std::size_t g, std::size_t r) {
  return canonical(data.groups[g].view.rows[r].run.with_metadata());
}

std::string document_json(const Document& doc) { return canonical(doc.with_metadata()); }

std::string run_page(const SiteData& data, std::size_t gi, std::size_t ri) {
  const SiteGroup& g = data.groups[gi];
  const GroupRow& row = g.view.rows[ri];
  const RunFacts& f = g.facts[ri];
  std::string title = meta_string(row.run, "title");
  std::string out = page_start((title.empty() ? row.implementation : title) + " · kistore", kDepth);
  out.reserve(32768);
  out += heading(g, row);
  out += identity(g, row, f);
  out += document_part(data, Role::kWorkload, f.workload);
  out += measurements_section(row);
  out += document_part(data, Role::kProtocol, f.protocol);
  out += document_part(data, Role::kEnvironment, f.environment);
  out += level_section(data, row, f);
  out += replications(row, f);
  out += compare_section(g, row);
  out += "<h2 id=\"manifest\">Canonical manifest</h2>\n<p class=\"muted\">The bundle as <code>kistore show "
         "--canonical</code> prints it, each string over " + std::to_string(kShownChars) +
         " characters cut (\"…\"). Each document whole, as <code>kistore show DIGEST --canonical</code> prints "
         "it:</p>\n" + bundle_links(row, f) + "<pre>" + bundle_html(data, row, f) + "</pre>\n";
  out += cite_section(data, row);
  out += history_section(data, f);
  return out + page_end(kDepth);
}

}  // namespace kistore::cli::site
