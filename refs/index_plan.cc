#include "refs/index_plan.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

#include "objects/error.h"
#include "objects/json.h"
#include "refs/index_lines.h"

namespace kistore {

TrieEdit trie_write(std::string bytes) { return TrieEdit{TrieEdit::Kind::kWrite, std::move(bytes), {}}; }
TrieEdit trie_remove() { return TrieEdit{TrieEdit::Kind::kRemove, {}, {}}; }
TrieEdit trie_move(std::string from) { return TrieEdit{TrieEdit::Kind::kMove, {}, std::move(from)}; }

namespace {

constexpr std::string_view kDigits = "0123456789abcdef";
// How every line begins: its first member is "@key" (docs/format.md "Lines").
constexpr std::string_view kLineStart = "{\"@key\":\"";

std::size_t common_length(std::string_view a, std::string_view b) {
  return static_cast<std::size_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin());
}

std::string join(const std::string& path, std::string_view name) {
  return path.empty() ? std::string(name) : path + "/" + std::string(name);
}

// The key a line names in its first member, or "" when it does not begin
// {"@key":"<hex>".
std::string_view line_key(std::string_view line) {
  if (!line.starts_with(kLineStart)) return {};
  const std::size_t end = line.find('"', kLineStart.size());
  if (end == std::string_view::npos) return {};
  const std::string_view key = line.substr(kLineStart.size(), end - kLineStart.size());
  return lowercase_hex(key) ? key : std::string_view{};
}

// What the old trie holds of the keys that start with some digits s: nothing,
// a folder whose digits start with s (all of it), or a file: all of it when
// it stands for s, else (part) only its lines under s.
struct Old {
  enum class Kind { kNone, kFile, kFolder };
  Kind kind = Kind::kNone;
  std::string path;
  std::string prefix;  // the digits the file or folder stands for
  bool part = false;
};

// A change the old trie does not already hold.
struct Change {
  std::optional<std::string> line;  // nullopt: remove the key's line
  bool present = false;             // whether the old trie has a line for the key
};

// The new trie's entry for some digits.
struct Shape {
  enum class Kind { kNone, kFile, kFolder };
  Kind kind = Kind::kNone;
  std::string prefix;            // a folder: the digits it stands for
  std::vector<KeyedLine> lines;  // a file
};

class Planner {
 public:
  Planner(TrieReader& reader, std::size_t max_lines) : reader_(reader), t_(max_lines) {}

  TriePlan run(const TrieChanges& changes) {
    take(changes);
    if (!changes_.empty()) in_place("", "");
    return std::move(plan_);
  }

 private:
  // Checks the changes and keeps those that change something.
  void take(const TrieChanges& changes) {
    std::map<std::string, std::optional<std::string>> asked;
    auto key_of = [&](const std::string& key) {
      if (!lowercase_hex(key) || (digits_ && key.size() != digits_))
        throw std::invalid_argument("plan_trie_update: key " + key + " is not lowercase hex of the others' length");
      digits_ = key.size();
    };
    for (const KeyedLine& l : changes.put) {
      key_of(l.key);
      if (l.line.empty() || l.line.back() != '\n' || line_key(l.line) != l.key)
        throw std::invalid_argument("plan_trie_update: the line for " + l.key +
                                    " does not begin with its key or end in \"\\n\"");
      if (!asked.emplace(l.key, l.line).second)
        throw std::invalid_argument("plan_trie_update: key " + l.key + " put twice");
    }
    for (const std::string& key : changes.remove) {
      key_of(key);
      if (!asked.emplace(key, std::nullopt).second)
        throw std::invalid_argument("plan_trie_update: key " + key + " both put and removed, or removed twice");
    }
    for (auto& [key, line] : asked) {
      const std::optional<std::string> was = old_line(key);
      if (line == was) continue;  // a put of the same line, or a removal of no line
      changes_.emplace(key, Change{std::move(line), was.has_value()});
    }
  }

  std::optional<std::string> old_line(const std::string& key) {
    const Old m = resolve(key);
    if (m.kind != Old::Kind::kFile) return std::nullopt;
    const std::vector<KeyedLine>& lines = file(m.path);
    auto it = std::lower_bound(lines.begin(), lines.end(), key,
                               [](const KeyedLine& l, const std::string& k) { return l.key < k; });
    if (it == lines.end() || it->key != key) return std::nullopt;
    return it->line;
  }

