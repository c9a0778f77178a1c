#include "store/store.h"

#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>
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
#include "objects/parallel.h"
#include "refs/layout.h"
#include "store/dictionaries.h"
#include "store/git.h"
#include "store/objwrite.h"
#include "store/packread.h"
#include "store/raw_tree.h"
#include "store/store_shape.h"
#include "store/tempfiles.h"

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

std::shared_ptr<git_tree> share(git_tree* t) {
  return std::shared_ptr<git_tree>(t, git_tree_free);
}

// Splits "Name <email>"; nullopt if malformed.
std::optional<std::pair<std::string, std::string>> parse_author(std::string_view text) {
  std::size_t lt = text.find('<'), gt = text.rfind('>');
  if (lt == std::string_view::npos || gt == std::string_view::npos || gt < lt || gt + 1 != text.size())
    return std::nullopt;
  std::string name(text.substr(0, lt));
  while (!name.empty() && name.back() == ' ') name.pop_back();
  std::string email(text.substr(lt + 1, gt - lt - 1));
  if (name.empty() || email.empty()) return std::nullopt;
  return std::make_pair(name, email);
}

// The signature of a commit: `author` ("Name <email>") if given, else git's
// user.name/user.email, else the fallback; at `time` (unix seconds) if given,
// else now.
git::Signature make_signature(git_repository* repo, const std::string& author, std::optional<std::int64_t> time) {
  git_signature* sig = nullptr;
  if (!author.empty()) {
    auto parts = parse_author(author);
    if (!parts) throw InvalidInput("commit author: expected \"Name <email>\", found \"" + author + "\"");
    git::check(git_signature_now(&sig, parts->first.c_str(), parts->second.c_str()), "author");
  } else if (git_signature_default(&sig, repo) < 0) {
    // No identity anywhere (a fresh machine, a CI runner): a store never
    // fails for want of one (SPEC §2).
    git::check(git_signature_now(&sig, kFallbackAuthorName, kFallbackAuthorEmail), "author");
  }
  if (time) {
    git_signature* pinned = nullptr;
    int rc = git_signature_new(&pinned, sig->name, sig->email, static_cast<git_time_t>(*time), 0);
    git_signature_free(sig);
    git::check(rc, "author");
    sig = pinned;
  }
  return git::Signature(sig);
}

}  // namespace

// ---- Snapshot -------------------------------------------------------------

Snapshot::Snapshot(git_repository* repo, std::shared_ptr<git_tree> tree, std::string commit_id)
    : repo_(repo), tree_(std::move(tree)), commit_id_(std::move(commit_id)) {}

git_tree* Snapshot::tree_at(std::string_view dir) const {
  if (!tree_) return nullptr;
  if (dir.empty()) return tree_.get();
  std::string key(dir);
  if (auto it = trees_.find(key); it != trees_.end()) return it->second.get();
  std::size_t slash = dir.rfind('/');
  git_tree* parent = tree_at(slash == std::string_view::npos ? std::string_view() : dir.substr(0, slash));
  git_tree* found = nullptr;
  if (parent) {
    std::string name(slash == std::string_view::npos ? dir : dir.substr(slash + 1));
    const git_tree_entry* e = git_tree_entry_byname(parent, name.c_str());
    if (e && git_tree_entry_type(e) == GIT_OBJECT_TREE)
      git::check(git_tree_lookup(&found, repo_, git_tree_entry_id(e)), "reading " + key);
  }
  trees_.emplace(key, found ? share(found) : nullptr);
  return found;
}

namespace {

// Splits "a/b/c" into ("a/b", "c").
std::pair<std::string_view, std::string> split_path(std::string_view path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {std::string_view(), std::string(path)};
  return {path.substr(0, slash), std::string(path.substr(slash + 1))};
}

}  // namespace

const git_oid* Snapshot::tree_id() const { return tree_ ? git_tree_id(tree_.get()) : nullptr; }

git_odb* Snapshot::odb() const {
  if (!odb_) odb_ = std::shared_ptr<git_odb>(git::open_odb(repo_).release(), git_odb_free);
  return odb_.get();
}

