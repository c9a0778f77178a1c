#include "store/git/pack_indexer.h"

#include "store/git/pack_indexer_impl.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <istream>
#include <set>
#include <unordered_map>
#include <utility>

#include "objects/error.h"
#include "store/git/git.h"
#include "store/git/objwrite.h"
#include "store/git/pack_delta.h"
#include "store/edge/tempfiles.h"

namespace kistore::git {
using namespace pack_detail;  // this pack reader's own constants and helpers
namespace pack_detail {
std::string errno_text() { return std::strerror(errno); }
}  // namespace pack_detail
namespace {

// Bytes shown as text, non-printable ones as \xNN.
std::string shown(const unsigned char* p, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\' && p[i] != '"') {
      out += static_cast<char>(p[i]);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", p[i]);
      out += buf;
    }
  }
  return out;
}

std::string hex(const unsigned char* p, std::size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += digits[p[i] >> 4], out += digits[p[i] & 15];
  return out;
}

std::uint32_t be32(const unsigned char* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

}  // namespace


IncomingPack::Impl::Impl(std::string dest_dir, PackLimits limits, PackProgressFn progress, ExternalBaseFn bases)
    : dest_(std::move(dest_dir)), limits_(limits), progress_(std::move(progress)), bases_(std::move(bases)),
      scratch_(1 << 16),
      cache_(limits.delta_cache_bytes) {
  incoming_path_ = dest_ + "/tmp_pack_incoming_XXXXXX";
  fd_ = create_temp_file(incoming_path_, 0600, "a file for the incoming pack");
  try {
    if (inflateInit(&z_) != Z_OK) throw IOError("zlib: cannot start inflate");
    z_ready_ = true;
    writer_ = std::make_unique<PackWriter>(dest_);
  } catch (...) {
    discard();
    throw;
  }
}

void IncomingPack::Impl::discard() {
  if (fd_ >= 0) {
    file_system().close(fd_);
    remove_quietly(incoming_path_);
    fd_ = -1;
  }
  writer_.reset();  // removes its temporary file unless finished
  if (z_ready_) inflateEnd(&z_);
  z_ready_ = false;
}

void IncomingPack::Impl::report() {
  if (progress_) progress_(shown_);
}

void IncomingPack::Impl::save(const char* p, std::size_t n) {
  unsaved_.append(p, n);
  if (unsaved_.size() >= (1u << 20)) flush_saved();
}

void IncomingPack::Impl::flush_saved() {
  write_all(fd_, unsaved_, incoming_path_);
  unsaved_.clear();
}

void IncomingPack::Impl::append(std::string_view bytes) {
  if (failed_) std::rethrow_exception(failed_);
  if (finished_) throw IOError("incoming pack: bytes after the pack was finished");
  try {
    if (bytes.size() > limits_.max_pack_bytes - received_)
      throw Refused("pack is larger than the limit of " + bytes_text(limits_.max_pack_bytes));
    received_ += bytes.size();
    shown_.received_bytes = received_;
    save(bytes.data(), bytes.size());
    // The last 20 bytes received are held back: they are the trailer if the
    // pack ends there. Everything before them is pack content.
    if (tail_.size() + bytes.size() <= kTrailerBytes) {
      tail_.append(bytes);
      return;
    }
    std::size_t release = tail_.size() + bytes.size() - kTrailerBytes;
    std::size_t from_tail = std::min(release, tail_.size());
    receive(reinterpret_cast<const unsigned char*>(tail_.data()), from_tail);
    tail_.erase(0, from_tail);
    std::size_t from_bytes = release - from_tail;
    receive(reinterpret_cast<const unsigned char*>(bytes.data()), from_bytes);
    tail_.append(bytes.substr(from_bytes));
  } catch (...) {
    failed_ = std::current_exception();
    discard();
    throw;
  }
}

