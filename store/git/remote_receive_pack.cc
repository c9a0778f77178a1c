#include "store/git/remote_receive_pack.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>

#include "store/git/git.h"

namespace kistore::git {
namespace {

// How much of the server's first message is kept: its first ref line, with
// the capabilities, is at most one pkt-line (65,520 bytes).
constexpr std::size_t kAdvertisementKept = 1 << 17;

// "0000"-style length of a pkt-line, or -1 when the 4 bytes are not hex.
int pkt_length(const char* p) {
  int n = 0;
  for (int i = 0; i < 4; ++i) {
    char c = p[i];
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (v < 0) return -1;
    n = n * 16 + v;
  }
  return n;
}

std::string pkt_line(std::string_view payload) {
  static const char hex[] = "0123456789abcdef";
  std::size_t n = payload.size() + 4;
  std::string out{hex[(n >> 12) & 15], hex[(n >> 8) & 15], hex[(n >> 4) & 15], hex[n & 15]};
  out += payload;
  return out;
}

std::string printable(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 200)) out += (c >= 32 && c < 127) ? c : '?';
  return out;
}

// Splits a buffer of pkt-lines as it fills. next() yields each complete
// line's payload (flush: `flush` set, payload empty) or false when more
// bytes are needed. Error(kRemote) on bytes that are not pkt-lines.
class PktReader {
 public:
  explicit PktReader(std::string what) : what_(std::move(what)) {}
  void feed(std::string_view bytes) { buffer_ += bytes; }
  bool next(std::string& payload, bool& flush) {
    if (buffer_.size() - at_ < 4) return compact(), false;
    int n = pkt_length(buffer_.data() + at_);
    if (n < 0 || (n > 0 && n < 4))
      throw Error(ErrorCode::kRemote, what_ + " is not git's protocol: \"" + printable(buffer_.substr(at_, 16)) + "\"");
    flush = n == 0;
    std::size_t size = flush ? 4 : static_cast<std::size_t>(n);
    if (buffer_.size() - at_ < size) return compact(), false;
    payload.assign(buffer_, at_ + 4, size - 4);
    at_ += size;
    return true;
  }

 private:
  void compact() {
    buffer_.erase(0, at_);
    at_ = 0;
  }
  std::string what_;
  std::string buffer_;
  std::size_t at_ = 0;
};

std::string chomp(std::string s) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

}  // namespace

// The subtransport handed to libgit2's smart transport: libgit2's own, with
// the streams of the ref advertisement (the *_LS actions) recorded.
struct ReceivePack::Sub {
  git_smart_subtransport parent;  // first: libgit2 casts
  ReceivePack* owner;
  git_smart_subtransport* inner;
};

struct ReceivePack::Stream {
  git_smart_subtransport_stream parent;  // first: libgit2 casts
  ReceivePack* owner;
  git_smart_subtransport_stream* inner;
};

int ReceivePack::make_transport(git_transport** out, git_remote* owner, const std::string& url,
                                SmartProtocol protocol) {
  *out = nullptr;
  switch (protocol) {
    case SmartProtocol::kGit: inner_factory_ = git_smart_subtransport_git; definition_.rpc = 0; break;
    case SmartProtocol::kSsh: inner_factory_ = git_smart_subtransport_ssh; definition_.rpc = 0; break;
    case SmartProtocol::kHttp: inner_factory_ = git_smart_subtransport_http; definition_.rpc = 1; break;
    case SmartProtocol::kNone: return 0;
  }
  definition_.callback = make_sub;
  definition_.param = this;
  return git_transport_smart(out, owner, &definition_);
}

