#include "store/git/objwrite.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <unordered_map>

#include "objects/parallel.h"
#include "objects/sha1.h"
#include "store/git/git.h"
#include "store/git/packread.h"
#include "store/git/raw_tree.h"
#include "store/edge/files.h"
#include "store/edge/tempfiles.h"

namespace kistore::git {

namespace {

const char* type_name(git_object_t type) {
  switch (type) {
    case GIT_OBJECT_COMMIT: return "commit";
    case GIT_OBJECT_TREE: return "tree";
    case GIT_OBJECT_BLOB: return "blob";
    case GIT_OBJECT_TAG: return "tag";
    default: throw Error(ErrorCode::kIO, "writing an object of unknown type");
  }
}

std::string header(git_object_t type, std::size_t size) {
  return std::string(type_name(type)) + " " + std::to_string(size) + '\0';
}

Sha1& sha1() {
  thread_local Sha1 s;
  return s;
}

std::string errno_text() { return std::strerror(errno); }

// Level 0: zlib's stored format written directly (header, blocks of at
// most 65,535 bytes, Adler-32), with none of deflate's per-stream set-up.
// The stream of `head` + `data` goes to put(bytes, size) piece by piece.
template <typename Put>
void stored_stream(std::string_view head, std::string_view data, Put&& put) {
  put("\x78\x01", 2);
  uLong adler = adler32(0, nullptr, 0);
  std::string_view parts[2] = {head, data};
  std::size_t total = head.size() + data.size(), written = 0, part = 0, at = 0;
  // Blocks span both parts; one block when the object is small.
  do {
    std::size_t n = std::min<std::size_t>(65535, total - written);
    const char block[5] = {static_cast<char>(written + n == total ? 1 : 0), static_cast<char>(n & 0xff),
                           static_cast<char>(n >> 8), static_cast<char>(~n & 0xff),
                           static_cast<char>((~n >> 8) & 0xff)};
    put(block, 5);
    for (std::size_t left = n; left;) {
      while (at == parts[part].size()) ++part, at = 0;
      std::size_t take = std::min(left, parts[part].size() - at);
      put(parts[part].data() + at, take);
      adler = adler32(adler, reinterpret_cast<const Bytef*>(parts[part].data() + at), static_cast<uInt>(take));
      at += take;
      left -= take;
    }
    written += n;
  } while (written < total);
  const char trailer[4] = {static_cast<char>((adler >> 24) & 0xff), static_cast<char>((adler >> 16) & 0xff),
                           static_cast<char>((adler >> 8) & 0xff), static_cast<char>(adler & 0xff)};
  put(trailer, 4);
}

void store_into(std::string& out, std::string_view head, std::string_view data) {
  out.clear();
  out.reserve(head.size() + data.size() + 16 + (head.size() + data.size()) / 65535 * 5);
  stored_stream(head, data, [&](const char* p, std::size_t n) { out.append(p, n); });
}

// A deflate stream kept for the thread's life and reset per object:
// deflateInit allocates and clears its tables each time, which costs more
// than compressing a small tree. Small objects use small hash tables
// (memLevel 5: 8 KiB to clear, blocks of 2,048 symbols), big ones the default.
struct Deflater {
  z_stream z{};
  Deflater(int level, int mem_level) {
    if (deflateInit2(&z, level, Z_DEFLATED, 15, mem_level, Z_DEFAULT_STRATEGY) != Z_OK)
      throw Error(ErrorCode::kIO, "zlib: cannot start deflate");
  }
  ~Deflater() { deflateEnd(&z); }
};

// zlib's deflate of `head` + `data` into `out` (replaced).
void deflate_into(std::string& out, std::string_view head, std::string_view data, int level) {
  if (level == 0) return store_into(out, head, data);
  thread_local std::unique_ptr<Deflater> streams[10][2];
  level = std::clamp(level, 1, 9);
  bool small = head.size() + data.size() <= 16384;
  std::unique_ptr<Deflater>& stream = streams[level][small];
  if (!stream) stream = std::make_unique<Deflater>(level, small ? 5 : 8);
  z_stream& z = stream->z;
  deflateReset(&z);
  out.resize(deflateBound(&z, head.size() + data.size()) + 16);
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(head.data()));
  z.avail_in = static_cast<uInt>(head.size());
  int rc = head.empty() ? Z_OK : deflate(&z, Z_NO_FLUSH);
  if (rc == Z_OK) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    rc = deflate(&z, Z_FINISH);
  }
  std::size_t n = z.total_out;
  if (rc != Z_STREAM_END) throw Error(ErrorCode::kIO, "zlib: deflate failed");
  out.resize(n);
}

