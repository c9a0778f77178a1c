// Running another program and collecting what it printed: the one place
// kistore starts a process (nvidia-smi and Python for `kistore capture`,
// benchmark scripts for `kistore bench`).
//
// The program runs in its own process group, with stdin from /dev/null, in a
// given folder, with variables added to (or replacing some of) kistore's
// environment. Its stdout and stderr are read concurrently, so that neither
// pipe can fill and stall it; what is kept of each is bounded (the whole of
// stdout up to a limit, the tail of stderr), whatever the program writes. A
// time limit, when set, ends the whole process group (SIGTERM, then SIGKILL
// two seconds later), so that a script's own children do not outlive it.
//
// Thread-safety: run_process may be called from several threads at once; it
// changes no state of the calling process (signal dispositions included).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kistore {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH when it has no '/'
  std::string cwd;                // empty: kistore's own working folder
  // Variables set for the program (replacing kistore's value of the same name).
  std::vector<std::pair<std::string, std::string>> env;
  // 0: no limit.
  std::chrono::milliseconds time_limit{0};
  // At most this many bytes of stdout are kept (the rest is read and dropped;
  // ProcessResult::stdout_truncated says so).
  std::size_t stdout_limit = 16u << 20;
  // The last this many bytes of stderr are kept.
  std::size_t stderr_tail = 8u << 10;
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
// only; Error(kInvalidInput) for an empty argv.
ProcessResult run_process(const ProcessSpec& spec);

// The last `lines` lines of `text` (without a trailing empty line), for
// messages that quote what a failed program printed.
std::string last_lines(const std::string& text, std::size_t lines);

}  // namespace kistore
