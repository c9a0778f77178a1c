// Running another program and collecting what it printed: the one gate
// through which kistore starts a process (nvidia-smi and Python for `kistore
// capture`, benchmark scripts for `kistore bench`).
//
// What a program may be handed is fixed here, not by where kistore was
// started: the program is an explicit path or a name looked up in the
// absolute folders of a search path the caller gives (cli/ takes it from the
// user's PATH, leaving out empty and relative entries, which name the
// current folder); the argument vector is fixed (no shell); it runs in a
// working folder the caller chose (never inherited: a spec without one is
// refused); its environment is exactly ProcessSpec::env (nothing of
// kistore's own is inherited; cli/process_env.h builds the allow-list);
// Python is started isolated (isolated_python: -I, which leaves the current
// and the script's folder, the user's site-packages and every PYTHON*
// variable out of it, and -B, which writes no bytecode). store/ reads no
// environment variable.
//
// The program runs in its own process group, with stdin from /dev/null or
// a file the caller names. Its
// stdout and stderr are read concurrently, so that neither
// pipe can fill and stall it; what is kept of each is bounded (the whole of
// stdout up to a limit, the tail of stderr), whatever the program writes. A
// time limit, when set, ends the whole process group (SIGTERM, then SIGKILL
// two seconds later), so that a script's own children do not outlive it.
// With ProcessSpec::end_what_it_leaves, what leaves the group (setsid) is
// caught too: kistore is then the subreaper of what it starts (interrupt.h,
// adopt_orphans), so a process whose parent ends becomes kistore's child, and
// when the last program running ends, every such process left, with all its
// descendants, is killed (end_adopted_children). Children kistore had before
// it started any program (from a shell that exec'd it) are never touched.
//
// Thread-safety: run_process may be called from several threads at once; it
// changes no state of the calling process (signal dispositions included)
// but one: with end_what_it_leaves, it makes the process a child subreaper.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kistore {

// What every program of one command is started with, decided in cli/ from
// kistore's environment and command line (cli/process_env.h), passed down as
// a value.
struct ProcessContext {
  // The program's whole environment (NAME, value); nothing else is inherited.
  std::vector<std::pair<std::string, std::string>> env;
  // Folders a program name without '/' is looked up in, in order; entries
  // that are not absolute are skipped (run_process never searches the
  // current folder).
  std::vector<std::string> search_path;
  // An absolute folder in which working folders are made (the system's
  // temporary folder).
  std::string temp_parent;
};

struct ProcessSpec {
  // argv[0]: a path (holding '/', made absolute against kistore's working
  // folder before the program's own is entered) or a name looked up in
  // search_path.
  std::vector<std::string> argv;
  std::string cwd;  // the working folder: required, absolute
  std::vector<std::pair<std::string, std::string>> env;  // the whole environment
  std::vector<std::string> search_path;
  // The file the program reads as its stdin (an absolute path, opened
  // read-only); "": /dev/null. One that cannot be opened: not started.
  std::string stdin_file;
  // 0: no limit.
  std::chrono::milliseconds time_limit{0};
  // At most this many bytes of stdout are kept (the rest is read and dropped;
  // ProcessResult::stdout_truncated says so).
  std::size_t stdout_limit = 16u << 20;
  // The last this many bytes of stderr are kept.
  std::size_t stderr_tail = 8u << 10;
  // Whether what the program leaves running outside its process group
  // (setsid, a double fork) is ended too: kistore becomes the subreaper of
  // what it starts (interrupt.h, adopt_orphans), and when the last program
  // running ends, what it adopted is killed. For benchmarks and capture's
  // probes; not for a git credential helper, whose cache daemon is meant to
  // outlive it.
  bool end_what_it_leaves = false;
};

struct ProcessResult {
  bool started = false;    // false: the program could not be started (`start_error` says why)
  std::string start_error; // e.g. "nvidia-smi: not found on PATH"
  bool not_found = false;  // started is false because argv[0] does not exist / is not on PATH
  bool timed_out = false;  // the time limit ended it
  std::optional<int> exit_code;  // set when it exited (not when a signal ended it)
  std::optional<int> signal;     // the signal that ended it, if one did
  std::string out;               // stdout (up to stdout_limit)
  bool stdout_truncated = false;
  std::string err_tail;          // the last stderr_tail bytes of stderr
  std::chrono::milliseconds elapsed{0};

  bool succeeded() const { return started && !timed_out && exit_code && *exit_code == 0; }
  // "exit 1", "killed by signal 9", "timed out after 600 s", "not started: …".
  std::string outcome() const;
};

// Runs spec.argv and waits for it to end (or for the time limit). Never throws
// for anything the program does: a program that cannot be started, fails,
// crashes or runs too long is described by the result. Throws std::bad_alloc
// only; Error(kInvalidInput) for an empty argv or a cwd that is not an
// absolute path.
ProcessResult run_process(const ProcessSpec& spec);

// A spec for `argv` with the context's environment and search path (cwd
// still to be set).
ProcessSpec process_spec(const ProcessContext& context, std::vector<std::string> argv);

// {python, "-I", "-B", args...}: Python isolated from the folder it runs in
// and from the user's environment (see above), writing no bytecode.
std::vector<std::string> isolated_python(const std::string& python, std::vector<std::string> args);

// Where `name` would be run from: itself when it holds '/' (made absolute),
// else the first absolute folder of `search_path` holding an executable file
// of that name; nullopt when there is none.
std::optional<std::string> find_program(const std::string& name, const std::vector<std::string>& search_path);

// A fresh, empty working folder under `parent` (kistore-PREFIX-XXXXXX, mode
// 0700), removed with everything in it when the object goes. Error(kIO) when
// it cannot be made.
class WorkFolder {
 public:
  WorkFolder(const std::string& parent, const std::string& prefix);
  ~WorkFolder();
  WorkFolder(const WorkFolder&) = delete;
  WorkFolder& operator=(const WorkFolder&) = delete;
  const std::string& path() const { return path_; }
  // Leave it in place when the object goes.
  void keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

// The last `lines` lines of `text` (without a trailing empty line), for
// messages that quote what a failed program printed.
std::string last_lines(const std::string& text, std::size_t lines);

}  // namespace kistore