const git::RawTree* Snapshot::raw_tree_index(std::string_view dir) const {
  if (!tree_) return nullptr;
  std::string key(dir);
  if (auto it = raw_.find(key); it != raw_.end()) return it->second.get();
  git_oid id;
  bool found = false;
  if (dir.empty()) {
    id = *git_tree_id(tree_.get());
    found = true;
  } else {
    std::size_t slash = dir.rfind('/');
    std::string_view parent = slash == std::string_view::npos ? std::string_view() : dir.substr(0, slash);
    std::string_view name = slash == std::string_view::npos ? dir : dir.substr(slash + 1);
    bool is_tree = false;
    found = find_entry(parent, name, id.id, &is_tree) && is_tree;
  }
  std::shared_ptr<const git::RawTree> tree;
  if (found) {
    if (!reader_) reader_ = std::make_shared<git::TreeReader>(odb(), git::TreeReader::Options{});
    tree = reader_->tree(id, key);
  }
  const git::RawTree* out = tree.get();
  raw_[key] = std::move(tree);
  return out;
}

bool Snapshot::find_entry(std::string_view dir, std::string_view name, unsigned char id[20], bool* is_tree) const {
  const git::RawTree* t = raw_tree_index(dir);
  if (!t) return false;
  std::optional<git::RawEntry> e;
  try {
    e = t->find(name);
  } catch (const Error& error) {
    throw Corruption((dir.empty() ? std::string("the root") : std::string(dir)) + ": " + error.what());
  }
  if (!e) return false;
  std::memcpy(id, e->id, 20);
  if (!is_tree) return true;
  *is_tree = e->tree();
  return !e->link();  // a submodule link names a commit elsewhere: no blob, no tree here
}

std::optional<std::string> Snapshot::read(std::string_view path) const {
  auto [dir, name] = split_path(path);
  git_oid id;
  bool is_tree = false;
  if (!find_entry(dir, name, id.id, &is_tree) || is_tree) return std::nullopt;
  git_odb_object* obj = nullptr;
  git::check(git_odb_read(&obj, odb(), &id), "reading " + std::string(path), ErrorCode::kCorruption);
  git::OdbObject owned(obj);
  if (git_odb_object_type(obj) != GIT_OBJECT_BLOB) return std::nullopt;  // a submodule link, say
  return std::string(static_cast<const char*>(git_odb_object_data(obj)), git_odb_object_size(obj));
}

Format Snapshot::format() const {
  if (format_) return *format_;
  if (empty()) return *(format_ = kCurrentFormat);
  auto bytes = read(kFormatPath);
  if (!bytes) return *(format_ = Format::k1);
  if (auto f = parse_format_bytes(*bytes)) return *(format_ = *f);
  throw IOError("the store's " + unknown_format_problem(*bytes));
}

bool Snapshot::exists(std::string_view path) const {
  auto [dir, name] = split_path(path);
  unsigned char id[20];
  return find_entry(dir, name, id, nullptr);
}

namespace {

// The tree at `dir` below `root` (root itself for ""), or null.
git::Tree subtree(git_repository* repo, git_tree* root, std::string_view dir) {
  if (!root) return nullptr;
  if (dir.empty()) {
    git_tree* copy = nullptr;
    git::check(git_tree_dup(&copy, root), "reading tree");
    return git::Tree(copy);
  }
  git_tree_entry* raw = nullptr;
  std::string p(dir);
  int rc = git_tree_entry_bypath(&raw, root, p.c_str());
  if (rc == GIT_ENOTFOUND) return nullptr;
  git::check(rc, "reading " + p);
  git::TreeEntry entry(raw);
  if (git_tree_entry_type(raw) != GIT_OBJECT_TREE) return nullptr;
  git_tree* t = nullptr;
  git::check(git_tree_lookup(&t, repo, git_tree_entry_id(raw)), "reading " + p);
  return git::Tree(t);
}

void walk_tree(git_repository* repo, git_tree* tree, const std::string& prefix,
               const std::function<void(const std::string&, std::string_view)>& fn,
               const std::function<void(const std::string&)>& other) {
  std::size_t n = git_tree_entrycount(tree);
  for (std::size_t i = 0; i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(tree, i);
    std::string path = prefix.empty() ? git_tree_entry_name(e) : prefix + "/" + git_tree_entry_name(e);
    if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
      git_tree* sub = nullptr;
      git::check(git_tree_lookup(&sub, repo, git_tree_entry_id(e)), "reading " + path);
      git::Tree owned(sub);
      walk_tree(repo, sub, path, fn, other);
    } else if (git_tree_entry_type(e) == GIT_OBJECT_BLOB) {
      git_blob* blob = nullptr;
      git::check(git_blob_lookup(&blob, repo, git_tree_entry_id(e)), "reading " + path);
      git::Blob owned(blob);
      fn(path, std::string_view(static_cast<const char*>(git_blob_rawcontent(blob)), git_blob_rawsize(blob)));
    } else if (other) {
      other(path);
    }
  }
}

}  // namespace

