#include "store/git/git.h"

#include <atomic>
#include <mutex>


namespace kistore::git {

namespace {
std::atomic<bool> strict_hashes{false};
// The most libgit2 keeps of parsed objects (its default is 256 MiB).
constexpr std::size_t kCacheBytes = std::size_t(16) << 20;
}

void ensure_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    // Reads trust the local object store, as git's own commands do: libgit2
    // re-hashing every object read costs queries more than the rest of
    // their work (the index's flat folders are large trees). verify and
    // pull turn the check on (HashCheck), or hash what they read themselves.
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, strict_hashes ? 1 : 0);
    // kistore names every object it puts in a tree itself, so libgit2's
    // existence check before each tree entry is a lookup per entry for nothing.
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
    // libgit2 keeps the commits and small trees it has parsed, up to 256 MiB
    // by default: a pull of 200,000 commits grew by that much
    // (docs/benchmarks.md "A pull's memory"). kistore reads each commit of a
    // walk once or twice, and keeps what it needs of it itself.
    git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, static_cast<ssize_t>(kCacheBytes));
  });
}

HashCheck::HashCheck(bool on) : previous_(strict_hashes.exchange(on)) {
  ensure_init();  // libgit2 may be opened lazily (store/object_source.h): set the option on a live library
  git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, on ? 1 : 0);
}
HashCheck::~HashCheck() {
  strict_hashes = previous_;
  git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, previous_ ? 1 : 0);
}

// libgit2 has no getter for its caching switch: only the outermost
// StreamingReads turns it off and back on, so one inside another leaves it off.
namespace {
std::atomic<int> streaming_depth{0};
}

StreamingReads::StreamingReads() {
  ensure_init();
  if (streaming_depth++ > 0) return;
  git_libgit2_opts(GIT_OPT_GET_MWINDOW_SIZE, &window_);
  git_libgit2_opts(GIT_OPT_GET_MWINDOW_MAPPED_LIMIT, &mapped_);
  git_libgit2_opts(GIT_OPT_ENABLE_CACHING, 0);
  git_libgit2_opts(GIT_OPT_SET_MWINDOW_SIZE, kStreamWindowBytes);
  git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT, kStreamMappedBytes);
}
StreamingReads::~StreamingReads() {
  if (--streaming_depth > 0) return;
  git_libgit2_opts(GIT_OPT_ENABLE_CACHING, 1);
  git_libgit2_opts(GIT_OPT_SET_MWINDOW_SIZE, window_);
  git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT, mapped_);
}

Odb open_odb(git_repository* repo) {
  git_odb* odb = nullptr;
  check(git_repository_odb(&odb, repo), "opening the object database");
  return Odb(odb);
}

std::string last_error() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown error";
}

std::string oid_str(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &oid);
  return buf;
}

std::string gitdir(git_repository* repo) { return git_repository_path(repo); }

std::size_t count_commits(git_repository* repo, const git_oid& head) {
  git_revwalk* raw = nullptr;
  check(git_revwalk_new(&raw, repo), "walking history");
  Revwalk walk(raw);
  check(git_revwalk_push(raw, &head), "walking history");
  std::size_t n = 0;
  git_oid id;
  while (git_revwalk_next(&id, raw) == 0) ++n;
  return n;
}

ObjectDatabase::ObjectDatabase(git_repository* repo) {
  check(git_repository_odb(&odb_, repo), "opening the object database");
}
ObjectDatabase::~ObjectDatabase() {
  if (odb_) git_odb_free(odb_);
}

std::size_t ObjectDatabase::size_of(const git_oid& id, const std::string& what) const {
  std::size_t size = 0;
  git_object_t type;
  check(git_odb_read_header(&size, &type, odb_, &id), "reading " + what);
  return size;
}

void ObjectDatabase::read(const git_oid& id, const std::string& what,
                          const std::function<void(std::string_view)>& fn) const {
  git_odb_object* raw = nullptr;
  check(git_odb_read(&raw, odb_, &id), "reading " + what);
  OdbObject object(raw);
  fn(std::string_view(static_cast<const char*>(git_odb_object_data(raw)), git_odb_object_size(raw)));
}

git_oid parse_oid(const std::string& text) {
  git_oid id;
  if (text.size() != GIT_OID_HEXSZ || git_oid_fromstr(&id, text.c_str()) < 0)
    throw Error(ErrorCode::kIO, "not a git object id: \"" + text + "\"");
  return id;
}

