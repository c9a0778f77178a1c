#include "store/git/quarantine_odb.h"

#include <fcntl.h>
#include <git2/sys/odb_backend.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "store/edge/interrupt.h"
#include "objects/error.h"
#include "store/git/git.h"
#include "store/git/objwrite.h"
#include "store/git/store_access.h"
#include "store/edge/files.h"

namespace kistore::git {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPrefix = "incoming-";
// The backend's priority: above libgit2's own (loose 1, packed 2), so that
// git_odb_write_pack asks it first.
constexpr int kReceiverPriority = 1000;

std::string errno_text() { return std::strerror(errno); }

// A small file of the quarantine's repository, made (never an existing
// one) through the file gate. The quarantine is removed whole when making
// it fails, so a half-written file here never outlives the failure.
void write_file(const std::string& path, std::string_view text) {
  FileSystem& files = file_system();
  int fd = files.open_at(AT_FDCWD, path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw IOError(path + ": cannot create: " + errno_text());
  try {
    write_all(fd, text, path);
  } catch (...) {
    files.close(fd);
    throw;
  }
  if (files.close(fd) != 0) throw IOError(path + ": cannot write: " + errno_text());
}

// The process id a quarantine folder's name records, if it is one.
std::optional<pid_t> owner_of(const std::string& name) {
  if (name.rfind(kPrefix, 0) != 0) return std::nullopt;
  std::size_t start = kPrefix.size(), dash = name.find('-', start);
  if (dash == std::string::npos || dash == start) return std::nullopt;
  long pid = 0;
  for (std::size_t i = start; i < dash; ++i) {
    if (name[i] < '0' || name[i] > '9' || pid > 1L << 30) return std::nullopt;
    pid = pid * 10 + (name[i] - '0');
  }
  if (pid <= 0) return std::nullopt;
  return static_cast<pid_t>(pid);
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

std::string objects_dir_of(git_repository* store) {
  std::string gitdir = git_repository_path(store);  // ends in '/'
  return gitdir + "objects";
}

}  // namespace

// ---- Receiving packs -------------------------------------------------------

// The odb backend whose only function is writepack. libgit2 frees it (free)
// with the quarantine's object database.
struct PackReceiver {
  git_odb_backend backend;  // first: libgit2 hands back a pointer to it
  std::string pack_dir;
  PackLimits limits;
  git_odb* store_odb = nullptr;  // owned: the store's objects, for a thin pack's bases
  std::exception_ptr failure;
  std::size_t received = 0;
};

namespace {

struct Writepack {
  git_odb_writepack writepack;  // first, as above
  std::unique_ptr<IncomingPack> pack;
  git_indexer_progress_cb progress_cb = nullptr;
  void* progress_payload = nullptr;
  git_indexer_progress* stats = nullptr;  // during append and commit
  bool cancelled = false;
};

}  // namespace

namespace {

PackReceiver* receiver_of(git_odb_writepack* w) {
  return reinterpret_cast<PackReceiver*>(w->backend);
}

// A base of a thin pack, from the store: bounded before it is read, rehashed.
bool read_store_base(git_odb* odb, const git_oid& id, std::uint64_t max_bytes, git_object_t& type, std::string& out) {
  std::size_t size = 0;
  if (git_odb_read_header(&size, &type, odb, &id) < 0) {
    git_error_clear();
    return false;
  }
  if (size > max_bytes)
    throw Refused("a delta's base " + oid_str(id) + " is " + std::to_string(size) + " bytes; the limit is " +
                  std::to_string(max_bytes));
  git_odb_object* raw = nullptr;
  check(git_odb_read(&raw, odb, &id), "reading the store's object " + oid_str(id), ErrorCode::kCorruption);
  OdbObject object(raw);
  type = git_odb_object_type(raw);
  out.assign(static_cast<const char*>(git_odb_object_data(raw)), git_odb_object_size(raw));
  git_oid actual = object_id(type, out);
  if (!git_oid_equal(&actual, &id))
    throw Corruption("the store's object " + oid_str(id) + " holds bytes whose id is " + oid_str(actual));
  return true;
}

void fill(git_indexer_progress* stats, const PackProgress& p) {
  if (!stats) return;
  stats->total_objects = p.total_objects;
  stats->received_objects = p.received_objects;
  stats->indexed_objects = p.received_objects;
  stats->received_bytes = p.received_bytes;
  stats->total_deltas = p.total_deltas;
  stats->indexed_deltas = p.resolved_deltas;
  stats->local_objects = 0;
}

int fail(PackReceiver* r) {
  r->failure = std::current_exception();
  try {
    throw;
  } catch (const std::exception& e) {
    git_error_set_str(GIT_ERROR_ODB, e.what());
  } catch (...) {
    git_error_set_str(GIT_ERROR_ODB, "the incoming pack failed");
  }
  return -1;
}

int append(git_odb_writepack* w, const void* data, std::size_t size, git_indexer_progress* stats) {
  auto* self = reinterpret_cast<Writepack*>(w);
  PackReceiver* r = receiver_of(w);
  self->stats = stats;
  try {
    if (!self->pack) {
      git_odb* store_odb = r->store_odb;
      self->pack = std::make_unique<IncomingPack>(
          r->pack_dir, r->limits,
          [self](const PackProgress& p) {
            fill(self->stats, p);
            if (self->progress_cb && self->stats && self->progress_cb(self->stats, self->progress_payload) != 0) {
              self->cancelled = true;
              throw Error(ErrorCode::kRemote, "the transfer was cancelled");
            }
          },
          [store_odb](const git_oid& id, std::uint64_t max_bytes, git_object_t& type, std::string& out) {
            return read_store_base(store_odb, id, max_bytes, type, out);
          });
    }
    self->pack->append({static_cast<const char*>(data), size});
    return 0;
  } catch (...) {
    return fail(r);
  }
}

int commit(git_odb_writepack* w, git_indexer_progress* stats) {
  auto* self = reinterpret_cast<Writepack*>(w);
  PackReceiver* r = receiver_of(w);
  self->stats = stats;
  if (!self->pack) return 0;  // nothing arrived: there was nothing to send
  try {
    IndexedPack done = self->pack->finish();
    r->received += done.objects.size();
    self->pack.reset();
    return 0;
  } catch (...) {
    self->pack.reset();
    return fail(r);
  }
}

void free_writepack(git_odb_writepack* w) { delete reinterpret_cast<Writepack*>(w); }

int start_writepack(git_odb_writepack** out, git_odb_backend* backend, git_odb*, git_indexer_progress_cb progress_cb,
                    void* progress_payload) {
  auto* self = new (std::nothrow) Writepack();
  if (!self) {
    git_error_set_oom();
    return -1;
  }
  self->writepack.backend = backend;
  self->writepack.append = append;
  self->writepack.commit = commit;
  self->writepack.free = free_writepack;
  self->progress_cb = progress_cb;
  self->progress_payload = progress_payload;
  reinterpret_cast<PackReceiver*>(backend)->failure = nullptr;
  *out = &self->writepack;
  return 0;
}

void free_receiver(git_odb_backend* backend) {
  auto* r = reinterpret_cast<PackReceiver*>(backend);
  if (r->store_odb) git_odb_free(r->store_odb);
  delete r;
}

}  // namespace

// ---- The quarantine ----------------------------------------------------------

Quarantine::Quarantine(git_repository* store) : store_(store) {
  ensure_init();
  check_write_access(git_repository_path(store));  // "permission denied" and the folder, as every writer says
  std::string objects = objects_dir_of(store);
  remove_stale(git_repository_path(store));
  path_ = make_temp_folder(objects + "/" + std::string(kPrefix) + std::to_string(::getpid()) + "-XXXXXX");
  try {
    // What git and libgit2 need to open a bare repository (HEAD, objects/,
    // refs/; no config: the defaults do), and the alternates file. Each
    // file and folder is a metadata write on the way in and out.
    for (const char* dir : {"/objects", "/objects/pack", "/objects/info", "/refs"}) make_folder(path_ + dir);
    write_file(path_ + "/HEAD", "ref: refs/heads/main\n");
    write_file(path_ + "/objects/info/alternates", fs::absolute(objects).lexically_normal().string() + "\n");
    check(git_repository_open_bare(&repo_, path_.c_str()), path_ + ": opening the quarantine");
  } catch (...) {
    std::error_code ec;
    fs::remove_all(path_, ec);
    untrack_temporary(path_);
    throw;
  }
}

Quarantine::~Quarantine() {
  if (repo_) git_repository_free(repo_);  // frees the receiver with the odb
  std::error_code ec;
  fs::remove_all(path_, ec);
  untrack_temporary(path_);
}

void Quarantine::set_ref(const std::string& name, const git_oid& id) {
  git_reference* ref = nullptr;
  check(git_reference_create(&ref, repo_, name.c_str(), &id, 1, nullptr), path_ + ": writing " + name);
  git_reference_free(ref);
}

void Quarantine::receive_packs(const PackLimits& limits) {
  if (receiver_) {
    receiver_->limits = limits;
    return;
  }
  auto r = std::make_unique<PackReceiver>();
  check(git_odb_init_backend(&r->backend, GIT_ODB_BACKEND_VERSION), "making the quarantine's pack receiver");
  r->backend.writepack = start_writepack;
  r->backend.free = free_receiver;
  r->pack_dir = pack_dir();
  r->limits = limits;
  check(git_repository_odb(&r->store_odb, store_), "opening the store's object database");
  git_odb* odb = nullptr;
  check(git_repository_odb(&odb, repo_), path_ + ": opening the quarantine's object database");
  Odb owned(odb);
  PackReceiver* raw = r.get();
  int rc = git_odb_add_backend(odb, &r->backend, kReceiverPriority);
  if (rc < 0) {
    git_odb_free(r->store_odb);
    check(rc, path_ + ": registering the quarantine's pack receiver");
  }
  r.release();  // the odb owns it now
  receiver_ = raw;
}

std::exception_ptr Quarantine::pack_failure() const { return receiver_ ? receiver_->failure : nullptr; }

std::size_t Quarantine::received_objects() const { return receiver_ ? receiver_->received : 0; }

std::size_t Quarantine::migrate() {
  std::string from_objects = path_ + "/objects", to_objects = objects_dir_of(store_);
  std::size_t moved = 0;
  auto move = [&](const fs::path& from, const std::string& to) {
    if (fs::exists(to)) return false;  // the store has it already: same name, same bytes
    rename_file(from.string(), to);
    ++moved;
    return true;
  };
  // Packs: each .pack before its .idx, so that no reader sees an index
  // without its pack.
  std::vector<std::string> packs;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(from_objects + "/pack", ec)) {
    std::string name = f.path().filename().string();
    if (name.rfind("pack-", 0) == 0 && name.size() > 5 && name.ends_with(".pack")) packs.push_back(name.substr(0, name.size() - 5));
  }
  if (ec) throw IOError(from_objects + "/pack: cannot list: " + ec.message());
  for (const std::string& pack : packs) {
    std::string from = from_objects + "/pack/" + pack;
    if (!fs::exists(from + ".idx")) continue;  // not a complete pack: never moved
    const std::string to = to_objects + "/pack/" + pack;
    const bool moved_pack = move(from + ".pack", to + ".pack");
    try {
      move(from + ".idx", to + ".idx");
    } catch (...) {
      // A pack without its index is of use to no one: it goes back to the
      // quarantine, which is removed with it.
      if (moved_pack) file_system().rename_at(AT_FDCWD, (to + ".pack").c_str(), AT_FDCWD, (from + ".pack").c_str(), false);
      throw;
    }
  }
  // Loose objects (objects/xx/<38 hex>), should anything have written some.
  std::vector<std::string> dirs;
  for (const auto& d : fs::directory_iterator(from_objects, ec)) {
    std::string name = d.path().filename().string();
    if (name.size() == 2 && std::isxdigit(static_cast<unsigned char>(name[0])) &&
        std::isxdigit(static_cast<unsigned char>(name[1])) && d.is_directory())
      dirs.push_back(name);
  }
  for (const std::string& dir : dirs) {
    const bool made = make_folder(to_objects + "/" + dir);
    std::size_t before = moved;
    try {
      for (const auto& f : fs::directory_iterator(from_objects + "/" + dir, ec)) {
        std::string name = f.path().filename().string();
        if (name.size() == 38 && name.find_first_not_of("0123456789abcdef") == std::string::npos)
          move(f.path(), to_objects + "/" + dir + "/" + name);
      }
    } catch (...) {
      if (made && moved == before) remove_empty_folder_quietly(to_objects + "/" + dir);
      throw;
    }
    if (moved != before) sync_folder(to_objects + "/" + dir);
  }
  if (!packs.empty()) sync_folder(to_objects + "/pack");
  git_odb* odb = nullptr;
  check(git_repository_odb(&odb, store_), "opening the store's object database");
  Odb owned(odb);
  check(git_odb_refresh(odb), "reading the store's new packs");
  return moved;
}

std::size_t Quarantine::remove_stale(const std::string& gitdir) {
  std::string objects = gitdir;
  if (!objects.empty() && objects.back() != '/') objects += '/';
  objects += "objects";
  std::size_t removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(objects, ec)) {
    std::string name = entry.path().filename().string();
    auto pid = owner_of(name);
    if (!pid || *pid == ::getpid() || alive(*pid)) continue;
    std::error_code ignored;
    if (fs::remove_all(entry.path(), ignored) != static_cast<std::uintmax_t>(-1) && !ignored) ++removed;
  }
  return removed;
}

}  // namespace kistore::git