std::vector<std::string> Snapshot::list(std::string_view dir) const {
  std::vector<std::string> out;
  git_tree* t = tree_at(dir);
  if (!t) return out;
  std::size_t n = git_tree_entrycount(t);
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.emplace_back(git_tree_entry_name(git_tree_entry_byindex(t, i)));
  return out;
}

void Snapshot::walk(std::string_view dir, const std::function<void(const std::string&, std::string_view)>& fn,
                    const std::function<void(const std::string&)>& other) const {
  git::Tree t = subtree(repo_, tree_.get(), dir);
  if (t) walk_tree(repo_, t.get(), std::string(dir), fn, other);
}

bool Snapshot::has_object(const Digest& d) const { return exists(object_path(d)); }

DictionaryLookup Snapshot::dictionaries() const {
  if (!dictionaries_)
    // Reads through the tree and repository, not through this Snapshot, so
    // that the cache stays valid when the Snapshot is moved.
    dictionaries_ = std::make_shared<DictionaryCache>(
        [repo = repo_, tree = tree_](const std::string& path) -> std::optional<std::string> {
          if (!tree) return std::nullopt;
          git_tree_entry* raw = nullptr;
          int rc = git_tree_entry_bypath(&raw, tree.get(), path.c_str());
          if (rc == GIT_ENOTFOUND) return std::nullopt;
          git::check(rc, "reading " + path);
          git::TreeEntry entry(raw);
          if (git_tree_entry_type(raw) != GIT_OBJECT_BLOB) return std::nullopt;
          return git::blob_bytes(repo, *git_tree_entry_id(raw));
        });
  return dictionaries_->lookup();
}

std::string Snapshot::object_bytes(const Digest& d) const {
  std::string path = object_path(d);
  auto frame = read(path);
  if (!frame) throw NotFound(d.str() + ": no such object in the store");
  std::string bytes = decode_object(*frame, path, dictionaries());
  Digest actual = Digest::of(bytes);
  if (actual != d)
    throw Corruption(path + ": object hash mismatch - expected " + d.str() + " but got " + actual.str());
  return bytes;
}

std::optional<Json> Snapshot::metadata(const Digest& d) const {
  std::string path = metadata_path(format(), d);
  auto bytes = read(path);
  if (!bytes) return std::nullopt;
  return parse_json(*bytes, path);
}

Document Snapshot::document(const Digest& d, bool with_metadata) const {
  std::string bytes = object_bytes(d);
  try {
    return Document::from_canonical(bytes, with_metadata ? metadata(d) : std::nullopt, Location{object_path(d), ""});
  } catch (const Error& e) {
    throw Corruption(std::string("stored object is not a valid document: ") + e.what());
  }
}

