// An in-memory repository behind the git door (store/git/commit_graph.h), for
// unit tests of the rooms that read commits (history, verify), as libgit2's
// own tests fake their object-database backends: commits, trees and blobs
// made in memory, no repository, no git, no server.
//
// It keeps the libgit2 door's contract where a caller can tell: commits are
// found under the id their text hashes to; a walk that meets a commit it
// cannot read fails before it visits any (libgit2 prepares its walk whole),
// and a commit missing among `from` or `hidden` is Error(kIO) "<what>: …";
// a topological walk lists every commit before its parents, newest
// (committer time) first where the graph leaves a choice; a commit is no
// descendant of itself. Signed commits carry a real SSH signature over the
// commit's text without its gpgsig header, as git makes them.
//
// It records what the code under test asked: every walk (`walks`) and how
// many commits each visited (`visits`).
#pragma once

#include <git2.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "objects/commit_id.h"
#include "objects/error.h"
#include "objects/ssh_signature.h"
#include "store/git/commit_graph.h"
#include "store/git/raw_tree.h"
#include "tests/store/git/memory_source.h"

namespace kistore::test_support {

class MemoryCommits final : public git::CommitGraph {
 public:
  // A commit to make. `time` is both the author's and the committer's.
  struct Spec {
    git_oid tree{};
    std::vector<CommitId> parents;
    std::string message = "m\n";
    std::int64_t time = 1700000000;
    const SshPrivateKey* signer = nullptr;  // signs the commit's text when set
    bool forge_signature = false;           // the signature covers other bytes than the commit's
  };

  MemorySource objects;  // trees, blobs and the commits' text

