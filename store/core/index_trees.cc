#include "store/core/index_trees.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "objects/error.h"
#include "refs/index_trie.h"
#include "store/core/index_diff.h"

namespace kistore {

std::string family_dir(Family family) { return "refs/" + std::string(family_name(family)); }

std::vector<TrieReader::Entry> SnapshotTrie::list(const std::string& path) {
  std::vector<Entry> out;
  for (const Snapshot::Entry& e : snapshot_.entries(full(path))) out.push_back(Entry{e.name, e.folder});
  return out;
}

std::string SnapshotTrie::read(const std::string& path) {
  auto bytes = snapshot_.read(full(path));
  if (!bytes) throw Corruption(full(path) + ": expected an index file, found none");
  return *std::move(bytes);
}

void IndexChanges::put(const IndexFact& fact) {
  families[family_of(fact)].put.push_back(KeyedLine{fact_key(fact), render_line(fact)});
}

void IndexChanges::put_line(Family family, std::string key, std::string line) {
  families[family].put.push_back(KeyedLine{std::move(key), std::move(line)});
}

void IndexChanges::remove(Family family, std::string key) { families[family].remove.push_back(std::move(key)); }

bool IndexChanges::unput(Family family, std::string_view key) {
  auto it = families.find(family);
  if (it == families.end()) return false;
  std::vector<KeyedLine>& put = it->second.put;
  auto line = std::find_if(put.begin(), put.end(), [&](const KeyedLine& l) { return l.key == key; });
  if (line == put.end()) return false;
  put.erase(line);
  if (put.empty() && it->second.remove.empty()) families.erase(it);
  return true;
}

namespace {

// A family changed in many keys, rebuilt whole: all_lines() gives its lines
// now (key -> line).
template <typename AllLines>
void rebuild(Family family, AllLines&& all_lines, const TrieChanges& family_changes, ChangeSet& change) {
  std::map<std::string, std::string> lines = all_lines();
  for (const std::string& key : family_changes.remove) lines.erase(key);
  std::set<std::string_view> put;
  for (const KeyedLine& l : family_changes.put) {
    if (!put.insert(l.key).second || std::find(family_changes.remove.begin(), family_changes.remove.end(), l.key) != family_changes.remove.end())
      throw std::invalid_argument("apply_index_changes: the key " + l.key + " is changed twice");
    lines[l.key] = l.line;
  }
  change.removals.push_back(family_dir(family));
  std::vector<KeyedLine> sorted;
  sorted.reserve(lines.size());
  for (auto& [key, line] : lines) sorted.push_back(KeyedLine{key, std::move(line)});
  for (auto& [path, bytes] : build_trie(sorted)) change.upserts[family_dir(family) + "/" + path] = std::move(bytes);
}

// One family's change as paths of `change`: rebuilt whole when it is big,
// else the plan's edits; moved(from) gives the id of the entry the old tree
// has at `from` and whether it is a folder.
template <typename AllLines, typename Plan, typename Moved>
void apply_family(Family family, const TrieChanges& family_changes, AllLines&& all_lines, Plan&& plan_of,
                  Moved&& moved, ChangeSet& change) {
  if (family_changes.put.size() + family_changes.remove.size() > kRebuildAbove)
    return rebuild(family, all_lines, family_changes, change);
  const std::string dir = family_dir(family) + "/";
  for (auto& [path, edit] : plan_of(family_changes)) {
    const std::string full = path.empty() ? family_dir(family) : dir + path;
    switch (edit.kind) {
      case TrieEdit::Kind::kWrite:
        change.upserts[full] = std::move(edit.bytes);
        break;
      case TrieEdit::Kind::kRemove:
        change.removals.push_back(full);
        break;
      case TrieEdit::Kind::kMove: {
        const std::pair<std::string, bool> from = moved(dir + edit.from);
        (from.second ? change.folders : change.links)[full] = from.first;
        break;
      }
    }
  }
}

}  // namespace

void apply_index_changes(const Snapshot& base, const IndexChanges& changes, ChangeSet& change) {
  for (const auto& [bound, family_changes] : changes.families) {
    const Family family = bound;  // captured below (clang 14 captures no structured binding)
    SnapshotTrie reader(base, family);
    apply_family(
        family, family_changes,
        [&] {
          std::map<std::string, std::string> lines;
          for (const IndexFact& f : facts_with_prefix(base, family, "")) lines.emplace(fact_key(f), render_line(f));
          return lines;
        },
        [&](const TrieChanges& c) { return plan_trie_update(reader, c); },
        [&](const std::string& from) {
          const std::size_t slash = from.rfind('/');
          for (const Snapshot::Entry& e : base.entries(from.substr(0, slash)))
            if (e.name == from.substr(slash + 1)) return std::pair{e.id, e.folder};
          throw std::logic_error("index plan moves " + from + ", which the tree lacks");
        },
        change);
  }
}

void apply_index_changes(const LayoutTrees& trees, const git_oid* root, const IndexChanges& changes, ChangeSet& change) {
  for (const auto& [bound, family_changes] : changes.families) {
    const Family family = bound;  // captured below (clang 14 captures no structured binding)
    apply_family(
        family, family_changes,
        [&] {
          std::map<std::string, std::string> lines;
          // The store's own lines (its history was checked as it came in).
          for (FactChange& c : diff_lines(trees, nullptr, root, family)) lines.emplace(c.key, std::move(*c.after));
          return lines;
        },
        [&](const TrieChanges& c) { return trees.plan(root, family, c); },
        [&](const std::string& from) {
          auto found = trees.entry_any(root, from);
          if (!found) throw std::logic_error("index plan moves " + from + ", which the tree lacks");
          return std::pair{git::oid_str(found->first), found->second};
        },
        change);
  }
}

namespace {

// Calls fn(path relative to refs/<family>/, prefix it stands for) for each
// file whose keys may start with `digits`: the files of the one folder the
// digits lead to (all of them when the digits end inside a folder's name or
// at a folder), or the one file they lead to.
template <typename Fn>
void files_for(const Snapshot& snapshot, Family family, const std::string& digits, Fn&& fn) {
  const std::string root = family_dir(family);
  std::string dir;        // relative to root: "" or "<names>/"
  std::size_t at = 0;     // digits `dir` stands for
  std::vector<std::pair<std::string, std::size_t>> all;  // folders to take whole: (dir, digits it stands for)
  for (;;) {
    const std::string here = dir.empty() ? root : root + "/" + dir.substr(0, dir.size() - 1);
    const std::string_view rest = std::string_view(digits).substr(at);
    if (rest.empty()) {
      all.emplace_back(dir, at);
      break;
    }
    std::optional<std::pair<std::string, std::size_t>> next;
    for (const Snapshot::Entry& e : snapshot.entries(here)) {
      if (e.folder) {
        if (rest.starts_with(e.name)) next.emplace(dir + e.name + "/", at + e.name.size());
        else if (std::string_view(e.name).starts_with(rest)) all.emplace_back(dir + e.name + "/", at + e.name.size());
      } else if (e.name.size() == 1 && e.name[0] == rest[0]) {
        fn(dir + e.name);
      }
    }
    if (!next) break;
    dir = next->first;
    at = next->second;
  }
  // Whole folders, depth first in tree order.
  while (!all.empty()) {
    auto [folder, n] = all.back();
    all.pop_back();
    const std::string here = root + "/" + folder.substr(0, folder.size() - 1);
    std::vector<std::pair<std::string, std::size_t>> below;
    for (const Snapshot::Entry& e : snapshot.entries(folder.empty() ? root : here)) {
      if (e.folder) below.emplace_back(folder + e.name + "/", n + e.name.size());
      else fn(folder + e.name);
    }
    for (auto it = below.rbegin(); it != below.rend(); ++it) all.push_back(*it);
  }
}

// The lines of the index file `path` of `family` whose key, as written,
// starts with `digits`, each read as parse_line reads it, handed to `fn`. A
// lookup parses the one line it needs, not a file of up to T: the others are
// only checked for the shape of the file (each a line that starts with its
// key, of the family's length of lowercase hex, under the file's prefix, in
// strictly ascending order); a file out of that shape is read whole by
// parse_index_file, whose Error(kCorruption) names the file and line.
template <typename Fn>
void lines_for(const Snapshot& snapshot, Family family, const std::string& path, std::string_view digits, Fn&& fn) {
  const std::string full = family_dir(family) + "/" + path;
  auto bytes = snapshot.read(full);
  if (!bytes) throw Corruption(full + ": expected an index file, found none");
  const std::string_view text = *bytes;
  const std::string prefix = trie_prefix(path);
  const std::size_t n = key_digits(family);
  constexpr std::string_view kHead = "{\"@key\":\"";
  auto hex = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
  };
  std::vector<std::pair<std::string_view, std::size_t>> wanted;  // (line, number)
  std::string_view previous;
  bool shaped = !text.empty();
  std::size_t number = 0;
  for (std::size_t start = 0; shaped && start < text.size();) {
    ++number;
    const std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) shaped = false;
    const std::string_view line = text.substr(start, end == std::string_view::npos ? end : end - start + 1);
    start += line.size();
    const std::string_view key = line.substr(std::min(line.size(), kHead.size()), n);
    shaped = shaped && line.starts_with(kHead) && key.size() == n && line.size() > kHead.size() + n &&
             line[kHead.size() + n] == '"' && hex(key) && key.starts_with(prefix) && (number == 1 || previous < key);
    previous = key;
    if (shaped && key.starts_with(digits)) wanted.emplace_back(line, number);
  }
  if (!shaped) {
    for (IndexFact& fact : parse_index_file(family, full, prefix, text))
      if (fact_key(fact).starts_with(digits)) fn(std::move(fact));
    return;
  }
  for (const auto& [line, at] : wanted) fn(parse_line(family, line, full, at));
}

}  // namespace