  // The folder's entries, read once.
  const std::vector<TrieReader::Entry>& listing(const std::string& path) {
    auto it = listings_.find(path);
    if (it == listings_.end()) it = listings_.emplace(path, reader_.list(path)).first;
    return it->second;
  }

  // The file's lines, read once and checked as far as planning relies on them.
  const std::vector<KeyedLine>& file(const std::string& path) {
    if (auto it = files_.find(path); it != files_.end()) return it->second;
    const std::string bytes = reader_.read(path);
    const std::string prefix = trie_prefix(path);
    std::vector<KeyedLine> lines;
    for (std::size_t start = 0; start < bytes.size();) {
      const std::size_t end = bytes.find('\n', start);
      const std::string at = reader_.where(path) + ":" + std::to_string(lines.size() + 1) + ": ";
      if (end == std::string::npos) throw Corruption(at + "expected a line ending in \"\\n\", found the file's end");
      const std::string line = bytes.substr(start, end + 1 - start);
      const std::string_view key = line_key(line);
      if (key.empty() || !key.starts_with(prefix))
        throw Corruption(at + "expected a line beginning {\"@key\":\"" + prefix + "…\", found " + quoted_excerpt(line));
      if (key.size() != digits_)
        throw Corruption(at + "expected a key of " + std::to_string(digits_) + " hex digits, found one of " +
                         std::to_string(key.size()));
      if (!lines.empty() && !(lines.back().key < key))
        throw Corruption(at + "expected keys in ascending order, found " + std::string(key) + " after " +
                         lines.back().key);
      lines.push_back({std::string(key), line});
      start = end + 1;
    }
    if (lines.empty()) throw Corruption(reader_.where(path) + ": expected at least one line, found none");
    return files_.emplace(path, std::move(lines)).first->second;
  }

  // Which part of the old trie holds the keys that start with s, following
  // s down from refs/<family>/.
  Old resolve(std::string_view s) {
    std::string path, prefix;
    for (;;) {
      if (prefix.size() == s.size()) return {Old::Kind::kFolder, path, prefix, false};
      const char digit = s[prefix.size()];
      const std::vector<TrieReader::Entry>& entries = listing(path);
      auto e = std::find_if(entries.begin(), entries.end(),
                            [&](const TrieReader::Entry& x) { return !x.name.empty() && x.name[0] == digit; });
      if (e == entries.end()) return {};
      std::string child = join(path, e->name);
      if (!e->folder) return {Old::Kind::kFile, std::move(child), prefix + digit, prefix.size() + 1 < s.size()};
      std::string q = prefix + e->name;
      if (q.size() >= s.size()) {
        if (!q.starts_with(s)) return {};
        return {Old::Kind::kFolder, std::move(child), std::move(q), false};
      }
      if (!s.starts_with(q)) return {};
      path = std::move(child);
      prefix = std::move(q);
    }
  }

  // The changes whose keys start with s.
  std::pair<std::map<std::string, Change>::const_iterator, std::map<std::string, Change>::const_iterator> under(
      std::string_view s) const {
    auto lo = changes_.lower_bound(std::string(s)), hi = lo;
    while (hi != changes_.end() && hi->first.starts_with(s)) ++hi;
    return {lo, hi};
  }
  bool has_changes(std::string_view s) const {
    auto it = changes_.lower_bound(std::string(s));
    return it != changes_.end() && it->first.starts_with(s);
  }
  struct Counts {
    std::size_t inserts = 0, removals = 0;
  };
  Counts counts(std::string_view s) const {
    Counts c;
    for (auto [it, end] = under(s); it != end; ++it) {
      if (!it->second.line) ++c.removals;
      else if (!it->second.present) ++c.inserts;
    }
    return c;
  }