void IncomingPack::Impl::receive(const unsigned char* p, std::size_t n) {
  if (n == 0) return;
  auto too_many = [&] {
    return Refused("pack has more bytes after its last entry (at offset " + std::to_string(position_) +
                   ") than a trailer: its header declares " + std::to_string(declared_) +
                   (declared_ == 1 ? " entry" : " entries") + ", fewer than it holds, or the bytes are not a pack");
  };
  if (state_ == State::kDone) throw too_many();
  digest_.update(p, n);
  while (n) {
    std::size_t used = 0;
    switch (state_) {
      case State::kHeader: used = take_pack_header(p, n); break;
      case State::kEntryHeader: used = take_entry_header(p, n); break;
      case State::kEntryData: used = take_entry_data(p, n); break;
      case State::kDone: throw too_many();
    }
    p += used;
    n -= used;
    position_ += used;
  }
}

std::size_t IncomingPack::Impl::take_pack_header(const unsigned char* p, std::size_t n) {
  std::size_t used = std::min(n, kHeaderBytes - head_length_);
  std::memcpy(head_ + head_length_, p, used);
  head_length_ += used;
  if (head_length_ < kHeaderBytes) return used;
  if (std::memcmp(head_, "PACK", 4) != 0)
    throw Refused("pack does not start with \"PACK\": found \"" + shown(head_, 4) + "\"");
  std::uint32_t version = be32(head_ + 4);
  if (version != 2 && version != 3)
    throw Refused("pack is version " + std::to_string(version) + "; kistore reads versions 2 and 3");
  declared_ = be32(head_ + 8);
  if (declared_ > limits_.max_objects)
    throw Refused("pack header declares " + std::to_string(declared_) + " entries; the limit is " +
                  std::to_string(limits_.max_objects));
  shown_.total_objects = declared_;
  head_length_ = 0;
  state_ = declared_ ? State::kEntryHeader : State::kDone;
  report();
  return used;
}

void IncomingPack::Impl::check_entry_size(std::uint8_t kind, std::uint64_t size, const std::string& what) const {
  std::uint64_t limit = kind == kBlob ? limits_.max_blob_bytes
                        : kind == kTree ? limits_.max_tree_bytes
                        : kind == kCommit ? limits_.max_commit_bytes
                                          : limits_.max_delta_bytes;
  if (size > limit)
    throw Refused(what + " " + bytes_text(size) + "; the limit for " +
                  (is_delta(kind) ? std::string("a delta") : std::string("a ") + type_word(kind)) + " is " +
                  bytes_text(limit));
}

void IncomingPack::Impl::count_inflated(std::uint64_t n, std::uint64_t offset) {
  check_inflated_room(n, offset);
  inflated_ += n;
}

void IncomingPack::Impl::check_inflated_room(std::uint64_t n, std::uint64_t offset) const {
  if (n > limits_.max_inflated_bytes - inflated_)
    throw Refused(entry_at(offset) + " brings the pack's inflated bytes past the limit of " +
                  bytes_text(limits_.max_inflated_bytes) + " (" + std::to_string(inflated_) + " so far, " +
                  std::to_string(n) + " more)");
}

// An entry header: type and size (4 bits, then 7 a byte, least significant
// first), then an OFS_DELTA's base distance (7 bits a byte, most significant
// first, each continuation adding one) or a REF_DELTA's 20-byte base id.
// Taken a byte at a time (headers are a few bytes), each checked as soon as
// it is complete, before anything is allocated for the entry.
std::size_t IncomingPack::Impl::take_entry_header(const unsigned char* p, std::size_t n) {
  std::uint64_t offset = position_ - head_length_;
  std::size_t used = 0;
  while (used < n) {
    if (head_length_ == sizeof head_) throw Refused(entry_at(offset) + " has a header longer than any entry's");
    head_[head_length_++] = p[used++];
    if (entry_header_complete(offset)) {
      start_entry();
      break;
    }
  }
  return used;
}

