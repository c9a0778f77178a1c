// Sync over git remotes (SPEC §3 "sync"): remotes, pull, push, clone. The
// public face of store/'s sync code, for the command line.
//
// A store syncs through any git remote libgit2 reaches (a path, file://,
// git://, ssh://, http(s)://) by moving its branch's commits. Nothing that
// comes in is trusted: pull receives the remote's branch into a quarantine
// (store/git/quarantine_odb.h: a temporary repository inside the store's objects
// folder; a network pack goes through IncomingPack, a path remote is copied
// object by object, each rehashed), never into the store, and checks there
// the shape of every new object (store/git/incoming_walk.h: ids, sizes, modes
// 100644/040000 only, depth ≤ 16) and every commit that is new to this store
// against its first parent:
//
//   - objects are only added: an object path that is removed or changed, that
//     is not at a layout path, or whose bytes do not decode, hash to the
//     path's digest and validate, is refused;
//   - index entries agree with their objects (refs/index.h): a new run comes
//     with its group entry, one level and its source entry (unless an earlier
//     run claimed that source id, as add allows); an attestation with its
//     entry under its subject; entries are never removed; nothing outside the
//     layout is written;
//   - every level entry a commit changes (against any parent; at a merge,
//     also of every run a valid rerun commit since the merge base is about)
//     is what the signed history gives at that commit (SPEC §1: only rerun
//     commits signed by a controller in the store's trust list count, the
//     newest decide; store/history/level_audit.h);
//   - the remote's branch still contains the commit last synced with it
//     (refs/kistore/synced/<remote>): a rewritten history is refused.
//
// Checking is proportional to what is new (commits reachable from the
// incoming head but not from the local head, one tree diff each), not to the
// size of the store. When everything passes, the branch fast-forwards, or a
// merge commit with two parents (Kistore-Op: merge) joins the two sides:
// objects, attestations and groups are a union; metadata, and a source id
// that both sides gave to different runs, keep the earliest (by the time of
// the commit that introduced it; a tie keeps the local one; add's "first
// claim stays"); a run's level is what the signed history of both sides
// gives (concurrent reruns: reproduced only if all reproduced, else
// disputed), and the pull notes where the sides differed. Only then are the
// quarantine's packs moved into the store. A refused pull leaves the store's
// git directory byte for byte as it was: no pack, loose object, ref, reflog
// or config.
//
// push sends the branch; when the remote's branch moved, it pulls (and
// merges) first and pushes again, a bounded number of times. A reference
// update the remote rejects is an error, never a silent success. The remote's
// branch moves only from the value push saw: git's receive-pack checks that
// for network remotes, and for a repository on this machine (a path or
// file://) kistore writes the pack and moves the branch by compare-and-swap
// itself (libgit2's local transport would move it unconditionally). Push
// packs without delta search (zstd frames do not delta).
//
// Credentials (SyncOptions::credentials, filled by the caller: store/ reads
// no environment variable; never printed: URLs in messages have their
// password removed, and the token is masked):
//   ssh://     the agent when a socket is given (tried once), then the key
//              file (with <key>.pub if present). The server's host key must be
//              listed in one of the known_hosts files, by OpenSSH's rules
//              (store/sync/known_hosts.h): plain, wildcard or hashed (|1|) names,
//              "[host]:port" for a port other than 22 (a port-less entry does
//              not name it), a @revoked entry for the key refuses it whatever
//              else is listed, @cert-authority lines are not used. An unknown
//              host is refused with its fingerprint and how to add it, a
//              changed key is refused as such.
//   http(s):// the URL's user:password (libgit2 presents it), then the
//              token as the password (user from the URL, else "kistore"),
//              only over https and only to a URL within the token's
//              Credentials::token_url (url.h token_refusal): never to another
//              scheme, host or port, never over plain http, and the refusal
//              says that no credentials were offered to that origin and why.
//              Each is tried once, and only for the configured URL's origin:
//              a redirect to another origin that asks for credentials is
//              refused (Error(kRemote), naming both).
//
// Errors: Error(kRemote) when the remote cannot be reached, refuses a
// reference update, does not offer report-status for a push, or
// authentication fails (the message names the remote and its URL without
// password); Error(kRefused) when the pack it sends is corrupt or cut short;
// Error(kInvalidInput) for an unknown remote name or a bad URL; Error(kIO)
// for local failures. Incoming data that fails the checks is not an
// exception: PullReport::problems lists it.
//
// Behind this header, one file per concept (as libgit2 splits remote.c,
// fetch.c, push.c, transports/*): url.h (URLs, secrets), credentials.h and
// known_hosts.h (who we are, whom we trust), connection.h (a connection to a
// remote and its progress), incoming.h (the checks) over layout_trees.h,
// merge.h, new_objects.h and local_transport.h (repositories on this
// machine), remote.cc, pull.cc, push.cc.
//
// Thread-safety: as Store.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/sync/netrc.h"
#include "objects/ssh_signature.h"
#include "refs/problem.h"
#include "store/core/store.h"
#include "store/edge/process.h"
#include "store/sync/url.h"  // redact_url, for printing RemoteInfo::url

