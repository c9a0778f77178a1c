#include "store/core/store.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <cstdlib>
#include <random>
#include <set>
#include <thread>

#include "objects/blob.h"
#include "objects/json.h"
#include "objects/parallel.h"
#include "refs/layout.h"
#include "store/git/commit_author.h"
#include "store/git/commit_graph.h"
#include "store/git/git.h"
#include "store/git/work_tree.h"
#include "store/git/native_repo.h"
#include "store/git/repo_objects.h"
#include "store/git/objwrite.h"
#include "store/git/packread.h"
#include "store/git/raw_tree.h"
#include "store/git/store_access.h"
#include "store/git/store_repo.h"
#include "store/core/store_shape.h"
#include "store/edge/interrupt.h"
#include "store/edge/tempfiles.h"

namespace kistore {
namespace {

// A change of this many blobs or more is written as one pack; smaller ones as
// loose objects (a pack per small commit would leave thousands of packs).
constexpr std::size_t kPackThreshold = 64;
// How often a writer that lost the race rebuilds on the new head.
constexpr int kMaxAttempts = 64;
// The author of a commit when neither the caller nor git's configuration
// names one.
constexpr const char* kFallbackAuthorName = "kistore";
constexpr const char* kFallbackAuthorEmail = "kistore@localhost";

// Splits "Name <email>", or throws Error(kInvalidInput) naming the value,
// what was expected and what was found: a name and an email, neither empty,
// neither holding < or > (which would end or start the email early in the
// commit's author line), a line break or a NUL (which would end the author
// line, and start a header line of the author's own). Other characters are
// kept (an escape sequence is data: every printer escapes it).
std::pair<std::string, std::string> parse_author(std::string_view text) {
  auto refuse = [&](const std::string& found) -> std::pair<std::string, std::string> {
    throw InvalidInput("commit author " + quoted_excerpt(text) +
                       ": expected \"Name <email>\", with no <, > or line break in the name or the email, found " +
                       found);
  };
  for (unsigned char c : text)
    if (c == '\n' || c == '\r' || c == '\0') {
      char code[32];
      std::snprintf(code, sizeof code, "U+%04X", c);
      return refuse(std::string(c ? "a line break (" : "a NUL (") + code + ")");
    }
  std::size_t lt = text.find('<');
  if (lt == std::string_view::npos) return refuse("no <");
  if (text.find('<', lt + 1) != std::string_view::npos) return refuse("a second \"<\"");
  if (text.back() != '>') return refuse("no > at the end");
  if (text.find('>') + 1 != text.size()) return refuse("\">\" before the end");
  std::string name(text.substr(0, lt));
  while (!name.empty() && name.back() == ' ') name.pop_back();
  std::string_view email = text.substr(lt + 1, text.size() - lt - 2);
  if (name.empty()) return refuse("no name before <");
  if (email.empty()) return refuse("an empty email");
  return {name, std::string(email)};
}

// Set when a commit or a document took the fallback identity.
std::atomic<bool> fallback_identity_used{false};

// The signature of a commit: `author` ("Name <email>") if given, else git's
// user.name/user.email, else the fallback; at `time` (unix seconds) if given,
// else now.
git::Identity make_signature(git_repository* repo, const std::string& author, std::optional<std::int64_t> time) {
  if (!author.empty()) {
    auto [name, email] = parse_author(author);
    return git::identity(name, email, time);
  }
  if (std::optional<git::Identity> configured = git::configured_identity(repo, time)) return std::move(*configured);
  // No identity anywhere (a fresh machine, a CI runner): a store never
  // fails for want of one (SPEC §2).
  fallback_identity_used = true;
  return git::identity(kFallbackAuthorName, kFallbackAuthorEmail, time);
}

// The branch HEAD names in the repository at `dir`. Error(kIO) naming `dir`
// when HEAD cannot be read or is detached.
std::string head_branch(git_repository* repo, const std::string& dir) {
  std::optional<std::string> branch = git::head_target(repo, dir + ": reading HEAD");
  if (!branch) throw IOError(dir + ": HEAD is detached; a store's HEAD must name its branch (refs/heads/main)");
  return std::move(*branch);
}

}  // namespace

// ---- Store ----------------------------------------------------------------

Store::Store(std::shared_ptr<git::RepoObjects> objects, std::string dir)
    : Store(objects, dir, head_branch(objects->repo(), dir)) {}

Store::Store(std::shared_ptr<git::RepoObjects> objects, std::string dir, std::string branch)
    : objects_(std::move(objects)), dir_(std::move(dir)), branch_(std::move(branch)) {}

Store::Store(Store&& o) noexcept = default;
Store& Store::operator=(Store&& o) noexcept = default;
Store::~Store() = default;

git_repository* Store::repo() const { return objects_->repo(); }

Store Store::init(const std::string& dir) {
  git::ensure_init();
  if (git::repository_exists(dir)) throw IOError(dir + ": a repository is already there; not initialising over it");
  Store store(git::create_bare_repository(dir, "main", "kistore evidence store"), dir);
  git::set_config_number(store.repo(), "kistore.formatversion", 3, dir);
  return store;
}

Store Store::open(const std::string& dir, Use use) {
  if (use == Use::kAnything) git::ensure_init();
  if (std::optional<Store> store = open_native(dir)) {
    if (use == Use::kAnything) store->repo();  // opened as before, so that its errors come here
    return std::move(*store);
  }
  Store store(git::RepoObjects::open(dir), dir);
  // A linked worktree (`git worktree add`) has a git folder of its own and
  // the clone's objects elsewhere (its commondir), which kistore's readers
  // and writers would not see: verify once said "ok: 0 objects" there.
  if (std::string clone = git::linked_worktree_of(store.repo()); !clone.empty())
    throw IOError(dir + ": a linked worktree (git worktree add) of a store's clone; kistore reads and writes a store "
                  "in the clone itself (" + clone + " is its git folder) or a bare store: run it there, or name it "
                  "with --store; nothing was read or written");
  if (std::string why = git::incomplete_clone(store.repo()); !why.empty())
    throw IOError(dir + ": " + why + "; nothing was read or written");
  if (std::string why = store_shape(store.repo(), store.branch_).refuse_open; !why.empty())
    throw IOError(dir + ": not a kistore store: " + why +
                  "; it is left untouched (name a store with --store or KISTORE_DIR, or make one with `kistore init`)");
  store.check_format();
  return store;
}

void Store::check_format() const {
  try {
    snapshot().format();  // a later format is refused by every command
  } catch (const Error& e) {
    throw IOError(dir_ + ": " + e.what() + "; nothing was read or written");
  }
}

std::optional<Store> Store::open_native(const std::string& dir) {
  std::optional<git::NativeRepo> found = git::locate_repository(dir);
  if (!found) return std::nullopt;
  Store store(std::make_shared<git::RepoObjects>(dir, found->gitdir), dir, found->branch);
  std::optional<Snapshot> head = store.snapshot_native();
  // An unborn branch (its shape rule lists references) or a head that the
  // own reader cannot read: libgit2 opens it, with its own messages.
  if (!head || head->empty()) return std::nullopt;
  std::optional<StoreShape> shape;
  try {
    shape = store_shape(*head->raw_tree_index(""), [&](const char* name) { return head->raw_tree_index(name); },
                        store.branch_);
  } catch (const Error&) {
    return std::nullopt;  // a damaged tree: libgit2's message
  }
  if (!shape->refuse_open.empty())
    throw IOError(dir + ": not a kistore store: " + shape->refuse_open +
                  "; it is left untouched (name a store with --store or KISTORE_DIR, or make one with `kistore init`)");
  store.check_format();
  return store;
}

bool used_fallback_identity() { return fallback_identity_used; }

namespace {
std::mutex work_tree_note_mutex;
std::string work_tree_note;
}  // namespace

std::string work_tree_left_behind() {
  std::lock_guard lock(work_tree_note_mutex);
  return work_tree_note;
}

void note_work_tree_behind(const std::string& dir, const std::string& why) {
  if (why.empty()) return;
  std::lock_guard lock(work_tree_note_mutex);
  if (work_tree_note.empty()) work_tree_note = dir + ": " + why;
}

std::string Store::author(const std::string& option) const {
  git::Identity who = make_signature(repo(), option, std::nullopt);
  return who.name + " <" + who.email + ">";
}

std::string Store::local_dir() const {
  std::string dir = objects_->gitdir();
  if (!dir.empty() && dir.back() == '/') dir.pop_back();
  return dir + "/kistore";
}

std::optional<std::string> Store::setting(const std::string& key) const {
  return git::config_value(repo(), "kistore." + key, dir_);
}

void Store::set_setting(const std::string& key, const std::string& value) {
  check_settings_writable();
  git::set_config_value(repo(), "kistore." + key, value, dir_);
}

Snapshot Store::snapshot() const {
  if (std::optional<Snapshot> native = snapshot_native()) return std::move(*native);
  git_repository* repo = this->repo();
  std::optional<git_oid> head = git::ref_id(repo, branch_, dir_ + ": reading " + branch_);
  if (!head) return Snapshot(objects_, nullptr, "");
  git_oid tree = git::commit_tree(repo, *head, dir_ + ": reading the head commit");
  return Snapshot(objects_, &tree, git::oid_str(*head));
}

Snapshot Store::snapshot_at(const std::string& commit_id) const {
  git_oid id, tree_id;
  if (commit_id.size() != GIT_OID_HEXSZ || !git::oid_from_hex(commit_id, id))
    throw IOError(dir_ + ": reading commit \"" + commit_id + "\": not a commit id");
  git_object_t type = GIT_OBJECT_INVALID;
  std::string commit;
  if (objects_->read_native(id, type, commit) && type == GIT_OBJECT_COMMIT && git::commit_tree_id(commit, tree_id))
    return Snapshot(objects_, &tree_id, commit_id);
  tree_id = git::commit_tree(repo(), id, dir_ + ": reading commit " + commit_id);
  return Snapshot(objects_, &tree_id, commit_id);
}

std::optional<Snapshot> Store::snapshot_native() const {
  git_oid commit_id, tree_id;
  switch (git::read_ref(objects_->gitdir(), branch_, commit_id)) {
    case git::RefState::kAbsent:
      return Snapshot(objects_, nullptr, "");
    case git::RefState::kUnknown:
      return std::nullopt;
    case git::RefState::kFound:
      break;
  }
  git_object_t type = GIT_OBJECT_INVALID;
  std::string commit;
  if (!objects_->read_native(commit_id, type, commit) || type != GIT_OBJECT_COMMIT ||
      !git::commit_tree_id(commit, tree_id))
    return std::nullopt;
  return Snapshot(objects_, &tree_id, git::oid_str(commit_id));
}

std::string commit_message(const ChangeSet& change) {
  std::string msg = change.summary + "\n\n";
  if (!change.body.empty()) {
    msg += change.body;
    if (msg.back() != '\n') msg += '\n';
    msg += '\n';
  }
  msg += "Kistore-Op: " + change.op + "\n";
  return msg;
}

std::string commit_op(std::string_view message) {
  constexpr std::string_view key = "\nKistore-Op: ";
  std::size_t pos = message.rfind(key);
  if (pos == std::string_view::npos) return "";
  std::string_view rest = message.substr(pos + key.size());
  return std::string(rest.substr(0, rest.find('\n')));
}

std::string Store::write_commit(const Snapshot& base, const ChangeSet& change, const CommitOptions& options) {
  if (!options.author.empty()) parse_author(options.author);  // refused before any object is written
  // A bulk change becomes one pack; a small one, loose objects (as git
  // writes them), so that many small adds do not pile up packs.
  bool bulk = change.upserts.size() + change.links.size() >= kPackThreshold;
  std::optional<git::PackWriter> pack;
  std::optional<git::LooseWriter> loose;
  if (bulk)
    pack.emplace(objects_->gitdir() + "objects/pack");
  else
    loose.emplace(repo());
  git::ObjectWriter& out = bulk ? static_cast<git::ObjectWriter&>(*pack) : *loose;

  std::map<std::string, git::PathChange> changes;
  std::size_t done = 0, total = change.upserts.size();
  if (bulk) {
    // Blob ids (SHA-1) and the index files' deflate on every core
    // (PackWriter::write_blobs: the pack is the same bytes whatever the
    // number of cores), a batch at a time so that progress moves.
    constexpr std::size_t kBatch = 1024;
    std::vector<const std::pair<const std::string, std::string>*> batch;
    std::vector<std::string_view> blobs;
    auto flush = [&] {
      blobs.clear();
      for (const auto* upsert : batch) blobs.push_back(upsert->second);
      const std::vector<git_oid> ids = pack->write_blobs(blobs);
      for (std::size_t i = 0; i < batch.size(); ++i) changes.emplace_hint(changes.end(), batch[i]->first, git::PathChange{ids[i]});
      done += batch.size();
      if (options.progress && !batch.empty()) options.progress(done, total);
      batch.clear();
    };
    for (const auto& upsert : change.upserts) {
      batch.push_back(&upsert);
      if (batch.size() == kBatch) flush();
    }
    flush();
  } else {
    for (const auto& [path, bytes] : change.upserts) {
      changes.emplace_hint(changes.end(), path, git::PathChange{out.write_blob(bytes)});
      ++done;
      if (options.progress && (done % 1024 == 0 || done == total)) options.progress(done, total);
    }
  }
  for (const auto& [path, id] : change.links) changes.emplace(path, git::PathChange{git::parse_oid(id)});  // upserts win
  for (const std::string& path : change.removals) changes[path] = git::PathChange{};
  for (const auto& [path, id] : change.folders) changes.emplace(path + "/", git::PathChange{git::parse_oid(id), true});

  git_oid tree_id = git::build_tree(repo(), base.tree_id(), changes, out);
  std::string content = commit_text(base, tree_id, change, options);
  git_oid commit_id = out.write(GIT_OBJECT_COMMIT, content, 1);
  if (pack) pack->finish();
  if (loose) loose->sync();
  return git::oid_str(commit_id);
}

std::string Store::commit_text(const Snapshot& base, const git_oid& tree, const ChangeSet& change,
                               const CommitOptions& options) const {
  std::vector<git_oid> parents;
  if (!base.empty()) parents.push_back(git::to_oid(base.commit()));
  for (const CommitId& p : change.extra_parents) parents.push_back(git::to_oid(p));
  git::Identity author = make_signature(repo(), options.author, options.time);
  std::string message = commit_message(change);
  std::string content = git::commit_text(tree, parents, author, author, message);
  if (options.sign) {
    std::string signature = options.sign(content);
    if (!signature.empty()) content = git::commit_text(tree, parents, author, author, message, signature);
  }
  return content;
}

void Store::sweep_temp_files() const {
  // A writer killed before its rename left temporary files: the next one
  // removes those of dead processes (never a live writer's).
  const std::string objects = objects_->gitdir() + "objects";
  sweep_stale_temp_files(objects);
  sweep_stale_temp_files(objects + "/pack");
  sweep_stale_temp_files(local_dir());  // the trust list's and push's settings' (store/edge/files.h, replace_file)
}

void Store::check_settings_writable() const { check_write_access(objects_->gitdir()); }

void Store::check_writable() const {
  check_write_access(objects_->gitdir());
  if (std::string why = store_shape(repo(), branch_).refuse_write; !why.empty())
    throw IOError(dir_ + ": not a kistore store: " + why +
                  "; nothing was written (if it is a store that was tampered with, `kistore verify` lists what is wrong)");
}

std::optional<std::string> Store::commit(
    const std::function<std::optional<ChangeSet>(const Snapshot&)>& build, const CommitOptions& options) {
  std::string op;
  return commit_written(
      [&](const Snapshot& base) -> std::optional<std::string> {
        std::optional<ChangeSet> change = build(base);
        if (!change) return std::nullopt;
        // A new store's first commit says its format in FORMAT.
        if (base.empty()) change->upserts.emplace(std::string(kFormatPath), std::string(kFormat3Bytes));
        op = change->op;
        return write_commit(base, *change, options);
      },
      op, options.upgrade);
}

std::optional<std::string> Store::commit_written(
    const std::function<std::optional<std::string>(const Snapshot&)>& write, const std::string& op, bool upgrade) {
  sweep_temp_files();
  std::mt19937 rng(std::random_device{}());
  bool last_locked = false;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    check_writable();
    Snapshot base = snapshot();
    // Format (refs/layout.h): writers write format 3 only; an older store
    // takes `kistore upgrade` first.
    if (base.format() != kCurrentFormat && !upgrade)
      throw IOError(dir_ + ": this store is " + format_name(base.format()) + "; kistore writes " +
                    format_name(kCurrentFormat) + " only: run `kistore upgrade` first; nothing was written");
    std::optional<std::string> written = write(base);
    if (!written) return std::nullopt;
    const std::string& id = *written;
    git_oid new_id;
    git::oid_from_hex(id, new_id);
    std::optional<git_oid> old_id;
    if (!base.empty()) old_id = git::to_oid(base.commit());
    git::BranchMove moved = git::move_branch(repo(), branch_, new_id, old_id ? &*old_id : nullptr, "kistore: " + op,
                                             dir_ + ": moving " + branch_);
    if (moved == git::BranchMove::kMoved) {
      note_written("commit " + id.substr(0, 12));  // what an interruption from now on says (interrupt.h)
      // The config's note of the format follows the upgrade (FORMAT is what
      // kistore reads; this is for people reading the config). The commit
      // stands whether or not the note can be written.
      if (upgrade) try {
          git::set_config_number(repo(), "kistore.formatversion", 3, dir_);
        } catch (const Error&) {
        }
      note_work_tree_behind(dir_, git::sync_work_tree(repo(), branch_, old_id ? &*old_id : nullptr));
      git::refresh_objects(repo());  // see the pack just written
      objects_->refresh();
      return id;
    }
    last_locked = moved == git::BranchMove::kLocked;
    // Another writer won: back off a little, then rebuild on its head.
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + rng() % (5 + attempt * 10)));
  }
  throw IOError(dir_ + ": gave up after " + std::to_string(kMaxAttempts) + " attempts: " +
                (last_locked ? "the lock file " + objects_->gitdir() + branch_ +
                                   ".lock stayed in place; if no kistore or git command is running on this "
                                   "store, a crashed one left it: remove it"
                             : "other writers kept moving " + branch_));
}

}  // namespace kistore