bool IncomingPack::Impl::entry_header_complete(std::uint64_t offset) {
  std::size_t at = 0;
  std::uint64_t size = head_[0] & 15;
  for (unsigned shift = 4; head_[at] & 0x80; shift += 7) {
    if (++at == head_length_) return false;  // the size goes on
    std::uint64_t part = head_[at] & 0x7f;
    if (shift >= 64 || (shift > 57 && (part >> (64 - shift)) != 0))
      throw Refused(entry_at(offset) + " declares a size that does not fit in 64 bits");
    size |= part << shift;
  }
  std::uint8_t kind = (head_[0] >> 4) & 7;
  std::size_t rest = head_length_ - (at + 1);
  if (rest == 0) {
    // The size is complete: the type and size are checked before anything else.
    if (kind == kTag) throw Refused(entry_at(offset) + " is a tag; a kistore store holds only commits, trees and blobs");
    if (kind == 0 || kind == 5)
      throw Refused(entry_at(offset) + " has type " + std::to_string(kind) + ", which is no git object type");
    check_entry_size(kind, size, entry_at(offset) + " declares");
    check_inflated_room(size, offset);  // refuse a bomb before inflating it
  }
  std::uint32_t index = static_cast<std::uint32_t>(entries_.size()), base = kNone;
  if (kind == kRefDelta) {
    if (rest < 20) return false;
    git_oid id;
    std::memcpy(id.id, head_ + head_length_ - 20, 20);
    ref_bases_.emplace_back(id, index);
  } else if (kind == kOfsDelta) {
    const unsigned char* q = head_ + at + 1;
    if (rest == 0) return false;
    std::uint64_t distance = q[0] & 0x7f;
    for (std::size_t i = 0; q[i] & 0x80;) {
      if (++i == rest) return false;  // the distance goes on
      if (++distance >> 57) throw Refused(entry_at(offset) + " is a delta whose base distance does not fit in 64 bits");
      distance = (distance << 7) + (q[i] & 0x7f);
    }
    base = ofs_base(offset, distance);
    ofs_bases_.emplace_back(base, index);
  }
  Entry e;
  e.offset = offset;
  e.size = size;
  e.base = base;
  e.header_length = static_cast<std::uint8_t>(head_length_);
  e.kind = kind;
  entries_.push_back(e);
  return true;
}

// The entry an OFS_DELTA at `offset` names `distance` bytes before it.
std::uint32_t IncomingPack::Impl::ofs_base(std::uint64_t offset, std::uint64_t distance) const {
  if (distance == 0 || distance > offset)
    throw Refused(entry_at(offset) + " is a delta whose base would be " + std::to_string(distance) +
                  " bytes before it, outside the pack's entries");
  std::uint64_t base_offset = offset - distance;
  auto it = std::lower_bound(entries_.begin(), entries_.end(), base_offset,
                             [](const Entry& e, std::uint64_t o) { return e.offset < o; });
  if (it == entries_.end() || it->offset != base_offset)
    throw Refused(entry_at(offset) + " is a delta against offset " + std::to_string(base_offset) +
                  ", where no entry starts");
  return static_cast<std::uint32_t>(it - entries_.begin());
}

void IncomingPack::Impl::start_entry() {
  if (inflateReset(&z_) != Z_OK) throw IOError("zlib: cannot reset inflate");
  produced_ = 0;
  object_.clear();
  delta_start_.clear();
  head_length_ = 0;
  state_ = State::kEntryData;
}

