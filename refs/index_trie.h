// Format 3's index trie (SPEC §2, docs/format.md "Format 3"): which file of
// refs/<family>/ holds each line, as a pure function of the lines.
//
// The folder refs/<family>/ stands for the empty prefix. A folder that stands
// for prefix p holds one entry for each hex digit d that some key continues p
// with: when at most T keys start with pd, a file named d holding their lines
// in key order; when more do, a folder named by the digits from d through the
// longest common prefix q of those keys (at least d), standing for q. A path
// therefore stands for the concatenation of its names, every key of a file
// starts with its path's digits, and a folder other than refs/<family>/
// holds more than T lines and at least two entries. Chains of single-child
// folders are folded into one name so that a group's runs, which share 64
// digits, sit one folder below the group's digits instead of 64.
//
// For the store's index writers and readers (which file to read or write for
// a key) and for verify and pull (check_trie: is this tree the one its lines
// imply?). Thread-safety: plain values and pure functions.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "refs/index_lines.h"
#include "refs/problem.h"

namespace kistore {

// T: the most lines one index file holds (docs/benchmarks.md "Format 3's T"
// measured 64 to 1,024).
inline constexpr std::size_t kTrieMaxLines = 256;
// Folders a trie path may have below refs/<family>/: a store's tree is at most
// 16 folders deep (SPEC §2 "Hostile input"), and refs/<family>/ takes two.
inline constexpr std::size_t kTrieMaxFolders = 14;

// One line of an index file and its key (fact_key of what it holds).
struct KeyedLine {
  std::string key;   // lowercase hex
  std::string line;  // ends in "\n"
  friend bool operator==(const KeyedLine&, const KeyedLine&) = default;
};

// Index files by path relative to refs/<family>/ ("3/a", "04a25504…/7/c"),
// each to its bytes.
using TrieFiles = std::map<std::string, std::string>;

// The files that hold `lines` (the trie above with T = max_lines, at least
// 1). Throws std::invalid_argument when the lines are not strictly ascending
// by key, their keys are not lowercase hex of one length, or a line does not
// end in "\n" (callers pass a family's rendered lines, sorted); throws
// Error(kInvalidInput) when the keys would need a file more than
// kTrieMaxFolders folders deep (over T+1 keys sharing some 14 more digits at
// every level: digests that were ground to collide).
TrieFiles build_trie(const std::vector<KeyedLine>& lines, std::size_t max_lines = kTrieMaxLines);

// A line and its key as views into bytes the caller keeps (a big writer's
// lines, without a copy of each).
struct LineView {
  std::string_view key;
  std::string_view line;  // ends in "\n"
};
// The files of build_trie, one at a time: `file(path, bytes)` for each, in
// the order build_trie's map holds them, so that a writer keeps one file's
// bytes at a time rather than the family's. Throws as build_trie.
void build_trie_files(const std::vector<LineView>& lines,
                      const std::function<void(const std::string& path, std::string&& bytes)>& file,
                      std::size_t max_lines = kTrieMaxLines);

// The hex digits a trie path stands for: its names joined ("04a2/7/c" ->
// "04a27c").
std::string trie_prefix(std::string_view path);

// Every way `files` (one family's index files, paths relative to
// refs/<family>/) differs from build_trie of the lines they hold: a path over
// kTrieMaxFolders folders; a folder name that is not lowercase hex digits or a
// file name that is not one; a name that is both a file and a folder; two
// entries of one folder for the same next digit; a file that parse_index_file
// refuses (not lines of the family, unsorted, a key outside its path's
// digits); a file of more than T lines; a folder (other than refs/<family>/)
// of at most T lines, or whose keys all share more digits than its name says.
// Each problem is ProblemKind::kLayout about "refs/<family>/<path>". Empty
// exactly when files == build_trie(their lines, max_lines).
std::vector<Problem> check_trie(Family family, const TrieFiles& files, std::size_t max_lines = kTrieMaxLines);

// What check_trie_shape needs of one index file: its path (relative to
// refs/<family>/), its line count, and its first and last keys (nullopt
// when the file was refused: not lines of the family under its digits).
struct TrieFileSummary {
  std::string path;
  std::size_t lines = 0;
  std::optional<std::string> first_key, last_key;
};
// check_trie's checks of names and shape, from summaries of the files alone
// (their lines read and checked by the caller: verify, on every core): the
// problems check_trie reports but those of a file's own lines.
std::vector<Problem> check_trie_shape(Family family, const std::vector<TrieFileSummary>& files,
                                      std::size_t max_lines = kTrieMaxLines);

// Where a key is, or would go, in a trie whose folders (paths relative to
// refs/<family>/, without a trailing "/") are `folders`.
struct TrieSlot {
  // The file that holds the key, or would once it is added: "<folders>/<digit>".
  std::string path;
  // The folder the key's digits lead into but leave before its name ends
  // (the key shares its first digits, not all): adding the key renames that
  // folder to the digits they share, a new folder holding the old one's
  // entries under the rest of its name, and the file `path` beside it.
  std::optional<std::string> split_folder;
  friend bool operator==(const TrieSlot&, const TrieSlot&) = default;
};
TrieSlot locate_in_trie(std::string_view key, const std::set<std::string>& folders);

}  // namespace kistore
