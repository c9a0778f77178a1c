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
#include "store/git.h"
#include "store/native_repo.h"
#include "store/repo_objects.h"
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

Snapshot::Snapshot(std::shared_ptr<git::RepoObjects> objects, const git_oid* tree, std::string commit_id)
    : objects_(std::move(objects)),
      tree_(tree ? std::make_shared<const git_oid>(*tree) : nullptr),
      commit_id_(std::move(commit_id)) {}

git_repository* Snapshot::repo() const { return objects_->repo(); }

namespace {

// Splits "a/b/c" into ("a/b", "c").
std::pair<std::string_view, std::string> split_path(std::string_view path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {std::string_view(), std::string(path)};
  return {path.substr(0, slash), std::string(path.substr(slash + 1))};
}

}  // namespace

std::shared_ptr<const git::RawTree> Snapshot::load_tree(const git_oid& id, const std::string& where) const {
  git_object_t type = GIT_OBJECT_INVALID;
  std::string bytes;
  objects_->read(id, type, bytes, "reading the tree " + (where.empty() ? std::string("at the root") : where));
  if (type != GIT_OBJECT_TREE)
    throw Corruption((where.empty() ? std::string("the root") : where) + ": " + git::oid_str(id) + " is not a tree");
  return std::make_shared<const git::RawTree>(std::move(bytes));
}