void put32(std::string& s, std::uint32_t v) {
  char b[4] = {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
  s.append(b, 4);
}

// A pack entry's header: the type in bits 4-6 of the first byte, the size
// in its low 4 bits and 7 bits per following byte, least significant first.
// Returns its length.
std::size_t entry_header(unsigned char (&head)[16], git_object_t type, std::uint64_t size) {
  std::size_t n = 0;
  unsigned char c = static_cast<unsigned char>((static_cast<int>(type) << 4) | (size & 15));
  size >>= 4;
  while (size) {
    head[n++] = c | 0x80;
    c = size & 0x7f;
    size >>= 7;
  }
  head[n++] = c;
  return n;
}

// "PACK", version 2, the object count.
std::string pack_header(std::uint32_t count) {
  std::string head = "PACK";
  put32(head, 2);
  put32(head, count);
  return head;
}

}  // namespace

git_oid object_id(git_object_t type, std::string_view data) {
  std::string head = header(type, data.size());
  Sha1& h = sha1();
  h.init();
  h.update(head.data(), head.size());
  h.update(data.data(), data.size());
  git_oid id;
  h.final(id.id);
  return id;
}

// ---- PackWriter -----------------------------------------------------------

PackWriter::PackWriter(std::string pack_dir) : dir_(std::move(pack_dir)) {
  made_dir_ = make_folder(dir_);
  try {
    pack_ = std::make_unique<NewFile>(dir_, "pack", 0444);
  } catch (...) {
    if (made_dir_) remove_empty_folder_quietly(dir_);
    throw;
  }
  tmp_path_ = pack_->path();
  // The object count is filled in by finish.
  std::string head = pack_header(0);
  put(head.data(), head.size());
}

PackWriter::~PackWriter() {
  pack_.reset();  // removes the temporary file unless it was placed
  if (!finished_ && made_dir_) remove_empty_folder_quietly(dir_);
}

void PackWriter::put(const void* data, std::size_t n) {
  buffer_.append(static_cast<const char*>(data), n);
  offset_ += n;
  if (buffer_.size() >= (1u << 20)) flush();
}

void PackWriter::flush() {
  pack_->write(buffer_);
  buffer_.clear();
}

bool PackWriter::has(const git_oid& id) const { return by_id_.find(id, entry_id()).has_value(); }

void PackWriter::write(const git_oid& id, git_object_t type, std::string_view data, int level) {
  if (finished_ || !pack_ || pack_->fd() < 0) throw Error(ErrorCode::kIO, tmp_path_ + ": writing into a finished pack");
  if (has(id)) return;
  unsigned char head[16];
  std::size_t n = entry_header(head, type, data.size());
  std::uint64_t at = offset_;
  std::uint32_t crc = crc32(0, head, static_cast<uInt>(n));
  put(head, n);
  if (level == 0) {
    // Stored blocks go straight into the buffer: a big tree (format 1's flat
    // folders hold 100 MB at a million runs) is not copied whole first.
    stored_stream({}, data, [&](const char* p, std::size_t k) {
      crc = crc32(crc, reinterpret_cast<const Bytef*>(p), static_cast<uInt>(k));
      put(p, k);
    });
  } else {
    deflate_into(deflated_, {}, data, level);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(deflated_.data()), static_cast<uInt>(deflated_.size()));
    put(deflated_.data(), deflated_.size());
  }
  entries_.push_back({id, crc, at});
  by_id_.insert(static_cast<std::uint32_t>(entries_.size() - 1), entry_id());
}

