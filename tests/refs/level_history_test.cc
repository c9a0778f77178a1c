#include "refs/level_history.h"

#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace kistore {
namespace {

using V = Verdict;

// Reruns E0 < E1 < ... in digest order, and runs R, S.
const std::vector<Digest>& reruns() {
  static const std::vector<Digest> sorted = [] {
    std::vector<Digest> d;
    for (int i = 0; i < 6; ++i) d.push_back(Digest::of("rerun " + std::to_string(i)));
    std::sort(d.begin(), d.end());
    return d;
  }();
  return sorted;
}
const Digest& E(int i) { return reruns()[static_cast<std::size_t>(i)]; }
const Digest kRun = Digest::of("run R");
const Digest kOther = Digest::of("run S");

// A commit graph by parent lists, as git would hold it; is_ancestor walks
// parents (first and second alike), as git_graph_descendant_of does.
struct Graph {
  std::map<std::string, std::vector<std::string>> parents;

  bool is_ancestor(const std::string& ancestor, const std::string& descendant) const {
    std::vector<std::string> todo{descendant};
    std::set<std::string> seen;
    while (!todo.empty()) {
      std::string c = todo.back();
      todo.pop_back();
      auto it = parents.find(c);
      if (it == parents.end()) continue;
      for (const std::string& p : it->second) {
        if (p == ancestor) return true;
        if (seen.insert(p).second) todo.push_back(p);
      }
    }
    return false;
  }
  IsAncestor oracle() const {
    return [this](const std::string& a, const std::string& d) { return is_ancestor(a, d); };
  }
};

std::string render(const LevelDecision& d) {
  std::ostringstream out;
  out << level_name(d.entry.level) << " evidence=";
  if (!d.entry.evidence) out << "null";
  for (int i = 0; i < 6; ++i)
    if (d.entry.evidence == E(i)) out << "E" << i;
  out << " deciding=";
  for (std::size_t i = 0; i < d.deciding.size(); ++i) out << (i ? "," : "") << d.deciding[i].commit;
  return out.str();
}

TEST_CASE("decide_level: the newest valid rerun commits decide, by ancestry", "[level][history]") {
  // The histories, drawn oldest first (a merge lists its first parent first):
  //   line:     A - C1 - C2 - C3
  //   fork:     A - B1, A - B2, M(B1, B2), M - C4
  //   three:    A - B1 - B3, A - B2 (B3 and B2 concurrent)
  //   attack:   A - C1 - C2, X(C2, C1): an unsigned merge naming C1 again
  Graph line{{{"C1", {"A"}}, {"C2", {"C1"}}, {"C3", {"C2"}}}};
  Graph fork{{{"B1", {"A"}}, {"B2", {"A"}}, {"M", {"B1", "B2"}}, {"C4", {"M"}}, {"B3", {"B1"}}}};
  Graph attack{{{"C1", {"A"}}, {"C2", {"C1"}}, {"X", {"C2", "C1"}}}};
  struct Case {
    const char* name;
    const Graph* graph;
    Level default_level;
    std::vector<RerunCommit> valid;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"no reruns: the default, evidence null", &line, Level::kSourceNative, {},
       "source-native evidence=null deciding="},
      {"no reruns, reported", &line, Level::kReported, {}, "reported evidence=null deciding="},
      {"one reproduced", &line, Level::kSourceNative, {{"C1", V::kReproduced, E(1)}},
       "reproduced evidence=E1 deciding=C1"},
      {"one disputed", &line, Level::kReported, {{"C1", V::kDisputed, E(1)}}, "disputed evidence=E1 deciding=C1"},
      {"linear: a later disputed overrides an earlier reproduced", &line, Level::kSourceNative,
       {{"C1", V::kReproduced, E(1)}, {"C2", V::kDisputed, E(2)}}, "disputed evidence=E2 deciding=C2"},
      {"linear: a later reproduced overrides an earlier disputed", &line, Level::kSourceNative,
       {{"C1", V::kDisputed, E(1)}, {"C2", V::kReproduced, E(2)}}, "reproduced evidence=E2 deciding=C2"},
      {"linear: the order of the list does not matter", &line, Level::kSourceNative,
       {{"C3", V::kReproduced, E(3)}, {"C1", V::kDisputed, E(1)}, {"C2", V::kDisputed, E(2)}},
       "reproduced evidence=E3 deciding=C3"},
      {"linear: the newest's verdict whatever its evidence's digest", &line, Level::kSourceNative,
       {{"C1", V::kReproduced, E(5)}, {"C2", V::kReproduced, E(0)}}, "reproduced evidence=E0 deciding=C2"},
      {"concurrent: reproduced + reproduced -> reproduced, smaller evidence", &fork, Level::kSourceNative,
       {{"B1", V::kReproduced, E(4)}, {"B2", V::kReproduced, E(2)}}, "reproduced evidence=E2 deciding=B1,B2"},
      {"concurrent: reproduced + disputed -> disputed, the disputing evidence", &fork, Level::kSourceNative,
       {{"B1", V::kReproduced, E(0)}, {"B2", V::kDisputed, E(3)}}, "disputed evidence=E3 deciding=B1,B2"},
      {"concurrent: disputed + reproduced -> disputed, whichever side", &fork, Level::kSourceNative,
       {{"B2", V::kReproduced, E(0)}, {"B1", V::kDisputed, E(5)}}, "disputed evidence=E5 deciding=B1,B2"},
      {"concurrent: disputed + disputed -> disputed, smaller evidence", &fork, Level::kReported,
       {{"B1", V::kDisputed, E(4)}, {"B2", V::kDisputed, E(1)}}, "disputed evidence=E1 deciding=B1,B2"},
      {"a rerun after the merge of a dispute settles it", &fork, Level::kSourceNative,
       {{"B1", V::kReproduced, E(1)}, {"B2", V::kDisputed, E(2)}, {"C4", V::kReproduced, E(4)}},
       "reproduced evidence=E4 deciding=C4"},
      {"three: a later rerun on one side stays concurrent with the other", &fork, Level::kSourceNative,
       {{"B1", V::kDisputed, E(1)}, {"B2", V::kReproduced, E(2)}, {"B3", V::kReproduced, E(3)}},
       "reproduced evidence=E2 deciding=B2,B3"},
      {"three: ... and one dispute among the newest disputes", &fork, Level::kSourceNative,
       {{"B1", V::kReproduced, E(1)}, {"B2", V::kReproduced, E(2)}, {"B3", V::kDisputed, E(3)}},
       "disputed evidence=E3 deciding=B2,B3"},
      {"attack: a merge naming an old signed rerun does not restore it", &attack, Level::kSourceNative,
       {{"C2", V::kDisputed, E(2)}, {"C1", V::kReproduced, E(1)}}, "disputed evidence=E2 deciding=C2"},
      {"attack: nor when the old rerun comes last in the list", &attack, Level::kSourceNative,
       {{"C1", V::kReproduced, E(1)}, {"C2", V::kDisputed, E(2)}}, "disputed evidence=E2 deciding=C2"},
      {"duplicates count once", &line, Level::kSourceNative,
       {{"C1", V::kReproduced, E(1)}, {"C1", V::kReproduced, E(1)}}, "reproduced evidence=E1 deciding=C1"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(render(decide_level(c.default_level, c.valid, c.graph->oracle())) == c.expected);
  }
}

TEST_CASE("decide_level asks ancestry, not walk order: the attack of issue 12", "[level][history][attack]") {
  // main: A - C1 (signed rerun, reproduced, E1) - C2 (signed rerun, disputed, E2).
  // The attacker makes an unsigned merge X with parents (C2, C1) whose tree puts
  // R back at reproduced with evidence E1. A walk that visits X's second parent
  // last meets C1 last; the level must still be C2's.
  Graph g{{{"C1", {"A"}}, {"C2", {"C1"}}, {"X", {"C2", "C1"}}}};
  RerunCommitFacts merge;
  merge.op = "merge";
  merge.signed_by_controller = false;
  merge.level_changes[kRun] = LevelEntryValue{Level::kReproduced, E(1)};
  CHECK(check_rerun_commit("X", kRun, merge).invalid == "is not a rerun commit (Kistore-Op: merge)");
  // Even signed and labelled a rerun, X adds no rerun: E1 is already in C2's tree.
  merge.op = "rerun";
  merge.signed_by_controller = true;
  CHECK(check_rerun_commit("X", kRun, merge).invalid == "adds no rerun of this run");

  std::vector<RerunCommit> walk_order{{"C2", V::kDisputed, E(2)}, {"C1", V::kReproduced, E(1)}};
  LevelDecision d = decide_level(Level::kSourceNative, walk_order, g.oracle());
  CHECK(d.entry == LevelEntryValue{Level::kDisputed, E(2)});
  CHECK_FALSE(d.entry == *merge.level_changes[kRun]);  // so X's tree is refused
}

TEST_CASE("decide_level: an oracle that claims a cycle still never loses a dispute", "[level][history]") {
  IsAncestor everything = [](const std::string&, const std::string&) { return true; };
  LevelDecision d =
      decide_level(Level::kSourceNative, {{"P", V::kReproduced, E(1)}, {"Q", V::kDisputed, E(2)}}, everything);
  CHECK(render(d) == "disputed evidence=E2 deciding=P,Q");
}

// A valid rerun commit for kRun, reproduced with evidence E1; cases change one thing.
RerunCommitFacts valid_facts(V verdict = V::kReproduced) {
  RerunCommitFacts f;
  f.op = "rerun";
  f.signed_by_controller = true;
  f.level_changes[kRun] = LevelEntryValue{level_of(verdict), E(1)};
  f.reruns_added.push_back(AddedRerun{kRun, E(1), verdict, true});
  return f;
}

TEST_CASE("check_rerun_commit: a valid rerun commit", "[level][history]") {
  for (V verdict : {V::kReproduced, V::kDisputed}) {
    INFO(level_name(level_of(verdict)));
    RerunCommitCheck c = check_rerun_commit("c0ffee", kRun, valid_facts(verdict));
    REQUIRE(c.valid.has_value());
    CHECK(c.invalid.empty());
    CHECK(*c.valid == RerunCommit{"c0ffee", verdict, E(1)});
  }
  // Rerun entries of other runs do not change their levels: still valid for kRun
  // (and not valid for the other run, whose level it does not change).
  RerunCommitFacts f = valid_facts();
  f.reruns_added.push_back(AddedRerun{kOther, E(2), V::kDisputed, true});
  CHECK(check_rerun_commit("c", kRun, f).valid.has_value());
  CHECK(check_rerun_commit("c", kOther, f).invalid == "does not change this run's level");
}

TEST_CASE("check_rerun_commit says why a commit is not a valid rerun commit", "[level][history][errors]") {
  using Edit = std::function<void(RerunCommitFacts&)>;
  struct Case {
    const char* name;
    Edit edit;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"no trailer", [](auto& f) { f.op = ""; }, "has no Kistore-Op trailer"},
      {"an add", [](auto& f) { f.op = "add"; }, "is not a rerun commit (Kistore-Op: add)"},
      {"a merge", [](auto& f) { f.op = "merge"; }, "is not a rerun commit (Kistore-Op: merge)"},
      {"trailer case matters", [](auto& f) { f.op = "Rerun"; }, "is not a rerun commit (Kistore-Op: Rerun)"},
      {"unsigned or untrusted", [](auto& f) { f.signed_by_controller = false; },
       "is not signed by a trusted controller"},
      {"unsigned, changing two levels: the signature is told first",
       [](auto& f) {
         f.signed_by_controller = false;
         f.level_changes[kOther] = LevelEntryValue{Level::kReproduced, E(1)};
       },
       "is not signed by a trusted controller"},
      {"no rerun entry", [](auto& f) { f.reruns_added.clear(); }, "adds no rerun of this run"},
      {"a rerun of another run only", [](auto& f) { f.reruns_added[0].run = kOther; }, "adds no rerun of this run"},
      {"two reruns of this run",
       [](auto& f) { f.reruns_added.push_back(AddedRerun{kRun, E(2), V::kReproduced, true}); },
       "adds 2 reruns of this run"},
      {"the rerun's document is not stored", [](auto& f) { f.reruns_added[0].document_stored = false; },
       "adds the rerun entry of " + E(1).str() + " but not its document"},
      {"no level change", [](auto& f) { f.level_changes.clear(); }, "does not change this run's level"},
      {"changes another run's level instead",
       [](auto& f) {
         f.level_changes.clear();
         f.level_changes[kOther] = LevelEntryValue{Level::kReproduced, E(1)};
       },
       "does not change this run's level"},
      {"changes two runs' levels",
       [](auto& f) { f.level_changes[kOther] = LevelEntryValue{Level::kReproduced, E(1)}; },
       "changes the levels of 2 runs"},
      {"removes another run's level", [](auto& f) { f.level_changes[kOther] = std::nullopt; },
       "changes the levels of 2 runs"},
      {"removes this run's level, or leaves two", [](auto& f) { f.level_changes[kRun] = std::nullopt; },
       "leaves this run without a single level entry"},
      {"a level other than the rerun's verdict",
       [](auto& f) { f.level_changes[kRun] = LevelEntryValue{Level::kDisputed, E(1)}; },
       "sets the level disputed, but its rerun says reproduced"},
      {"a default level", [](auto& f) { f.level_changes[kRun] = LevelEntryValue{Level::kSourceNative, E(1)}; },
       "sets the level source-native, but its rerun says reproduced"},
      {"no evidence", [](auto& f) { f.level_changes[kRun] = LevelEntryValue{Level::kReproduced, std::nullopt}; },
       "names evidence null (expected the rerun it adds, " + E(1).str() + ")"},
      {"evidence that is not the rerun it adds",
       [](auto& f) { f.level_changes[kRun] = LevelEntryValue{Level::kReproduced, E(3)}; },
       "names evidence " + E(3).str() + " (expected the rerun it adds, " + E(1).str() + ")"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    RerunCommitFacts f = valid_facts();
    c.edit(f);
    RerunCommitCheck got = check_rerun_commit("c", kRun, f);
    CHECK_FALSE(got.valid.has_value());
    CHECK(got.invalid == c.expected);
  }
}

TEST_CASE("evidence_problem: evidence names a stored rerun of the run, and only for a rerun's level",
          "[level][history][errors]") {
  const std::set<Digest> stored{E(1), E(2)};
  struct Case {
    LevelEntryValue entry;
    std::set<Digest> stored;
    std::optional<std::string> expected;
  };
  const std::vector<Case> cases = {
      {{Level::kReported, std::nullopt}, stored, std::nullopt},
      {{Level::kSourceNative, std::nullopt}, {}, std::nullopt},
      {{Level::kReproduced, E(1)}, stored, std::nullopt},
      {{Level::kDisputed, E(2)}, stored, std::nullopt},
      {{Level::kReproduced, E(3)}, stored,
       "names evidence " + E(3).str() + ", which is not a stored rerun of this run"},
      {{Level::kDisputed, E(1)}, {}, "names evidence " + E(1).str() + ", which is not a stored rerun of this run"},
      {{Level::kReproduced, std::nullopt}, stored, "names no evidence for the level reproduced"},
      {{Level::kDisputed, std::nullopt}, stored, "names no evidence for the level disputed"},
      {{Level::kSourceNative, E(1)}, stored, "names evidence " + E(1).str() + " for the default level source-native"},
      {{Level::kReported, E(1)}, stored, "names evidence " + E(1).str() + " for the default level reported"},
  };
  for (const Case& c : cases) {
    INFO(level_name(c.entry.level) << " " << (c.entry.evidence ? c.entry.evidence->str() : "null"));
    CHECK(evidence_problem(c.entry, c.stored) == c.expected);
  }
}

TEST_CASE("verdicts are the two levels a rerun sets", "[level][history]") {
  CHECK(level_of(V::kReproduced) == Level::kReproduced);
  CHECK(level_of(V::kDisputed) == Level::kDisputed);
  CHECK(verdict_of(Level::kReproduced) == V::kReproduced);
  CHECK(verdict_of(Level::kDisputed) == V::kDisputed);
  CHECK_FALSE(verdict_of(Level::kReported).has_value());
  CHECK_FALSE(verdict_of(Level::kSourceNative).has_value());
}

}  // namespace
}  // namespace kistore