int ReceivePack::make_sub(git_smart_subtransport** out, git_transport* owner, void* param) {
  auto* self = static_cast<ReceivePack*>(param);
  git_smart_subtransport* inner = nullptr;
  if (int rc = self->inner_factory_(&inner, owner, nullptr); rc < 0) return rc;
  auto* sub = new Sub{};
  sub->owner = self;
  sub->inner = inner;
  sub->parent.action = [](git_smart_subtransport_stream** stream_out, git_smart_subtransport* t, const char* url,
                          git_smart_service_t action) -> int {
    auto* s = reinterpret_cast<Sub*>(t);
    git_smart_subtransport_stream* inner_stream = nullptr;
    int rc = s->inner->action(&inner_stream, s->inner, url, action);
    if (rc < 0) return rc;
    if (action != GIT_SERVICE_UPLOADPACK_LS && action != GIT_SERVICE_RECEIVEPACK_LS) {
      *stream_out = inner_stream;
      return rc;
    }
    // A new conversation: remember where, and record what the server says first.
    s->owner->url_ = url;
    s->owner->advertisement_.clear();
    s->owner->capabilities_.clear();
    auto* st = new Stream{};
    st->owner = s->owner;
    st->inner = inner_stream;
    st->parent.subtransport = t;
    st->parent.read = [](git_smart_subtransport_stream* stream, char* buffer, size_t size, size_t* got) -> int {
      auto* w = reinterpret_cast<Stream*>(stream);
      int r = w->inner->read(w->inner, buffer, size, got);
      std::string& kept = w->owner->advertisement_;
      if (r >= 0 && kept.size() < kAdvertisementKept) kept.append(buffer, std::min(*got, kAdvertisementKept - kept.size()));
      return r;
    };
    st->parent.write = [](git_smart_subtransport_stream* stream, const char* buffer, size_t len) -> int {
      auto* w = reinterpret_cast<Stream*>(stream);
      return w->inner->write(w->inner, buffer, len);
    };
    st->parent.free = [](git_smart_subtransport_stream* stream) {
      auto* w = reinterpret_cast<Stream*>(stream);
      w->inner->free(w->inner);
      delete w;
    };
    *stream_out = &st->parent;
    return rc;
  };
  sub->parent.close = [](git_smart_subtransport* t) -> int {
    auto* s = reinterpret_cast<Sub*>(t);
    return s->inner->close(s->inner);
  };
  sub->parent.free = [](git_smart_subtransport* t) {
    auto* s = reinterpret_cast<Sub*>(t);
    if (s->owner->inner_ == s->inner) s->owner->inner_ = nullptr;
    s->inner->free(s->inner);
    delete s;
  };
  self->inner_ = inner;
  *out = &sub->parent;
  return 0;
}

void ReceivePack::parse_capabilities() {
  capabilities_.clear();
  PktReader reader("the remote's list of branches");
  reader.feed(advertisement_);
  std::string line;
  bool flush = false;
  while (reader.next(line, flush)) {
    if (flush || line.starts_with("# service=")) continue;
    std::size_t nul = line.find('\0');
    if (nul == std::string::npos) return;
    std::string_view caps = std::string_view(line).substr(nul + 1);
    if (!caps.empty() && caps.back() == '\n') caps.remove_suffix(1);
    while (!caps.empty()) {
      std::size_t space = caps.find(' ');
      if (space != 0) capabilities_.emplace_back(caps.substr(0, space));
      if (space == std::string_view::npos) break;
      caps.remove_prefix(space + 1);
    }
    return;
  }
}

bool ReceivePack::usable() {
  if (!inner_ || url_.empty()) return false;
  parse_capabilities();
  return std::find(capabilities_.begin(), capabilities_.end(), "report-status") != capabilities_.end();
}

namespace {

// The server's report on a push: "unpack ok" or "unpack <reason>", then
// "ok <ref>" or "ng <ref> <reason>" for the update, then a flush.
class PushReport {
 public:
  explicit PushReport(std::string ref) : ref_(std::move(ref)) {}