// Inflates what arrived of the entry's zlib stream: a whole object into
// object_, growing up to its declared size (never more); a delta only
// counted (its first bytes kept for its header), since it is resolved later
// from the file. Returns the bytes used: the stream ends where zlib says.
std::size_t IncomingPack::Impl::take_entry_data(const unsigned char* p, std::size_t n) {
  Entry& e = entries_.back();
  bool whole = !is_delta(e.kind);
  z_.next_in = const_cast<Bytef*>(p);
  z_.avail_in = static_cast<uInt>(std::min<std::size_t>(n, 1u << 30));
  std::size_t offered = z_.avail_in;
  unsigned char overflow;
  for (;;) {
    std::uint64_t room;
    unsigned char* out;
    if (whole && produced_ < e.size) {
      if (object_.size() == produced_)
        object_.resize(std::min<std::uint64_t>(e.size, std::max<std::uint64_t>(2 * object_.size(), 1 << 16)));
      out = reinterpret_cast<unsigned char*>(object_.data()) + produced_;
      room = object_.size() - produced_;
    } else if (whole) {
      out = &overflow, room = 1;  // any byte here is one too many
    } else {
      out = scratch_.data(), room = scratch_.size();
    }
    z_.next_out = out;
    z_.avail_out = static_cast<uInt>(std::min<std::uint64_t>(room, 1u << 30));
    uInt before = z_.avail_out;
    int rc = inflate(&z_, Z_NO_FLUSH);
    std::uint64_t made = before - z_.avail_out;
    if (!whole && delta_start_.size() < 20)
      delta_start_.append(reinterpret_cast<char*>(out), std::min<std::uint64_t>(made, 20 - delta_start_.size()));
    produced_ += made;
    if (produced_ > e.size)
      throw Refused(entry_at(e.offset) + " inflates to more than the " + bytes_text(e.size) + " it declares");
    if (rc == Z_STREAM_END) {
      std::size_t used = offered - z_.avail_in;
      end_entry();
      return used;
    }
    if (rc == Z_NEED_DICT)
      throw Refused(entry_at(e.offset) + " is a zlib stream that needs a preset dictionary, which no pack entry has");
    if (rc == Z_DATA_ERROR || rc == Z_STREAM_ERROR)
      throw Refused(entry_at(e.offset) + " is not a valid zlib stream (" + (z_.msg ? z_.msg : "no detail") + ")");
    if (rc == Z_MEM_ERROR) throw IOError("zlib: out of memory while inflating " + entry_at(e.offset));
    // Z_OK or Z_BUF_ERROR: go on while there is input, or output was cut short.
    if (z_.avail_in == 0 && z_.avail_out != 0) return offered;
  }
}

void IncomingPack::Impl::end_entry() {
  std::uint32_t index = static_cast<std::uint32_t>(entries_.size() - 1);
  Entry& e = entries_.back();
  if (produced_ != e.size)
    throw Refused(entry_at(e.offset) + " inflates to " + bytes_text(produced_) + ", fewer than the " +
                  bytes_text(e.size) + " it declares");
  count_inflated(e.size, e.offset);
  if (is_delta(e.kind)) {
    DeltaHeader h;
    if (!read_delta_header(delta_start_, h))
      throw Refused(entry_at(e.offset) + " is a delta without a valid header of base and result sizes");
    std::uint64_t largest = std::max({limits_.max_blob_bytes, limits_.max_tree_bytes, limits_.max_commit_bytes});
    if (h.result_size > largest)
      throw Refused(entry_at(e.offset) + " is a delta building " + bytes_text(h.result_size) +
                    "; the limit for the largest object is " + bytes_text(largest));
    ++deltas_;
    shown_.total_deltas = deltas_;
  } else {
    store_object(index, e.kind, std::string_view(object_.data(), produced_));
  }
  ++shown_.received_objects;
  state_ = entries_.size() == declared_ ? State::kDone : State::kEntryHeader;
  report();
}

void IncomingPack::Impl::store_object(std::uint32_t index, std::uint8_t type, std::string_view data) {
  Entry& e = entries_[index];
  e.id = object_id(static_cast<git_object_t>(type), data);
  e.type = type;
  e.resolved = true;
  if (!by_id_.emplace(e.id, index).second) return;  // the same object again
  writer_->write(e.id, static_cast<git_object_t>(type), data, type == kCommit ? 1 : 0);
  objects_.push_back({e.id, static_cast<git_object_t>(type)});
  object_bytes_ += data.size();
}