  // A tree of `files` (path -> bytes), folders made from the paths, every
  // tree's entries in git's order.
  git_oid tree(const std::map<std::string, std::string>& files) {
    std::map<std::string, std::map<std::string, std::string>> folders;
    std::vector<std::tuple<std::string, bool, git_oid>> entries;
    for (const auto& [path, bytes] : files) {
      std::size_t slash = path.find('/');
      if (slash == std::string::npos) entries.emplace_back(path, false, objects.blob(bytes));
      else folders[path.substr(0, slash)][path.substr(slash + 1)] = bytes;
    }
    for (const auto& [name, below] : folders) entries.emplace_back(name, true, tree(below));
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      return git::compare_entries(std::get<0>(a), std::get<1>(a), std::get<0>(b), std::get<1>(b)) < 0;
    });
    std::vector<std::pair<std::string, git_oid>> raw;
    for (const auto& [name, is_tree, id] : entries) raw.emplace_back((is_tree ? "40000 " : "100644 ") + name, id);
    return objects.tree(raw);
  }

  CommitId commit(const Spec& spec) {
    std::string head = "tree " + git::oid_str(spec.tree) + "\n";
    for (const CommitId& p : spec.parents) head += "parent " + p.hex() + "\n";
    const std::string when = std::to_string(spec.time) + " +0000\n";
    head += "author A <a@example.org> " + when + "committer A <a@example.org> " + when;
    const std::string payload = head + "\n" + spec.message;
    Stored stored;
    std::string text = payload;
    if (spec.signer) {
      std::string armored = spec.signer->sign(spec.forge_signature ? payload + "forged" : payload);
      if (!armored.empty() && armored.back() == '\n') armored.pop_back();
      std::string header = "gpgsig";
      std::size_t start = 0;
      while (start <= armored.size()) {
        std::size_t end = armored.find('\n', start);
        if (end == std::string::npos) end = armored.size();
        header += " " + armored.substr(start, end - start) + "\n";
        start = end + 1;
      }
      text = head + header + "\n" + spec.message;
      stored.signature = {armored, payload};
    }
    const CommitId id = git::to_commit_id(objects.add(GIT_OBJECT_COMMIT, text));
    stored.info.id = id;
    stored.info.tree = spec.tree;
    stored.info.parents = spec.parents;
    stored.info.author_name = "A";
    stored.info.author_email = "a@example.org";
    stored.info.author_time = stored.info.committer_time = spec.time;
    stored.info.message = spec.message;
    stored.info.summary = summary_of(spec.message);
    commits_.insert_or_assign(id, std::move(stored));
    return id;
  }
  // Forgets the commit `id` (a history whose commit names a missing parent).
  void remove(const CommitId& id) {
    commits_.erase(id);
    objects.remove(git::to_oid(id));
  }

  std::optional<git::CommitInfo> find(const CommitId& id, std::string* why) override {
    auto it = commits_.find(id);
    if (it == commits_.end()) {
      if (why) *why = not_found(id);
      return std::nullopt;
    }
    return it->second.info;
  }

  git::CommitSignature signature(const CommitId& id) override {
    auto it = commits_.find(id);
    return it == commits_.end() ? git::CommitSignature{} : it->second.signature;
  }

  std::string walk(const git::AncestorWalk& w, const std::function<bool(const CommitId&)>& visit) override {
    walks.push_back(w);
    visits.push_back(0);
    for (const std::vector<CommitId>* ids : {&w.from, &w.hidden})
      for (const CommitId& id : *ids)
        if (!commits_.count(id)) throw Error(ErrorCode::kIO, w.what + ": " + not_found(id));
    std::unordered_set<CommitId> hidden, chosen;
    std::string why;
    if (!reach(w.hidden, {}, hidden, why) || !reach(w.from, hidden, chosen, why)) return why;
    // Every commit before its parents; among those ready, the newest first.
    std::unordered_map<CommitId, int> children;
    for (const CommitId& c : chosen)
      for (const CommitId& p : commits_.at(c).info.parents)
        if (chosen.count(p)) ++children[p];
    std::vector<CommitId> ready;
    for (const CommitId& c : chosen)
      if (!children[c]) ready.push_back(c);
    while (!ready.empty()) {
      auto newest = std::max_element(ready.begin(), ready.end(), [&](const CommitId& a, const CommitId& b) {
        const auto ta = commits_.at(a).info.committer_time, tb = commits_.at(b).info.committer_time;
        return ta != tb ? ta < tb : b < a;
      });
      const CommitId next = *newest;
      ready.erase(newest);
      ++visits.back();
      if (!visit(next)) return "";
      for (const CommitId& p : commits_.at(next).info.parents)
        if (chosen.count(p) && --children[p] == 0) ready.push_back(p);
    }
    return "";
  }

  std::optional<bool> descends_from(const CommitId& commit, const CommitId& ancestor) override {
    if (!commits_.count(commit) || !commits_.count(ancestor)) return std::nullopt;
    if (commit == ancestor) return false;
    std::unordered_set<CommitId> below;
    std::string why;
    if (!reach(commits_.at(commit).info.parents, {}, below, why)) return std::nullopt;
    return below.count(ancestor) > 0;
  }

  // The common ancestor that no other common ancestor descends from (the
  // newest by committer time where several are: a criss-cross history).
  std::optional<CommitId> merge_base(const CommitId& a, const CommitId& b) override {
    std::unordered_set<CommitId> below_a, below_b;
    std::string why;
    if (!reach({a}, {}, below_a, why) || !reach({b}, {}, below_b, why)) return std::nullopt;
    std::vector<CommitId> common;
    for (const CommitId& c : below_a)
      if (below_b.count(c)) common.push_back(c);
    std::optional<CommitId> best;
    for (const CommitId& c : common) {
      bool beneath_another = false;
      for (const CommitId& other : common) beneath_another = beneath_another || descends_from(other, c).value_or(false);
      if (beneath_another) continue;
      if (!best || commits_.at(c).info.committer_time > commits_.at(*best).info.committer_time) best = c;
    }
    return best;
  }

  std::unique_ptr<git::TreeReader> trees(git::TreeReader::Options options) override {
    options.packs = nullptr;
    return std::make_unique<git::TreeReader>(
        [this](const git_oid& id, git_object_t& type, std::string& bytes, std::string& why) {
          if (objects.get(id, type, bytes)) return true;
          why = "object not found - no match for id (" + git::oid_str(id) + ")";
          return false;
        },
        options);
  }

  std::optional<std::string> blob(const git_oid& id, std::size_t max) override {
    git_object_t type;
    std::string bytes;
    if (!objects.get(id, type, bytes))
      throw Error(ErrorCode::kIO, "reading blob " + git::oid_str(id) + ": object not found");
    if (type != GIT_OBJECT_BLOB || bytes.size() > max) return std::nullopt;
    return bytes;
  }

  std::vector<git::AncestorWalk> walks;  // every walk asked for, in order
  std::vector<std::size_t> visits;       // how many commits each walk visited

 private:
  struct Stored {
    git::CommitInfo info{*CommitId::parse(std::string(40, '0'))};
    git::CommitSignature signature;
  };
  static std::string not_found(const CommitId& id) { return "object not found - no match for id (" + id.hex() + ")"; }
  static std::string summary_of(const std::string& message) {
    std::string out;
    std::size_t start = message.find_first_not_of(" \n");
    if (start == std::string::npos) return out;
    std::size_t end = message.find("\n\n", start);
    out = message.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::replace(out.begin(), out.end(), '\n', ' ');
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  }
  // Adds to `out` every commit reachable from `tips` and not in `stop`;
  // false, with `why`, when one of them cannot be read.
  bool reach(const std::vector<CommitId>& tips, const std::unordered_set<CommitId>& stop,
             std::unordered_set<CommitId>& out, std::string& why) const {
    std::vector<CommitId> todo(tips.begin(), tips.end());
    while (!todo.empty()) {
      CommitId c = todo.back();
      todo.pop_back();
      if (stop.count(c) || !out.insert(c).second) continue;
      auto it = commits_.find(c);
      if (it == commits_.end()) {
        why = not_found(c);
        return false;
      }
      for (const CommitId& p : it->second.info.parents) todo.push_back(p);
    }
    return true;
  }

  std::unordered_map<CommitId, Stored> commits_;
};

}  // namespace kistore::test_support