std::optional<IndexFact> find_fact(const Snapshot& snapshot, Family family, const std::string& key) {
  std::optional<IndexFact> found;
  files_for(snapshot, family, key, [&](const std::string& path) {
    lines_for(snapshot, family, path, key, [&](IndexFact&& fact) {
      if (fact_key(fact) == key) found = std::move(fact);
    });
  });
  return found;
}

std::string fact_file(const Snapshot& snapshot, Family family, const std::string& key) {
  std::string dir = family_dir(family);
  std::size_t at = 0;
  while (at < key.size()) {
    std::optional<std::string> next;
    for (const Snapshot::Entry& e : snapshot.entries(dir))
      if (e.folder && std::string_view(key).substr(at).starts_with(e.name)) next = e.name;
    if (!next) break;
    dir += "/" + *next;
    at += next->size();
  }
  return at < key.size() ? dir + "/" + key[at] : dir;
}

std::vector<IndexFact> facts_with_prefix(const Snapshot& snapshot, Family family, const std::string& prefix) {
  std::vector<IndexFact> out;
  files_for(snapshot, family, prefix, [&](const std::string& path) {
    lines_for(snapshot, family, path, prefix, [&](IndexFact&& fact) { out.push_back(std::move(fact)); });
  });
  return out;
}

}  // namespace kistore
