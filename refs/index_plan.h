// Format 3's index trie, changed in place (docs/format.md "Format 3", "How
// an add rewrites the trie"): the few edits that turn a family's trie into
// build_trie of its lines after some lines are put or removed, read lazily
// through a TrieReader so that a store drives it through its git trees.
//
// The plan is a function of the old tree and the changes only, and applying
// it gives exactly build_trie(new lines, T): so two stores given the same
// facts in any order and any batching hold the same tree.
//
// Bounds, for c changed keys (r of them removals) in a trie whose files are
// at most h folders below refs/<family>/ (h <= kTrieMaxFolders), and
// whatever the family's size:
// - reads: the folders on each changed key's path, each listed once (at most
//   c*(h+1) listings), and the one file each key is in or would go to (at
//   most c files of at most T lines). Where removals may bring a folder down
//   to T lines, that folder's files (at most 16, read only when its listing
//   does not settle it: a folder below holds more than T lines, a file at
//   least one); where it does fall to T, everything below it (at most T + r
//   lines). Never a folder or a file off those paths.
// - edits: for each changed key, its file rewritten (at most T lines); a file
//   passing T becomes a folder of at most 16 files; a split or a re-fold
//   moves a folder whole (git keeps its tree) and writes at most one new
//   file; a folder falling to T lines becomes one file of at most T lines;
//   where a batch changes keys inside a folder that moves, that folder's
//   unchanged entries (at most 16) are moved one by one. So one add of one
//   fact writes O(1) files of at most T lines.
// - time: O(c * 16 * D * (h + c)) steps in memory beyond the bytes read, D
//   the keys' digits (the digits a new folder's name runs through are found
//   by jumps over known shared prefixes, then a digit at a time).
//
// For the store's index writers. Thread-safety: plan_trie_update keeps its
// state on the stack; the reader is used from the calling thread only.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "refs/index_trie.h"

namespace kistore {

// How plan_trie_update reads one family's old trie. Paths are relative to
// refs/<family>/, without a trailing "/"; "" is refs/<family>/ itself.
// One index file's lines, checked as find_line checks them: each ends in
// "\n" and begins {"@key":"<hex>" with the file's digits, keys ascending.
struct TrieFileLines {
  std::string bytes;
  std::vector<std::pair<std::string_view, std::string_view>> lines;  // key, line with its "\n": views of bytes
  // The line of `key`, if the file has one (a binary search).
  std::optional<std::string_view> find(std::string_view key) const;
};
// `bytes`, the file at `path` (named `where` in messages), split and checked:
// Error(kCorruption) "<where>:<line>: expected …" at the first wrong line.
std::shared_ptr<const TrieFileLines> parse_trie_file(std::string bytes, const std::string& path, const std::string& where);

class TrieReader {
 public:
  struct Entry {
    std::string name;  // one lowercase hex digit (a file) or a folder's folded name
    bool folder = false;
    friend bool operator==(const Entry&, const Entry&) = default;
  };
  virtual ~TrieReader() = default;
  // The entries of the folder at `path`, in any order; none when the family
  // has no folder there (an empty family's "").
  virtual std::vector<Entry> list(const std::string& path) = 0;
  // The bytes of the file at `path` (a path that list() named as a file).
  virtual std::string read(const std::string& path) = 0;
  // How messages name the file at `path`: "index file <path>" unless the
  // reader knows its place ("refs/groups/<path>").
  virtual std::string where(const std::string& path) const { return "index file " + path; }
  // The file at `path` split into its checked lines: parse_trie_file of
  // read(path), unless the reader keeps files it has parsed.
  virtual std::shared_ptr<const TrieFileLines> lines(const std::string& path) {
    return parse_trie_file(read(path), path, where(path));
  }
};

// A TrieReader over files in memory (build_trie's form).
class TrieFilesReader : public TrieReader {
 public:
  explicit TrieFilesReader(const TrieFiles& files) : files_(files) {}
  std::vector<Entry> list(const std::string& path) override;
  std::string read(const std::string& path) override;

 private:
  const TrieFiles& files_;
};

// The lines of a family that change: put (insert a line, or replace the line
// of its key) and remove (a key whose line goes; a key that has no line is
// nothing to remove).
struct TrieChanges {
  std::vector<KeyedLine> put;
  std::vector<std::string> remove;
};

// One path of a plan, relative to refs/<family>/. Each replaces whatever the
// old tree has at its path (a file, a folder or nothing), so that a removal
// followed by paths beneath it makes a new folder there.
struct TrieEdit {
  enum class Kind {
    kWrite,   // a file of `bytes`
    kRemove,  // nothing: the file or the whole folder that was there goes
    kMove,    // the file or folder the OLD tree has at `from`, as it was
              // (git keeps its tree); nothing of the plan lies beneath it,
              // and `from` itself is removed or replaced by the plan
  };
  Kind kind = Kind::kWrite;
  std::string bytes;  // kWrite
  std::string from;   // kMove
  friend bool operator==(const TrieEdit&, const TrieEdit&) = default;
};
TrieEdit trie_write(std::string bytes);
TrieEdit trie_remove();
TrieEdit trie_move(std::string from);

// Edits by path. Applied in this (bytewise) order, which puts a path before
// the paths beneath it: git's tree order for the store's tree writer.
using TriePlan = std::map<std::string, TrieEdit>;

// The edits that turn the trie `reader` shows (build_trie of its lines with
// T = max_lines) into build_trie of its lines with `changes` made. A change
// that changes nothing (a put of the line already there, a removal of a key
// that has none) makes no edit. Throws std::invalid_argument when the
// changed keys are not lowercase hex of one length, a line does not begin
// {"@key":"<its key>" or end in "\n", or a key is put twice or both put and
// removed; Error(kCorruption), naming the file as reader.where does, when a
// file read is not sorted lines under its path's digits, each starting
// {"@key":"<hex>" with as many digits as the changed keys (callers render
// those from facts, so a file of other keys is what is wrong);
// Error(kInvalidInput), as build_trie, when the new lines
// would need a folder the plan makes or moves more than kTrieMaxFolders
// folders deep. (A split moves a folder one level down without reading
// below it: files already at the bound inside it would pass it unseen, which
// check_trie reports; that takes keys ground to share digits at 14 levels.)
TriePlan plan_trie_update(TrieReader& reader, const TrieChanges& changes, std::size_t max_lines = kTrieMaxLines);

// The line of `key` in the trie `reader` shows, if any: the folders on the
// key's path are listed and the one file it would be in is read, its lines
// checked to begin {"@key":"<hex>" under the file's digits, in ascending
// order (Error(kCorruption), naming the file as reader.where does).
std::optional<std::string> find_line(TrieReader& reader, std::string_view key);

// `files` with the plan applied (every kMove takes from `files` as it was).
void apply_trie_plan(TrieFiles& files, const TriePlan& plan);

}  // namespace kistore