  // Takes the report's bytes as they come; true once it is complete.
  // Error(kRemote) when it does not follow the protocol.
  bool feed(std::string_view bytes) {
    reader_.feed(bytes);
    std::string line;
    bool flush = false;
    while (reader_.next(line, flush)) {
      if (flush) {
        if (result_.unpack.empty()) throw Error(ErrorCode::kRemote, "the remote's report on the push is empty");
        if (!have_ref_ && result_.unpack == "ok")
          throw Error(ErrorCode::kRemote, "the remote's report on the push does not mention " + ref_);
        return true;
      }
      take(chomp(line));
    }
    return false;
  }
  const ReceivePack::Result& result() const { return result_; }

 private:
  void take(const std::string& line) {
    if (result_.unpack.empty()) {
      if (!line.starts_with("unpack "))
        throw Error(ErrorCode::kRemote, "the remote's report on the push starts with \"" + printable(line) +
                                            "\", expected \"unpack ...\"");
      result_.unpack = line.substr(7);
    } else if (line == "ok " + ref_) {
      have_ref_ = true;
    } else if (line.starts_with("ng " + ref_ + " ")) {
      have_ref_ = true;
      result_.rejection = line.substr(4 + ref_.size());
    } else if (!line.starts_with("ok ") && !line.starts_with("ng ")) {  // about a ref kistore did not send: ignored
      throw Error(ErrorCode::kRemote, "the remote's report on the push has \"" + printable(line) + "\", expected \"ok " +
                                          ref_ + "\" or \"ng " + ref_ + " <reason>\"");
    }
  }

  std::string ref_;
  PktReader reader_{"the remote's report on the push"};
  ReceivePack::Result result_;
  bool have_ref_ = false;
};

// The server's words in band 2, gathered into lines (ReceivePack::Result's
// `messages`).
class ServerWords {
 public:
  void feed(std::string_view data) {
    for (char c : data) {
      if (c == '\n') {
        end_line();
      } else if (c == '\r') {
        line_.clear();  // what follows overwrites it on a terminal
      } else if (line_.size() < ReceivePack::kMaxMessageBytes) {
        line_ += c;
      }
    }
  }
  std::vector<std::string> take() {
    end_line();
    if (dropped_) {
      std::string more = "(";  // no "literal" + std::string: GCC 12 -O3 -Wrestrict misreads it
      more += std::to_string(dropped_);
      more += " more lines)";
      lines_.push_back(std::move(more));
    }
    dropped_ = 0;
    return std::move(lines_);
  }
  // "; the remote said: <line> | <line>", or "" when it said nothing.
  std::string said() {
    std::string out;
    for (const std::string& l : take()) {
      out += out.empty() ? "; the remote said: " : " | ";
      out += printable(l);
    }
    return out;
  }

 private:
  void end_line() {
    if (line_.find_first_not_of(" \t") != std::string::npos) {
      if (lines_.size() < ReceivePack::kMaxMessages) lines_.push_back(line_);
      else ++dropped_;
    }
    line_.clear();
  }
  std::string line_;
  std::vector<std::string> lines_;
  std::size_t dropped_ = 0;
};

// Reads the server's answer to a push from `stream` until its report is
// complete. With side-band-64k the report comes in band 1; band 2 is the
// server's own words (its hooks' output), band 3 a fatal error.
ReceivePack::Result read_report(git_smart_subtransport_stream* stream, const std::string& ref, bool sideband) {
  PktReader outer("the remote's answer to the push");
  PushReport report(ref);
  ServerWords words;
  std::string line;
  bool flush = false;
  char buffer[65536];
  for (;;) {
    std::size_t got = 0;
    if (stream->read(stream, buffer, sizeof buffer, &got) < 0)
      throw Error(ErrorCode::kRemote, "reading the remote's answer to the push failed: " + last_error());
    if (got == 0)
      throw Error(ErrorCode::kRemote, "the remote closed the connection before reporting on the push" + words.said());
    if (!sideband) {
      if (report.feed({buffer, got})) return report.result();
      continue;
    }
    outer.feed({buffer, got});
    while (outer.next(line, flush)) {
      if (flush || line.empty()) continue;
      char band = line[0];
      std::string_view data = std::string_view(line).substr(1);
      if (band == 1 && report.feed(data)) {
        ReceivePack::Result out = report.result();
        out.messages = words.take();
        return out;
      }
      if (band == 2) words.feed(data);
      if (band == 3)
        throw Error(ErrorCode::kRemote, "the remote failed: " + printable(chomp(std::string(data))) + words.said());
    }
  }
}

// The update command of a push, asking for report-status (and the
// side band and quiet where asked), then the flush that ends the commands.
std::string update_command(const std::string& ref, const git_oid* old, const git_oid& next, bool sideband, bool quiet) {
  git_oid zero{};
  std::string command = oid_str(old ? *old : zero) + " " + oid_str(next) + " " + ref + '\0' + "report-status";
  if (sideband) command += " side-band-64k";
  if (quiet) command += " quiet";
  command += '\n';
  return pkt_line(command) + "0000";
}

}  // namespace