void PackWriter::write_deflated(const git_oid& id, git_object_t type, std::uint64_t size, std::string_view deflated) {
  if (finished_ || !pack_ || pack_->fd() < 0) throw Error(ErrorCode::kIO, tmp_path_ + ": writing into a finished pack");
  if (has(id)) return;
  unsigned char head[16];
  std::size_t n = entry_header(head, type, size);
  std::uint64_t at = offset_;
  std::uint32_t crc = crc32(0, head, static_cast<uInt>(n));
  crc = crc32(crc, reinterpret_cast<const Bytef*>(deflated.data()), static_cast<uInt>(deflated.size()));
  put(head, n);
  put(deflated.data(), deflated.size());
  entries_.push_back({id, crc, at});
  by_id_.insert(static_cast<std::uint32_t>(entries_.size() - 1), entry_id());
}

std::vector<git_oid> PackWriter::write_blobs(const std::vector<std::string_view>& blobs) {
  // In groups of about 32 MiB, so that the deflated bytes held besides the
  // blobs themselves stay bounded.
  constexpr std::size_t kGroupBytes = 32u << 20;
  std::vector<git_oid> ids(blobs.size());
  std::vector<std::string> deflated;
  for (std::size_t from = 0; from < blobs.size();) {
    std::size_t to = from, bytes = 0;
    while (to < blobs.size() && (to == from || bytes + blobs[to].size() <= kGroupBytes)) bytes += blobs[to++].size();
    deflated.assign(to - from, std::string());
    parallel_for(to - from, [&](std::size_t k) {
      const std::string_view data = blobs[from + k];
      ids[from + k] = object_id(GIT_OBJECT_BLOB, data);
      const int level = blob_level(data);
      if (level != 0) deflate_into(deflated[k], {}, data, level);
    });
    for (std::size_t k = 0; k < to - from; ++k) {
      const std::string_view data = blobs[from + k];
      if (blob_level(data) == 0) write(ids[from + k], GIT_OBJECT_BLOB, data, 0);
      else write_deflated(ids[from + k], GIT_OBJECT_BLOB, data.size(), deflated[k]);
    }
    from = to;
  }
  return ids;
}

std::string PackWriter::finish() {
  if (entries_.empty()) {
    pack_.reset();
    if (made_dir_) remove_empty_folder_quietly(dir_);
    made_dir_ = false;
    return "";
  }
  flush();
  std::string checksum = seal();
  return place(checksum);
}

// Writes the object count into the header and the trailer (SHA-1 of
// everything before it) and syncs and closes the file; returns the trailer.
std::string PackWriter::seal() {
  std::string count;
  put32(count, static_cast<std::uint32_t>(entries_.size()));
  pack_->pwrite(count, 8);
  Sha1& h = sha1();
  h.init();
  std::string chunk(1 << 20, '\0');
  for (std::uint64_t at = 0; at < offset_;) {
    ssize_t r = ::pread(pack_->fd(), chunk.data(), std::min<std::uint64_t>(chunk.size(), offset_ - at), at);
    if (r <= 0) throw Error(ErrorCode::kIO, tmp_path_ + ": cannot read back: " + errno_text());
    h.update(chunk.data(), static_cast<std::size_t>(r));
    at += static_cast<std::uint64_t>(r);
  }
  unsigned char checksum[20];
  h.final(checksum);
  pack_->write(std::string_view(reinterpret_cast<const char*>(checksum), 20));
  pack_->seal();
  return std::string(reinterpret_cast<const char*>(checksum), 20);
}

