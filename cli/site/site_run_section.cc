// A run's record on its group's page (cli/site/site.h): the last cell of its
// row of the ranking, a <details> that opens on its whole digest and what
// distinguishes the run beyond the row's cells: where it stands in its
// series, how its level was given, the members of its metadata and spec that
// the page does not say otherwise, its reruns, attestations and history.
// What the page says once (the workload, the comparison key, the documents
// and the facts all its runs share, the commits) is not said again per run;
// members that restate others (a run's name and title, the source's copy of
// the measurements and its id, the timing the primary value is read from)
// are left out: the store holds them, `kistore show RUN` prints the whole
// record. No string is shown whole: each is cut with "…"
// (objects/shown_text.h), and a run with a string cut has its whole JSON
// beside the group (runs/<hex>.json), linked from its record.
#include <cstdio>
#include <ctime>
#include <set>

#include "cli/site/site_model.h"
#include "objects/shown_text.h"
#include "refs/compare.h"

namespace kistore::cli::site {
namespace {

constexpr int kDepth = 1;  // groups/<hex>.html

std::string string_at(const Json& obj, std::string_view name) {
  const Json* v = obj.find(name);
  return v && v->is_string() ? cut_text(v->as_string()) : "";
}

// `value` as one line of text, its strings cut (the whole is in the run's
// JSON): a string as itself, an object as `name=value, …` with nested
// objects and arrays in parentheses, an array as its elements joined by "; ".
void flat(const Json& v, std::string& out, bool nested) {
  if (v.is_string()) {
    out += v.as_string();
  } else if (v.is_object()) {
    if (nested) out += '(';
    bool first = true;
    for (const auto& [name, member] : v.as_object()) {
      out += first ? "" : ", ";
      out.append(name).append("=");
      flat(member, out, true);
      first = false;
    }
    if (nested) out += ')';
  } else if (v.is_array()) {
    if (nested) out += '(';
    bool first = true;
    for (const Json& e : v.as_array()) {
      out += first ? "" : "; ";
      flat(e, out, true);
      first = false;
    }
    if (nested) out += ')';
  } else {
    out += canonical(v);
  }
}

std::string flat_text(const Json& v) {
  std::string out;
  flat(cut_json(v), out, false);
  return out;
}

// What a run's row says of it already (its primary value and the spread
// beside it): each measurement there is not said again in its record.
bool shown_in_row(const Measurement& m, const GroupRow& row) {
  const auto& p = row.ranked.member.primary;
  if (!p) return false;
  if (m.metric == p->metric && m.statistic == p->statistic && m.unit == p->unit) return true;
  return m.unit == p->unit && (m.statistic == "p20" || m.statistic == "p80") &&
         primary_spread(row.run.spec(), p->unit).has_value();
}

// "latency p50 990726 ns; …": the measurements the row does not show, as
// values and units, each that is not one (Measurement::from_json) as flat text.
std::string measurements_text(const Json& list, const GroupRow& row) {
  if (!list.is_array()) return flat_text(list);
  std::string out;
  for (const Json& m : list.as_array()) {
    auto p = Measurement::from_json(m);
    if (p && shown_in_row(*p, row)) continue;
    if (!out.empty()) out += "; ";
    if (p)
      out += cut_text(p->metric) + " " + cut_text(p->statistic) + " " + canonical(Json(p->value)) + " " +
             cut_text(p->unit);
    else
      out += flat_text(m);
  }
  return out;
}

// A fact as a line of the record: its name, then its HTML.
std::string fact_line(std::string_view name, const std::string& html) {
  return html.empty() ? "" : "<br>" + esc(name) + ": " + html;
}

std::string fact(std::string_view name, const std::string& html) {
  return html.empty() ? "" : "<dt>" + esc(name) + "</dt><dd>" + html + "</dd>";
}

bool is_document_reference(std::string_view name) {
  return name == "protocolDigest" || name == "environmentDigest" || name == "workloadDigest" ||
         name == "implementationDigest";
}

// Members of a run's metadata and spec that the page does not show, for
// they restate what it says otherwise: the run's name and title (the group's
// title and the implementation), the references to its documents, when it
// was observed (the row's date), the timing its primary value is read from
// (the row's value), how its output was checked (the row's correctness and
// the lines under the table), and the source's own copy of its measurements
// and its id at the source (the benchmark, implementation, GPU, workload and
// time again). `kistore show RUN` prints them.
bool left_out(std::string_view path, bool spec) {
  if (!spec) return path == "name" || path == "title";
  return is_document_reference(path) || path == "observedAt" || path == "timing" || path.rfind("timing.", 0) == 0 ||
         path == "correctness" || path.rfind("correctness.", 0) == 0 || path == "sourceNative.metrics" ||
         path == "sourceNative.externalId";
}

// The members of `obj` as facts, an object member's own members one level
// down ("sourceNative.source"), so that what the runs share can be said once;
// those left_out() are not. A label that says the implementation's revision
// (shown beside the implementation) is not said again.
void add_members(const Json& obj, const std::string& prefix, RecordFacts& out, bool spec, const GroupRow& row,
                 const std::string& revision) {
  for (const auto& [name, value] : obj.as_object()) {
    const std::string path = prefix + cut_text(name);
    if (left_out(path, spec)) continue;
    if (prefix.empty() && value.is_object() && !value.as_object().empty()) {
      add_members(value, path + ".", out, spec, row, revision);
      continue;
    }
    std::string text = spec && path == "measurements" ? measurements_text(value, row) : flat_text(value);
    if (!spec && !revision.empty() && prefix == "labels." && text == revision) continue;
    if (!text.empty()) out.emplace_back(path, std::move(text));
  }
}

// The controlled reruns of the run (the row says each one's verdict and
// ratio): each rerun's digest.
std::string reruns_html(const GroupRow& row) {
  std::string out;
  for (const RerunInfo& r : row.reruns) {
    if (!out.empty()) out += ' ';
    out += digest_html(r.rerun);
  }
  return out;
}

std::string attestations_html(const RunFacts& f) {
  if (f.attestations.empty()) return "";
  std::string out = "<ul class=\"attestations\">";
  for (const Document& a : f.attestations) {
    const Json& spec = a.spec();
    const Json* body = spec.find("body");
    out += "<li class=\"attestation\"><strong>" + esc(string_at(spec, "type")) + "</strong> by " +
           esc(string_at(spec, "author")) + " " + digest_html(a.digest()) + "<div class=\"note\">" +
           esc(body ? (body->is_string() ? cut_text(body->as_string()) : flat_text(*body)) : "") + "</div></li>";
  }
  return out + "</ul>";
}

// A change of the run's story as its record says it: this run's digest as
// "this run", another's (an attestation, a rerun: shown whole beside) as 12 hex.
std::string change_text(const PathChange& c, const Digest& run) {
  std::string text = story_change_text(c);
  const std::string whole = run.str();
  if (auto at = text.find(whole); at != std::string::npos) return text.replace(at, whole.size(), "this run");
  if (auto at = text.find("sha256:"); at != std::string::npos && text.size() >= at + 71)
    text.replace(at, 71, text.substr(at + 7, 12));
  return text;
}

// The run's events, newest first, each naming its commit (listed once in
// the page's "Commits") and what it changed for the run.
std::string history_html(const SiteData& data, const GroupRow& row, const RunFacts& f) {
  if (!f.story) return "";
  std::string out;
  for (const StoryEvent& ev : *f.story) {
    const LogEntry& e = data.stories.entries[ev.entry];
    if (!out.empty()) out += "; ";
    out += esc(e.op.empty() ? "(no op)" : cut_text(e.op)) + " <a href=\"#commit-" + e.id.substr(0, 12) + "\">" +
           e.id.substr(0, 12) + "</a>";
    std::string changes;
    for (const PathChange& c : ev.changes) changes += (changes.empty() ? "" : ", ") + change_text(c, row.run.digest());
    if (!changes.empty()) out += ": " + esc(changes);
  }
  return out;
}

// Why the run has its level, when a rerun gave it: the rerun and the commit.
std::string justification_html(const SiteData& data, const GroupRow& row, const RunFacts& f) {
  if (row.standing.level != Level::kReproduced && row.standing.level != Level::kDisputed) return "";
  std::string why;
  if (f.level_evidence) why = "justified by the rerun " + digest_html(*f.level_evidence);
  if (f.story) {
    const std::string entered = "entered level " + std::string(level_name(row.standing.level));
    for (const StoryEvent& ev : *f.story) {
      bool gives = false;
      for (const PathChange& c : ev.changes) gives = gives || story_change_text(c) == entered;
      if (!gives) continue;
      const LogEntry& e = data.stories.entries[ev.entry];
      why += std::string(why.empty() ? "given" : ",") + " in commit <a href=\"#commit-" + e.id.substr(0, 12) +
             "\">" + e.id.substr(0, 12) + "</a>, signed: " + esc(data.signatures[ev.entry].text());
      break;
    }
  }
  return why;
}

}  // namespace

const std::optional<Document>& role_document(const RunFacts& f, Role role) {
  switch (role) {
    case Role::kProtocol: return f.protocol;
    case Role::kEnvironment: return f.environment;
    case Role::kWorkload: return f.workload;
    default: return f.implementation;
  }
}

std::optional<Digest> shared_document(const SiteGroup& g, Role role) {
  std::optional<Digest> shared;
  for (std::size_t r = 0; r < g.facts.size(); ++r) {
    const std::optional<Document>& doc = role_document(g.facts[r], role);
    if (!doc || (shared && *shared != doc->digest())) return std::nullopt;
    shared = doc->digest();
  }
  return shared;
}

std::string revision_of(const RunFacts& f) {
  if (!f.implementation) return "";
  const Json* rev = f.implementation->spec().find("revision");
  return rev && rev->is_string() ? cut_text(rev->as_string()) : "";
}

bool run_json_written(const GroupRow& row) { return json_needs_cut(row.run.with_metadata()); }

std::string run_anchor(const Digest& run) { return "run-" + run.hex().substr(0, 12); }

RecordFacts section_facts(const SiteData& data, std::size_t gi, std::size_t ri) {
  const SiteGroup& g = data.groups[gi];
  const GroupRow& row = g.view.rows[ri];
  const RunFacts& f = g.facts[ri];
  const std::string revision = revision_of(f);
  RecordFacts text, out;
  if (const std::optional<Json>& meta = row.run.metadata(); meta && meta->is_object())
    add_members(*meta, "", text, false, row, revision);
  if (row.run.spec().is_object()) add_members(row.run.spec(), "", text, true, row, revision);
  auto add = [&out](std::string name, std::string html) {
    if (!html.empty()) out.emplace_back(std::move(name), std::move(html));
  };
  add("level", justification_html(data, row, f));
  add("series", series_position_html(g, ri));
  // The source's benchmark is the group's title already.
  for (auto& [name, value] : text)
    if (name != "sourceNative.benchmark" || value != g.label.benchmark) add(std::move(name), esc(value));
  // The documents the group's runs do not share, but the implementation's,
  // whose revision the row says (`kistore show RUN` names them all).
  std::string docs;
  for (Role role : {Role::kProtocol, Role::kEnvironment, Role::kWorkload}) {
    if (shared_document(g, role)) continue;
    const char* name = role_name(role);
    const std::optional<Document>& doc = role_document(f, role);
    std::optional<Digest> ref = run_reference(row.run, name);
    if (!doc && !ref) continue;
    docs += (docs.empty() ? "" : " · ") + std::string(name) + " ";
    if (doc)
      docs += "<a href=\"" + document_href(doc->digest(), kDepth) + "\">" + doc->digest().hex().substr(0, 12) + "</a>";
    else
      docs += "<code>" + ref->hex().substr(0, 12) + "</code> (not in the store)";
  }
  if (!f.implementation)
    if (std::optional<Digest> ref = run_reference(row.run, "implementation"))
      docs += (docs.empty() ? "" : " · ") + std::string("implementation <code>") + ref->hex().substr(0, 12) +
              "</code> (not in the store)";
  add("documents", docs);
  add("reruns", reruns_html(row));
  add("attestations", attestations_html(f));
  add("history", history_html(data, row, f));
  return out;
}

RecordFacts shared_facts(const SiteData& data, std::size_t gi) {
  const SiteGroup& g = data.groups[gi];
  if (g.view.rows.size() < 2) return {};
  RecordFacts first = section_facts(data, gi, 0);
  std::set<std::pair<std::string, std::string>> shared(first.begin(), first.end());
  for (std::size_t r = 1; r < g.view.rows.size() && !shared.empty(); ++r) {
    std::set<std::pair<std::string, std::string>> here;
    for (auto& f : section_facts(data, gi, r))
      if (shared.count(f)) here.insert(std::move(f));
    shared.swap(here);
  }
  RecordFacts out;
  for (auto& f : first)
    if (shared.count(f)) out.push_back(std::move(f));
  return out;
}

std::string facts_html(const RecordFacts& facts) {
  std::string out;
  for (const auto& [name, html] : facts) out += fact(name, html);
  return out;
}

std::string run_record(const SiteData& data, std::size_t gi, std::size_t ri, const RecordFacts& shared) {
  const GroupRow& row = data.groups[gi].view.rows[ri];
  const Digest& run = row.run.digest();
  std::string out = "<details><summary>" + run.hex().substr(0, 12) + "</summary>" + run.str();
  if (run_json_written(row))
    out += fact_line("whole JSON", "<a href=\"" + run_json_href(run, kDepth) + "\">" + run.hex().substr(0, 12) +
                                       ".json</a> (a string here is shown cut with \"…\")");
  const std::set<std::pair<std::string, std::string>> said(shared.begin(), shared.end());
  for (const auto& f : section_facts(data, gi, ri))
    if (!said.count(f)) out += fact_line(f.first, f.second);
  return out + "</details>";
}

std::string run_json(const SiteData& data, std::size_t g, std::size_t r) {
  return canonical(data.groups[g].view.rows[r].run.with_metadata());
}

std::string document_json(const Document& doc) { return canonical(doc.with_metadata()); }

void collect_documents(SiteData& data) {
  for (const SiteGroup& g : data.groups)
    for (const RunFacts& f : g.facts)
      for (Role role : {Role::kProtocol, Role::kEnvironment, Role::kWorkload, Role::kImplementation})
        if (const std::optional<Document>& doc = role_document(f, role)) data.documents.emplace(doc->digest(), &*doc);
}

const char* role_name(Role role) {
  static constexpr const char* kNames[] = {"protocol", "environment", "workload", "implementation"};
  return kNames[static_cast<int>(role)];
}

}  // namespace kistore::cli::site
