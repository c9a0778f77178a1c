#include "store/core/index_diff.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>

#include "objects/error.h"
#include "refs/index_trie.h"
#include "store/core/index_trees.h"

namespace kistore {

namespace {

// The trie path of `full` (refs/<family>/<path>) checked as a file's: hex
// folder names, a one-digit file name.
std::string trie_file_path(const std::string& full, std::size_t dir_size) {
  const std::string path = full.substr(dir_size);
  std::size_t start = 0;
  for (std::size_t slash; (slash = path.find('/', start)) != std::string::npos; start = slash + 1)
    if (!lowercase_hex(std::string_view(path).substr(start, slash - start)))
      throw Corruption(full + ": expected a folder named by lowercase hex digits, found another name");
  if (path.size() - start != 1 || !lowercase_hex(std::string_view(path).substr(start)))
    throw Corruption(full + ": expected an index file named by one lowercase hex digit, found another name");
  return path;
}

// Adds the lines of the file `full` (blob `id`) to `lines`, by key.
void read_lines(const LayoutTrees& trees, Family family, const std::string& full, std::size_t dir_size,
                const git_oid& id, std::map<std::string, std::string>& lines) {
  const std::string path = trie_file_path(full, dir_size);
  const std::string bytes = trees.blob(id);
  std::size_t start = 0;
  for (const IndexFact& fact : parse_index_file(family, full, trie_prefix(path), bytes)) {
    const std::size_t end = bytes.find('\n', start) + 1;
    auto [it, fresh] = lines.emplace(fact_key(fact), bytes.substr(start, end - start));
    if (!fresh) throw Corruption(full + ": the key " + it->first + " is in another file of the same tree as well");
    start = end;
  }
}

// read_lines without parsing: the file split into checked lines (index_file).
void split_lines(const LayoutTrees& trees, const std::string& full, std::size_t dir_size, const git_oid& id,
                 std::map<std::string, std::string>& lines) {
  const std::shared_ptr<const TrieFileLines> file = trees.index_file(id, trie_file_path(full, dir_size), full);
  for (const auto& [key, line] : file->lines) {
    auto [it, fresh] = lines.emplace(key, line);
    if (!fresh) throw Corruption(full + ": the key " + it->first + " is in another file of the same tree as well");
  }
}

// Calls read(path, blob, is_before) for every file of `family` that differs
// between the trees `from` and `to`, checked as a trie file of a store: on
// the side it is on (is_before: `from`'s). A blob that one side holds at one
// path and the other at another that stands for the same digits (moved with
// its folder: "345/0" and "34/5/0") holds the same lines under the same
// prefix: it is read on neither side.
void for_changed_files(const LayoutTrees& trees, const git_oid* from, const git_oid* to, Family family,
                       const std::function<void(const std::string&, const git_oid&, bool)>& read) {
  const std::string dir = family_dir(family) + "/";
  std::vector<git::TreeDelta> deltas = trees.diff(from, to, family_dir(family));
  auto moved_key = [&](const std::string& path, const git_oid& id) {
    const std::string rel = path.substr(std::min(dir.size(), path.size()));
    return std::string(reinterpret_cast<const char*>(id.id), sizeof id.id) + trie_prefix(rel);
  };
  std::map<std::string, int> balance;
  for (const git::TreeDelta& d : deltas) {
    if (d.old_mode) ++balance[moved_key(d.path, d.old_id)];
    if (d.new_mode) --balance[moved_key(d.path, d.new_id)];
  }
  for (const git::TreeDelta& d : deltas) {
    if (!d.path.starts_with(dir)) throw Corruption(d.path + ": expected a path below " + dir);
    if (d.old_mode && d.old_mode != 0100644) throw Corruption(d.path + ": expected a file (mode 100644)");
    if (d.new_mode && d.new_mode != 0100644) throw Corruption(d.path + ": expected a file (mode 100644)");
    trie_file_path(d.path, dir.size());  // also where a moved file is not read
    if (d.old_mode)
      if (int& n = balance[moved_key(d.path, d.old_id)]; n > 0) {
        --n;
        read(d.path, d.old_id, true);
      }
    if (d.new_mode)
      if (int& n = balance[moved_key(d.path, d.new_id)]; n < 0) {
        ++n;
        read(d.path, d.new_id, false);
      }
  }
}

}  // namespace

namespace {

// The changes between two maps of lines by key, in key order.
std::vector<FactChange> changes_between(std::map<std::string, std::string>& before, std::map<std::string, std::string>& after) {
  std::vector<FactChange> out;
  auto b = before.begin(), a = after.begin();
  while (b != before.end() || a != after.end()) {
    if (a == after.end() || (b != before.end() && b->first < a->first)) {
      out.push_back(FactChange{b->first, std::move(b->second), std::nullopt});
      ++b;
    } else if (b == before.end() || a->first < b->first) {
      out.push_back(FactChange{a->first, std::nullopt, std::move(a->second)});
      ++a;
    } else {
      if (b->second != a->second) out.push_back(FactChange{b->first, std::move(b->second), std::move(a->second)});
      ++a;
      ++b;
    }
  }
  return out;
}

}  // namespace

std::vector<FactChange> diff_facts(const LayoutTrees& trees, const git_oid* from, const git_oid* to, Family family) {
  const std::size_t dir_size = family_dir(family).size() + 1;
  std::map<std::string, std::string> before, after;
  for_changed_files(trees, from, to, family, [&](const std::string& path, const git_oid& id, bool is_before) {
    read_lines(trees, family, path, dir_size, id, is_before ? before : after);
  });
  return changes_between(before, after);
}

std::vector<FactChange> diff_lines(const LayoutTrees& trees, const git_oid* from, const git_oid* to, Family family) {
  const std::size_t dir_size = family_dir(family).size() + 1;
  std::map<std::string, std::string> before, after;
  for_changed_files(trees, from, to, family, [&](const std::string& path, const git_oid& id, bool is_before) {
    split_lines(trees, path, dir_size, id, is_before ? before : after);
  });
  return changes_between(before, after);
}

std::vector<CheckedFactChange> diff_incoming(const LayoutTrees& trees, const git_oid* from, const git_oid* to,
                                             Family family) {
  const std::size_t dir_size = family_dir(family).size() + 1;
  struct Place {
    std::string path;
    std::size_t line = 0;
  };
  std::map<std::string, std::string> before, after;
  std::map<std::string, Place> places;  // where each line of `to`'s side is, for messages
  for_changed_files(trees, from, to, family, [&](const std::string& path, const git_oid& id, bool is_before) {
    if (is_before) return split_lines(trees, path, dir_size, id, before);
    const std::shared_ptr<const TrieFileLines> file = trees.index_file(id, trie_file_path(path, dir_size), path);
    if (file->lines.empty()) throw Corruption(path + ":1: expected at least one line, found an empty file");
    std::size_t number = 0;
    for (const auto& [key, line] : file->lines) {
      ++number;
      auto [it, fresh] = after.emplace(key, line);
      if (!fresh) throw Corruption(path + ": the key " + it->first + " is in another file of the same tree as well");
      places.emplace(key, Place{path, number});
    }
  });
  std::vector<CheckedFactChange> out;
  for (FactChange& c : changes_between(before, after)) {
    std::optional<IndexFact> fact;
    if (c.after) {
      const Place& at = places.at(c.key);
      fact = parse_line(family, *c.after, at.path, at.line);
      if (fact_key(*fact) != c.key)
        throw Corruption(at.path + ":" + std::to_string(at.line) + ": expected the key " + c.key + ", found " + fact_key(*fact));
    }
    out.push_back({std::move(c), std::move(fact)});
  }
  return out;
}

std::vector<std::string> added_keys(const LayoutTrees& trees, const git_oid* from, const git_oid* to, Family family) {
  const std::size_t digits = key_digits(family);
  static constexpr std::string_view kLead = "{\"@key\":\"";
  std::vector<std::string> before, after;
  for_changed_files(trees, from, to, family, [&](const std::string& path, const git_oid& id, bool is_before) {
    const std::string bytes = trees.blob(id);
    std::size_t start = 0, line = 1;
    for (std::size_t end; start < bytes.size(); start = end + 1, ++line) {
      end = bytes.find('\n', start);
      if (end == std::string::npos) throw Corruption(path + ":" + std::to_string(line) + ": expected a line ending in a newline");
      std::string_view text(bytes.data() + start, end - start);
      // The key alone, as written: {"@key":"<hex>", (SPEC 2: JCS puts it first).
      std::string_view key = text.size() > kLead.size() + digits ? text.substr(kLead.size(), digits) : std::string_view();
      if (!text.starts_with(kLead) || !lowercase_hex(key) || text[kLead.size() + digits] != '"')
        throw Corruption(path + ":" + std::to_string(line) + ": expected a line that starts with its " +
                         std::to_string(digits) + "-digit \"@key\"");
      (is_before ? before : after).emplace_back(key);
    }
  });
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  std::vector<std::string> out;
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(), std::back_inserter(out));
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> dropped_keys(const LayoutTrees& trees, const git_oid* from, const git_oid* to, Family family) {
  const std::string dir = family_dir(family) + "/";
  std::map<std::string, std::string> before;
  for (const git::TreeDelta& d : trees.diff(from, to, family_dir(family), git::DiffSides::kRemovedOrChanged)) {
    if (!d.old_mode) continue;
    if (!d.path.starts_with(dir)) throw Corruption(d.path + ": expected a path below " + dir);
    if (d.old_mode != 0100644) throw Corruption(d.path + ": expected a file (mode 100644)");
    read_lines(trees, family, d.path, dir.size(), d.old_id, before);
  }
  std::vector<std::string> out;
  for (const auto& [key, line] : before)
    if (!trees.index_line(to, family, key)) out.push_back(key);
  return out;
}

}  // namespace kistore
