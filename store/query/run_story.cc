#include "store/query/run_story.h"

#include "refs/layout.h"

namespace kistore {
namespace {

// The run a change below refs/ or objects/ tells about, in either format (a
// story may cross an upgrade); nullopt for paths of no run's story (groups,
// metadata, sources, dictionaries).
std::optional<Digest> run_of_change(const PathChange& c) {
  if (auto d = parse_object_path(c.path)) return d;
  for (Format f : {Format::k2, Format::k1}) {
    if (auto e = parse_level_path(f, c.path)) return e->run;
    if (auto e = parse_attestation_path(f, c.path)) return e->run;
    if (auto e = parse_rerun_path(f, c.path)) return e->run;
  }
  return std::nullopt;
}

}  // namespace

RunStories read_run_stories(const Store& store) {
  RunStories out;
  LogQuery q;
  q.with_changes = true;
  out.entries = read_history(store, q);
  for (std::size_t i = 0; i < out.entries.size(); ++i) {
    for (PathChange& c : out.entries[i].changes) {
      auto run = run_of_change(c);
      if (!run) continue;
      std::vector<StoryEvent>& story = out.by_run[*run];
      if (story.empty() || story.back().entry != i) story.push_back(StoryEvent{i, {}});
      story.back().changes.push_back(std::move(c));
    }
    out.entries[i].changes.clear();  // each now sits in its run's story
  }
  return out;
}

std::string story_change_text(const PathChange& c) {
  if (auto d = parse_object_path(c.path))
    return std::string(c.status == 'A' ? "added " : c.status == 'D' ? "removed " : "changed ") + d->str();
  for (Format f : {Format::k2, Format::k1}) {
    if (auto entry = parse_level_path(f, c.path))
      return std::string(c.status == 'D' ? "left level " : "entered level ") + std::string(level_name(entry->level));
    if (auto entry = parse_attestation_path(f, c.path))
      return std::string(c.status == 'D' ? "attestation removed " : "attested by ") + entry->attestation.str();
    if (auto entry = parse_rerun_path(f, c.path))
      return std::string(c.status == 'D' ? "rerun removed " : "rerun recorded ") + entry->rerun.str();
  }
  return std::string(1, c.status) + " " + c.path;
}

}  // namespace kistore
