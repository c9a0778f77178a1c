#include "cli/common.h"

#include "cli/input_batches.h"
#include "cli/output/terminal.h"

#include "objects/parallel.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

namespace kistore::cli {
namespace fs = std::filesystem;

std::vector<Registrar>& registrars() {
  static std::vector<Registrar> all;
  return all;
}

bool register_command(Registrar r) {
  registrars().push_back(std::move(r));
  return true;
}

void read_environment(Globals& g) {
  if (g.format == "json") g.json = true;  // a listing's --format json: its errors are JSON too
  g.store_named = !g.store_dir.empty();
  if (g.store_dir.empty()) {
    const char* dir = std::getenv("KISTORE_DIR");
    g.store_named = dir && *dir;
    g.store_dir = g.store_named ? dir : ".kistore";
  }
  if (g.author.empty())
    if (const char* author = std::getenv("KISTORE_AUTHOR")) g.author = author;
  if (const char* date = std::getenv("KISTORE_DATE"); date && *date) {
    std::int64_t seconds = 0;
    auto [end, ec] = std::from_chars(date, date + std::strlen(date), seconds);
    if (ec != std::errc() || *end != '\0')
      throw InvalidInput(std::string("KISTORE_DATE: expected seconds since 1970, found \"") + date + "\"");
    g.commit_time = seconds;
  }
}

namespace {

// Whether `dir` is the work tree of a plain `git clone` of a store: a .git
// beside a FORMAT file that says "kistore N" (what a clone checks out).
bool store_work_tree(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir / ".git", ec) || !fs::is_regular_file(dir / "FORMAT", ec)) return false;
  std::ifstream in(dir / "FORMAT", std::ios::binary);
  char head[8] = {};
  in.read(head, sizeof head);
  return in.gcount() == sizeof head && std::string_view(head, sizeof head) == "kistore ";
}

}  // namespace

std::string store_folder(const Globals& g) {
  if (g.store_named) return g.store_dir;
  std::error_code ec;
  if (fs::is_directory(g.store_dir, ec)) return g.store_dir;
  fs::path here = fs::current_path(ec);
  if (ec) return g.store_dir;
  // As git finds .git: this folder, then each parent; at each, its .kistore,
  // else itself when it is a plain git clone of a store.
  for (fs::path dir = here; !dir.empty(); dir = dir.parent_path()) {
    if (dir != here)
      if (fs::path candidate = dir / g.store_dir; fs::is_directory(candidate, ec)) return candidate.string();
    if (store_work_tree(dir)) return dir.string();
    if (dir == dir.root_path()) break;
  }
  return g.store_dir;
}

namespace {

Store open_found(const Globals& g, Store::Use use) {
  std::string dir = store_folder(g);
  std::error_code ec;
  // Looked for here and in every parent, found nowhere: say so.
  if (!g.store_named && dir == g.store_dir && !fs::exists(dir, ec))
    throw IOError(dir + ": no store here or in any parent folder (create one with `kistore init`, or name one "
                        "with --store or KISTORE_DIR)");
  return Store::open(dir, use);
}

}  // namespace

Store open_store(const Globals& g) { return open_found(g, Store::Use::kAnything); }
Store open_store_for_reading(const Globals& g) { return open_found(g, Store::Use::kReading); }

std::string read_input_file(const std::string& path, std::uintmax_t max_bytes, std::string_view bound_why) {
  const std::string shown = path == "-" ? "<stdin>" : path;
  const auto too_big = [&](const std::string& found) {
    return InvalidInput(shown + ": expected at most " + std::to_string(max_bytes) + " bytes" +
                        (bound_why.empty() ? "" : " (" + std::string(bound_why) + ")") + ", found " + found);
  };
  std::string data;
  std::error_code ec;
  if (path == "-" || !fs::is_regular_file(path, ec)) {
    // Standard input, a pipe or a FIFO (`kistore canon <(...)`): read to
    // the end, or to the bound.
    FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
    if (!f) throw IOError(shown + ": cannot open for reading");
    char buf[1 << 16];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
      if (data.size() + n > max_bytes) {
        if (f != stdin) std::fclose(f);
        throw too_big("more");
      }
      data.append(buf, n);
    }
    const bool failed = std::ferror(f) != 0;
    const int err = errno;
    if (f != stdin) std::fclose(f);
    if (failed) throw IOError(shown + ": cannot read: " + std::strerror(err));
    return data;
  }
  auto size = fs::file_size(path, ec);
  if (ec) throw IOError(path + ": cannot read: " + ec.message());
  if (size > max_bytes) throw too_big(std::to_string(size) + " bytes");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(path + ": cannot open for reading");
  data.resize(size);
  in.read(data.data(), static_cast<std::streamsize>(size));
  if (!in) throw IOError(path + ": read failed");
  return data;
}

