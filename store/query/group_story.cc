#include "store/query/group_story.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "objects/error.h"
#include "refs/layout.h"
#include "refs/rank.h"
#include "store/git/commit_graph.h"
#include "store/git/git.h"
#include "store/history/history.h"
#include "store/history/level_audit.h"

namespace kistore {
namespace {

// The group's folder in both formats (a story may cross an upgrade), as
// patterns for TreeReader::diff.
std::vector<std::string> group_dirs(const Digest& key) {
  return {group_dir(Format::k2, key) + "/", group_dir(Format::k1, key) + "/"};
}

// The paths of the members' level entries, attestations and reruns, in
// either format (run_story_paths less the objects): only these are compared,
// not the whole index folders, whose entries grow with the store (a bulk
// add of 100,000 runs adds 100,000 level entries).
std::vector<std::string> member_paths(const std::set<Digest>& members) {
  std::vector<std::string> out;
  for (const Digest& run : members)
    for (std::string& p : run_story_paths(run))
      if (!parse_object_path(p)) out.push_back(std::move(p));
  return out;
}

// The run whose entry in the group `key` a change is about, in either format.
std::optional<Digest> group_run_of(const PathChange& c, const Digest& key) {
  for (Format f : {Format::k2, Format::k1})
    if (auto e = parse_group_path(f, c.path); e && e->key == key) return e->run;
  return std::nullopt;
}

// Every run the group's folder ever named: one look at that folder per commit.
std::set<Digest> runs_ever_in(const Store& store, git::CommitGraph& commits, const Digest& key) {
  std::set<Digest> runs;
  CommitChanges changes(commits, group_dirs(key));
  LogQuery q;
  q.keep = [&](const std::string& commit, const std::vector<std::string>&) {
    for (const PathChange& c : changes.of(commit))
      if (auto run = group_run_of(c, key)) runs.insert(*run);
    return false;  // no entry needed
  };
  read_history(store, q);
  return runs;
}

// Entries below members (attestations, reruns) that a commit added and
// removed, (run, document) pairs; one removed and added again (an upgrade
// moves every entry to its format-2 path) is neither.
struct NetEntries {
  std::set<std::pair<Digest, Digest>> added, removed;
  void note(char status, const Digest& run, const Digest& doc) {
    std::pair<Digest, Digest> item{run, doc};
    if (status == 'A' && !removed.erase(item)) added.insert(item);
    if (status == 'D' && !added.erase(item)) removed.insert(item);
  }
};

// What a commit's changes (below the story's paths) touched.
struct Touched {
  bool group = false;       // the group's folder
  std::set<Digest> levels;  // runs whose level entries changed
  NetEntries attestations, reruns;
};

// What `changes` touched of the group `key` and of its `members`; nullopt when nothing.
std::optional<Touched> touched_by(const std::vector<PathChange>& changes, const Digest& key,
                                  const std::set<Digest>& members) {
  Touched t;
  bool any = false;
  for (const PathChange& c : changes) {
    if (group_run_of(c, key)) {
      t.group = any = true;
      continue;
    }
    for (Format f : {Format::k2, Format::k1}) {
      if (auto l = parse_level_path(f, c.path)) {
        if (members.count(l->run)) t.levels.insert(l->run), any = true;
      } else if (auto a = parse_attestation_path(f, c.path)) {
        if (members.count(a->run)) t.attestations.note(c.status, a->run, a->attestation), any = true;
      } else if (auto r = parse_rerun_path(f, c.path)) {
        if (members.count(r->run)) t.reruns.note(c.status, r->run, r->rerun), any = true;
      } else {
        continue;
      }
      break;
    }
  }
  return any ? std::optional<Touched>(std::move(t)) : std::nullopt;
}

// The group's members in one tree, ranked by rank_group, by run.
std::map<Digest, RankedMember> ranks_in(const Snapshot* snap, const Digest& key) {
  std::map<Digest, RankedMember> out;
  if (!snap || snap->empty()) return out;
  for (RankedMember& r : rank_group(group_members(*snap, key, false))) {
    Digest run = r.member.run;
    out.emplace(run, std::move(r));
  }
  return out;
}

// A run's level entry in one tree: its level and the evidence it names.
struct LevelState {
  std::optional<Level> level;
  std::optional<Digest> evidence;
  bool operator==(const LevelState&) const = default;
};

LevelState level_state(const Snapshot* snap, const Digest& run) {
  LevelState s;
  if (!snap || snap->empty() || !(s.level = recorded_level(*snap, run))) return s;
  if (auto entry = recorded_entry(*snap, run)) s.evidence = entry->evidence;
  return s;
}

std::optional<RerunInfo> rerun_in(const Snapshot* snap, const Digest& run, const Digest& rerun) {
  if (!snap || snap->empty()) return std::nullopt;
  for (RerunInfo& info : reruns_of(*snap, run))
    if (info.rerun == rerun) return info;
  return std::nullopt;
}

// Ranks first by rank, unrankable (0) last.
bool before_in_rank(int a, int b) { return (a == 0) != (b == 0) ? b == 0 : a < b; }

// Reads the story's commits' trees and names the runs; one per story.
class StoryReader {
 public:
  StoryReader(const Store& store, const Digest& key) : store_(store), key_(key), head_(store.snapshot()) {}

