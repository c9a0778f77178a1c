#include "cli/input_batches.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <condition_variable>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

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

// The items and errors of `units`, in order, parsed on up to `threads`
// threads (0: every core).
ParsedInput parse_units(std::vector<Unit>& units, unsigned threads) {
  std::vector<ParsedInput> parts(units.size());
  parallel_for(units.size(), [&](std::size_t i) {
    Unit& u = units[i];
    if (u.error) return parts[i].errors.push_back(*u.error);
    if (u.line) return parse_input_line(u.text, u.source, u.line, parts[i]);
    parse_input(u.text, u.source, u.format, parts[i]);
  }, threads);
  units.clear();
  ParsedInput batch;
  for (ParsedInput& p : parts) {
    for (InputItem& item : p.items) batch.items.push_back(std::move(item));
    for (InputError& e : p.errors) batch.errors.push_back(std::move(e));
  }
  return batch;
}

// A thread that parses one batch at a time beside the reader, so that
// reading and parsing the next batch overlap with what on_batch does with
// this one (which uses every core itself). One thread for the whole read,
// and only one: the documents that parse_input_line keeps per thread
// (objects/bundle_line.h) stay kept from batch to batch, and a process that
// lives under a tight address-space limit (each thread maps a stack and a
// malloc arena) needs no more threads than before.
class Parser {
 public:
  Parser() : thread_([this] { run(); }) {}
  ~Parser() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();  // after the batch in flight, if any
  }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  // Starts parsing `units`; the batch before must have been taken.
  void start(std::vector<Unit> units) {
    {
      std::lock_guard lock(mutex_);
      job_ = std::move(units);
      has_job_ = true;
    }
    changed_.notify_all();
  }
  // The batch started last, once parsed (rethrowing what its parse threw).
  ParsedInput take() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return has_result_; });
    has_result_ = false;
    if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
    return std::move(result_);
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    while (true) {
      changed_.wait(lock, [&] { return stop_ || has_job_; });
      if (!has_job_) return;
      std::vector<Unit> units = std::move(job_);
      has_job_ = false;
      lock.unlock();
      ParsedInput parsed;
      std::exception_ptr failure;
      try {
        parsed = parse_units(units, 1);
      } catch (...) {
        failure = std::current_exception();
      }
      lock.lock();
      result_ = std::move(parsed);
      failure_ = failure;
      has_result_ = true;
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Unit> job_;
  ParsedInput result_;
  std::exception_ptr failure_;
  bool has_job_ = false, has_result_ = false, stop_ = false;
  std::thread thread_;  // last: it starts once the rest is made
};

class Batcher {
 public:
  Batcher(const std::function<void(ParsedInput&)>& on_batch, BatchLimits limits)
      : on_batch_(on_batch), limits_(limits) {
#ifdef __GLIBC__
    // glibc gives each thread that allocates a malloc arena of its own, up
    // to 8 a core, each reserving 64 MiB of address space: with the parser's
    // thread beside on_batch's (which use every core), a process under
    // `ulimit -v` would run out of addresses, not of memory. As many arenas
    // as parallel_for's threads keep the contention low and the
    // reservations within what worker_threads() leaves room for.
    mallopt(M_ARENA_MAX, static_cast<int>(worker_threads()));
#endif
    try {
      parser_ = std::make_unique<Parser>();
    } catch (const std::system_error&) {
      // No thread to be had (a tight ulimit): each batch is parsed in turn.
    }
  }

  void push(Unit unit) {
    bytes_ += unit.text.size();
    units_.push_back(std::move(unit));
    if (units_.size() >= limits_.units || bytes_ >= limits_.bytes) flush();
  }

  // Starts parsing the units read so far, and hands the batch parsed before
  // them to on_batch meanwhile: batches reach it in input order, one behind
  // the reader.
  void flush() {
    if (units_.empty()) return;
    std::vector<Unit> units = std::move(units_);
    units_.clear();
    bytes_ = 0;
    if (!parser_) {
      ParsedInput batch = parse_units(units, 0);
      return on_batch_(batch);
    }
    std::optional<ParsedInput> previous;
    if (in_flight_) previous = parser_->take();
    parser_->start(std::move(units));
    in_flight_ = true;
    if (previous) on_batch_(*previous);
  }

  // Hands over everything still to come; call once, after the last push.
  void finish() {
    flush();
    if (!in_flight_) return;
    in_flight_ = false;
    ParsedInput batch = parser_->take();
    on_batch_(batch);
  }

 private:
  const std::function<void(ParsedInput&)>& on_batch_;
  BatchLimits limits_;
  std::vector<Unit> units_;
  std::size_t bytes_ = 0;
  std::unique_ptr<Parser> parser_;
  bool in_flight_ = false;
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

// What a folder without a *.json or *.jsonl file holds, for add's refusal.
std::string nothing_to_read(const std::string& folder, std::vector<std::string> others) {
  std::string text = "expected *.json or *.jsonl files in this folder (or below it), found ";
  if (others.empty()) return text + "no file; nothing was written";
  std::sort(others.begin(), others.end());
  bool csv = false;
  for (std::size_t i = 0; i < others.size(); ++i) {
    csv = csv || others[i].ends_with(".csv");
    if (i < 3) text += (i ? ", " : "") + fs::path(others[i]).lexically_relative(folder).string();
  }
  if (others.size() > 3) text += " and " + std::to_string(others.size() - 3) + " more";
  text += "; nothing was written";
  if (csv) text += " (CSV tables go in with `kistore import`)";
  return text;
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
    std::vector<std::string> files, others;
    for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (!it->is_regular_file()) continue;
      std::string ext = it->path().extension().string();
      (ext == ".json" || ext == ".jsonl" ? files : others).push_back(it->path().string());
    }
    if (ec) throw IOError(path + ": cannot list folder: " + ec.message());
    // A folder with nothing add reads is a mistaken argument, not an empty
    // success: say what it holds instead.
    if (files.empty()) throw InvalidInput(path + ": " + nothing_to_read(path, others));
    std::sort(files.begin(), files.end());
    for (std::string& f : files) inputs.emplace_back(f, format_for_name(f));
  }
  Batcher batcher(on_batch, limits);
  for (const auto& [path, format] : inputs) read_one(path, format, batcher);
  batcher.finish();
}

}  // namespace kistore::cli