// The entries' numbers in the order of their ids: counted into buckets by
// the ids' first two bytes (ids are uniform, so a bucket holds a handful),
// each bucket then sorted. Sorting the deque of entries itself costs several
// times more, through its iterators, and 4 bytes an entry is all it takes.
std::vector<std::uint32_t> PackWriter::sorted_by_id() const {
  auto bucket = [&](std::uint32_t k) { return std::size_t{entries_[k].id.id[0]} << 8 | entries_[k].id.id[1]; };
  std::vector<std::uint32_t> start(65537, 0);
  for (std::uint32_t k = 0; k < entries_.size(); ++k) ++start[bucket(k) + 1];
  for (std::size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<std::uint32_t> order(entries_.size());
  std::vector<std::uint32_t> at(start.begin(), start.end() - 1);
  for (std::uint32_t k = 0; k < entries_.size(); ++k) order[at[bucket(k)]++] = k;
  for (std::size_t b = 0; b + 1 < start.size(); ++b)
    if (start[b + 1] - start[b] > 1)
      std::sort(order.begin() + start[b], order.begin() + start[b + 1], [&](std::uint32_t x, std::uint32_t y) {
        return std::memcmp(entries_[x].id.id, entries_[y].id.id, 20) < 0;
      });
  return order;
}

// The index, version 2: fan-out, sorted ids, CRCs, offsets (large ones in
// a second table), the pack's checksum, its own checksum. Written to the
// file `fd` through a small buffer, hashed as it goes: a bulk add's index
// holds millions of entries, and need not be in memory twice.
void PackWriter::write_index(NewFile& file, const std::string& checksum) {
  std::vector<std::uint32_t> order = sorted_by_id();
  Sha1 h;
  h.init();
  std::string out;
  auto drain = [&](bool all) {
    if (out.size() < (1u << 20) && !all) return;
    h.update(out.data(), out.size());
    file.write(out);
    out.clear();
  };
  out = "\377tOc";
  put32(out, 2);
  std::uint32_t fan[256] = {};
  for (const Entry& e : entries_) ++fan[e.id.id[0]];
  for (std::uint32_t i = 0, sum = 0; i < 256; ++i) put32(out, sum += fan[i]);
  for (std::uint32_t k : order) out.append(reinterpret_cast<const char*>(entries_[k].id.id), 20), drain(false);
  for (std::uint32_t k : order) put32(out, entries_[k].crc), drain(false);
  std::uint32_t large = 0;
  for (std::uint32_t k : order) {
    const Entry& e = entries_[k];
    put32(out, e.offset < 0x80000000u ? static_cast<std::uint32_t>(e.offset) : 0x80000000u | large++);
    drain(false);
  }
  for (std::uint32_t k : order) {
    const Entry& e = entries_[k];
    if (e.offset < 0x80000000u) continue;
    put32(out, static_cast<std::uint32_t>(e.offset >> 32));
    put32(out, static_cast<std::uint32_t>(e.offset));
  }
  out += checksum;
  drain(true);
  unsigned char idx_sum[20];
  h.final(idx_sum);
  file.write(std::string_view(reinterpret_cast<const char*>(idx_sum), 20));
}

// Writes the index beside the pack and renames both into place, the pack
// first (readers look packs up by their index); returns the pack's name.
std::string PackWriter::place(const std::string& checksum) {
  git_oid name_id;
  std::memcpy(name_id.id, checksum.data(), 20);
  std::string name = "pack-" + oid_str(name_id);
  std::string pack_path = dir_ + "/" + name + ".pack", idx_path = dir_ + "/" + name + ".idx";
  NewFile idx(dir_, "idx", 0444);
  write_index(idx, checksum);
  idx.seal();
  // Each rename keeps a file of the same name already there: it holds the
  // same bytes, and another writer may be relying on it.
  const bool placed_pack = pack_->place(pack_path, /*keep_existing=*/true);
  try {
    idx.place(idx_path, /*keep_existing=*/true);
  } catch (...) {
    if (placed_pack) remove_quietly(pack_path);  // a pack without its index is of no use to anyone
    throw;
  }
  finished_ = true;
  pack_.reset();
  sync_folder(dir_);  // the renames, before the branch names what they hold
  return name;
}

// ---- merge_small_packs ----------------------------------------------------

namespace {

// The object ids an index (version 2) lists; empty when it is not one.
std::vector<git_oid> index_ids(const std::string& idx_path) {
  std::vector<git_oid> ids;
  int fd = ::open(idx_path.c_str(), O_RDONLY);
  if (fd < 0) return ids;
  std::string head(8 + 256 * 4, '\0');
  if (::pread(fd, head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()) &&
      head.compare(0, 4, "\377tOc") == 0) {
    const auto* fan = reinterpret_cast<const unsigned char*>(head.data() + 8 + 255 * 4);
    std::uint32_t count = (std::uint32_t{fan[0]} << 24) | (std::uint32_t{fan[1]} << 16) | (fan[2] << 8) | fan[3];
    std::string raw(std::size_t{count} * 20, '\0');
    if (::pread(fd, raw.data(), raw.size(), static_cast<off_t>(head.size())) == static_cast<ssize_t>(raw.size())) {
      ids.resize(count);
      for (std::uint32_t i = 0; i < count; ++i) std::memcpy(ids[i].id, raw.data() + i * 20, 20);
    }
  }
  ::close(fd);
  return ids;
}

}  // namespace

std::size_t merge_small_packs(git_repository* repo, const std::string& pack_dir, std::size_t max_small,
                              std::uint64_t small_bytes) {
  std::vector<std::string> small;  // pack-<hex>, of small packs
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(pack_dir, ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with("pack-") || !name.ends_with(".pack")) continue;
    std::string base = name.substr(0, name.size() - 5);
    if (std::filesystem::exists(pack_dir + "/" + base + ".keep")) continue;
    if (entry.file_size(ec) < small_bytes && std::filesystem::exists(pack_dir + "/" + base + ".idx")) small.push_back(base);
  }
  if (small.size() <= max_small) return 0;
  Odb odb = open_odb(repo);
  PackWriter merged(pack_dir);
  for (const std::string& base : small)
    for (const git_oid& id : index_ids(pack_dir + "/" + base + ".idx")) {
      git_odb_object* obj = nullptr;
      check(git_odb_read(&obj, odb.get(), &id), "merging small packs: reading " + oid_str(id), ErrorCode::kIO);
      OdbObject owned(obj);
      git_object_t type = git_odb_object_type(obj);
      merged.write(id, type,
                   std::string_view(static_cast<const char*>(git_odb_object_data(obj)), git_odb_object_size(obj)),
                   type == GIT_OBJECT_COMMIT ? 1 : 0);
    }
  merged.finish();
  for (const std::string& base : small) {
    remove_quietly(pack_dir + "/" + base + ".idx");
    remove_quietly(pack_dir + "/" + base + ".pack");
  }
  sync_folder(pack_dir);
  git_odb_refresh(odb.get());
  return small.size();
}

