// What the sync commands (pull, push, clone) share: their options, read in
// one place (credentials from the environment, author, signing, trust),
// progress bars for the transfer stages, and the report in words or as JSON.
//
// Thread-safety: the command's thread.
#pragma once

#include <map>
#include <memory>

#include "cli/common.h"
#include "store/sync/sync.h"

namespace kistore::cli {

// One progress bar per transfer stage ("receiving", "checking", "packing",
// "sending"), drawn only where cli::Progress draws (a terminal, no --quiet,
// --json or --no-progress).
class SyncProgress {
 public:
  explicit SyncProgress(const Globals& g) : g_(g) {}
  void update(const char* stage, std::size_t done, std::size_t total, std::uint64_t bytes);
  void finish();
  std::function<void(const char*, std::size_t, std::size_t, std::uint64_t)> callback() {
    return [this](const char* stage, std::size_t done, std::size_t total, std::uint64_t bytes) {
      update(stage, done, total, bytes);
    };
  }

 private:
  const Globals& g_;
  std::string current_;
  std::unique_ptr<Progress> bar_;
};

// What push, pull and clone authenticate with, read from the environment
// here and nowhere else: KISTORE_TOKEN (https password) and KISTORE_TOKEN_URL
// (the https://host[:port][/path] it may go to), KISTORE_SSL_CAINFO (the CAs
// https servers are checked against), KISTORE_SSH_KEY (else
// ~/.ssh/id_ed25519), SSH_AUTH_SOCK (the agent), KISTORE_SSH_KNOWN_HOSTS
// (searched before ~/.ssh/known_hosts), HOME and USER (else the passwd entry).
Credentials credentials_from_environment();

// The options every sync command passes down: merge commit author and
// signature (--author, --sign / sign.key), the store's trust list, the
// credentials, progress.
SyncOptions sync_options(const Globals& g, Store& store, SyncProgress& progress);

// The arguments push and pull share: REMOTE (a name, or a URL or path;
// default origin), --author and --sign for a merge commit. Returns where
// REMOTE lands.
std::shared_ptr<std::string> add_sync_arguments(CommandSpec* app, Globals& g);

// {"remote","url","result","fetched_objects","new_commits","new_documents",
//  "incoming","commit","notes","problems"}, and for a refused pull also
// "error": {"code":1,"message":refusal_message(r)} (SPEC §3's error member).
Json pull_json(const PullReport& r);

// "refused to take <incoming> from <remote> (<url>): N problems in the
// incoming history; the store is unchanged", exact (not escaped).
std::string refusal_message(const PullReport& r);

// Prints a pull's outcome (stdout; notes and problems on stderr) and returns
// the exit code: 0, or 1 when the incoming history was refused.
int print_pull(const Globals& g, const PullReport& r);

// Prints the problems of a refused pull on stderr, then an error line.
void print_refusal(const PullReport& r);

}  // namespace kistore::cli
