#include "cli/sync_output.h"
#include "cli/terminal.h"

#include <cstdio>

#include "store/trust.h"

namespace kistore::cli {

void SyncProgress::update(const char* stage, std::size_t done, std::size_t total, std::uint64_t bytes) {
  if (current_ != stage) {
    if (bar_) bar_->finish();
    current_ = stage;
    bar_ = std::make_unique<Progress>(g_, stage);
  }
  bar_->update(done, total, bytes);
}

void SyncProgress::finish() {
  if (bar_) bar_->finish();
  bar_.reset();
  current_.clear();
}

SyncOptions sync_options(const Globals& g, Store& store, SyncProgress& progress) {
  SyncOptions o;
  o.commit.author = g.author;
  o.commit.sign = signer_for(g, &store);
  o.trust = load_trust(store);
  o.progress = progress.callback();
  return o;
}

namespace {

Json problems_json(const std::vector<Problem>& list) {
  Json out = Json::array();
  for (const Problem& p : list) {
    Json o = Json::object();
    o.set("kind", p.kind);
    o.set("path", p.path);
    o.set("detail", p.detail);
    out.push_back(std::move(o));
  }
  return out;
}

std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

Json pull_json(const PullReport& r) {
  Json out = Json::object();
  out.set("remote", r.remote);
  out.set("url", r.url);
  out.set("result", r.result);
  out.set("fetched_objects", static_cast<long long>(r.fetched_objects));
  out.set("new_commits", static_cast<long long>(r.new_commits));
  out.set("new_documents", static_cast<long long>(r.new_documents));
  out.set("incoming", r.incoming.empty() ? Json() : Json(r.incoming));
  out.set("commit", r.commit ? Json(*r.commit) : Json());
  Json notes = Json::array();
  for (const std::string& n : r.notes) notes.push_back(n);
  out.set("notes", std::move(notes));
  out.set("problems", problems_json(r.problems));
  return out;
}

void print_refusal(const PullReport& r) {
  for (const Problem& p : r.problems)
    std::fprintf(stderr, "refused: %s: %s: %s\n", shown(p.kind).c_str(), shown(p.path).c_str(),
                 shown_message(p.detail).c_str());
  std::fprintf(stderr,
               "error: refused to take %s from %s (%s): %s in the incoming history; the store is unchanged\n",
               shown(r.incoming.substr(0, 12)).c_str(), shown(r.remote).c_str(), shown(r.url).c_str(),
               plural(r.problems.size(), "problem").c_str());
}

int print_pull(const Globals& g, const PullReport& r) {
  if (!g.quiet)
    for (const std::string& n : r.notes) std::fprintf(stderr, "note: %s\n", shown_message(n).c_str());
  if (r.refused()) {
    print_refusal(r);
    if (g.json) print_json(pull_json(r));
    return kProblems;
  }
  if (g.json) {
    print_json(pull_json(r));
    return kOk;
  }
  if (g.quiet) return kOk;
  std::string head = r.commit ? r.commit->substr(0, 12) : std::string("empty");
  std::string remote = shown(r.remote), incoming = shown(r.incoming.substr(0, 12));
  std::string text;
  if (r.result == "up-to-date")
    text = "Already up to date with " + remote + " (" + head + ").";
  else if (r.result == "fast-forward")
    text = "Fast-forwarded to " + head + " from " + remote + ": " + plural(r.new_commits, "new commit") + ", " +
           plural(r.new_documents, "new document") + ".";
  else
    text = "Merged " + remote + " (" + incoming + "): merge commit " + head + ", " +
           plural(r.new_commits, "new commit") + ", " + plural(r.new_documents, "new document") + ".";
  std::printf("%s\n", text.c_str());
  return kOk;
}

}  // namespace kistore::cli
