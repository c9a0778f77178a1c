#include "cli/sync_output.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "cli/problems.h"
#include "cli/process_env.h"
#include "cli/output/terminal.h"
#include "store/history/trust.h"

namespace kistore::cli {

void SyncProgress::update(const char* stage, std::size_t done, std::size_t total, std::uint64_t bytes) {
  if (current_ != stage) {
    if (bar_) bar_->finish();
    current_ = stage;
    bar_ = std::make_unique<Progress>(g_, stage, "objects");
  }
  bar_->update(done, total, bytes);
}

void SyncProgress::finish() {
  if (bar_) bar_->finish();
  bar_.reset();
  current_.clear();
}

namespace {

// More than any ~/.netrc holds; what lies beyond is not read.
constexpr std::size_t kMaxNetrcBytes = 1u << 20;

// The variable's value; "" when it is unset or empty.
std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

Credentials credentials_from_environment() {
  const passwd* pw = getpwuid(getuid());
  std::string home = env("HOME");
  if (home.empty() && pw) home = pw->pw_dir;
  Credentials c;
  c.token = env("KISTORE_TOKEN");
  c.token_url = env("KISTORE_TOKEN_URL");
  c.ca_file = env("KISTORE_SSL_CAINFO");
  c.ssh_key = env("KISTORE_SSH_KEY");
  c.ssh_key_named = !c.ssh_key.empty();
  if (c.ssh_key.empty()) c.ssh_key = home + "/.ssh/id_ed25519";
  c.ssh_agent = env("SSH_AUTH_SOCK");
  if (std::string file = env("KISTORE_SSH_KNOWN_HOSTS"); !file.empty()) c.known_hosts.push_back(file);
  c.known_hosts.push_back(home + "/.ssh/known_hosts");
  c.user = env("USER");
  if (c.user.empty() && pw) c.user = pw->pw_name;
  // ~/.netrc, as git's https transport reads it: absent or unreadable, none.
  if (std::ifstream netrc(home + "/.netrc", std::ios::binary); netrc) {
    std::string text(kMaxNetrcBytes, '\0');
    netrc.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(netrc.gcount()));
    c.netrc = parse_netrc(text);
  }
  return c;
}

std::shared_ptr<std::string> add_sync_arguments(CommandSpec* app, Globals& g) {
  auto remote = std::make_shared<std::string>("origin");
  app->add_option("REMOTE", *remote, "A remote's name, or a URL or path used directly, as with git (default: origin)");
  app->add_option("--author", g.author, "Author of a merge commit, \"Name <email>\" (default: KISTORE_AUTHOR, git config)");
  app->add_option("--sign", g.sign_key, "Sign a merge commit with this Ed25519 OpenSSH private key")->type_name("KEY");
  return remote;
}

SyncOptions sync_options(const Globals& g, Store& store, SyncProgress& progress) {
  SyncOptions o;
  o.credentials = credentials_from_environment();
  o.commit.author = g.author;
  o.commit.time = g.commit_time;
  o.commit.sign = signer_for(g, &store);
  o.trust = load_trust(store);
  o.progress = progress.callback();
  o.process = process_context({});  // git receive-pack, for a push to a path
  return o;
}

namespace {

Json strings_json(const std::vector<std::string>& list) {
  Json::Array out(list.begin(), list.end());
  return Json(std::move(out));
}

std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

Json pull_json(const PullReport& r) {
  Json out = Json::object();
  out.set("remote", r.remote);
  out.set("url", r.url);
  out.set("result", std::string(pull_result_name(r.result)));
  out.set("fetched_objects", static_cast<long long>(r.fetched_objects));
  out.set("new_commits", static_cast<long long>(r.new_commits));
  out.set("new_documents", static_cast<long long>(r.new_documents));
  out.set("incoming", r.incoming.empty() ? Json() : Json(r.incoming));
  out.set("commit", r.commit ? Json(*r.commit) : Json());
  out.set("notes", strings_json(r.notes));
  out.set("problems", problems_json(r.problems));
  if (r.refused()) out.set("error", error_member(kProblems, refusal_message(r)));
  return out;
}

std::string refusal_message(const PullReport& r) {
  return "refused to take " + r.incoming.substr(0, 12) + " from " + r.remote + " (" + r.url + "): " +
         plural(r.problems.size(), "problem") + " in the incoming history; the store is unchanged";
}

void print_refusal(const PullReport& r) {
  print_problems("refused", r.problems);
  std::fprintf(stderr,
               "error: refused to take %s from %s (%s): %s in the incoming history; the store is unchanged\n",
               shown(r.incoming.substr(0, 12)).c_str(), shown(r.remote).c_str(), shown(r.url).c_str(),
               plural(r.problems.size(), "problem").c_str());
  // A level no rerun signed by this store's controllers justifies: often a
  // rerun signed by someone the other store trusts and this one does not yet.
  if (std::any_of(r.problems.begin(), r.problems.end(),
                  [](const Problem& p) { return p.kind == ProblemKind::kLevelUnjustified; }))
    std::fprintf(stderr,
                 "hint: a level moves only by a rerun commit signed by a controller this store trusts "
                 "(`kistore trust list`); if you trust the rerun's signer, `kistore trust add PRINCIPAL KEY.pub` "
                 "and pull again\n");
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
  if (r.result == PullResult::kUpToDate)
    text = "Already up to date with " + remote + " (" + head + ").";
  else if (r.result == PullResult::kFastForward)
    text = "Fast-forwarded to " + head + " from " + remote + ": " + plural(r.new_commits, "new commit") + ", " +
           plural(r.new_documents, "new document") + ".";
  else
    text = "Merged " + remote + " (" + incoming + "): merge commit " + head + ", " +
           plural(r.new_commits, "new commit") + ", " + plural(r.new_documents, "new document") + ".";
  std::printf("%s\n", text.c_str());
  return kOk;
}

}  // namespace kistore::cli