const git::RawTree* Snapshot::raw_tree_index(std::string_view dir) const {
  if (!tree_) return nullptr;
  std::string key(dir);
  if (auto it = raw_.find(key); it != raw_.end()) return it->second.get();
  git_oid id;
  bool found = false;
  if (dir.empty()) {
    id = *tree_;
    found = true;
  } else {
    std::size_t slash = dir.rfind('/');
    std::string_view parent = slash == std::string_view::npos ? std::string_view() : dir.substr(0, slash);
    std::string_view name = slash == std::string_view::npos ? dir : dir.substr(slash + 1);
    bool is_tree = false;
    found = find_entry(parent, name, id.id, &is_tree) && is_tree;
  }
  std::shared_ptr<const git::RawTree> tree = found ? load_tree(id, key) : nullptr;
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
  git_object_t type = GIT_OBJECT_INVALID;
  std::string bytes;
  objects_->read(id, type, bytes, "reading " + std::string(path));
  if (type != GIT_OBJECT_BLOB) return std::nullopt;  // a submodule link, say
  return bytes;
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
git::Tree subtree(git_repository* repo, const git_oid* root_id, std::string_view dir) {
  if (!root_id) return nullptr;
  git_tree* root = nullptr;
  git::check(git_tree_lookup(&root, repo, root_id), "reading the head tree");
  git::Tree owned_root(root);
  if (dir.empty()) return owned_root;
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
  try {
    const git::RawTree* t = raw_tree_index(dir);
    if (!t) return out;
    std::string_view rest = t->bytes();
    for (git::RawEntry e; git::next_entry(rest, e);) out.emplace_back(e.name);
    return out;
  } catch (const Error&) {
    return list_libgit2(dir);  // libgit2 says what is wrong, as it always did
  }
}

namespace {

// The tree at `dir` below `root`, looked up a folder at a time (so that a
// damaged tree is named by its own path, as list() always named it), or
// null when there is none.
git::Tree tree_by_folders(git_repository* repo, const git_oid& root, std::string_view dir) {
  git_tree* t = nullptr;
  git::check(git_tree_lookup(&t, repo, &root), "reading the head tree");
  git::Tree at(t);
  for (std::size_t start = 0; start < dir.size();) {
    std::size_t slash = std::min(dir.find('/', start), dir.size());
    std::string name(dir.substr(start, slash - start));
    const git_tree_entry* e = git_tree_entry_byname(at.get(), name.c_str());
    if (!e || git_tree_entry_type(e) != GIT_OBJECT_TREE) return nullptr;
    git_tree* next = nullptr;
    git::check(git_tree_lookup(&next, repo, git_tree_entry_id(e)), "reading " + std::string(dir.substr(0, slash)));
    at.reset(next);
    start = slash + 1;
  }
  return at;
}

}  // namespace

std::vector<std::string> Snapshot::list_libgit2(std::string_view dir) const {
  std::vector<std::string> out;
  if (!tree_) return out;
  git::Tree t = tree_by_folders(repo(), *tree_, dir);
  if (!t) return out;
  std::size_t n = git_tree_entrycount(t.get());
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.emplace_back(git_tree_entry_name(git_tree_entry_byindex(t.get(), i)));
  return out;
}

void Snapshot::walk(std::string_view dir, const std::function<void(const std::string&, std::string_view)>& fn,
                    const std::function<void(const std::string&)>& other) const {
  if (!tree_) return;
  git::Tree t = subtree(repo(), tree_id(), dir);
  if (t) walk_tree(repo(), t.get(), std::string(dir), fn, other);
}

bool Snapshot::has_object(const Digest& d) const { return exists(object_path(d)); }

std::string Snapshot::object_bytes(const Digest& d) const {
  std::string path = object_path(d);
  auto frame = read(path);
  if (!frame) throw NotFound(d.str() + ": no such object in the store");
  std::string bytes = decode_object(*frame, path);
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
  // Three levels: ab / cd / <60 hex>. Names are read from the trees alone,
  // and the trees are not kept (a million objects have 65,536 folders).
  std::vector<Digest> out;
  try {
    const git::RawTree* root = raw_tree_index("objects/sha256");
    if (!root) return out;
    std::string_view ra = root->bytes();
    for (git::RawEntry a; git::next_entry(ra, a);) {
      if (!a.tree()) continue;
      std::string path_a = "objects/sha256/" + std::string(a.name);
      std::shared_ptr<const git::RawTree> ta = load_tree(a.oid(), path_a);
      std::string_view rb = ta->bytes();
      for (git::RawEntry b; git::next_entry(rb, b);) {
        if (!b.tree()) continue;
        std::shared_ptr<const git::RawTree> tb = load_tree(b.oid(), path_a + "/" + std::string(b.name));
        std::string_view rc = tb->bytes();
        for (git::RawEntry c; git::next_entry(rc, c);)
          if (auto d = Digest::parse_hex(std::string(a.name) + std::string(b.name) + std::string(c.name)))
            out.push_back(*d);
      }
    }
    return out;
  } catch (const Error&) {
    return object_digests_libgit2();  // libgit2 says what is wrong, as it always did
  }
}

std::vector<Digest> Snapshot::object_digests_libgit2() const {
  std::vector<Digest> out;
  git::Tree root = subtree(repo(), tree_id(), "objects/sha256");
  if (!root) return out;
  for (std::size_t i = 0, n = git_tree_entrycount(root.get()); i < n; ++i) {
    const git_tree_entry* a = git_tree_entry_byindex(root.get(), i);
    if (git_tree_entry_type(a) != GIT_OBJECT_TREE) continue;
    git_tree* ta = nullptr;
    git::check(git_tree_lookup(&ta, repo(), git_tree_entry_id(a)), "reading objects");
    git::Tree owned_a(ta);
    for (std::size_t j = 0, m = git_tree_entrycount(ta); j < m; ++j) {
      const git_tree_entry* b = git_tree_entry_byindex(ta, j);
      if (git_tree_entry_type(b) != GIT_OBJECT_TREE) continue;
      git_tree* tb = nullptr;
      git::check(git_tree_lookup(&tb, repo(), git_tree_entry_id(b)), "reading objects");
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

Store::Store(git_repository* repo, std::string dir) : dir_(std::move(dir)) {
  // A constructor that throws runs no destructor: free the repository here.
  try {
    git_reference* head = nullptr;
    git::check(git_reference_lookup(&head, repo, "HEAD"), dir_ + ": reading HEAD");
    git::Reference owned(head);
    if (git_reference_type(head) != GIT_REFERENCE_SYMBOLIC)
      throw IOError(dir_ + ": HEAD is detached; a store's HEAD must name its branch (refs/heads/main)");
    branch_ = git_reference_symbolic_target(head);
  } catch (...) {
    git_repository_free(repo);
    throw;
  }
  objects_ = std::make_shared<git::RepoObjects>(dir_, repo);
}

Store::Store(std::shared_ptr<git::RepoObjects> objects, std::string dir, std::string branch)
    : objects_(std::move(objects)), dir_(std::move(dir)), branch_(std::move(branch)) {}

Store::Store(Store&& o) noexcept = default;
Store& Store::operator=(Store&& o) noexcept = default;
Store::~Store() = default;

git_repository* Store::repo() const { return objects_->repo(); }

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

Store Store::open(const std::string& dir, Use use) {
  if (use == Use::kAnything) git::ensure_init();
  if (std::optional<Store> store = open_native(dir)) {
    if (use == Use::kAnything) store->repo();  // opened as before, so that its errors come here
    return std::move(*store);
  }
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

std::string Store::author(const std::string& option) const {
  git::Signature sig = make_signature(repo(), option, std::nullopt);
  return std::string(sig->name) + " <" + sig->email + ">";
}

std::string Store::local_dir() const {
  std::string dir = objects_->gitdir();
  if (!dir.empty() && dir.back() == '/') dir.pop_back();
  return dir + "/kistore";
}

std::optional<std::string> Store::setting(const std::string& key) const {
  git_config* cfg = nullptr;
  git::check(git_repository_config_snapshot(&cfg, repo()), dir_ + ": reading config");
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
  git::check(git_repository_config(&cfg, repo()), dir_ + ": opening config");
  git::Config owned(cfg);
  git::check(git_config_set_string(cfg, ("kistore." + key).c_str(), value.c_str()), dir_ + ": writing config");
}

Snapshot Store::snapshot() const {
  if (std::optional<Snapshot> native = snapshot_native()) return std::move(*native);
  git_repository* repo = this->repo();
  git_reference* ref = nullptr;
  int rc = git_reference_lookup(&ref, repo, branch_.c_str());
  if (rc == GIT_ENOTFOUND) return Snapshot(objects_, nullptr, "");
  git::check(rc, dir_ + ": reading " + branch_);
  git::Reference owned(ref);
  git_commit* commit = nullptr;
  git::check(git_commit_lookup(&commit, repo, git_reference_target(ref)), dir_ + ": reading the head commit");
  git::Commit owned_commit(commit);
  return Snapshot(objects_, git_commit_tree_id(commit), git::oid_str(*git_commit_id(commit)));
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
  // A bulk change becomes one pack; a small one, loose objects (as git
  // writes them), so that many small adds do not pile up packs.
  bool bulk = change.upserts.size() >= kPackThreshold;
  std::optional<git::PackWriter> pack;
  std::optional<git::LooseWriter> loose;
  if (bulk)
    pack.emplace(objects_->gitdir() + "objects/pack");
  else
    loose.emplace(repo());
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
  auto add_parent = [&](const std::string& id_text) {
    git_oid id;
    if (git_oid_fromstr(&id, id_text.c_str()) < 0) throw IOError("not a commit id: " + id_text);
    parents.push_back(id);
  };
  if (!base.empty()) add_parent(base.commit_id());
  for (const std::string& p : change.extra_parents) add_parent(p);
  git::Signature author = make_signature(repo(), options.author, options.time);
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
  const std::string objects = objects_->gitdir() + "objects";
  sweep_stale_temp_files(objects);
  sweep_stale_temp_files(objects + "/pack");
}

void Store::check_writable() const {
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
    int rc = git::move_ref(repo(), branch_, new_id, old_id ? &*old_id : nullptr, "kistore: " + op);
    if (rc == 0) {
      git_odb* odb = nullptr;
      if (git_repository_odb(&odb, repo()) == 0) {
        git_odb_refresh(odb);  // see the pack just written
        git_odb_free(odb);
      }
      objects_->refresh();
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
                (last_locked ? "the lock file " + objects_->gitdir() + branch_ +
                                   ".lock stayed in place; if no kistore or git command is running on this "
                                   "store, a crashed one left it: remove it"
                             : "other writers kept moving " + branch_));
}

}  // namespace kistore
