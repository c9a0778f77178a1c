// The command line as kistore declares it: commands, their positional
// arguments and options, each bound to a variable that parsing fills.
//
// Each cli/cmd_*.cc declares its command with this (names, help, footers,
// what is required, which options exclude each other, allowed values) and
// never sees the parser: cli/command_table.cc alone turns the declarations
// into CLI11's (whose header costs ~9 s of compile time in every file that
// includes it) and, after parsing, marks which commands were given.
//
// The method names follow CLI11's, so that a declaration reads as it would
// there: `app->add_option("--tolerance", o->tolerance, "...")->range(0, 10)`.
// A declaration does not fail: a mistake in one (two options of one name, an
// empty name) shows up when the command table is built, as an internal error
// at start-up that every e2e test would see.
//
// Thread-safety: built and parsed on the main thread before any command runs.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace kistore::cli {

// One positional argument ("PATH") or named option ("--author", "--quiet,-q",
// "-n") and the variable it fills.
class OptionSpec {
 public:
  // What parsing fills: text, a list of texts (a positional or option that
  // takes several), a number, or a flag's bool.
  using Target = std::variant<std::string*, std::vector<std::string>*, bool*, double*, int*, std::size_t*>;

  OptionSpec(std::string names, Target target, std::string help, bool is_flag);

  // Parsing fails (exit 2) when the argument is missing.
  OptionSpec* required();
  // The name the help shows for the value ("KEY", "FILE"); default: CLI11's
  // for the target's type (TEXT, FLOAT, UINT).
  OptionSpec* type_name(std::string name);
  // Parsing fails when both this and `other` are given.
  OptionSpec* excludes(OptionSpec* other);
  // The value must be one of `values`.
  OptionSpec* choices(std::vector<std::string> values);
  // A number must lie within [low, high].
  OptionSpec* range(double low, double high);
  // A list option takes one value each time it is given (`--env A=1 --env
  // B=2`), so that it never takes the positional arguments after it.
  OptionSpec* one_per_use();

  const std::string& names() const { return names_; }
  const Target& target() const { return target_; }
  const std::string& help() const { return help_; }
  bool is_flag() const { return is_flag_; }
  bool is_required() const { return required_; }
  const std::string& value_name() const { return type_name_; }
  const std::vector<OptionSpec*>& excluded() const { return excludes_; }
  const std::vector<std::string>& allowed_values() const { return choices_; }
  const std::optional<std::pair<double, double>>& allowed_range() const { return range_; }
  bool takes_one_per_use() const { return one_per_use_; }
  // Positional arguments have names without a leading '-'.
  bool is_positional() const { return !names_.empty() && names_.front() != '-'; }
  // Whether the option takes a value (every non-flag does).
  bool takes_value() const { return !is_flag_; }
  // Each name of "--quiet,-q": {"--quiet", "-q"}.
  std::vector<std::string> each_name() const;

 private:
  std::string names_;
  Target target_;
  std::string help_;
  bool is_flag_;
  bool required_ = false;
  std::string type_name_;
  std::vector<OptionSpec*> excludes_;
  std::vector<std::string> choices_;
  std::optional<std::pair<double, double>> range_;
  bool one_per_use_ = false;
};

// A command ("add"), or a command's subcommand ("trust add"), or the program
// itself (the root, whose options are the global ones).
class CommandSpec {
 public:
  CommandSpec(std::string name, std::string description);
  CommandSpec(const CommandSpec&) = delete;
  CommandSpec& operator=(const CommandSpec&) = delete;

  // Text shown after the options in --help: what the command does, at length.
  CommandSpec* footer(std::string text);
  // Another name the command answers to ("rm" for "remove").
  CommandSpec* alias(std::string name);
  // Exactly `count` of the subcommands must be given.
  CommandSpec* require_subcommand(int count);

  CommandSpec* add_subcommand(std::string name, std::string description);
  OptionSpec* add_option(std::string names, std::string& target, std::string help);
  OptionSpec* add_option(std::string names, std::vector<std::string>& target, std::string help);
  OptionSpec* add_option(std::string names, double& target, std::string help);
  OptionSpec* add_option(std::string names, int& target, std::string help);
  OptionSpec* add_option(std::string names, std::size_t& target, std::string help);
  OptionSpec* add_flag(std::string names, bool& target, std::string help);

  // After parsing: whether this command was given (for the root: always).
  bool parsed() const { return parsed_; }
  void set_parsed(bool given) { parsed_ = given; }

  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const std::string& footer_text() const { return footer_; }
  const std::vector<std::string>& aliases() const { return aliases_; }
  int required_subcommands() const { return required_subcommands_; }
  // In declaration order; the pointers stay valid as long as this spec.
  const std::deque<OptionSpec>& options() const { return options_; }
  const std::deque<std::unique_ptr<CommandSpec>>& subcommands() const { return subcommands_; }
  // The subcommand called `word` (by name or alias), or null.
  const CommandSpec* subcommand_named(const std::string& word) const;
  // The option of this command called `name` ("--store", "-q"), or null.
  const OptionSpec* option_named(const std::string& name) const;
  // This command and every command below it, in the order of the table,
  // each with its path from here: "" for this one, "remote add" below.
  std::vector<std::pair<std::string, const CommandSpec*>> command_paths() const;

 private:
  OptionSpec* add(std::string names, OptionSpec::Target target, std::string help, bool is_flag);
  std::string name_;
  std::string description_;
  std::string footer_;
  std::vector<std::string> aliases_;
  int required_subcommands_ = 0;
  std::deque<OptionSpec> options_;  // a deque: OptionSpec* handed out stay valid
  std::deque<std::unique_ptr<CommandSpec>> subcommands_;
  bool parsed_ = false;
};

}  // namespace kistore::cli