std::vector<Digest> Snapshot::object_digests() const {
  std::vector<Digest> out;
  git::Tree root = subtree(repo_, tree_.get(), "objects/sha256");
  if (!root) return out;
  // Three levels: ab / cd / <60 hex>. Names are read from the trees alone.
  for (std::size_t i = 0, n = git_tree_entrycount(root.get()); i < n; ++i) {
    const git_tree_entry* a = git_tree_entry_byindex(root.get(), i);
    if (git_tree_entry_type(a) != GIT_OBJECT_TREE) continue;
    git_tree* ta = nullptr;
    git::check(git_tree_lookup(&ta, repo_, git_tree_entry_id(a)), "reading objects");
    git::Tree owned_a(ta);
    for (std::size_t j = 0, m = git_tree_entrycount(ta); j < m; ++j) {
      const git_tree_entry* b = git_tree_entry_byindex(ta, j);
      if (git_tree_entry_type(b) != GIT_OBJECT_TREE) continue;
      git_tree* tb = nullptr;
      git::check(git_tree_lookup(&tb, repo_, git_tree_entry_id(b)), "reading objects");
      git::Tree owned_b(tb);
      for (std::size_t k = 0, o = git_tree_entrycount(tb); k < o; ++k) {
        const git_tree_entry* c = git_tree_entry_byindex(tb, k);
        std::string hex = std::string(git_tree_entry_name(a)) + git_tree_entry_name(b) + git_tree_entry_name(c);
        if (auto d = Digest::parse_hex(hex)) out.push_back(*d);
      }
    }
  }
  return out;
}

Digest Snapshot::resolve(std::string_view ref) const {
  std::string_view hex = ref;
  if (hex.substr(0, Digest::kPrefix.size()) == Digest::kPrefix) hex.remove_prefix(Digest::kPrefix.size());
  if (!is_hex_prefix(hex) || hex.size() < 8)
    throw InvalidInput("REF \"" + std::string(ref) +
                       "\": expected a digest (sha256:<64 hex>) or a prefix of at least 8 lowercase hex digits");
  std::string dir = "objects/sha256/" + std::string(hex.substr(0, 2)) + "/" + std::string(hex.substr(2, 2));
  std::vector<Digest> matches;
  for (const std::string& name : list(dir)) {
    std::string full = std::string(hex.substr(0, 4)) + name;
    if (full.compare(0, hex.size(), hex) == 0)
      if (auto d = Digest::parse_hex(full)) matches.push_back(*d);
  }
  if (matches.empty()) throw NotFound("REF \"" + std::string(ref) + "\": no object in the store matches");
  if (matches.size() > 1) {
    std::string names;
    for (const Digest& d : matches) names += "\n  " + d.str();
    throw InvalidInput("REF \"" + std::string(ref) + "\" is ambiguous; it matches:" + names);
  }
  return matches.front();
}

// ---- Store ----------------------------------------------------------------

Store::Store(git_repository* repo, std::string dir) : repo_(repo), dir_(std::move(dir)) {
  // A constructor that throws runs no destructor: free the repository here.
  try {
    git_reference* head = nullptr;
    git::check(git_reference_lookup(&head, repo_, "HEAD"), dir_ + ": reading HEAD");
    git::Reference owned(head);
    if (git_reference_type(head) != GIT_REFERENCE_SYMBOLIC)
      throw IOError(dir_ + ": HEAD is detached; a store's HEAD must name its branch (refs/heads/main)");
    branch_ = git_reference_symbolic_target(head);
  } catch (...) {
    git_repository_free(repo_);
    throw;
  }
}

Store::Store(Store&& o) noexcept : repo_(o.repo_), dir_(std::move(o.dir_)), branch_(std::move(o.branch_)) {
  o.repo_ = nullptr;
}

Store& Store::operator=(Store&& o) noexcept {
  std::swap(repo_, o.repo_);
  dir_ = std::move(o.dir_);
  branch_ = std::move(o.branch_);
  return *this;
}

Store::~Store() {
  if (repo_) git_repository_free(repo_);
}

Store Store::init(const std::string& dir) {
  git::ensure_init();
  git_repository* existing = nullptr;
  if (git_repository_open_ext(&existing, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) == 0) {
    git_repository_free(existing);
    throw IOError(dir + ": a repository is already there; not initialising over it");
  }
  git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
  opts.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH | GIT_REPOSITORY_INIT_NO_REINIT;
  opts.initial_head = "main";
  opts.description = "kistore evidence store";
  git_repository* repo = nullptr;
  git::check(git_repository_init_ext(&repo, dir.c_str(), &opts), dir + ": creating the store");
  Store store(repo, dir);  // owns the repository from here, also if what follows throws
  git_config* cfg = nullptr;
  git::check(git_repository_config(&cfg, repo), dir + ": opening config");
  git::Config owned(cfg);
  git::check(git_config_set_int32(cfg, "kistore.formatversion", 2), dir + ": writing config");
  return store;
}

