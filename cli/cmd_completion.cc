// kistore completion bash|zsh|fish: a completion script written from the
// command table itself (the same CommandSpec tree that parses the command
// line and writes --help), so that it never lists a command or option that
// does not exist: commands and their subcommands, options (the values of
// those with a fixed set), remote names for pull and push, and digest
// prefixes from the store for the commands that take a run or a document.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli/common.h"

namespace kistore::cli {
namespace {

// What a positional argument names, for completing it.
enum class Completes { kFile, kRemote, kDigest, kNothing, kChoices };

Completes completes(const OptionSpec& positional) {
  const std::string& name = positional.names();
  if (!positional.allowed_values().empty()) return Completes::kChoices;
  if (name == "REMOTE") return Completes::kRemote;
  if (name == "REF" || name == "RUN" || name == "RUN_A" || name == "RUN_B") return Completes::kDigest;
  if (name == "NAME" || name == "PRINCIPAL" || name == "VALUE" || name == "FORMAT" || name == "URL")
    return Completes::kNothing;
  return Completes::kFile;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// The words a command takes after it: its subcommands (and aliases).
std::vector<std::string> subcommand_words(const CommandSpec& spec, bool root) {
  std::vector<std::string> words;
  for (const auto& sub : spec.subcommands()) {
    words.push_back(sub->name());
    for (const std::string& a : sub->aliases()) words.push_back(a);
  }
  if (root) words.push_back("help");
  return words;
}

std::string bash_script(const CommandSpec& root) {
  const auto paths = root.command_paths();
  std::string subs, options, valued, choices, positional;
  std::vector<std::string> global_options, global_valued;
  for (const OptionSpec& o : root.options())
    for (const std::string& n : o.each_name()) (o.takes_value() ? global_valued : global_options).push_back(n);
  for (const auto& [path, spec] : paths) {
    const std::string key = "\"" + path + "\"";
    if (!spec->subcommands().empty())
      subs += "    " + key + ") echo \"" + joined(subcommand_words(*spec, path.empty())) + "\" ;;\n";
    std::vector<std::string> names{"--help"}, takes_value;
    for (const std::string& n : global_options) names.push_back(n);
    for (const std::string& n : global_valued) names.push_back(n), takes_value.push_back(n);
    if (!path.empty())
      for (const OptionSpec& o : spec->options()) {
        if (o.is_positional()) {
          const char* kind[] = {"file", "remote", "digest", "none", "choices"};
          if (positional.find("    " + key + ")") == std::string::npos) {
            positional += "    " + key + ") echo " + kind[static_cast<int>(completes(o))] + " ;;\n";
            if (completes(o) == Completes::kChoices)
              choices += "    \"" + path + " @\") echo \"" + joined(o.allowed_values()) + "\" ;;\n";
          }
          continue;
        }
        for (const std::string& n : o.each_name()) {
          names.push_back(n);
          if (o.takes_value()) takes_value.push_back(n);
          if (!o.allowed_values().empty())
            choices += "    \"" + path + " " + n + "\") echo \"" + joined(o.allowed_values()) + "\" ;;\n";
        }
      }
    options += "    " + key + ") echo \"" + joined(names) + "\" ;;\n";
    valued += "    " + key + ") echo \"" + joined(takes_value) + "\" ;;\n";
  }
  // `kistore help CMD` takes the commands.
  subs += "    \"help\") echo \"" + joined(subcommand_words(root, false)) + "\" ;;\n";
  return "# bash completion for kistore, written by `kistore completion bash`.\n"
         "# Load it with: source <(kistore completion bash), or install it as\n"
         "# /usr/share/bash-completion/completions/kistore (cmake --install does).\n"
         "_kistore_subcommands() {\n  case \"$1\" in\n" + subs + "  esac\n}\n"
         "_kistore_options() {\n  case \"$1\" in\n" + options + "  esac\n}\n"
         "_kistore_valued() {\n  case \"$1\" in\n" + valued + "  esac\n}\n"
         "_kistore_choices() {\n  case \"$1\" in\n" + choices + "  esac\n}\n"
         "_kistore_positional() {\n  case \"$1\" in\n" + positional + "    *) echo file ;;\n  esac\n}\n"
         R"SH(_kistore() {
  local cur=${COMP_WORDS[COMP_CWORD]} path="" w i skip=0 option="" subs
  local -a store=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if ((skip)); then
      skip=0
      [[ $option == --store ]] && store=(--store "$w")
      continue
    fi
    if [[ $w == -* ]]; then
      if [[ $w != *=* && " $(_kistore_valued "$path") " == *" $w "* ]]; then skip=1; option=$w; fi
      continue
    fi
    subs=" $(_kistore_subcommands "$path") "
    [[ $subs == *" $w "* ]] && path=${path:+$path }$w
  done
  COMPREPLY=()
  if ((skip)); then
    local values
    values=$(_kistore_choices "$path $option")
    if [[ -n $values ]]; then
      mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur")
    else
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
    return
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_kistore_options "$path")" -- "$cur")
    return
  fi
  subs=$(_kistore_subcommands "$path")
  if [[ -n $subs ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
    return
  fi
  case $(_kistore_positional "$path") in
    remote)
      # compgen -W expands its words: only names of plain characters reach it.
      mapfile -t COMPREPLY < <(compgen -W "$(kistore "${store[@]}" remote list 2>/dev/null | cut -f1 |
        grep -E '^[A-Za-z0-9._-]+$')" -- "$cur")
      ;;
    digest)
      # Only from two digits on: a store may hold a million documents.
      if ((${#cur} >= 2)); then
        mapfile -t COMPREPLY < <(compgen -W "$(kistore "${store[@]}" ls --format tsv 2>/dev/null |
          awk -F'\t' 'NR > 1 { sub(/^sha256:/, "", $1); print substr($1, 1, 12) }' | grep -E '^[0-9a-f]+$')" \
          -- "${cur#sha256:}")
      fi
      ;;
    choices) mapfile -t COMPREPLY < <(compgen -W "$(_kistore_choices "$path @")" -- "$cur") ;;
    file) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
  esac
}
complete -o filenames -o bashdefault -F _kistore kistore
)SH";
}

std::string fish_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text.substr(0, text.find('\n'))) out += c == '\'' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out + "'";
}

