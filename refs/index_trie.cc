#include "refs/index_trie.h"

#include <algorithm>
#include <stdexcept>

#include "objects/error.h"

namespace kistore {

namespace {

bool hex_digit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
bool hex_digits(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), hex_digit); }

std::size_t common_length(std::string_view a, std::string_view b) {
  return static_cast<std::size_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin());
}

// Calls `file` for the entries of the folder `dir` (standing for `prefix`,
// `depth` folders below refs/<family>/) that hold lines[lo, hi), all of whose
// keys start with `prefix`: in digit order, a folder's files after the files
// of the digits before it, which is the order of their paths.
void build_folder(const std::vector<LineView>& lines, std::size_t lo, std::size_t hi, std::string_view prefix,
                  const std::string& dir, std::size_t depth, std::size_t max_lines,
                  const std::function<void(const std::string&, std::string&&)>& file) {
  const std::size_t at = prefix.size();
  for (std::size_t i = lo; i < hi;) {
    const char digit = lines[i].key[at];
    std::size_t j = i;
    while (j < hi && lines[j].key[at] == digit) ++j;
    if (j - i <= max_lines) {
      std::string bytes;
      for (std::size_t k = i; k < j; ++k) bytes += lines[k].line;
      file(dir + digit, std::move(bytes));
    } else {
      // Sorted keys: the first and the last share what all of them share.
      const std::size_t shared = common_length(lines[i].key, lines[j - 1].key);
      if (depth + 1 > kTrieMaxFolders)
        throw InvalidInput("index keys " + std::string(lines[i].key) + " to " + std::string(lines[j - 1].key) +
                           ": more than " + std::to_string(max_lines) + " of them share " + std::to_string(at) +
                           " digits, which would put their file more than " + std::to_string(kTrieMaxFolders) +
                           " folders deep");
      const std::string_view folder = lines[i].key.substr(0, shared);
      build_folder(lines, i, j, folder, dir + std::string(folder.substr(at)) + "/", depth + 1, max_lines, file);
    }
    i = j;
  }
}

}  // namespace

void build_trie_files(const std::vector<LineView>& lines,
                      const std::function<void(const std::string& path, std::string&& bytes)>& file,
                      std::size_t max_lines) {
  if (max_lines == 0) throw std::invalid_argument("build_trie: T must be at least 1");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const LineView& l = lines[i];
    if (!hex_digits(l.key) || l.key.size() != lines[0].key.size())
      throw std::invalid_argument("build_trie: key " + std::string(l.key) + " is not lowercase hex of the others' length");
    if (l.line.empty() || l.line.back() != '\n') throw std::invalid_argument("build_trie: a line without its \"\\n\"");
    if (i > 0 && !(lines[i - 1].key < l.key))
      throw std::invalid_argument("build_trie: keys not strictly ascending at " + std::string(l.key));
  }
  build_folder(lines, 0, lines.size(), "", "", 0, max_lines, file);
}

TrieFiles build_trie(const std::vector<KeyedLine>& lines, std::size_t max_lines) {
  std::vector<LineView> views;
  views.reserve(lines.size());
  for (const KeyedLine& l : lines) views.push_back(LineView{l.key, l.line});
  TrieFiles out;
  build_trie_files(views, [&](const std::string& path, std::string&& bytes) { out.emplace(path, std::move(bytes)); },
                   max_lines);
  return out;
}

std::string trie_prefix(std::string_view path) {
  std::string out;
  for (char c : path)
    if (c != '/') out += c;
  return out;
}

namespace {

// What check_trie learns of one folder from the files below it.
struct FolderSummary {
  std::size_t lines = 0;
  std::optional<std::string> first_key, last_key;  // of the files that parse
  bool all_parsed = true;                          // no file below it was refused
  std::set<std::string> entries;                   // the names directly inside it
};

// The '/'-separated names of a path.
std::vector<std::string_view> path_names(std::string_view path) {
  std::vector<std::string_view> names;
  for (std::size_t start = 0;;) {
    const std::size_t slash = path.find('/', start);
    names.push_back(path.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) return names;
    start = slash + 1;
  }
}

// Why the names of a file's path are not trie names, or "" when they are.
std::string naming_problem(Family family, const std::vector<std::string_view>& names) {
  const std::size_t depth = names.size() - 1;
  if (depth > kTrieMaxFolders)
    return "expected a file at most " + std::to_string(kTrieMaxFolders) + " folders deep, found one " +
           std::to_string(depth) + " deep";
  for (std::size_t i = 0; i < depth; ++i)
    if (!hex_digits(names[i]) || names[i].size() >= key_digits(family))
      return "expected folder names of 1 to " + std::to_string(key_digits(family) - 1) +
             " lowercase hex digits, found " + quoted_excerpt(names[i]);
  if (names.back().size() != 1 || !hex_digit(names.back()[0]))
    return "expected a file named by one lowercase hex digit, found " + quoted_excerpt(names.back());
  return "";
}

}  // namespace

