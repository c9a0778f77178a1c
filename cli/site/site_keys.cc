// The keys of the site's pages (cli/site/site_model.h): a digest of everything a
// page is rendered from, so that a rebuild can skip a page whose inputs the
// manifest already recorded. A key costs a few hundred bytes of text and one
// sha256, against the tens of kilobytes a run page renders.
//
// Conservative by construction: each key takes in every field of the model
// that its page's renderer reads (and some it may not), and kPageFormat,
// which changes whenever a renderer does.
//
// Thread-safety: pure functions of the read-only model; any thread.
#include <cstdio>

#include "cli/site/site_model.h"

namespace kistore::cli::site {
namespace {

// Bump whenever what a page shows or how changes (any edit to
// cli/site/site_pages.cc, cli/site/site_run_section.cc or cli/site/site_html.cc that changes
// bytes): every key changes with it, so a rebuild renders every page again.
constexpr const char* kPageFormat = "kistore-site-pages/9";

// Fields, each length-prefixed, so that no two sequences of fields give the
// same text.
class KeyText {
 public:
  KeyText& add(std::string_view s) {
    text_ += std::to_string(s.size());
    text_ += ':';
    text_ += s;
    return *this;
  }
  KeyText& add(long long n) { return add(std::to_string(n)); }
  KeyText& add(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return add(std::string_view(buf));
  }
  KeyText& add(const std::string& s) { return add(std::string_view(s)); }
  KeyText& add(const char* s) { return add(std::string_view(s)); }
  KeyText& add(const Digest& d) { return add(d.str()); }
  KeyText& add(const std::optional<Document>& doc) {
    if (!doc) return add("-");
    return add(doc->digest()).add(doc->metadata_canonical());
  }
  // 128 bits of the sha256, as hex: a key only tells a page's inputs from
  // another build's (the manifest holds one a page), it authenticates nothing.
  std::string key() const { return Digest::of(text_).hex().substr(0, 32); }

 private:
  std::string text_;
};

void add_row(KeyText& k, const GroupRow& row) {
  const RankedMember& r = row.ranked;
  k.add(row.run.digest()).add(row.run.metadata_canonical()).add(static_cast<long long>(r.rank)).add(r.unrankable);
  k.add(r.member.run).add(static_cast<long long>(r.member.level));
  if (r.member.primary) {
    const Measurement& p = *r.member.primary;
    k.add(p.metric).add(p.statistic).add(p.unit).add(p.value);
  } else {
    k.add("-");
  }
  k.add(row.implementation);
  const LevelStanding& s = row.standing;
  k.add(static_cast<long long>(s.level)).add(static_cast<long long>(s.checked)).add(static_cast<long long>(s.justified));
  k.add(static_cast<long long>(s.stored));
  k.add(s.why).add(static_cast<long long>(row.reruns.size()));
  for (const RerunInfo& rr : row.reruns)
    k.add(rr.rerun).add(static_cast<long long>(rr.verdict)).add(rr.ratio).add(static_cast<long long>(rr.readable));
}

// What every page of a group reads of the group itself and of all its rows.
void add_group(KeyText& k, const SiteGroup& g) {
  k.add(g.view.key).add(static_cast<long long>(g.view.ranked)).add(static_cast<long long>(g.view.rows.size()));
  k.add(g.label.benchmark).add(g.label.definition).add(canonical(g.label.parameters)).add(g.label.gpu).add(g.label.pass);
  k.add(g.benchmark_id).add(g.workload_summary);
  // The series drawn and told (cli/site/site_series.cc): their points' order
  // (ties follow the history) and change points.
  k.add(static_cast<long long>(g.series.size()));
  for (const SiteSeries& s : g.series) {
    k.add(s.label).add(static_cast<long long>(s.points.size()));
    for (const SeriesPoint& p : s.points) k.add(static_cast<long long>(p.row)).add(p.value);
    for (const SeriesChange& c : s.changes)
      k.add(static_cast<long long>(c.step.index)).add(c.step.before).add(c.step.after)
          .add(static_cast<long long>(c.verdict.verdict)).add(c.verdict.method);
  }
}

void add_story(KeyText& k, const SiteData& data, const RunFacts& f) {
  if (!f.story) {
    k.add("-");
    return;
  }
  k.add(static_cast<long long>(f.story->size()));
  for (const StoryEvent& ev : *f.story) {
    const LogEntry& e = data.stories.entries[ev.entry];
    k.add(e.id).add(static_cast<long long>(e.time)).add(e.author).add(e.op).add(e.summary);
    k.add(data.signatures[ev.entry].text()).add(static_cast<long long>(ev.changes.size()));
    for (const PathChange& c : ev.changes) k.add(std::string_view(&c.status, 1)).add(c.path);
  }
}

}  // namespace

std::string run_json_key(const SiteData& data, std::size_t gi, std::size_t ri) {
  const GroupRow& row = data.groups[gi].view.rows[ri];
  KeyText k;
  k.add(kPageFormat).add("run.json").add(row.run.digest()).add(row.run.metadata_canonical());
  return k.key();
}

std::string group_key(const SiteData& data, std::size_t gi) {
  const SiteGroup& g = data.groups[gi];
  KeyText k;
  k.add(kPageFormat).add("group").add(data.base_url);
  add_group(k, g);
  // The page holds every run's section: its row, documents, attestations,
  // level evidence and story.
  for (std::size_t r = 0; r < g.view.rows.size(); ++r) {
    const RunFacts& f = g.facts[r];
    add_row(k, g.view.rows[r]);
    k.add(f.protocol).add(f.environment).add(f.workload).add(f.implementation);
    k.add(static_cast<long long>(f.attestations.size()));
    for (const Document& a : f.attestations) k.add(a.digest()).add(a.metadata_canonical());
    k.add(f.level_evidence ? f.level_evidence->str() : "-");
    add_story(k, data, f);
  }
  return k.key();
}

std::string derived_key(std::string_view what, const std::string& group_key) {
  return KeyText().add(kPageFormat).add(what).add(group_key).key();
}

std::string benchmark_key(const SiteData& data, std::size_t bi, const std::vector<std::string>& group_keys,
                          std::string_view what) {
  const SiteBenchmark& b = data.benchmarks[bi];
  KeyText k;
  k.add(kPageFormat).add(what).add(b.name).add(b.id).add(static_cast<long long>(b.groups.size()));
  for (std::size_t gi : b.groups) k.add(group_keys[gi]);
  return k.key();
}

std::string index_key(const SiteData& data, const std::vector<std::string>& group_keys, std::string_view what) {
  KeyText k;
  k.add(kPageFormat).add(what).add(static_cast<long long>(data.benchmarks.size()));
  for (const SiteBenchmark& b : data.benchmarks) k.add(b.name).add(b.id).add(static_cast<long long>(b.groups.size()));
  k.add(static_cast<long long>(group_keys.size()));
  for (const std::string& key : group_keys) k.add(key);
  return k.key();
}

}  // namespace kistore::cli::site
