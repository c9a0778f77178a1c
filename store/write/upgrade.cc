#include "store/write/upgrade.h"

#include <map>
#include <set>
#include <utility>

#include "objects/error.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "store/history/level_audit.h"
#include "store/history/trust.h"

namespace kistore {
namespace {

// A rerun that the signed history adds, and its verdict.
using Reruns = std::map<std::pair<Digest, Digest>, Level>;  // (run, rerun) -> verdict

Reruns valid_reruns(const Store& store, const Snapshot& head) {
  Reruns out;
  LevelAudit audit(store, load_trust(store));
  for (const LevelAudit::RerunCommitAudit* a : audit.rerun_commits(head.commit()))
    if (a->valid) out.emplace(std::pair{a->valid->first, a->valid->second.evidence}, level_of(a->valid->second.verdict));
  return out;
}

// Where a format-1 index entry lives in format 2, or nullopt for an entry
// that format 2 drops (a rerun's group entry) or a path format 1 does not
// name (left where it is, for verify to report).
std::optional<std::string> format2_path(const std::string& path, const std::set<Digest>& reruns) {
  constexpr Format k1 = Format::k1, k2 = Format::k2;
  if (auto d = parse_metadata_path(k1, path)) return metadata_path(k2, *d);
  if (auto e = parse_group_path(k1, path)) {
    if (reruns.count(e->run)) return std::string();
    return group_path(k2, e->key, e->run);
  }
  if (auto e = parse_level_path(k1, path)) return level_path(k2, e->level, e->run);
  if (auto e = parse_attestation_path(k1, path)) return attestation_path(k2, e->run, e->attestation);
  return std::nullopt;
}

// The change that turns the format-1 tree of `head` into format 2.
ChangeSet upgrade_change(const Snapshot& head, const Reruns& reruns, UpgradeResult& result) {
  ChangeSet change;
  std::set<Digest> rerun_digests;
  for (const auto& [pair, verdict] : reruns) rerun_digests.insert(pair.second);
  head.walk("refs", [&](const std::string& path, std::string_view bytes) {
    if (path.starts_with("refs/sources/")) return;  // the same in both formats
    auto moved = format2_path(path, rerun_digests);
    if (!moved) return;
    change.removals.push_back(path);
    if (!moved->empty()) change.upserts.emplace(*moved, std::string(bytes));
    ++result.entries;
  });
  for (const auto& [pair, verdict] : reruns) {
    const auto& [run, rerun] = pair;
    auto ratio = rerun_ratio(head.document(run, false).spec(), head.document(rerun, false).spec());
    if (!ratio) continue;  // no controlled rerun after all; verify says why
    change.upserts.emplace(rerun_path(run, rerun), rerun_entry(verdict, *ratio));
    ++result.reruns;
  }
  change.upserts.emplace(std::string(kFormatPath), std::string(kFormat2Bytes));
  change.op = "upgrade";
  change.summary = "upgrade: format 1 to format 2";
  change.body = "Rewrote " + std::to_string(result.entries) + " index entries at their format-2 paths; moved " +
                std::to_string(result.reruns) + " controlled rerun" + (result.reruns == 1 ? "" : "s") +
                " to refs/reruns/. No object changed.";
  return change;
}

}  // namespace

UpgradeResult upgrade_store(Store& store, CommitOptions options) {
  UpgradeResult result;
  options.upgrade = true;
  result.commit = store.commit(
      [&](const Snapshot& head) -> std::optional<ChangeSet> {
        result = UpgradeResult{};
        result.from = head.format();
        if (result.from != Format::k1) return std::nullopt;
        return upgrade_change(head, valid_reruns(store, head), result);
      },
      options);
  return result;
}

}  // namespace kistore