std::vector<Problem> check_trie(Family family, const TrieFiles& files, std::size_t max_lines) {
  const std::string root = "refs/" + std::string(family_name(family)) + "/";
  std::vector<Problem> problems;
  std::vector<TrieFileSummary> summaries;
  for (const auto& [path, bytes] : files) {
    TrieFileSummary summary{path, static_cast<std::size_t>(std::count(bytes.begin(), bytes.end(), '\n')), {}, {}};
    if (naming_problem(family, path_names(path)).empty()) {  // else check_trie_shape says why
      try {
        const std::vector<IndexFact> facts = parse_index_file(family, root + path, trie_prefix(path), bytes);
        summary.lines = facts.size();
        summary.first_key = fact_key(facts.front());
        summary.last_key = fact_key(facts.back());
      } catch (const Error& e) {
        problems.push_back(Problem{ProblemKind::kLayout, root + path, e.what()});
      }
    }
    summaries.push_back(std::move(summary));
  }
  std::vector<Problem> shape = check_trie_shape(family, summaries, max_lines);
  problems.insert(problems.end(), std::make_move_iterator(shape.begin()), std::make_move_iterator(shape.end()));
  return problems;
}

std::vector<Problem> check_trie_shape(Family family, const std::vector<TrieFileSummary>& files, std::size_t max_lines) {
  const std::string root = "refs/" + std::string(family_name(family)) + "/";
  const std::string t = std::to_string(max_lines);
  std::vector<Problem> problems;
  auto report = [&](const std::string& path, std::string detail) {
    problems.push_back(Problem{ProblemKind::kLayout, root + path, std::move(detail)});
  };
  // Every folder by its path ("" for refs/<family>/ itself).
  std::map<std::string, FolderSummary> folders;
  std::set<std::string_view> file_paths;
  folders[""];
  for (const TrieFileSummary& file : files) {
    const std::string& path = file.path;
    file_paths.insert(path);
    const std::vector<std::string_view> names = path_names(path);
    if (std::string why = naming_problem(family, names); !why.empty()) {
      report(path, std::move(why));
      continue;
    }
    const std::size_t lines = file.lines;
    const std::optional<std::string>& first = file.first_key;
    const std::optional<std::string>& last = file.last_key;
    if (lines > max_lines)
      report(path, "expected a file of at most " + t + " lines (more make a folder), found " +
                       std::to_string(lines) + " lines");
    std::string dir;
    for (std::size_t i = 0; i < names.size(); ++i) {
      FolderSummary& folder = folders[dir];
      folder.entries.insert(std::string(names[i]));
      folder.lines += lines;
      folder.all_parsed = folder.all_parsed && first.has_value();
      if (first && (!folder.first_key || *first < *folder.first_key)) folder.first_key = first;
      if (last && (!folder.last_key || *last > *folder.last_key)) folder.last_key = last;
      if (i) dir += '/';
      dir += names[i];
    }
  }
  for (const auto& [dir, folder] : folders) {
    for (auto it = folder.entries.begin(); it != folder.entries.end() && std::next(it) != folder.entries.end(); ++it)
      if ((*it)[0] == (*std::next(it))[0])
        report(dir, "expected one entry for each next digit, found " + quoted_excerpt(*it) + " and " +
                        quoted_excerpt(*std::next(it)));
    if (dir.empty()) continue;
    if (file_paths.contains(dir)) report(dir, "expected a file or a folder, found both");
    if (folder.lines <= max_lines)
      report(dir, "expected a folder of more than " + t + " lines (at most " + t + " make one file), found " +
                      std::to_string(folder.lines) + " lines");
    const std::string prefix = trie_prefix(dir);
    if (folder.all_parsed && folder.first_key && folder.last_key) {
      const std::size_t shared = common_length(*folder.first_key, *folder.last_key);
      if (shared > prefix.size())
        report(dir, "expected the folder's name to run through the digits all its keys share, " +
                        folder.first_key->substr(0, shared) + ", found a name that stops at " + prefix);
    }
  }
  return problems;
}

TrieSlot locate_in_trie(std::string_view key, const std::set<std::string>& folders) {
  std::string dir;     // "" or "<names>/"
  std::size_t at = 0;  // digits of the key that `dir` stands for
  while (at < key.size()) {
    // The folder for the next digit is the first path that starts with it:
    // its own entries all sort after it.
    const std::string start = dir + key[at];
    auto it = folders.lower_bound(start);
    if (it == folders.end() || !it->starts_with(start) || it->find('/', dir.size()) != std::string::npos)
      return TrieSlot{start, std::nullopt};
    const std::string_view name = std::string_view(*it).substr(dir.size());
    const std::size_t shared = common_length(name, key.substr(at));
    if (shared < name.size())
      return TrieSlot{dir + std::string(name.substr(0, shared)) + "/" + key[at + shared], *it};
    dir = *it + "/";
    at += name.size();
  }
  throw std::invalid_argument("locate_in_trie: folders that take up the whole key " + std::string(key));
}

}  // namespace kistore