void parse_paths(const std::vector<std::string>& paths, ParsedInput& out) {
  // One reader of inputs (cli/input_batches.h), its batches joined in order.
  read_in_batches(paths, [&](ParsedInput& batch) {
    for (InputItem& item : batch.items) out.items.push_back(std::move(item));
    for (InputError& error : batch.errors) out.errors.push_back(std::move(error));
  });
}

void print_json(const Json& value) {
  std::string s = canonical(value);
  s += '\n';
  std::fwrite(s.data(), 1, s.size(), stdout);
}

int print_listing(const Globals& g, const char* key, Json list, const std::string& text) {
  if (g.json) {
    Json out = Json::object();
    out.set(key, std::move(list));
    print_json(out);
  } else {
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return kOk;
}

namespace {

// The length of the UTF-8 sequence at the start of `s` (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF), or 0.
std::size_t utf8_length(std::string_view s) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c = byte(0);
  std::size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
  if (n == 0 || n > s.size() || (n == 2 && c < 0xc2)) return 0;
  for (std::size_t i = 1; i < n; ++i)
    if ((byte(i) & 0xc0) != 0x80) return 0;
  if (n == 3 && ((c == 0xe0 && byte(1) < 0xa0) || (c == 0xed && byte(1) >= 0xa0))) return 0;
  if (n == 4 && ((c == 0xf0 && byte(1) < 0x90) || c > 0xf4 || (c == 0xf4 && byte(1) >= 0x90))) return 0;
  return n;
}

// `text` with each byte that is not part of valid UTF-8 replaced by U+FFFD:
// a JSON string can hold nothing else (a file name may be any bytes).
std::string json_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    std::size_t n = utf8_length(text);
    out += n ? text.substr(0, n) : std::string_view("\xEF\xBF\xBD");
    text.remove_prefix(n ? n : 1);
  }
  return out;
}

}  // namespace

Json error_member(int exit_code, std::string_view message) {
  Json error = Json::object();
  error.set("code", exit_code);
  error.set("message", json_safe(message));
  return error;
}

void print_error(bool json, int exit_code, std::string_view message) {
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s\n", shown_message(message).c_str());
  if (!json) return;
  Json out = Json::object();
  out.set("error", error_member(exit_code, message));
  print_json(out);
  std::fflush(stdout);
}

void note(const Globals& g, const std::string& line) {
  if (!g.quiet) std::fprintf(stderr, "%s\n", line.c_str());
}

namespace {
long long now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Progress::Progress(const Globals& g, std::string label, std::string unit)
    : enabled_(!g.no_progress && !g.quiet && !g.json && isatty(STDERR_FILENO)),
      label_(std::move(label)),
      unit_(std::move(unit)),
      start_ms_(now_ms()),
      stage_ms_(start_ms_) {
  if (const char* env = std::getenv("KISTORE_PROGRESS_DELAY_MS"); env && *env) delay_ms_ = std::atoll(env);
}

Progress::~Progress() { finish(); }

std::string size_text(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 3) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

void tune_allocator_for_bulk_work() {
  mallopt(M_MXFAST, 0);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

std::string count_text(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void Progress::stage(std::string label, std::string unit) {
  label_ = std::move(label);
  unit_ = std::move(unit);
  stage_ms_ = now_ms();
}

void Progress::update(std::size_t done, std::size_t total, std::uint64_t bytes) {
  if (!enabled_) return;
  long long now = now_ms();
  bool complete = total && done >= total;  // the last state is always drawn
  if (now - start_ms_ < delay_ms_ || (drawn_ && now - last_ms_ < 100 && !complete)) return;
  last_ms_ = now;
  std::string text = label_ + " ";
  if (total) {
    int width = 20;
    std::string bar(static_cast<int>(width * std::min(done, total) / total), '#');
    bar.resize(width, '.');
    text += "[" + bar + "] " + count_text(done) + "/" + count_text(total);
  } else {
    text += count_text(done);
  }
  text += " " + unit_;
  const double seconds = static_cast<double>(now - stage_ms_) / 1000;
  if (seconds >= 0.5 && done > 0) {
    const double rate = static_cast<double>(done) / seconds;
    text += ", " + count_text(static_cast<std::uint64_t>(rate)) + "/s";
    if (total && done < total) {
      long long left = static_cast<long long>(static_cast<double>(total - done) / rate + 0.5);
      char buf[32];
      std::snprintf(buf, sizeof buf, ", %lld:%02lld left", left / 60, left % 60);
      text += buf;
    }
  }
  if (bytes) {
    text += ", " + size_text(bytes);
    if (seconds >= 0.5) text += " (" + size_text(static_cast<std::uint64_t>(static_cast<double>(bytes) / seconds)) + "/s)";
  }
  std::fprintf(stderr, "\r%s\033[K", text.c_str());
  drawn_ = true;
}

void Progress::finish() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

}  // namespace kistore::cli