void write_push_request(const std::string& ref, const git_oid* old, const git_oid& next, std::uint32_t count,
                        const std::function<void(PackStream&)>& fill, const PackStream::Sink& sink) {
  sink(update_command(ref, old, next, false, true));
  PackStream pack(count, sink);
  fill(pack);
  pack.finish();
}

std::vector<std::string> server_lines(std::string_view text) {
  ServerWords words;
  words.feed(text);
  return words.take();
}

ReceivePack::Result read_push_answer(std::string_view out, const std::string& ref) {
  PktReader advertisement("what git receive-pack printed");
  advertisement.feed(out);
  std::string line;
  bool flush = false;
  std::size_t at = 0;
  while (advertisement.next(line, flush)) {
    at += flush ? 4 : line.size() + 4;
    if (!flush) continue;
    PushReport report(ref);
    if (report.feed(out.substr(at))) return report.result();
    break;
  }
  throw Error(ErrorCode::kRemote, "git receive-pack ended before reporting on the push");
}

ReceivePack::Result ReceivePack::send(const std::string& ref, const git_oid* old, const git_oid& next,
                                      std::uint32_t count, const std::function<void(PackStream&)>& fill,
                                      const std::function<void(std::uint64_t)>& sent) {
  if (!usable()) throw Error(ErrorCode::kRemote, "the remote was not connected through kistore's transport, or does not offer report-status");
  bool sideband = std::find(capabilities_.begin(), capabilities_.end(), "side-band-64k") != capabilities_.end();

  git_smart_subtransport_stream* stream = nullptr;
  if (inner_->action(&stream, inner_, url_.c_str(), GIT_SERVICE_RECEIVEPACK) < 0)
    throw Error(ErrorCode::kRemote, "cannot start sending: " + last_error());
  // A request/response transport (http) makes a new stream per request, the
  // caller's to free; git:// and ssh hand back the connection's own.
  auto release = [&](git_smart_subtransport_stream* s) {
    if (definition_.rpc && s) s->free(s);
  };
  std::unique_ptr<git_smart_subtransport_stream, decltype(release)> owned(stream, release);

  auto write = [&](std::string_view bytes) {
    if (stream->write(stream, bytes.data(), bytes.size()) < 0)
      throw Error(ErrorCode::kRemote, "sending failed: " + last_error());
  };
  const bool quiet = std::find(capabilities_.begin(), capabilities_.end(), "quiet") != capabilities_.end();
  write(update_command(ref, old, next, sideband, quiet));
  std::uint64_t handed = 0;
  PackStream pack(count, [&](std::string_view piece) {
    write(piece);
    handed += piece.size();
    if (sent) sent(handed);
  });
  fill(pack);
  pack.finish();
  return read_report(stream, ref, sideband);
}

}  // namespace kistore::git