// ---- Finishing ---------------------------------------------------------------

// Moves the new pack and index into place. PackWriter renames the pack
// before the index; should the second rename fail, the pack it left is
// removed here too (found as a pack file that was not there before).
std::string IncomingPack::Impl::finish_writer() {
  std::set<std::string> before;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(dest_, ec)) before.insert(f.path().filename().string());
  try {
    std::string name = writer_->finish();
    writer_.reset();
    return name;
  } catch (...) {
    for (const auto& f : std::filesystem::directory_iterator(dest_, ec)) {
      std::string n = f.path().filename().string();
      if (n.rfind("pack-", 0) == 0 && !before.contains(n)) std::filesystem::remove(f.path(), ec);
    }
    throw;
  }
}

IndexedPack IncomingPack::Impl::finish() {
  if (failed_) std::rethrow_exception(failed_);
  if (finished_) throw IOError("incoming pack: finished twice");
  try {
    if (received_ < kHeaderBytes + kTrailerBytes)
      throw Refused("pack is " + bytes_text(received_) + ", too short for a pack header (12 bytes) and trailer (20)");
    if (state_ == State::kEntryHeader && head_length_ == 0)
      throw Refused("pack ends after " + std::to_string(entries_.size()) + " of the " + std::to_string(declared_) +
                    " entries its header declares");
    if (state_ != State::kDone)
      throw Refused("pack ends at byte " + std::to_string(received_) + " inside the " +
                    entry_at(state_ == State::kEntryData ? entries_.back().offset : position_ - head_length_) +
                    " (entry " + std::to_string(entries_.size() + (state_ == State::kEntryData ? 0 : 1)) + " of " +
                    std::to_string(declared_) + "), before its trailer");
    unsigned char sum[20];
    digest_.final(sum);
    if (std::memcmp(sum, tail_.data(), kTrailerBytes) != 0)
      throw Refused("pack trailer is " + hex(reinterpret_cast<const unsigned char*>(tail_.data()), 20) +
                    ", but the pack's bytes hash to " + hex(sum, 20));
    resolve_deltas();
    IndexedPack out;
    out.name = finish_writer();
    out.entries = declared_;
    out.pack_bytes = received_;
    out.inflated_bytes = object_bytes_;
    out.objects = std::move(objects_);
    finished_ = true;
    discard();
    return out;
  } catch (...) {
    failed_ = std::current_exception();
    discard();
    throw;
  }
}

// ---- Public face -------------------------------------------------------------

IncomingPack::IncomingPack(std::string dest_dir, PackLimits limits, PackProgressFn progress, ExternalBaseFn bases)
    : impl_(std::make_unique<Impl>(std::move(dest_dir), limits, std::move(progress), std::move(bases))) {}

IncomingPack::~IncomingPack() = default;

void IncomingPack::append(std::string_view bytes) { impl_->append(bytes); }

IndexedPack IncomingPack::finish() { return impl_->finish(); }

IndexedPack index_untrusted_pack(int fd, const std::string& dest_dir, const PackLimits& limits,
                                 const PackProgressFn& progress) {
  IncomingPack pack(dest_dir, limits, progress);
  std::vector<char> buffer(1 << 16);
  for (;;) {
    ssize_t r = ::read(fd, buffer.data(), buffer.size());
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw IOError("reading the incoming pack: " + errno_text());
    if (r == 0) break;
    pack.append({buffer.data(), static_cast<std::size_t>(r)});
  }
  return pack.finish();
}

IndexedPack index_untrusted_pack(std::istream& in, const std::string& dest_dir, const PackLimits& limits,
                                 const PackProgressFn& progress) {
  IncomingPack pack(dest_dir, limits, progress);
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    std::streamsize n = in.gcount();
    if (n > 0) pack.append({buffer.data(), static_cast<std::size_t>(n)});
  }
  if (in.bad()) throw IOError("reading the incoming pack failed");
  return pack.finish();
}

}  // namespace kistore::git
