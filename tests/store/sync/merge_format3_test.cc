// A pull's merge of two format-3 stores (store/sync/merge.h; refs/layout.h:
// taught room by room): adds, attestations and signed reruns made apart,
// into the same trie files, merge to the tree one store given all of them
// holds, and the merge commit passes the checks a pull makes.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "store/core/layout_trees.h"
#include "store/git/git.h"
#include "store/history/level_audit.h"
#include "store/sync/incoming.h"
#include "store/sync/merge.h"
#include "tests/store/format3.h"

namespace kistore {
namespace {

using namespace test_support;

Json seed_bundle() { return parse_json(format3_data(kFormat3Fixture), kFormat3Fixture); }

// Another run of the seed run's group (the same trie file of refs/groups).
Document variant(int n) {
  Json run = *seed_bundle().find("run");
  run.find("spec")->find("timing")->find("latencyNs")->set("median", 2600000 + n);
  run.find("spec")->find("sourceNative")->set("externalId", "variant/" + std::to_string(n));
  return Document::from_json(run, Location{"variant.json", ""});
}

Document note(const Digest& subject, const std::string& body) {
  Json doc = parse_json(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"Attestation","spec":{"type":"note","author":"Ann <a@example.com>"}})", "att");
  doc.find("spec")->set("subject", subject.str());
  doc.find("spec")->set("body", body);
  return Document::from_json(doc, Location{"att.json", ""});
}

void add(Store& store, const std::vector<Document>& docs) {
  std::vector<AddedDocument> in;
  for (const Document& d : docs) in.push_back({&d, "in.json"});
  AddOptions o;
  o.commit = as("T <t@example.org>");
  add_documents(store, in, o);
}

// A signed rerun of `run` whose median is `median` ns.
void rerun(Format3Store& s, Store& store, const Digest& run, double median) {
  Json bundle = seed_bundle();
  Json* spec = bundle.find("run")->find("spec");
  const Document original = store.snapshot().document(run);
  *bundle.find("run")->find("spec") = original.spec();
  spec = bundle.find("run")->find("spec");
  spec->find("timing")->find("latencyNs")->set("median", median);
  spec->erase("sourceNative");
  RerunOptions o;
  o.tolerance = 0.10;
  o.key = s.controller;
  o.key_source = "controller";
  o.author = "Controller <c@example.org>";
  record_rerun(store, run.str(), InputItem{Location{"rerun.json", ""}, Bundle::from_json(bundle, Location{"rerun.json", ""})}, o);
}

std::string git(const std::string& dir, const std::string& args) { return must("git --git-dir=" + quote(dir) + " " + args); }

// The merge a pull of `b_dir` into `a` builds, committed; its outcome.
MergeOutcome pull_merge(Format3Store& a, const std::string& b_dir) {
  git(a.dir, "fetch -q " + quote(b_dir) + " main:refs/remotes/b/main");
  const CommitId local = cid(trim(git(a.dir, "rev-parse main"))), incoming = cid(trim(git(a.dir, "rev-parse b/main")));
  MergeOutcome outcome;
  LayoutTrees trees(a.store.repo());
  LevelAudit levels(a.store, load_trust(a.store));
  a.store.commit([&](const Snapshot&) { return build_merge(trees, levels, local, incoming, "b", outcome); },
                 as("T <t@example.org>"));
  return outcome;
}

// verify's problems, one a line ("" when it is clean).
std::string verify_problems(const Store& store) {
  VerifyOptions vo;
  vo.trust = load_trust(store);
  std::string problems;
  for (const Problem& p : verify_store(store, vo).problems) problems += p.path + ": " + p.detail + "\n";
  return problems;
}

// A store b holding a's history, with a's controllers.
Store clone_of(Format3Store& a, const std::string& b_dir) {
  Store b = Store::init(b_dir);
  git(b_dir, "fetch -q " + quote(a.dir) + " main:main");
  save_trust(b, load_trust(a.store));
  return b;
}

TEST_CASE("merge of two format-3 stores: the union of their facts, as one store holding both", "[sync][merge][index3]") {
  Format3Store a;
  const std::string b_dir = a.tmp.path + "/b";
  Store b = clone_of(a, b_dir);
  const Digest v1 = variant(1).digest();
  add(a.store, {variant(3), note(v1, "from a")});
  add(b, {variant(4), note(v1, "from b")});
  rerun(a, b, v1, 2600001 * 1.3);  // disputed, in b

  const MergeOutcome outcome = pull_merge(a, b_dir);
  CHECK(outcome.new_documents == 3);  // variant 4, b's note, the rerun

  // One store given everything in one more add and the same rerun.
  Format3Store c;
  add(c.store, {variant(3), note(v1, "from a"), variant(4), note(v1, "from b")});
  rerun(c, c.store, v1, 2600001 * 1.3);
  CHECK(trim(git(a.dir, "rev-parse main:refs")) == trim(git(c.dir, "rev-parse main:refs")));
  CHECK(trim(git(a.dir, "rev-parse main:objects")) == trim(git(c.dir, "rev-parse main:objects")));
  CHECK(sh("git --git-dir=" + quote(a.dir) + " fsck --strict --no-dangling").rc == 0);

  // The merged store verifies, and b, pulling it, accepts every commit.
  CHECK(verify_problems(a.store).empty());
  git(b_dir, "fetch -q " + quote(a.dir) + " main:refs/remotes/a/main");
  LayoutTrees trees(b.repo());
  LevelAudit levels(b, load_trust(b));
  IncomingChecker checker(trees, levels);
  const std::string ids = git(b_dir, "rev-list --reverse refs/remotes/a/main ^main");
  for (std::size_t at = 0, nl; at < ids.size(); at = nl + 1) {
    nl = ids.find('\n', at);
    checker.check_commit(git::parse_oid(ids.substr(at, nl - at)));
  }
  std::string seen;
  for (const Problem& p : checker.problems()) seen += p.path + ": " + p.detail + "\n";
  INFO(seen);
  CHECK(checker.problems().empty());
}

TEST_CASE("merge of two format-3 stores: concurrent verdicts on one run give disputed, on both sides",
          "[sync][merge][index3]") {
  Format3Store a;
  const std::string b_dir = a.tmp.path + "/b";
  Store b = clone_of(a, b_dir);
  const Digest v2 = variant(2).digest();
  rerun(a, a.store, v2, 2600002 * 1.01);  // reproduced, in a
  rerun(a, b, v2, 2600002 * 1.5);         // disputed, in b
  const MergeOutcome outcome = pull_merge(a, b_dir);
  const Snapshot merged = a.store.snapshot();
  auto line = find_fact(merged, Family::kLevels, v2.hex());
  REQUIRE(line);
  CHECK(std::get<LevelFact>(*line).level == Level::kDisputed);
  CHECK(facts_with_prefix(merged, Family::kReruns, v2.hex()).size() == 2);
  bool noted = false;
  for (const std::string& n : outcome.notes) noted = noted || n.find("the signed history gives disputed") != std::string::npos;
  CHECK(noted);
  CHECK(verify_problems(a.store).empty());
}

}  // namespace
}  // namespace kistore
