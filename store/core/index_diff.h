// What changed in format 3's index between two trees, as facts: the lines of
// one family (refs/<family>/, refs/index_lines.h) that one tree has and the
// other lacks or holds otherwise. What a merge takes from each side, which
// runs a commit's levels change (the level rules of SPEC §1), and what a
// run's story shows, all read an index change this way.
//
// Only the files that differ are read: the trees' diff names them, and a
// file that one side has at one path and the other at another (a folder the
// trie moved whole) holds the same lines on both and is not read. Every file
// read is checked as parse_index_file checks it (sorted lines of the family
// under its path's digits); a key in two files of one side is corruption.
//
// Thread-safety: as the LayoutTrees'.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "refs/index_lines.h"
#include "store/core/layout_trees.h"

namespace kistore {

// One fact of a family that differs between two trees: its key and its line
// on each side (nullopt on the side that has none).
struct FactChange {
  std::string key;
  std::optional<std::string> before, after;  // lines, "\n" included
  friend bool operator==(const FactChange&, const FactChange&) = default;
};

// The facts of `family` that differ between the trees `from` and `to`
// (null: the empty tree), in key order. Error(kCorruption) naming the path
// (and line) for a file that is not lines of the family under its path's
// digits, a path under refs/<family>/ that is not a trie path (a name that
// is not hex, a file named by more than one digit), or a key in two files
// of one tree; as LayoutTrees for a tree or blob that cannot be read.
std::vector<FactChange> diff_facts(const LayoutTrees& trees, const git_oid* from, const git_oid* to, Family family);

// The same changes as diff_facts, for trees whose lines were checked when
// they came in (the store's own history, a pulled commit after
// IncomingChecker): each file is split into its lines and checked as
// LayoutTrees::index_file checks it (each line "\n"-terminated and keyed
// {"@key":"<hex>" under the file's digits, keys ascending, no key in two
// files), but no line is parsed as JSON. Errors as diff_facts.
std::vector<FactChange> diff_lines(const LayoutTrees& trees, const git_oid* from, const git_oid* to, Family family);

// A change and, when the line is new or changed, the fact it holds.
struct CheckedFactChange {
  FactChange change;
  std::optional<IndexFact> after;
};
// The changes of diff_facts for a tree `to` that came in against a parent
// `from` that is trusted (the store's own, or checked before it): `from`'s
// files are split as diff_lines splits them; `to`'s files are split and
// checked the same way, none of them empty, and each line that `from` does
// not hold byte for byte is parsed (parse_line) once, naming its file and
// line. A line `to` shares with `from` is `from`'s, already checked.
// Errors as diff_facts.
std::vector<CheckedFactChange> diff_incoming(const LayoutTrees& trees, const git_oid* from, const git_oid* to,
                                             Family family);

// The keys of `family` that `to` has a line for and `from` has none, in key
// order: what the commits from `from` to `to` added (`kistore check`'s new
// runs). Reads the files diff_facts reads, but only each line's key, as its
// first member is written (SPEC §2), not the whole line: Error(kCorruption)
// naming the file and line for a line that does not start with
// {"@key":"<hex of the family's length>"; errors as diff_facts otherwise.
// Lines whose key is on both sides (changed or not) are not listed.
std::vector<std::string> added_keys(const LayoutTrees& trees, const git_oid* from, const git_oid* to, Family family);

// The keys of `family` that `from` has a line for and `to` has none, in key
// order: what a merge whose tree is `to` drops of its parent `from`. Reads
// only the files of `from` that `to` lacks or holds otherwise, and for each
// of their keys the file of `to` it leads to: a merge onto a small parent
// costs that parent's lines, not the merge's. Errors as diff_facts.
std::vector<std::string> dropped_keys(const LayoutTrees& trees, const git_oid* from, const git_oid* to, Family family);

}  // namespace kistore
