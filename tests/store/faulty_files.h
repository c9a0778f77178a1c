// Fault injection through the file gate (store/edge/files.h), as LevelDB's
// tests wrap their Env (db/db_test.cc, SpecialEnv): a FaultyFileSystem fails
// the Nth call of one kind with a full disk, an I/O error, a short write or a
// failed sync, and sweep_faults runs a writer under every such fault, one
// run per call it makes, checking that each failure is Error(kIO) (exit 3)
// naming a path in the writer's folder and that the folder is afterwards
// byte for byte as it was before.
#pragma once

#include <fcntl.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "objects/error.h"
#include "store/edge/files.h"
#include "tests/store/support.h"

namespace kistore::test_support {

enum class Call { kCreate, kWrite, kSync, kClose, kRename, kMkdir, kCount };
enum class Fault {
  kNoSpace,           // ENOSPC; the disk stays full: every later write, create and mkdir fails too
  kIOError,           // EIO, once
  kShortWrite,        // the write takes half the bytes (at least one); later calls are as asked
  kShortThenNoSpace,  // the write takes half the bytes, then the disk is full (as kNoSpace)
};

inline const char* call_name(Call c) {
  switch (c) {
    case Call::kCreate: return "create";
    case Call::kWrite: return "write";
    case Call::kSync: return "fsync";
    case Call::kClose: return "close";
    case Call::kRename: return "rename";
    case Call::kMkdir: return "mkdir";
    default: return "?";
  }
}

// Counts every call of each kind; fails call number `nth` (from 1; 0:
// none) of kind `call` with `fault`. Closes count only for descriptors it
// saw opened for writing (a folder's descriptor closes without a say).
class FaultyFileSystem : public FileSystemWrapper {
 public:
  FaultyFileSystem(Call call = Call::kWrite, std::size_t nth = 0, Fault fault = Fault::kIOError)
      : FileSystemWrapper(posix_file_system()), call_(call), nth_(nth), fault_(fault) {}

  std::size_t count(Call c) const { return counts_[static_cast<int>(c)]; }
  bool fired() const { return fired_; }

  int open_at(int dir, const char* name, int flags, mode_t mode) override {
    if (!(flags & O_CREAT)) return target().open_at(dir, name, flags, mode);
    if (full_ || hit(Call::kCreate)) return fail_with(Call::kCreate);
    int fd = target().open_at(dir, name, flags, mode);
    if (fd >= 0) writable_.insert(fd);
    return fd;
  }
  ssize_t write(int fd, const void* data, std::size_t n) override {
    if (full_) return fail(ENOSPC);
    if (hit(Call::kWrite)) {
      if (fault_ == Fault::kShortWrite || fault_ == Fault::kShortThenNoSpace) {
        full_ = fault_ == Fault::kShortThenNoSpace;
        return target().write(fd, data, n > 1 ? n / 2 : n);
      }
      return fail_with(Call::kWrite);
    }
    return target().write(fd, data, n);
  }
  ssize_t pwrite(int fd, const void* data, std::size_t n, off_t at) override {
    if (full_) return fail(ENOSPC);
    if (hit(Call::kWrite)) {
      if (fault_ == Fault::kShortWrite || fault_ == Fault::kShortThenNoSpace) {
        full_ = fault_ == Fault::kShortThenNoSpace;
        return target().pwrite(fd, data, n > 1 ? n / 2 : n, at);
      }
      return fail_with(Call::kWrite);
    }
    return target().pwrite(fd, data, n, at);
  }
  int sync(int fd) override { return hit(Call::kSync) ? fail_with(Call::kSync) : target().sync(fd); }
  int close(int fd) override {
    if (writable_.erase(fd) && hit(Call::kClose)) {
      target().close(fd);  // a failed close still frees the descriptor (close(2))
      return fail_with(Call::kClose);
    }
    return target().close(fd);
  }
  int rename_at(int from_dir, const char* from, int to_dir, const char* to, bool no_replace) override {
    return hit(Call::kRename) ? fail_with(Call::kRename) : target().rename_at(from_dir, from, to_dir, to, no_replace);
  }
  int mkdir_at(int dir, const char* name, mode_t mode) override {
    if (full_ || hit(Call::kMkdir)) return fail_with(Call::kMkdir);
    return target().mkdir_at(dir, name, mode);
  }

 private:
  bool hit(Call c) {
    std::size_t n = ++counts_[static_cast<int>(c)];
    if (c != call_ || n != nth_) return false;
    fired_ = true;
    return true;
  }
  static int fail(int err) {
    errno = err;
    return -1;
  }
  int fail_with(Call) {
    if (full_ || fault_ == Fault::kNoSpace) {
      full_ = true;
      return fail(ENOSPC);
    }
    return fail(EIO);
  }