std::optional<git_oid> ref_target(git_repository* repo, const std::string& name) {
  git_reference* ref = nullptr;
  int rc = git_reference_lookup(&ref, repo, name.c_str());
  if (rc == GIT_ENOTFOUND) {
    git_error_clear();
    return std::nullopt;
  }
  check(rc, "reading " + name);
  Reference owned(ref);
  git_reference* resolved = nullptr;
  check(git_reference_resolve(&resolved, ref), "resolving " + name);
  Reference owned_resolved(resolved);
  return *git_reference_target(resolved);
}

void set_ref(git_repository* repo, const std::string& name, const git_oid& id, const std::string& log) {
  git_reference* ref = nullptr;
  check(git_reference_create(&ref, repo, name.c_str(), &id, 1, log.c_str()), "writing " + name);
  git_reference_free(ref);
}

void delete_ref(git_repository* repo, const std::string& name) {
  git_reference* ref = nullptr;
  if (git_reference_lookup(&ref, repo, name.c_str()) == 0) {
    git_reference_delete(ref);
    git_reference_free(ref);
  }
  git_error_clear();
}

bool descends_from(git_repository* repo, const git_oid& commit, const git_oid& ancestor) {
  if (git_oid_equal(&commit, &ancestor)) return true;
  int rc = git_graph_descendant_of(repo, &commit, &ancestor);
  git_error_clear();
  return rc == 1;
}

NamedObject object_by_prefix(git_repository* repo, const std::string& hex) {
  NamedObject out;
  if (hex.size() < GIT_OID_MINPREFIXLEN || hex.size() > GIT_OID_HEXSZ ||
      hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    return out;
  git_oid prefix;
  if (git_oid_fromstrn(&prefix, hex.data(), hex.size()) < 0) {
    git_error_clear();
    return out;
  }
  git_object* object = nullptr;
  int rc = git_object_lookup_prefix(&object, repo, &prefix, hex.size(), GIT_OBJECT_ANY);
  if (rc == GIT_EAMBIGUOUS) out.found = NamedObject::Found::kSeveral;
  if (rc == 0) {
    out.found = NamedObject::Found::kOne;
    out.id = *git_object_id(object);
    out.type = git_object_type2string(git_object_type(object));
    git_object_free(object);
  }
  git_error_clear();
  return out;
}

bool valid_ref_name(const std::string& name) {
  int valid = 0;
  if (name.find('\0') != std::string::npos || git_reference_name_is_valid(&valid, name.c_str()) < 0) valid = 0;
  git_error_clear();
  return valid == 1;
}

std::optional<git_oid> first_parent(git_repository* repo, const git_oid& commit) {
  git_commit* c = nullptr;
  check(git_commit_lookup(&c, repo, &commit), "reading commit " + oid_str(commit));
  Commit owned(c);
  if (git_commit_parentcount(c) == 0) return std::nullopt;
  return *git_commit_parent_id(c, 0);
}

void commit_signature(git_repository* repo, const git_oid& commit, std::string& signature, std::string& payload) {
  signature.clear();
  payload.clear();
  git_buf sig = GIT_BUF_INIT, data = GIT_BUF_INIT;
  git_oid id = commit;
  if (git_commit_extract_signature(&sig, &data, repo, &id, nullptr) == 0) {
    signature.assign(sig.ptr, sig.size);
    payload.assign(data.ptr, data.size);
  }
  git_buf_dispose(&sig);
  git_buf_dispose(&data);
  git_error_clear();
}

git_oid commit_tree(git_repository* repo, const git_oid& commit, const std::string& what) {
  git_commit* c = nullptr;
  check(git_commit_lookup(&c, repo, &commit), what.empty() ? "reading commit " + oid_str(commit) : what);
  Commit owned(c);
  return *git_commit_tree_id(c);
}

std::string blob_bytes(git_repository* repo, const git_oid& id) {
  git_blob* blob = nullptr;
  check(git_blob_lookup(&blob, repo, &id), "reading blob " + oid_str(id));
  Blob owned(blob);
  return std::string(static_cast<const char*>(git_blob_rawcontent(blob)), git_blob_rawsize(blob));
}


}  // namespace kistore::git
