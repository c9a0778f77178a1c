// What kistore does when it is interrupted: Ctrl-C (SIGINT), SIGTERM or
// SIGHUP, at any point of any command.
//
// It ends within about a second (1.2 s at most: 0.8 s for the programs it
// started to end on SIGTERM, 0.2 s to end their trees, 0.2 s of removing),
// whatever its threads were doing: it stops the programs it started (their
// process groups get SIGTERM, and SIGKILL after 0.8 s; what they started
// outside their groups, adopted by kistore, is killed as it is adopted:
// adopt_orphans below), removes every
// temporary file and folder it made that is still there (a pack in the
// making, a pull's quarantine, a bench's scratch folder), says on stderr
// "error: interrupted; nothing was written" (or, once a branch has moved,
// which commit was written: a commit is whole or absent, never half), and
// exits 130.
//
// How: handle_interrupts(), called by main before any other thread starts,
// blocks the three signals in every thread and starts one thread that waits
// for them (sigwait). The cleanup therefore runs as ordinary code, not in a
// signal handler: it may take locks and remove folders. The file gate
// (files.h) tracks each temporary file and folder from its creation to its
// rename or removal, and the process gate (process.h) each child from fork
// to wait; children start with no signal blocked.
//
// Without handle_interrupts (unit tests), the tracking costs one mutex and
// one set insertion per temporary file, and signals keep their defaults.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace kistore {

// Once, before any thread starts (main): blocks SIGINT, SIGTERM and SIGHUP
// in this thread, and so in every thread started from it, and starts the
// thread that waits for them.
void handle_interrupts();

// The temporary files and folders an interruption removes.
void track_temporary(const std::string& path);
void untrack_temporary(const std::string& path);

// Makes a temporary file or folder with make() (true when it made `path`:
// an open with O_CREAT | O_EXCL, a mkdir) and tracks it, as one step that an
// interruption never splits: it removes what was made, or finds nothing
// made and lets nothing be made after it. (Made first and tracked after, a
// signal in between left the file behind.) make() runs under the lock the
// interruption takes: it must be one system call, never wait on anything.
// errno is make()'s when it returns.
bool make_tracked(const std::string& path, const std::function<bool()>& make);

// Paths tracked while it lives (a folder a command makes and fills, which an
// interruption must not leave half made), untracked when it goes.
class TemporaryPaths {
 public:
  TemporaryPaths() = default;
  TemporaryPaths(const TemporaryPaths&) = delete;
  TemporaryPaths& operator=(const TemporaryPaths&) = delete;
  ~TemporaryPaths();
  void add(const std::string& path);

 private:
  std::vector<std::string> paths_;
};

// The process groups of running children, which an interruption stops.
void track_child(pid_t process_group);
void untrack_child(pid_t process_group);

// Makes this process the subreaper of everything it starts, and of what
// that starts in turn (prctl PR_SET_CHILD_SUBREAPER): a process whose parent
// ends, a program's child that left the program's process group (setsid)
// above all, is adopted by this process instead of by init, so that
// end_adopted_children finds it. Idempotent; the process gate calls it
// before it starts a program.
void adopt_orphans();

// Stops and kills (SIGKILL, with the process group each leads, if any)
// every child of this process but the tracked ones and those it had before
// adopt_orphans first ran, with all their descendants, and reaps them; again
// until none is left or `patience` has passed (what a killed process forked
// meanwhile is adopted in turn): what the programs kistore started left
// running. Does nothing before adopt_orphans. The process gate calls it when
// the last program it started has ended.
void end_adopted_children(std::chrono::milliseconds patience);

// What an interruption says was written, from now on ("commit 1a2b3c4d5e6f
// of refs/heads/main"); until it is called: nothing.
void note_written(const std::string& what);

// In a child between fork and exec (async-signal-safe): no signal blocked,
// and SIGPIPE back to its default, as a program expects to start.
void reset_signals_in_child();

// For tests: the temporary paths tracked now.
std::size_t tracked_temporaries();

}  // namespace kistore
