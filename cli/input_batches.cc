#include "cli/input_batches.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "objects/error.h"
#include "objects/json.h"
#include "objects/parallel.h"

namespace kistore::cli {
namespace fs = std::filesystem;
namespace {

// One piece of input parsed on its own: a line of JSON Lines (line > 0), or
// a whole text, or an error found while reading.
struct Unit {
  std::string source;
  std::size_t line = 0;
  InputFormat format = InputFormat::kAuto;
  std::string text;
  std::optional<InputError> error;
};

class Batcher {
 public:
  Batcher(const std::function<void(ParsedInput&)>& on_batch, BatchLimits limits)
      : on_batch_(on_batch), limits_(limits) {}

  void push(Unit unit) {
    bytes_ += unit.text.size();
    units_.push_back(std::move(unit));
    if (units_.size() >= limits_.units || bytes_ >= limits_.bytes) flush();
  }

  void flush() {
    if (units_.empty()) return;
    std::vector<ParsedInput> parts(units_.size());
    parallel_for(units_.size(), [&](std::size_t i) {
      Unit& u = units_[i];
      if (u.error) return parts[i].errors.push_back(*u.error);
      if (u.line) return parse_input_line(u.text, u.source, u.line, parts[i]);
      parse_input(u.text, u.source, u.format, parts[i]);
    });
    units_.clear();
    bytes_ = 0;
    ParsedInput batch;
    for (ParsedInput& p : parts) {
      for (InputItem& item : p.items) batch.items.push_back(std::move(item));
      for (InputError& e : p.errors) batch.errors.push_back(std::move(e));
    }
    parts.clear();
    on_batch_(batch);
  }

 private:
  const std::function<void(ParsedInput&)>& on_batch_;
  BatchLimits limits_;
  std::vector<Unit> units_;
  std::size_t bytes_ = 0;
};

struct InputFile {
  FILE* f = nullptr;
  bool owned = false;
  ~InputFile() {
    if (owned && f) std::fclose(f);
  }
};

// JSON Lines from `f`, after the bytes already read (`pending`), a line at
// a time; a line over the limit of one JSON text is an error naming it, and
// the rest of the file is not read.
void stream_lines(FILE* f, const std::string& source, std::string pending, Batcher& out) {
  std::size_t line_no = 0, start = 0, scan = 0;
  bool eof = false;
  std::vector<char> chunk(1 << 16);
  while (true) {
    std::size_t nl = pending.find('\n', scan);
    if (nl != std::string::npos) {
      out.push(Unit{source, ++line_no, InputFormat::kJsonLines, pending.substr(start, nl - start), std::nullopt});
      start = scan = nl + 1;
      continue;
    }
    if (pending.size() - start > kMaxInputBytes) {
      std::string where = source + ":" + std::to_string(line_no + 1);
      out.push(Unit{source, 0, InputFormat::kJsonLines, "",
                    InputError{where, where + ": expected a line of at most " + std::to_string(kMaxInputBytes) +
                                          " bytes (one JSON text), found a longer one; the rest of the file was not read"}});
      return;
    }
    if (eof) {
      if (start < pending.size())
        out.push(Unit{source, ++line_no, InputFormat::kJsonLines, pending.substr(start), std::nullopt});
      return;
    }
    pending.erase(0, start);
    start = 0;
    scan = pending.size();
    std::size_t n = std::fread(chunk.data(), 1, chunk.size(), f);
    if (n == 0 && std::ferror(f)) throw IOError(source + ": read failed: " + std::strerror(errno));
    if (n == 0) eof = true;
    pending.append(chunk.data(), n);
  }
}

// One input: JSON Lines streamed line by line; one JSON text read whole only
// once it is known to fit the limit.
void read_one(const std::string& path, InputFormat format, Batcher& out) {
  const std::string source = path == "-" ? "<stdin>" : path;
  std::error_code ec;
  const bool regular = path != "-" && fs::is_regular_file(path, ec);
  if (format == InputFormat::kAuto && regular) {
    auto size = fs::file_size(path, ec);
    if (ec) throw IOError(path + ": cannot read: " + ec.message());
    if (size > kMaxInputBytes) {
      out.push(Unit{source, 0, format, "",
                    InputError{source, source + ": expected one JSON text of at most " + std::to_string(kMaxInputBytes) +
                                           " bytes, found a file of " + std::to_string(size) +
                                           " bytes (name a JSON Lines file *.jsonl)"}});
      return;
    }
  }
  InputFile in;
  if (path == "-") {
    in.f = stdin;
  } else if (!(in.f = std::fopen(path.c_str(), "rb"))) {
    throw IOError(path + ": cannot open for reading: " + std::strerror(errno));
  } else {
    in.owned = true;
  }
  if (format == InputFormat::kJsonLines) return stream_lines(in.f, source, "", out);
  std::string head;
  std::vector<char> chunk(1 << 16);
  while (head.size() <= kMaxInputBytes) {
    std::size_t n = std::fread(chunk.data(), 1, chunk.size(), in.f);
    if (n == 0 && std::ferror(in.f)) throw IOError(source + ": read failed: " + std::strerror(errno));
    if (n == 0) return out.push(Unit{source, 0, format, std::move(head), std::nullopt});
    head.append(chunk.data(), n);
  }
  stream_lines(in.f, source, std::move(head), out);
}

}  // namespace

void read_in_batches(const std::vector<std::string>& paths, const std::function<void(ParsedInput&)>& on_batch,
                     BatchLimits limits) {
  // Every path is checked before anything is read, as parse_paths does.
  std::vector<std::pair<std::string, InputFormat>> inputs;
  for (const std::string& path : paths) {
    if (path == "-") {
      inputs.emplace_back(path, InputFormat::kAuto);
      continue;
    }
    std::error_code ec;
    auto status = fs::status(path, ec);
    // As parse_paths: a path that is not there is a mistyped argument (SPEC
    // §3: exit 2); one that cannot be looked at (permission), the machine's (3).
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
      throw IOError(path + ": cannot read: " + ec.message());
    if (!fs::exists(status)) throw InvalidInput(path + ": no such file or folder");
    if (!fs::is_directory(status)) {
      inputs.emplace_back(path, format_for_name(path));
      continue;
    }
    std::vector<std::string> files;
    for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (!it->is_regular_file()) continue;
      std::string ext = it->path().extension().string();
      if (ext == ".json" || ext == ".jsonl") files.push_back(it->path().string());
    }
    if (ec) throw IOError(path + ": cannot list folder: " + ec.message());
    std::sort(files.begin(), files.end());
    for (std::string& f : files) inputs.emplace_back(f, format_for_name(f));
  }
  Batcher batcher(on_batch, limits);
  for (const auto& [path, format] : inputs) read_one(path, format, batcher);
  batcher.flush();
}

}  // namespace kistore::cli