  GroupStoryEntry entry(LogEntry commit, const Touched& t) {
    GroupStoryEntry out;
    Snapshot after = store_.snapshot_at(commit.id);
    std::optional<Snapshot> parent;
    if (!commit.parents.empty()) parent = store_.snapshot_at(commit.parents.front());
    const Snapshot* before = parent ? &*parent : nullptr;
    std::map<Digest, RankedMember> now = ranks_in(&after, key_);
    out.members = now.size();
    for (const auto& [run, r] : now) out.ranked += r.rank != 0;
    if (t.group) compare_members(out, after, before, now);
    for (const Digest& run : t.levels) {
      bool entered = std::any_of(out.added.begin(), out.added.end(), [&](const auto& a) { return a.run == run; });
      LevelState from = level_state(before, run), to = level_state(&after, run);
      if (entered || from == to) continue;
      out.levels.push_back(GroupLevelChange{run, name_of(run), from.level, to.level, to.evidence});
    }
    for (bool added : {true, false}) {
      for (const auto& [run, att] : added ? t.attestations.added : t.attestations.removed)
        out.attestations.push_back(GroupAttestationChange{run, name_of(run), att, added});
      for (const auto& [run, rerun] : added ? t.reruns.added : t.reruns.removed) {
        RerunInfo info = rerun_in(added ? &after : before, run, rerun).value_or(RerunInfo{rerun});
        out.reruns.push_back(GroupRerunChange{run, name_of(run), info, added});
      }
    }
    out.commit = std::move(commit);
    return out;
  }

 private:
  // Runs added and removed, and the ranks the commit moved.
  void compare_members(GroupStoryEntry& out, const Snapshot& after, const Snapshot* before,
                       const std::map<Digest, RankedMember>& now) {
    std::map<Digest, RankedMember> was = ranks_in(before, key_);
    for (const auto& [run, r] : now) {
      auto old = was.find(run);
      if (old == was.end()) out.added.push_back(run_change(after, r));
      else if (old->second.rank != r.rank)
        out.ranks.push_back(GroupRankChange{run, name_of(run), old->second.rank, r.rank});
    }
    for (const auto& [run, r] : was)
      if (!now.count(run)) out.removed.push_back(run_change(*before, r));
    std::stable_sort(out.added.begin(), out.added.end(),
                     [](const auto& a, const auto& b) { return before_in_rank(a.rank, b.rank); });
    std::stable_sort(out.ranks.begin(), out.ranks.end(),
                     [](const auto& a, const auto& b) { return before_in_rank(a.to, b.to); });
  }

  GroupRunChange run_change(const Snapshot& snap, const RankedMember& r) {
    return GroupRunChange{r.member.run, name_of(r.member.run), r.member.primary, r.rank,
                          recorded_level(snap, r.member.run)};
  }