namespace kistore {

// A configured remote.
struct RemoteInfo {
  std::string name;
  std::string url;  // as configured, credentials included: print redact_url(url)
};

// Adds remote `name` at `url`. A local path is stored absolute. A password
// in the URL (scheme://user:password@host/...) is not stored: the config
// holds redact_url(url), and sync authenticates with Credentials::token
// (KISTORE_TOKEN) instead; check url_password(url) to tell the user. Throws
// Error(kInvalidInput) for an invalid name, an empty URL, or a name already
// in use; Error(kIO) when the config cannot be written.
void add_remote(Store& store, const std::string& name, const std::string& url);
// Removes the remote and kistore's refs for it. Error(kInvalidInput) if
// there is no such remote.
void remove_remote(Store& store, const std::string& name);
// The configured remotes, sorted by name. Error(kIO) when the config cannot
// be read.
std::vector<RemoteInfo> list_remotes(const Store& store);

// What sync may authenticate with, and the ssh host keys it trusts. The
// command line fills it from KISTORE_TOKEN, KISTORE_SSH_KEY, SSH_AUTH_SOCK,
// KISTORE_SSH_KNOWN_HOSTS, HOME and USER (cli/sync_output.h).
struct Credentials {
  std::string token;       // the password for https when the URL has none; "" for none
  // Where the token may go (KISTORE_TOKEN_URL): an https://host[:port][/path]
  // prefix (url.h token_refusal). Empty: nowhere. Never over plain http, never
  // to another origin, never after a redirect to one.
  std::string token_url;
  // A PEM file of the certificate authorities that https servers are checked
  // against instead of the system's (KISTORE_SSL_CAINFO, as git's
  // GIT_SSL_CAINFO); "" for the system's.
  std::string ca_file;
  // A password written in the URL of this one command (clone keeps the URL
  // without it): offered once, as libgit2 offers a URL's own, to that URL's
  // origin only (plain http too: the user wrote it there). Set by clone.
  std::string url_password;
  std::string ssh_key;     // a private key file for ssh; "" for none
  bool ssh_key_named = false;  // the user named ssh_key: its absence is reported as such
  std::string ssh_agent;   // the ssh agent's socket; "" for no agent
  std::vector<std::string> known_hosts;  // OpenSSH known_hosts files, searched in order
  std::string user;        // the ssh user when the URL names none; "" for "git"
  // ~/.netrc's entries (netrc.h): a password for an https URL's host, offered
  // after the token, to the configured URL's own origin only.
  std::vector<NetrcEntry> netrc;
};

// How a pull, push or clone runs.
struct SyncOptions {
  // Author and signing of a merge commit.
  CommitOptions commit;
  // Controllers whose signed rerun commits may change levels; normally
  // load_trust(store).
  std::vector<AllowedSigner> trust;
  // What to authenticate with; empty: nothing but what the URL holds.
  Credentials credentials;
  // Transfer progress: stage is "receiving", "checking", "packing" or
  // "sending"; done
  // and total count objects (total 0: not known yet), bytes what went over
  // the wire so far (0 when it does not apply).
  std::function<void(const char* stage, std::size_t done, std::size_t total, std::uint64_t bytes)> progress;
  // How `git receive-pack` is started for a push to a repository on this
  // machine (its environment and where git is looked up), as git push
  // starts it: cli/process_env.h builds it.
  ProcessContext process;
};

// What a pull did, or why it was refused.
// How a pull ended. Its name in --json output and messages is
// pull_result_name(): "up-to-date", "fast-forward", "merge", "refused".
enum class PullResult { kUpToDate, kFastForward, kMerge, kRefused };
std::string_view pull_result_name(PullResult result);

struct PullReport {
  std::string remote;
  std::string url;  // redacted
  PullResult result = PullResult::kUpToDate;
  std::size_t fetched_objects = 0;  // git objects received
  std::size_t new_commits = 0;      // commits new to this store
  std::size_t new_documents = 0;    // objects the branch gained
  std::string incoming;             // the remote's branch head; "" if the remote has none
  std::optional<std::string> commit;  // the branch head afterwards
  std::vector<std::string> notes;     // metadata or level conflicts resolved
  std::vector<Problem> problems;      // why the pull was refused
  bool refused() const { return !problems.empty(); }
};

// Fetches the branch from `remote` and merges it as described above.
// Errors as above, and Error(kIO) before anything is fetched when this store
// is of format 1 (run `kistore upgrade`); a refusal is a report whose
// problems say why (a remote of another format is one).
PullReport pull(Store& store, const std::string& remote, const SyncOptions& options);

// What a push did.
// How a push ended: kRefused when a pull on the way was refused. Its name is
// push_result_name(): "pushed", "up-to-date", "refused".
enum class PushResult { kPushed, kUpToDate, kRefused };
std::string_view push_result_name(PushResult result);

struct PushReport {
  std::string remote;  // its name, or the URL given for one (redacted)
  std::string url;     // redacted
  PushResult result = PushResult::kUpToDate;
  std::string commit;  // the branch head the remote now has
  std::size_t pushed_objects = 0;
  std::uint64_t pushed_bytes = 0;  // the pack's size
  std::vector<PullReport> pulls;  // pulls made because the remote had moved
  // What the server said in its own words when it took the push (a hook's
  // notice), a line each, raw: escape before showing.
  std::vector<std::string> remote_messages;
};

// Pushes the branch to `remote`, pulling first (up to 10 rounds) when the
// remote's branch is not an ancestor of ours. Error(kInvalidInput) when the
// store is empty; Error(kIO) when it is of format 1 (run `kistore upgrade`);
// Error(kRefused) when the remote's head, known here, is of another format; Error(kRemote) when the remote rejects the update or kept
// moving for all 10 rounds; a refused pull on the way ends the push with
// result "refused" (its report in pulls).
PushReport push(Store& store, const std::string& remote, const SyncOptions& options);

// init + remote add origin + pull into `dir` (which must not exist, or be an
// empty folder). When the remote has no refs/heads/main but its HEAD names
// another branch, the new store's HEAD names that branch. When the clone
// fails (an exception) or the pull is refused (the report says why), what
// clone created is removed again.
// A password in `url` authenticates this clone (before options' token) but is
// not written into the new store's config (add_remote).
PullReport clone(const std::string& url, const std::string& dir, const SyncOptions& options);

}  // namespace kistore