  Call call_;
  std::size_t nth_;
  Fault fault_;
  bool fired_ = false, full_ = false;
  std::size_t counts_[static_cast<int>(Call::kCount)] = {};
  std::set<int> writable_;
};

// Every file, folder and link below `dir` with each file's bytes and mode:
// equal listings mean the folder is byte for byte the same.
inline std::map<std::string, std::string> listing(const std::string& dir) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string rel = fs::relative(e.path(), dir).string();
    if (e.is_symlink()) out[rel] = "link -> " + fs::read_symlink(e.path()).string();
    else if (e.is_directory()) out[rel] = "folder";
    else out[rel] = "file " + std::to_string(static_cast<int>(e.status().permissions())) + ": " +
                    read_file(e.path().string());
  }
  return out;
}

// What differs between two listings, for a failure's message.
inline std::string listing_diff(const std::map<std::string, std::string>& before,
                                const std::map<std::string, std::string>& after) {
  std::string out;
  for (const auto& [k, v] : before)
    if (!after.contains(k)) out += "  gone: " + k + "\n";
    else if (after.at(k) != v) out += "  changed: " + k + "\n";
  for (const auto& [k, v] : after)
    if (!before.contains(k)) out += "  new: " + k + "\n";
  return out;
}

// One writer under test, made afresh for every run: the folder it writes
// (compared before and after) and the write itself.
struct Scenario {
  virtual ~Scenario() = default;
  virtual std::string root() const = 0;
  virtual void run() = 0;
};

struct FaultRow {
  Call call;
  Fault fault;
  const char* name;
};

// The faults every writer must survive cleanly: each fails the call.
inline const std::vector<FaultRow>& failing_faults() {
  static const std::vector<FaultRow> rows = {
      {Call::kWrite, Fault::kNoSpace, "full disk on a write"},
      {Call::kWrite, Fault::kIOError, "EIO on a write"},
      {Call::kWrite, Fault::kShortThenNoSpace, "a short write, then a full disk"},
      {Call::kSync, Fault::kIOError, "a failed fsync"},
      {Call::kCreate, Fault::kNoSpace, "full disk when a file is created"},
      {Call::kClose, Fault::kIOError, "EIO on close"},
      {Call::kRename, Fault::kIOError, "EIO on rename"},
      {Call::kMkdir, Fault::kNoSpace, "full disk when a folder is made"},
  };
  return rows;
}

struct SweepOptions {
  // The last fsync is the folder's, after the renames: when it alone fails
  // the complete result may stay (documented for each writer that has one).
  bool last_sync_may_keep_result = false;
};

// Runs the scenario once to count its calls, then once per call and fault
// of failing_faults() with that call failing: each run must throw Error(kIO)
// whose message starts with a path below root() and leave root() as it was.
// Then once per write with that write short: each run must succeed with the
// same result as the first. Returns how many faulty runs were made.
inline std::size_t sweep_faults(const std::function<std::unique_ptr<Scenario>()>& make, SweepOptions options = {}) {
  std::size_t runs = 0;
  std::map<std::string, std::string> result;
  FaultyFileSystem counter;
  {
    std::unique_ptr<Scenario> s = make();
    {
      ScopedFileSystem use(counter);
      s->run();
    }
    result = listing(s->root());
  }
  REQUIRE(counter.count(Call::kWrite) > 0);
  for (const FaultRow& row : failing_faults()) {
    const std::size_t calls = counter.count(row.call);
    for (std::size_t n = 1; n <= calls; ++n) {
      INFO(row.name << ": " << call_name(row.call) << " " << n << " of " << calls);
      std::unique_ptr<Scenario> s = make();
      const std::string root = s->root();
      const auto before = listing(root);
      FaultyFileSystem faulty(row.call, n, row.fault);
      std::string message;
      bool threw = false;
      {
        ScopedFileSystem use(faulty);
        try {
          s->run();
        } catch (const Error& e) {
          threw = true;
          message = e.what();
          CHECK(e.code() == ErrorCode::kIO);
        }
      }
      ++runs;
      INFO("message: " << message);
      REQUIRE(faulty.fired());
      CHECK(threw);
      // names the file or folder: the writer's folder or one below it
      CHECK((message.rfind(root + "/", 0) == 0 || message.rfind(root + ":", 0) == 0));
      CHECK(message.find(row.fault == Fault::kIOError ? std::strerror(EIO) : std::strerror(ENOSPC)) != std::string::npos);
      const auto after = listing(root);
      if (options.last_sync_may_keep_result && row.call == Call::kSync && n == calls && after == result) continue;
      INFO("differences:\n" << listing_diff(before, after));
      CHECK(after == before);
    }
  }
  const std::size_t writes = counter.count(Call::kWrite);
  for (std::size_t n = 1; n <= writes; ++n) {
    INFO("a short write: write " << n << " of " << writes);
    std::unique_ptr<Scenario> s = make();
    FaultyFileSystem faulty(Call::kWrite, n, Fault::kShortWrite);
    {
      ScopedFileSystem use(faulty);
      s->run();  // the gate writes the rest
    }
    ++runs;
    CHECK(faulty.fired());
    const auto after = listing(s->root());
    INFO("differences:\n" << listing_diff(result, after));
    CHECK(after == result);
  }
  return runs;
}

}  // namespace kistore::test_support