  // min(how many keys of the old trie start with s (in m), cap), reading as
  // little as that needs: a folder holds more than T lines, a file at least one.
  std::size_t old_count(const Old& m, std::string_view s, std::size_t cap) {
    switch (m.kind) {
      case Old::Kind::kNone: return 0;
      case Old::Kind::kFolder: return folder_count(m.path, cap);
      case Old::Kind::kFile: break;
    }
    if (!m.part && cap <= 1) return cap;
    const std::vector<KeyedLine>& lines = file(m.path);
    const auto n = std::count_if(lines.begin(), lines.end(), [&](const KeyedLine& l) { return l.key.starts_with(s); });
    return std::min(static_cast<std::size_t>(n), cap);
  }
  std::size_t folder_count(const std::string& path, std::size_t cap) {
    if (cap <= t_ + 1) return cap;
    const std::vector<TrieReader::Entry>& entries = listing(path);
    auto least = [&](const TrieReader::Entry& e) { return e.folder ? t_ + 1 : 1; };
    std::size_t total = 0;
    for (const auto& e : entries) total += least(e);
    // Files first: one read each, where a folder below may take more.
    for (bool folders : {false, true})
      for (const auto& e : entries) {
        if (total >= cap) return cap;
        if (e.folder != folders) continue;
        const std::string child = join(path, e.name);
        const std::size_t rest = total - least(e);
        total = rest + (e.folder ? folder_count(child, cap - rest) : file(child).size());
      }
    return std::min(total, cap);
  }

  // min(how many keys start with s once the changes are made, cap).
  std::size_t new_count(std::string_view s, std::size_t cap) {
    const Counts c = counts(s);
    const std::size_t old = old_count(resolve(s), s, cap + c.removals);
    if (old < c.removals)
      throw Corruption("index keys under " + std::string(s) + ": fewer lines than the trie's shape says");
    return std::min(old - c.removals + c.inserts, cap);
  }
  bool nonempty(std::string_view s) { return new_count(s, 1) > 0; }

  // The old trie's lines under s in m, in key order.
  void old_lines(const Old& m, std::string_view s, std::vector<KeyedLine>& out) {
    if (m.kind == Old::Kind::kFile) {
      for (const KeyedLine& l : file(m.path))
        if (l.key.starts_with(s)) out.push_back(l);
    } else if (m.kind == Old::Kind::kFolder) {
      std::vector<TrieReader::Entry> entries = listing(m.path);
      std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
      for (const auto& e : entries)
        old_lines({e.folder ? Old::Kind::kFolder : Old::Kind::kFile, join(m.path, e.name), {}, false}, s, out);
    }
  }

  // The lines under s once the changes are made, in key order.
  std::vector<KeyedLine> new_lines(std::string_view s) {
    std::vector<KeyedLine> old, out;
    old_lines(resolve(s), s, old);
    auto [it, end] = under(s);
    for (auto o = old.begin(); o != old.end() || it != end;) {
      if (it == end || (o != old.end() && o->key < it->first)) {
        out.push_back(std::move(*o++));
        continue;
      }
      if (o != old.end() && o->key == it->first) ++o;
      if (it->second.line) out.push_back({it->first, *it->second.line});
      ++it;
    }
    return out;
  }

  // The digits all keys under s share once the changes are made (there are
  // more than T of them).
  std::string shared_digits(std::string_view s) {
    std::string q(s);
    for (;;) {
      // Every old key under q and every put starts with cp: jump there.
      std::optional<std::string> cp;
      auto meet = [&](std::string_view key) { cp = std::string(cp ? key.substr(0, common_length(*cp, key)) : key); };
      const Old m = resolve(q);
      if (m.kind == Old::Kind::kFolder) meet(m.prefix);
      if (m.kind == Old::Kind::kFile)
        for (const KeyedLine& l : file(m.path))
          if (l.key.starts_with(q)) meet(l.key);
      for (auto [it, end] = under(q); it != end; ++it)
        if (it->second.line) meet(it->first);
      if (cp && cp->size() > q.size()) q = *cp;
      if (q.size() >= digits_) throw Corruption("index keys under " + q + ": fewer lines than the trie's shape says");
      // Then a digit at a time while one digit alone continues q (removals
      // may have taken the others).
      std::string next;
      for (char d : kDigits)
        if (nonempty(q + d)) next += d;
      if (next.size() != 1) return q;
      q += next;
    }
  }

  Shape shape(std::string_view s) {
    const std::size_t n = new_count(s, t_ + 1);
    if (n == 0) return {};
    if (n <= t_) return {Shape::Kind::kFile, {}, new_lines(s)};
    return {Shape::Kind::kFolder, shared_digits(s), {}};
  }

