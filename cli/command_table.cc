#include "cli/command_table.h"

#include <CLI/CLI.hpp>

#include "cli/output/terminal.h"
#include "objects/nearest.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace kistore::cli {
namespace {

constexpr int kUsageExit = 2;  // SPEC §3: usage or input error

// Each spec and the CLI11 app made for it, to read back which were given.
using MadeApps = std::vector<std::pair<CommandSpec*, CLI::App*>>;

void add_options(CLI::App& app, const CommandSpec& spec) {
  std::map<const OptionSpec*, CLI::Option*> made;
  for (const OptionSpec& o : spec.options()) {
    CLI::Option* opt = std::visit(
        [&](auto* target) -> CLI::Option* {
          using T = std::remove_pointer_t<decltype(target)>;
          if constexpr (std::is_same_v<T, bool>) return app.add_flag(o.names(), *target, o.help());
          else return app.add_option(o.names(), *target, o.help());
        },
        o.target());
    if (o.is_required()) opt->required();
    if (!o.value_name().empty()) opt->type_name(o.value_name());
    if (o.takes_one_per_use()) opt->allow_extra_args(false);
    // Messages in the house form: what was expected, what was found.
    if (!o.allowed_values().empty())
      opt->check(CLI::Validator(
          [values = o.allowed_values()](std::string& v) -> std::string {
            for (const std::string& allowed : values)
              if (v == allowed) return "";
            std::string list;
            for (const std::string& allowed : values) list += (list.empty() ? "" : ", ") + allowed;
            return "expected one of " + list + "; found \"" + v + "\"";
          },
          "", "choices"));
    if (o.allowed_range())
      opt->check(CLI::Validator(
          [range = *o.allowed_range()](std::string& v) -> std::string {
            auto number = [](double d) {
              char buf[32];
              std::snprintf(buf, sizeof buf, "%g", d);
              return std::string(buf);
            };
            double d = 0;
            try {
              std::size_t used = 0;
              d = std::stod(v, &used);
              if (used != v.size()) throw std::invalid_argument(v);
            } catch (const std::exception&) {
              return "expected a number, found \"" + v + "\"";
            }
            if (d < range.first || d > range.second)
              return "expected a number from " + number(range.first) + " to " + number(range.second) + ", found " + v;
            return "";
          },
          "", "range"));
    made[&o] = opt;
  }
  for (const OptionSpec& o : spec.options())
    for (const OptionSpec* other : o.excluded()) made.at(&o)->excludes(made.at(other));
}

void build(CLI::App& app, CommandSpec& spec, MadeApps& made) {
  made.emplace_back(&spec, &app);
  if (!spec.footer_text().empty()) app.footer(spec.footer_text());
  for (const std::string& a : spec.aliases()) app.alias(a);
  if (spec.required_subcommands()) app.require_subcommand(spec.required_subcommands());
  add_options(app, spec);
  for (const auto& sub : spec.subcommands()) build(*app.add_subcommand(sub->name(), sub->description()), *sub, made);
}

// The command of `level` nearest to `word`, or "" when none is near enough to
// be what was meant (one edit for short words, two for longer ones).
std::string nearest_command(const CommandSpec& level, const std::string& word, bool with_help) {
  std::vector<std::string> names;
  for (const auto& sub : level.subcommands()) {
    names.push_back(sub->name());
    for (const std::string& a : sub->aliases()) names.push_back(a);
  }
  if (with_help) names.push_back("help");
  return nearest_name(word, names);
}

// The option `arg` names among those of `chain` (the command given and the
// commands above it, whose options fall through), or null.
const OptionSpec* option_for(const std::vector<const CommandSpec*>& chain, const std::string& arg) {
  std::string name = arg.substr(0, arg.find('='));
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    if (const OptionSpec* o = (*it)->option_named(name)) return o;
  return nullptr;
}

// The option of `chain` nearest to `arg` ("--frmat" -> "--format"), or "".
std::string nearest_option(const std::vector<const CommandSpec*>& chain, const std::string& arg) {
  std::string word = arg.substr(0, arg.find('='));
  std::vector<std::string> names{"--help"};
  for (const CommandSpec* level : chain)
    for (const OptionSpec& o : level->options())
      if (!o.is_positional())
        for (const std::string& n : o.each_name()) names.push_back(n);
  return nearest_name(word, names, 5);
}

// "kistore trust" for the chain root -> trust.
std::string command_path(const std::vector<const CommandSpec*>& chain) {
  std::string path = "kistore";
  for (std::size_t k = 1; k < chain.size(); ++k) path += " " + chain[k]->name();
  return path;
}

// A word that starts with '-' but is a value: "-" (standard input) or a negative number.
bool is_dash_value(const std::string& arg) {
  return arg == "-" || (arg.size() > 1 && arg[0] == '-' && (std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.'));
}

// What `kistore` alone (or a command group without its subcommand) prints:
// the commands it takes, on one screen, and where to read more.
std::string short_usage(const CommandSpec& level, const std::vector<const CommandSpec*>& chain) {
  std::string path = command_path(chain);
  std::string text = "usage: " + path + (chain.size() == 1 ? " [--store DIR] [--json] [-q]" : "") + " COMMAND [ARGS...]\n";
  std::size_t width = 0;
  for (const auto& sub : level.subcommands()) width = std::max(width, sub->name().size());
  for (const auto& sub : level.subcommands()) {
    std::string line = sub->description().substr(0, sub->description().find('\n'));
    text += "  " + sub->name() + std::string(width - sub->name().size() + 2, ' ') + line + "\n";
  }
  text += "`" + path + " --help` says more; `kistore help COMMAND` explains one command\n";
  return text;
}

// Before CLI11 sees the words: rewrites `help CMD...` as `CMD... --help`, and
// refuses a word that should name a command but names none (CLI11 would only
// say that a command is required, or that an argument was not expected).
// Returns an exit code when the command line is refused.
std::optional<int> check_command_words(const CommandSpec& root, std::vector<std::string>& args,
                                       const UsageErrorPrinter& usage_error) {
  for (bool rewritten = false;;) {
    std::vector<const CommandSpec*> chain{&root};
    std::size_t i = 0;
    bool again = false, asked_help = false;
    while (i < args.size()) {
      const std::string& arg = args[i];
      if (arg == "--") break;
      if (arg.size() > 1 && arg[0] == '-' && !is_dash_value(arg)) {
        const OptionSpec* o = option_for(chain, arg);
        std::string name = arg.substr(0, arg.find('='));
        bool built_in = name == "--help" || name == "-h" || name == "--version";
        if (!o && !built_in) {
          std::string path = command_path(chain);
          std::string near = nearest_option(chain, arg);
          std::string message = "unknown option \"" + name + "\" for " + path;
          if (!near.empty()) message += "; did you mean \"" + near + "\"?";
          message += (near.empty() ? "; `" : " `") + path + " --help` lists the options";
          if (usage_error) usage_error(message);
          else std::fprintf(stderr, "error: %s\n", shown_message(message).c_str());
          return kUsageExit;
        }
        if (built_in) asked_help = true;
        i += o && o->takes_value() && arg.find('=') == std::string::npos ? 2 : 1;
        continue;
      }
      const CommandSpec* level = chain.back();
      if (level->subcommands().empty()) {  // the command's own arguments: only options are checked
        ++i;
        continue;
      }
      if (level == &root && arg == "help" && rewritten) break;  // `help help`: help's own --help
      if (level == &root && arg == "help" && !rewritten) {
        // The words after help, then --help; options given before help stay.
        std::vector<std::string> words(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
        args.resize(i);
        for (std::string& w : words)
          if (w != "--help" && w != "-h") args.push_back(std::move(w));
        args.push_back("--help");
        rewritten = again = true;
        break;
      }
      const CommandSpec* sub = level->subcommand_named(arg);
      if (!sub) {
        std::string path, listing = "kistore";
        for (std::size_t k = 1; k < chain.size(); ++k)
          path += chain[k]->name() + " ", listing += " " + chain[k]->name();
        std::string near = nearest_command(*level, arg, level == &root);
        std::string message = "unknown command \"" + path + arg + "\"";
        if (!near.empty()) message += "; did you mean \"" + path + near + "\"?";
        message += (near.empty() ? "; `" : " `") + listing + " --help` lists the commands";
        if (usage_error) usage_error(message);
        else std::fprintf(stderr, "error: %s\n", shown_message(message).c_str());
        return kUsageExit;
      }
      chain.push_back(sub);
      ++i;
    }
    if (again) continue;
    // A command group given without its command (`kistore`, `kistore trust`):
    // what it takes, rather than CLI11's "A subcommand is required".
    // `help help` stops before its --help: any help or version word counts.
    for (const std::string& a : args) {
      if (a == "--") break;
      asked_help = asked_help || a == "--help" || a == "-h" || a == "--version";
    }
    const CommandSpec* level = chain.back();
    if (!asked_help && level->required_subcommands() > 0) {
      std::string message = command_path(chain) + " needs a command";
      if (usage_error) usage_error(message + "; `" + command_path(chain) + " --help` lists them");
      else std::fprintf(stderr, "error: %s\n%s", message.c_str(), short_usage(*level, chain).c_str());
      return kUsageExit;
    }
    return std::nullopt;
  }
}

}  // namespace

std::optional<int> parse_command_line(CommandSpec& root, const std::string& version, int argc, char** argv,
                                      const UsageErrorPrinter& usage_error) {
  CLI::App app{root.description(), root.name()};
  app.fallthrough();  // inherited by every subcommand: global options after the command
  app.set_version_flag("--version", version);
  MadeApps made;
  build(app, root, made);
  app.add_subcommand("help", "Explain a command: `kistore help CMD` prints what `kistore CMD --help` does");

  std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  if (auto refused = check_command_words(root, args, usage_error)) return refused;
  std::vector<const char*> words{argc > 0 ? argv[0] : "kistore"};
  for (const std::string& a : args) words.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(words.size()), words.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // In kistore's own shape: the command, what was wrong, where to read more.
    std::vector<const CommandSpec*> chain;
    for (auto& [spec, parsed_app] : made)
      if (parsed_app->parsed()) chain.push_back(spec);
    if (chain.empty()) chain.push_back(&root);
    std::string path = command_path(chain), what = e.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
      std::string extras;
      for (const CLI::App* a = &app; a;) {
        for (const std::string& r : a->remaining()) extras += (extras.empty() ? "\"" : " \"") + r + "\"";
        const CLI::App* next = nullptr;
        for (const CLI::App* sub : a->get_subcommands()) next = sub;
        a = next;
      }
      what = "unexpected argument" + std::string(extras.find(' ') == std::string::npos ? " " : "s ") + extras;
    }
    std::string message = path + ": " + what + "; `" + path + " --help` says what it takes";
    if (usage_error) usage_error(message);
    else std::fprintf(stderr, "error: %s\n", shown_message(message).c_str());
    return kUsageExit;
  }
  for (auto& [spec, parsed_app] : made) spec->set_parsed(parsed_app->parsed());
  root.set_parsed(true);
  return std::nullopt;
}

}  // namespace kistore::cli
