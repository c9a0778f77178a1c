#include "store/write/upgrade.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <variant>

#include "objects/error.h"
#include "refs/index.h"
#include "refs/index_facts.h"
#include "refs/layout.h"
#include "store/history/level_audit.h"
#include "store/history/trust.h"

namespace kistore {

ValidReruns valid_reruns(const Store& store, const Snapshot& head) {
  ValidReruns out;
  LevelAudit audit(store, load_trust(store));
  for (const LevelAudit::RerunCommitAudit* a : audit.rerun_commits(head.commit()))
    if (a->valid) out.emplace(std::pair{a->valid->first, a->valid->second.evidence}, level_of(a->valid->second.verdict));
  return out;
}

Format3Index format3_index(const Snapshot& head, const ValidReruns& reruns) {
  Format3Index out;
  const Format f = head.format();
  std::set<Digest> rerun_digests;
  if (f == Format::k1)
    for (const auto& [pair, verdict] : reruns) rerun_digests.insert(pair.second);
  std::map<Family, std::map<std::string, std::string>> lines;  // by key
  std::vector<Digest> runs;
  auto put = [&](const IndexFact& fact) {
    auto [it, fresh] = lines[family_of(fact)].emplace(fact_key(fact), render_line(fact));
    if (!fresh) throw Corruption("refs/: two entries stand for the key " + it->first);
  };
  head.walk("refs", [&](const std::string& path, std::string_view bytes) {
    ++out.entries;
    std::optional<IndexFact> fact = entry_fact(f, path, bytes);
    if (!fact) return;
    if (const auto* g = std::get_if<GroupFact>(&*fact)) {
      if (rerun_digests.count(g->run)) return;  // format 1: a rerun among the competitors
      runs.push_back(g->run);
    }
    put(*fact);
  });
  if (f == Format::k1) {
    for (const auto& [pair, verdict] : reruns) {
      const auto& [run, rerun] = pair;
      auto ratio = rerun_ratio(head.document(run, false).spec(), head.document(rerun, false).spec());
      if (!ratio) continue;  // no controlled rerun after all; verify says why
      put(RerunFact{run, rerun, verdict, *ratio});
      ++out.reruns;
    }
  }
  // Upstream ids no entry claims: the first run in digest order claims each.
  std::sort(runs.begin(), runs.end());
  auto& sources = lines[Family::kSources];
  for (const Digest& run : runs) {
    const Document doc = head.document(run, false);
    for (const IndexFact& fact : document_facts(doc, object_path(run)))
      if (std::holds_alternative<SourceFact>(fact) && sources.emplace(fact_key(fact), render_line(fact)).second)
        ++out.claims_added;
  }
  for (auto& [family, by_key] : lines) {
    if (by_key.empty()) continue;
    std::vector<KeyedLine>& v = out.lines[family];
    for (auto& [key, line] : by_key) v.push_back(KeyedLine{key, std::move(line)});
  }
  return out;
}

ChangeSet format3_change(const Format3Index& index, Format from, std::size_t* files_out) {
  ChangeSet change;
  change.removals.push_back("refs");  // the old index goes whole; the files below make a new refs/
  std::size_t files = 0;
  for (const auto& [family, lines] : index.lines)
    for (auto& [path, bytes] : build_trie(lines)) {
      change.upserts.emplace("refs/" + std::string(family_name(family)) + "/" + path, std::move(bytes));
      ++files;
    }
  change.upserts.emplace(std::string(kFormatPath), std::string(kFormat3Bytes));
  change.op = "upgrade";
  change.summary = "upgrade: " + format_name(from) + " to format 3";
  change.body = "Rewrote " + std::to_string(index.entries) + " index entries as " + std::to_string(files) +
                " index file" + (files == 1 ? "" : "s") + " of JSON Lines";
  if (index.reruns)
    change.body += "; moved " + std::to_string(index.reruns) + " controlled rerun" + (index.reruns == 1 ? "" : "s") +
                   " to refs/reruns/";
  if (index.claims_added)
    change.body += "; claimed " + std::to_string(index.claims_added) + " upstream id" +
                   (index.claims_added == 1 ? "" : "s") + " that no path could hold";
  change.body += ". No object changed.";
  if (files_out) *files_out = files;
  return change;
}

UpgradeResult upgrade_store(Store& store, CommitOptions options) {
  UpgradeResult result;
  options.upgrade = true;
  result.commit = store.commit(
      [&](const Snapshot& head) -> std::optional<ChangeSet> {
        result = UpgradeResult{};
        result.from = head.format();
        if (head.empty() || result.from == Format::k3) return std::nullopt;
        Format3Index index = format3_index(head, result.from == Format::k1 ? valid_reruns(store, head) : ValidReruns{});
        result.entries = index.entries;
        result.reruns = index.reruns;
        return format3_change(index, result.from, &result.files);
      },
      options);
  return result;
}

}  // namespace kistore
