// The command table: parses kistore's command line against the commands that
// cli/cmd_*.cc declared (cli/args.h). It is the one file that knows CLI11:
// it turns each CommandSpec into a CLI11 subcommand, parses, and reports back
// through the specs (their bound variables, and parsed()).
//
// What it adds to CLI11's parsing (SPEC §3):
//   - global options (the root's: --store, --json, --quiet, --no-progress)
//     are accepted before or after the command;
//   - `kistore help CMD...` prints exactly what `kistore CMD... --help` does;
//   - a mistyped command is refused naming the nearest one
//     (`pusj` -> did you mean "push"?).
//
// Thread-safety: call once, from main, before any command runs.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "cli/args.h"

namespace kistore::cli {

// Parses argv[1..] against `root`, the program with its global options and
// commands. Returns nullopt when a command is to run: the bound variables are
// filled and the given command (and subcommand) has parsed() true. Otherwise
// returns the exit code main should return, with everything already printed:
// 0 after --help, `help` or --version (on stdout); 2 after a usage error
// (naming what was wrong: on stderr, or given to `usage_error` when that is
// set, which then prints it; main's --json error document).
using UsageErrorPrinter = std::function<void(const std::string& message)>;
std::optional<int> parse_command_line(CommandSpec& root, const std::string& version, int argc, char** argv,
                                      const UsageErrorPrinter& usage_error = nullptr);

}  // namespace kistore::cli
