// What the programs kistore starts (store/edge/process.h) get from kistore's
// environment and command line: the one place that decides it, so that
// store/ reads no environment variable.
//
// The environment is an allow-list, each name for a stated reason; nothing
// else of kistore's reaches a program (no PYTHON*, LD_PRELOAD, or a variable
// a shell profile set):
//   PATH             absolute entries only: where the program finds its own
//                    tools (a C compiler for Triton); also where kistore looks
//                    up nvidia-smi and python3 (never "", "." or a relative
//                    entry, which would be the current folder)
//   LD_LIBRARY_PATH  absolute entries only: CUDA libraries installed outside
//                    the loader's folders (/usr/local/cuda, HPC modules)
//   HOME             Triton's and PyTorch's caches of compiled kernels
//   TMPDIR           where they put temporary files
//   LANG, LC_ALL, LC_CTYPE   the character set of what they print
//   CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER   which GPU is PyTorch's device 0
//                    (capture checks it is nvidia-smi's first)
// Anything else the user passes on the command line: `--env NAME=VALUE`
// (repeatable; not PYTHON*, which an isolated Python ignores) and
// `--pythonpath DIR` (repeatable: folders put first on Python's sys.path,
// as PYTHONPATH would).
//
// Thread-safety: reads the process environment; call from the main thread.
#pragma once

#include <string>
#include <vector>

#include "cli/args.h"
#include "store/edge/process.h"

namespace kistore::cli {

struct ProcessOptions {
  std::vector<std::string> env;          // --env NAME=VALUE
  std::vector<std::string> python_path;  // --pythonpath DIR
};

// Declares --env and --pythonpath on a command that starts programs.
void add_process_options(CommandSpec* app, ProcessOptions& o);

// The context for store/edge/process.h: the allow-listed variables of kistore's
// environment, then the --env values (replacing one of the same name); the
// search path is that PATH split at ':' (its relative entries are skipped
// by run_process, which names them when a program is not found); the
// temporary folder is the system's (TMPDIR, else /tmp), made absolute.
// Error(kInvalidInput) naming the option for an --env that is not
// NAME=VALUE or names a PYTHON* variable.
ProcessContext process_context(const ProcessOptions& o);

// The --pythonpath folders, made absolute (they name the user's folders on
// the user's command line). Error(kInvalidInput) naming one that is not a
// folder.
std::vector<std::string> python_path_of(const ProcessOptions& o);

// The help text's paragraph on the above, for footers.
extern const char* const kProcessHelp;

}  // namespace kistore::cli