// ---- PackStream -----------------------------------------------------------

PackStream::PackStream(std::uint32_t count, Sink sink, std::size_t piece)
    : count_(count), sink_(std::move(sink)), piece_(piece), sha_(std::make_unique<Sha1>()) {
  sha_->init();
  std::string head = pack_header(count);
  put(head.data(), head.size());
}

PackStream::~PackStream() = default;

void PackStream::put(const void* data, std::size_t n) {
  buffer_.append(static_cast<const char*>(data), n);
  if (buffer_.size() >= piece_) flush();
}

void PackStream::flush() {
  if (buffer_.empty()) return;
  sha_->update(buffer_.data(), buffer_.size());
  bytes_ += buffer_.size();
  sink_(buffer_);
  buffer_.clear();
}

void PackStream::write(git_object_t type, std::string_view data, int level) {
  if (written_ == count_)
    throw Error(ErrorCode::kIO, "pack stream: more objects than the " + std::to_string(count_) + " announced");
  unsigned char head[16];
  put(head, entry_header(head, type, data.size()));
  if (level == 0) {
    stored_stream({}, data, [&](const char* p, std::size_t n) { put(p, n); });
  } else {
    deflate_into(deflated_, {}, data, level);
    put(deflated_.data(), deflated_.size());
  }
  ++written_;
}