  // Objects are never removed: the head names every run of the story, with
  // the implementation documents the store has now.
  const std::string& name_of(const Digest& run) {
    auto it = names_.find(run);
    if (it != names_.end()) return it->second;
    std::string name = "?";
    try {
      name = implementation_name(head_, head_.document(run, false));
    } catch (const Error&) {
      // An object that does not read is verify's to report; the story goes on.
    }
    return names_.emplace(run, std::move(name)).first->second;
  }

  const Store& store_;
  Digest key_;
  Snapshot head_;
  std::map<Digest, std::string> names_;
};

std::string rank_text(int rank) { return rank ? "rank " + std::to_string(rank) : std::string("unrankable"); }

std::string level_text(const std::optional<Level>& level) {
  return level ? std::string(level_name(*level)) : std::string("(none)");
}

// A digest as `rank` prints it: its first 12 hex digits (the JSON has them whole).
std::string short_id(const Digest& d) { return d.hex().substr(0, 12); }

std::string run_text(const Digest& run, const std::string& implementation) {
  return short_id(run) + " " + implementation + ": ";
}

}  // namespace

std::vector<GroupStoryEntry> read_group_story(const Store& store, const Digest& key, const GroupStoryQuery& query) {
  std::vector<GroupStoryEntry> out;
  std::unique_ptr<git::CommitGraph> commits = git::repository_commits(store.repo());
  const std::set<Digest> members = runs_ever_in(store, *commits, key);
  if (members.empty()) return out;
  std::vector<std::string> story = group_dirs(key), of_members = member_paths(members);
  story.insert(story.end(), of_members.begin(), of_members.end());
  CommitChanges changes(*commits, story);
  std::map<std::string, Touched> touched;  // by commit: what the commits kept touched
  LogQuery q;
  q.op = query.op;
  q.limit = query.limit;
  q.keep = [&](const std::string& commit, const std::vector<std::string>&) {
    std::optional<Touched> t = touched_by(changes.of(commit), key, members);
    if (t) touched.emplace(commit, std::move(*t));
    return t.has_value();
  };
  std::vector<LogEntry> entries = read_history(store, q);
  StoryReader reader(store, key);
  for (LogEntry& e : entries) {
    const Touched& t = touched.at(e.id);
    out.push_back(reader.entry(std::move(e), t));
  }
  return out;
}

std::vector<std::string> group_story_texts(const GroupStoryEntry& e,
                                           const std::function<std::string(double, const std::string&)>& value_text) {
  std::vector<std::string> out;
  for (const GroupRunChange& a : e.added) {
    std::string line = run_text(a.run, a.implementation) + "added";
    if (a.primary) line += ", " + value_text(a.primary->value, a.primary->unit);
    line += ", " + level_text(a.level) + ", " + rank_text(a.rank);
    if (a.rank) line += " of " + std::to_string(e.ranked);
    out.push_back(std::move(line));
  }
  for (const GroupRunChange& r : e.removed)
    out.push_back(run_text(r.run, r.implementation) + "removed, was " + rank_text(r.rank));
  for (const GroupRankChange& r : e.ranks)
    out.push_back(run_text(r.run, r.implementation) + rank_text(r.from) + " → " +
                  (r.from && r.to ? std::to_string(r.to) : rank_text(r.to)));
  for (const GroupLevelChange& l : e.levels) {
    std::string line = run_text(l.run, l.implementation) + "level " + level_text(l.from) + " → " + level_text(l.to);
    if (l.evidence) line += " (rerun " + short_id(*l.evidence) + ")";
    out.push_back(std::move(line));
  }
  for (const GroupAttestationChange& a : e.attestations)
    out.push_back(run_text(a.run, a.implementation) + (a.added ? "attested by " : "attestation removed: ") +
                  short_id(a.attestation));
  for (const GroupRerunChange& r : e.reruns) {
    std::string line =
        run_text(r.run, r.implementation) + "rerun " + short_id(r.rerun.rerun) + (r.added ? " recorded" : " removed");
    if (r.rerun.readable) {
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.3f", r.rerun.ratio);
      line += " (" + std::string(level_name(r.rerun.verdict)) + ", ratio " + ratio + ")";
    }
    out.push_back(std::move(line));
  }
  if (out.empty()) out.emplace_back("no change to the group's runs, ranks or levels");
  return out;
}

}  // namespace kistore