  static std::string bytes_of(const std::vector<KeyedLine>& lines) {
    std::string out;
    for (const KeyedLine& l : lines) out += l.line;
    return out;
  }

  // The folder at `path` stands for q in the old trie and in the new one:
  // only its entries that hold changes change.
  void in_place(const std::string& path, const std::string& q) {
    const std::vector<TrieReader::Entry> entries = listing(path);
    for (char d : kDigits) {
      if (!has_changes(q + d)) continue;
      auto old = std::find_if(entries.begin(), entries.end(),
                              [&](const TrieReader::Entry& e) { return !e.name.empty() && e.name[0] == d; });
      const std::optional<TrieReader::Entry> was = old == entries.end() ? std::nullopt : std::optional(*old);
      const std::string old_path = was ? join(path, was->name) : "";
      Shape n = shape(q + d);
      if (n.kind == Shape::Kind::kNone) {
        if (was) plan_[old_path] = trie_remove();
      } else if (n.kind == Shape::Kind::kFile) {
        if (was && was->name != std::string(1, d)) plan_[old_path] = trie_remove();
        plan_[join(path, std::string(1, d))] = trie_write(bytes_of(n.lines));
      } else {
        const std::string name = n.prefix.substr(q.size());
        if (was && was->folder && was->name == name) {
          in_place(old_path, n.prefix);
          continue;
        }
        if (was) plan_[old_path] = trie_remove();
        fresh(join(path, name), n.prefix);
      }
    }
  }

  // A folder for q at `path`, where the tree holds nothing once the plan's
  // removals are made: moves what the old trie holds unchanged, writes the rest.
  void fresh(const std::string& path, const std::string& q) {
    const std::size_t depth = static_cast<std::size_t>(std::count(path.begin(), path.end(), '/')) + 1;
    if (depth > kTrieMaxFolders)
      throw InvalidInput("index keys under " + q + ": more than " + std::to_string(t_) + " of them share " +
                         std::to_string(q.size()) + " digits, which would put their file more than " +
                         std::to_string(kTrieMaxFolders) + " folders deep");
    if (!has_changes(q)) {
      const Old m = resolve(q);
      if (m.kind == Old::Kind::kFolder && m.prefix == q) {
        plan_[path] = trie_move(m.path);
        return;
      }
    }
    for (char d : kDigits) {
      const std::string s = q + d;
      if (!has_changes(s)) {
        const Old m = resolve(s);
        if (m.kind == Old::Kind::kNone) continue;
        if (m.kind == Old::Kind::kFolder) {
          fresh(join(path, m.prefix.substr(q.size())), m.prefix);
          continue;
        }
        if (!m.part) {
          plan_[join(path, std::string(1, d))] = trie_move(m.path);
          continue;
        }
      }
      Shape n = shape(s);
      if (n.kind == Shape::Kind::kFile) plan_[join(path, std::string(1, d))] = trie_write(bytes_of(n.lines));
      if (n.kind == Shape::Kind::kFolder) fresh(join(path, n.prefix.substr(q.size())), n.prefix);
    }
  }

  TrieReader& reader_;
  const std::size_t t_;
  std::size_t digits_ = 0;  // the keys' length
  std::map<std::string, std::vector<TrieReader::Entry>> listings_;
  std::map<std::string, std::vector<KeyedLine>> files_;
  std::map<std::string, Change> changes_;
  TriePlan plan_;
};

}  // namespace

std::vector<TrieReader::Entry> TrieFilesReader::list(const std::string& path) {
  const std::string dir = path.empty() ? "" : path + "/";
  std::vector<Entry> out;
  for (auto it = files_.lower_bound(dir); it != files_.end() && it->first.starts_with(dir);) {
    const std::size_t slash = it->first.find('/', dir.size());
    if (slash == std::string::npos) {
      out.push_back({it->first.substr(dir.size()), false});
      ++it;
      continue;
    }
    std::string name = it->first.substr(dir.size(), slash - dir.size());
    it = files_.lower_bound(dir + name + "0");  // past "<name>/…": '0' follows '/'
    out.push_back({std::move(name), true});
  }
  return out;
}

std::string TrieFilesReader::read(const std::string& path) {
  auto it = files_.find(path);
  if (it == files_.end()) throw Corruption("index file " + path + ": expected a file, found none");
  return it->second;
}