std::string fish_script(const CommandSpec& root) {
  std::string out =
      "# fish completion for kistore, written by `kistore completion fish`.\n"
      "# Install it as ~/.config/fish/completions/kistore.fish.\n"
      "complete -c kistore -e\n";
  std::string names;
  for (const auto& sub : root.subcommands()) names += (names.empty() ? "" : " ") + sub->name();
  for (const OptionSpec& o : root.options())
    for (const std::string& n : o.each_name())
      out += "complete -c kistore " + std::string(n.size() == 2 ? "-s " + n.substr(1) : "-l " + n.substr(2)) +
             (o.takes_value() ? " -r" : "") + " -d " + fish_quoted(o.help()) + "\n";
  for (const auto& sub : root.subcommands()) {
    out += "complete -c kistore -f -n __fish_use_subcommand -a " + sub->name() + " -d " +
           fish_quoted(sub->description()) + "\n";
    const std::string seen = "'__fish_seen_subcommand_from " + sub->name() + "'";
    for (const auto& inner : sub->subcommands())
      out += "complete -c kistore -f -n " + seen + " -a " + inner->name() + " -d " + fish_quoted(inner->description()) +
             "\n";
    for (const OptionSpec& o : sub->options()) {
      if (o.is_positional()) {
        if (completes(o) == Completes::kRemote)
          out += "complete -c kistore -f -n " + seen + " -a '(kistore remote list 2>/dev/null | string split -f1 \\t)'\n";
        continue;
      }
      for (const std::string& n : o.each_name()) {
        out += "complete -c kistore -n " + seen + " " + (n.size() == 2 ? "-s " + n.substr(1) : "-l " + n.substr(2));
        if (!o.allowed_values().empty()) out += " -x -a " + fish_quoted(joined(o.allowed_values()));
        else if (o.takes_value()) out += " -r";
        out += " -d " + fish_quoted(o.help()) + "\n";
      }
    }
  }
  out += "complete -c kistore -f -n '__fish_seen_subcommand_from help' -a " + fish_quoted(names) + "\n";
  return out;
}

bool registered = register_command([](CommandSpec& root, Globals&) {
  auto* app = root.add_subcommand("completion", "Print a shell completion script (bash, zsh or fish)");
  app->footer(
      "Prints a script that makes the shell complete kistore's commands, options, the values of\n"
      "options that take one of a few, remote names (pull, push) and digest prefixes from the store\n"
      "(show, rank, cat, attest, rerun, compare; from two typed digits on). It is written from the\n"
      "same command table as --help, so it lists exactly what this kistore takes.\n\n"
      "bash:  source <(kistore completion bash)       (or ~/.bashrc; cmake --install puts it in\n"
      "       /usr/share/bash-completion/completions)\n"
      "zsh:   source <(kistore completion zsh)\n"
      "fish:  kistore completion fish > ~/.config/fish/completions/kistore.fish");
  auto shell = std::make_shared<std::string>();
  app->add_option("SHELL", *shell, "bash, zsh or fish")->required()->choices({"bash", "zsh", "fish"});
  return Command{app, [&root, shell]() -> int {
    std::string script;
    if (*shell == "fish") script = fish_script(root);
    else if (*shell == "zsh")
      script = "#compdef kistore\n# zsh completion for kistore, through zsh's bash completion support.\n"
               "(( $+functions[compdef] )) || { autoload -U +X compinit && compinit -u; }\n"
               "autoload -U +X bashcompinit && bashcompinit\n" +
               bash_script(root);
    else script = bash_script(root);
    std::fwrite(script.data(), 1, script.size(), stdout);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