void PackStream::finish() {
  if (written_ != count_)
    throw Error(ErrorCode::kIO, "pack stream: " + std::to_string(written_) + " objects written, " +
                                    std::to_string(count_) + " announced");
  flush();
  unsigned char checksum[20];
  sha_->final(checksum);
  bytes_ += 20;
  sink_({reinterpret_cast<const char*>(checksum), 20});
}

// ---- LooseWriter ----------------------------------------------------------

LooseWriter::LooseWriter(git_repository* repo) : repo_(repo), objects_(std::string(git_repository_path(repo)) + "objects/") {}

LooseWriter::~LooseWriter() { git_odb_free(odb_); }

void LooseWriter::write(const git_oid& id, git_object_t type, std::string_view data, int level) {
  if (!seen_.insert(id).second) return;
  if (!odb_) check(git_repository_odb(&odb_, repo_), "opening the object database");
  bool present = git_odb_exists(odb_, &id);
  git_error_clear();
  if (present) return;
  std::string hex = oid_str(id);
  std::string folder = objects_ + hex.substr(0, 2), path = folder + "/" + hex.substr(2);
  // Loose objects deflate their header too.
  std::string head = header(type, data.size());
  std::string deflated;
  if (level != 0) deflate_into(deflated, head, data, level);
  const bool made = make_folder(folder);
  if (made) new_folders_ = true;
  try {
    // In objects/ itself, so that the next writer finds a crash's leftovers
    // without listing every fan-out folder (store/edge/tempfiles.h).
    NewFile file(objects_, "obj", 0444);
    if (level != 0) {
      file.write(deflated);
    } else {
      // Stored blocks written as they are made: a big tree is not copied
      // into a buffer first.
      std::string frame;
      frame.reserve(std::min<std::size_t>(head.size() + data.size() + (data.size() / 65535 + 1) * 5 + 16,
                                          (1u << 20) + 65600));
      stored_stream(head, data, [&](const char* p, std::size_t n) {
        frame.append(p, n);
        if (frame.size() >= (1u << 20)) {
          file.write(frame);
          frame.clear();
        }
      });
      file.write(frame);
    }
    file.seal();
    file.place(path);
  } catch (...) {
    if (made) remove_empty_folder_quietly(folder);  // as it was: no folder of ours without its object
    throw;
  }
  folders_.insert(folder);
}

void LooseWriter::sync() {
  for (const std::string& folder : folders_) sync_folder(folder);
  if (new_folders_) sync_folder(objects_);
  folders_.clear();
  new_folders_ = false;
}

// ---- commits --------------------------------------------------------------

namespace {
void signature_line(std::string& out, const char* key, const git_signature& s) {
  int offset = s.when.offset;
  char sign = s.when.sign == '-' || offset < 0 ? '-' : '+';
  if (offset < 0) offset = -offset;
  char tz[16];
  std::snprintf(tz, sizeof tz, "%c%02d%02d", sign, offset / 60, offset % 60);
  out += key;
  out += ' ';
  out += s.name;
  out += " <";
  out += s.email;
  out += "> ";
  out += std::to_string(static_cast<long long>(s.when.time));
  out += ' ';
  out += tz;
  out += '\n';
}
}  // namespace

std::string commit_text(const git_oid& tree, const std::vector<git_oid>& parents, const git_signature& author,
                        const git_signature& committer, std::string_view message, std::string_view signature) {
  std::string out = "tree " + oid_str(tree) + "\n";
  for (const git_oid& p : parents) out += "parent " + oid_str(p) + "\n";
  signature_line(out, "author", author);
  signature_line(out, "committer", committer);
  if (!signature.empty()) {
    // git's gpgsig header: continuation lines start with a space.
    while (!signature.empty() && signature.back() == '\n') signature.remove_suffix(1);
    out += "gpgsig ";
    for (char c : signature) {
      out += c;
      if (c == '\n') out += ' ';
    }
    out += '\n';
  }
  out += '\n';
  out += message;
  return out;
}

}  // namespace kistore::git