TriePlan plan_trie_update(TrieReader& reader, const TrieChanges& changes, std::size_t max_lines) {
  if (max_lines == 0) throw std::invalid_argument("plan_trie_update: T must be at least 1");
  return Planner(reader, max_lines).run(changes);
}

void apply_trie_plan(TrieFiles& files, const TriePlan& plan) {
  // What each move takes, from the files as they were: by the rest of its path.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> taken;
  for (const auto& [path, edit] : plan) {
    if (edit.kind != TrieEdit::Kind::kMove) continue;
    auto& out = taken[path];
    if (auto it = files.find(edit.from); it != files.end()) out.emplace_back("", it->second);
    const std::string dir = edit.from + "/";
    for (auto it = files.lower_bound(dir); it != files.end() && it->first.starts_with(dir); ++it)
      out.emplace_back(it->first.substr(edit.from.size()), it->second);
    if (out.empty()) throw std::invalid_argument("apply_trie_plan: nothing at " + edit.from + " to move");
  }
  for (const auto& [path, edit] : plan) {
    files.erase(path);
    files.erase(files.lower_bound(path + "/"), files.lower_bound(path + "0"));
    if (edit.kind == TrieEdit::Kind::kWrite) files[path] = edit.bytes;
    if (edit.kind == TrieEdit::Kind::kMove)
      for (const auto& [rest, bytes] : taken[path]) files[path + rest] = bytes;
  }
}

std::shared_ptr<const TrieFileLines> parse_trie_file(std::string bytes, const std::string& path,
                                                     const std::string& where) {
  auto out = std::make_shared<TrieFileLines>();
  out->bytes = std::move(bytes);
  const std::string_view all = out->bytes;
  const std::string prefix = trie_prefix(path);
  std::string_view last;
  std::size_t number = 0;
  for (std::size_t start = 0; start < all.size();) {
    const std::size_t end = all.find('\n', start);
    ++number;
    auto at_line = [&] { return where + ":" + std::to_string(number) + ": "; };
    if (end == std::string::npos) throw Corruption(at_line() + "expected a line ending in \"\\n\", found the file's end");
    const std::string_view line = all.substr(start, end + 1 - start);
    const std::string_view found = line_key(line);
    if (number > 1 && !found.empty() && found.starts_with(prefix) && found == last)
      throw Corruption(at_line() + "/@key: expected each key once, found " + std::string(found) + " again (line " +
                       std::to_string(number - 1) + ")");
    if (number > 1 && !found.empty() && found.starts_with(prefix) && found < last)
      throw Corruption(at_line() + "/@key: expected keys in ascending order, found " + std::string(found) +
                       " after line " + std::to_string(number - 1) + "'s " + std::string(last));
    if (found.empty() || !found.starts_with(prefix) || !(last < found))
      throw Corruption(at_line() + "expected a line beginning {\"@key\":\"" + prefix +
                       "…\" after the key before it, found " + quoted_excerpt(line));
    out->lines.emplace_back(found, line);
    last = found;
    start = end + 1;
  }
  return out;
}

std::optional<std::string_view> TrieFileLines::find(std::string_view key) const {
  auto it = std::lower_bound(lines.begin(), lines.end(), key, [](const auto& l, std::string_view k) { return l.first < k; });
  if (it == lines.end() || it->first != key) return std::nullopt;
  return it->second;
}

std::optional<std::string> find_line(TrieReader& reader, std::string_view key) {
  std::string dir;     // the folder's path ("" is refs/<family>/)
  std::size_t at = 0;  // digits it stands for
  while (at < key.size()) {
    const std::string_view rest = key.substr(at);
    std::optional<std::string> next;
    for (const TrieReader::Entry& e : reader.list(dir)) {
      if (e.folder && rest.starts_with(e.name)) {
        next = e.name;
        break;
      }
      if (!e.folder && e.name.size() == 1 && e.name[0] == rest[0]) {
        const std::shared_ptr<const TrieFileLines> file = reader.lines(join(dir, e.name));
        const std::optional<std::string_view> line = file->find(key);
        if (!line) return std::nullopt;
        return std::string(*line);
      }
    }
    if (!next) return std::nullopt;
    dir = join(dir, *next);
    at += next->size();
  }
  return std::nullopt;
}

}  // namespace kistore