Store Store::open(const std::string& dir) {
  git::ensure_init();
  git_repository* repo = nullptr;
  int rc = git_repository_open_ext(&repo, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
  if (rc == GIT_ENOTFOUND)
    throw IOError(dir + ": no store here (create one with `kistore init`, or name one with --store or KISTORE_DIR)");
  git::check(rc, dir + ": opening the store");
  Store store(repo, dir);
  if (std::string why = store_shape(repo, store.branch_).refuse_open; !why.empty())
    throw IOError(dir + ": not a kistore store: " + why +
                  "; it is left untouched (name a store with --store or KISTORE_DIR, or make one with `kistore init`)");
  try {
    store.snapshot().format();  // a later format is refused by every command
  } catch (const Error& e) {
    throw IOError(dir + ": " + e.what() + "; nothing was read or written");
  }
  return store;
}

std::string Store::author(const std::string& option) const {
  git::Signature sig = make_signature(repo_, option, std::nullopt);
  return std::string(sig->name) + " <" + sig->email + ">";
}

std::string Store::local_dir() const {
  std::string dir = git_repository_path(repo_);
  if (!dir.empty() && dir.back() == '/') dir.pop_back();
  return dir + "/kistore";
}

std::optional<std::string> Store::setting(const std::string& key) const {
  git_config* cfg = nullptr;
  git::check(git_repository_config_snapshot(&cfg, repo_), dir_ + ": reading config");
  git::Config owned(cfg);
  const char* value = nullptr;
  if (git_config_get_string(&value, cfg, ("kistore." + key).c_str()) < 0) {
    git_error_clear();
    return std::nullopt;
  }
  return std::string(value);
}

void Store::set_setting(const std::string& key, const std::string& value) {
  git_config* cfg = nullptr;
  git::check(git_repository_config(&cfg, repo_), dir_ + ": opening config");
  git::Config owned(cfg);
  git::check(git_config_set_string(cfg, ("kistore." + key).c_str(), value.c_str()), dir_ + ": writing config");
}

Snapshot Store::snapshot() const {
  git_reference* ref = nullptr;
  int rc = git_reference_lookup(&ref, repo_, branch_.c_str());
  if (rc == GIT_ENOTFOUND) return Snapshot(repo_, nullptr, "");
  git::check(rc, dir_ + ": reading " + branch_);
  git::Reference owned(ref);
  git_commit* commit = nullptr;
  git::check(git_commit_lookup(&commit, repo_, git_reference_target(ref)), dir_ + ": reading the head commit");
  git::Commit owned_commit(commit);
  git_tree* tree = nullptr;
  git::check(git_commit_tree(&tree, commit), dir_ + ": reading the head tree");
  return Snapshot(repo_, share(tree), git::oid_str(*git_commit_id(commit)));
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
  // A bulk change becomes one pack; a small one, loose objects (as git
  // writes them), so that many small adds do not pile up packs.
  bool bulk = change.upserts.size() >= kPackThreshold;
  std::optional<git::PackWriter> pack;
  std::optional<git::LooseWriter> loose;
  if (bulk)
    pack.emplace(std::string(git_repository_path(repo_)) + "objects/pack");
  else
    loose.emplace(repo_);
  git::ObjectWriter& out = bulk ? static_cast<git::ObjectWriter&>(*pack) : *loose;

  std::map<std::string, git::PathChange> changes;
  std::size_t done = 0, total = change.upserts.size();
  // Blob ids (SHA-1) on every core; the writes that follow are in order.
  std::vector<git_oid> ids;
  if (bulk) {
    std::vector<const std::string*> contents;
    contents.reserve(total);
    for (const auto& kv : change.upserts) contents.push_back(&kv.second);
    ids.resize(total);
    parallel_for(total, [&](std::size_t i) { ids[i] = git::object_id(GIT_OBJECT_BLOB, *contents[i]); });
  }
  for (const auto& [path, bytes] : change.upserts) {
    // Stored, not deflated: documents are zstd frames, which deflate cannot
    // shrink, and index entries are a few dozen bytes, which it barely does;
    // stored objects are read without inflating (packread.h).
    git_oid id;
    if (bulk) {
      id = ids[done];
      out.write(id, GIT_OBJECT_BLOB, bytes, 0);
    } else {
      id = out.write(GIT_OBJECT_BLOB, bytes, 0);
    }
    changes.emplace_hint(changes.end(), path, git::PathChange{id});
    ++done;
    if (options.progress && (done % 1024 == 0 || done == total)) options.progress(done, total);
  }
  for (const std::string& path : change.removals) changes[path] = git::PathChange{};

  git_oid tree_id = git::build_tree(repo_, base.tree_id(), changes, out);
  std::string content = commit_text(base, tree_id, change, options);
  git_oid commit_id = out.write(GIT_OBJECT_COMMIT, content, 1);
  if (pack) pack->finish();
  if (loose) loose->sync();
  return git::oid_str(commit_id);
}

std::string Store::commit_text(const Snapshot& base, const git_oid& tree, const ChangeSet& change,
                               const CommitOptions& options) const {
  std::vector<git_oid> parents;
  auto add_parent = [&](const std::string& id_text) {
    git_oid id;
    if (git_oid_fromstr(&id, id_text.c_str()) < 0) throw IOError("not a commit id: " + id_text);
    parents.push_back(id);
  };
  if (!base.empty()) add_parent(base.commit_id());
  for (const std::string& p : change.extra_parents) add_parent(p);
  git::Signature author = make_signature(repo_, options.author, options.time);
  std::string message = commit_message(change);
  std::string content = git::commit_text(tree, parents, *author, *author, message);
  if (options.sign) {
    std::string signature = options.sign(content);
    if (!signature.empty()) content = git::commit_text(tree, parents, *author, *author, message, signature);
  }
  return content;
}

void Store::sweep_temp_files() const {
  // A writer killed before its rename left temporary files: the next one
  // removes those of dead processes (never a live writer's).
  const std::string objects = std::string(git_repository_path(repo_)) + "objects";
  sweep_stale_temp_files(objects);
  sweep_stale_temp_files(objects + "/pack");
}

void Store::check_writable() const {
  if (std::string why = store_shape(repo_, branch_).refuse_write; !why.empty())
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
        if (base.empty()) change->upserts.emplace(std::string(kFormatPath), std::string(kFormat2Bytes));
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
    // Format (refs/layout.h): writers write format 2 only.
    if (base.format() != kCurrentFormat && !upgrade)
      throw IOError(dir_ + ": this store is " + format_name(base.format()) + "; kistore writes " +
                    format_name(kCurrentFormat) + " only: run `kistore upgrade` first; nothing was written");
    std::optional<std::string> written = write(base);
    if (!written) return std::nullopt;
    const std::string& id = *written;
    git_oid new_id;
    git_oid_fromstr(&new_id, id.c_str());
    std::optional<git_oid> old_id;
    if (!base.empty()) git_oid_fromstr(&old_id.emplace(), base.commit_id().c_str());
    int rc = git::move_ref(repo_, branch_, new_id, old_id ? &*old_id : nullptr, "kistore: " + op);
    if (rc == 0) {
      git_odb* odb = nullptr;
      if (git_repository_odb(&odb, repo_) == 0) {
        git_odb_refresh(odb);  // see the pack just written
        git_odb_free(odb);
      }
      return id;
    }
    if (rc != GIT_EMODIFIED && rc != GIT_EEXISTS && rc != GIT_ELOCKED)
      git::check(rc, dir_ + ": moving " + branch_);
    last_locked = rc == GIT_ELOCKED;
    git_error_clear();
    // Another writer won: back off a little, then rebuild on its head.
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + rng() % (5 + attempt * 10)));
  }
  throw IOError(dir_ + ": gave up after " + std::to_string(kMaxAttempts) + " attempts: " +
                (last_locked ? "the lock file " + std::string(git_repository_path(repo_)) + branch_ +
                                   ".lock stayed in place; if no kistore or git command is running on this "
                                   "store, a crashed one left it: remove it"
                             : "other writers kept moving " + branch_));
}

}  // namespace kistore
