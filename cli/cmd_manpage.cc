// kistore manpage: the manual pages, written from the command table (the same
// text as --help: each command's description, its long help, its arguments
// and options), so that `man kistore-add` and `kistore add --help` never
// disagree. cmake --install installs them (CMakeLists.txt).
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/common.h"
#include "objects/error.h"
#include "store/edge/files.h"

namespace kistore::cli {
namespace {

// Text as roff reads it literally: a backslash is \e, a line that would
// start with a control character (. or ') starts with \& instead.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
    line_start = c == '\n';
  }
  return out;
}

// "kistore remote add" -> "kistore-remote-add".
std::string page_name(const std::string& path) {
  std::string name = path;
  for (char& c : name)
    if (c == ' ') c = '-';
  return name;
}

std::string option_line(const OptionSpec& o) {
  std::string names;
  for (const std::string& n : o.each_name()) {
    if (!names.empty()) names += ", ";
    names += "\\fB";
    names += roff(n);
    names += "\\fR";
  }
  if (o.takes_value() && !o.is_positional())
    names += " \\fI" + roff(o.value_name().empty() ? std::string("VALUE") : o.value_name()) + "\\fR";
  return ".TP\n" + names + "\n" + roff(o.help()) +
         (o.allowed_values().empty() ? std::string() : " (one of: " + roff([&] {
           std::string list;
           for (const std::string& v : o.allowed_values()) list += (list.empty() ? "" : ", ") + v;
           return list;
         }()) + ")") +
         "\n";
}

std::string page(const std::string& path, const CommandSpec& spec, const CommandSpec& root, const std::string& version) {
  const std::string name = page_name(path);
  std::string out = ".TH " + [&] {
    std::string upper;
    for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return upper;  // letters and '-' alone: a command's name
  }() + " 1 \"\" \"" + roff(version) + "\" \"kistore manual\"\n";
  out += ".SH NAME\n" + roff(name) + " \\- " + roff(spec.description().substr(0, spec.description().find('\n'))) + "\n";
  out += ".SH SYNOPSIS\n\\fB" + roff(path) + "\\fR";
  if (!spec.subcommands().empty()) out += " \\fICOMMAND\\fR";
  bool has_options = false;
  for (const OptionSpec& o : spec.options()) has_options |= !o.is_positional();
  if (has_options) out += " [\\fIOPTIONS\\fR]";
  for (const OptionSpec& o : spec.options())
    if (o.is_positional()) {
      // Appended piece by piece: GCC 12 -O3 misreads "literal" + std::string temporaries (-Wrestrict).
      out += o.is_required() ? " " : " [";
      out += "\\fI";
      out += roff(o.names());
      out += "\\fR";
      if (!o.is_required()) out += ']';
    }
  out += "\n.SH DESCRIPTION\n" + roff(spec.description()) + "\n";
  if (!spec.footer_text().empty()) out += ".PP\n.nf\n" + roff(spec.footer_text()) + "\n.fi\n";
  if (!spec.subcommands().empty()) {
    out += ".SH COMMANDS\n";
    for (const auto& sub : spec.subcommands())
      out += ".TP\n\\fB" + roff(sub->name()) + "\\fR\n" + roff(sub->description()) + "\n(see \\fB" +
             roff(page_name(path + " " + sub->name())) + "\\fR(1))\n";
  }
  std::string arguments, options;
  for (const OptionSpec& o : spec.options()) (o.is_positional() ? arguments : options) += option_line(o);
  if (!arguments.empty()) out += ".SH ARGUMENTS\n" + arguments;
  if (!options.empty()) out += ".SH OPTIONS\n" + options;
  if (&spec != &root) {
    out += ".SH GLOBAL OPTIONS\n";
    for (const OptionSpec& o : root.options()) out += option_line(o);
  }
  out += ".SH EXIT STATUS\n"
         ".TP\n0\nsuccess\n.TP\n1\nverification found problems, a REF was not found, or a remote's data was refused\n"
         ".TP\n2\na usage or input error; nothing was written\n"
         ".TP\n3\na store or local I/O error; nothing was written\n"
         ".TP\n4\na remote could not be reached or refused the push\n"
         ".TP\n130\ninterrupted (Ctrl\\-C); nothing was written, or the message says which commit was\n";
  out += ".SH SEE ALSO\n\\fBkistore\\fR(1), \\fBgit\\fR(1)\n";
  return out;
}

bool registered = register_command([](CommandSpec& root, Globals&) {
  auto* app = root.add_subcommand("manpage", "Print a command's manual page, or write them all");
  app->footer(
      "Prints the manual page (roff, for man) of COMMAND, written from the same text as\n"
      "`kistore COMMAND --help`; with --out DIR writes a page for kistore and every command into DIR\n"
      "(kistore.1, kistore-add.1, kistore-remote-add.1, ...), which is what cmake --install installs.\n"
      "Example: kistore manpage add | man -l -");
  struct Opts {
    std::vector<std::string> command;
    std::string out;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("COMMAND", o->command, "The command (default: kistore itself)");
  app->add_option("--out", o->out, "Write every page into this folder")->type_name("DIR");
  return Command{app, [&root, o]() -> int {
    const std::string version = "kistore 0.1.0";
    std::vector<std::pair<std::string, const CommandSpec*>> pages;
    for (const auto& [path, spec] : root.command_paths()) pages.emplace_back(path.empty() ? "kistore" : "kistore " + path, spec);
    if (!o->out.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(o->out, ec);
      if (ec) throw IOError(o->out + ": cannot create the folder: " + ec.message());
      for (const auto& [path, spec] : pages)
        replace_file((std::filesystem::path(o->out) / (page_name(path) + ".1")).string(), page(path, *spec, root, version),
                     "man", 0644);
      return kOk;
    }
    std::string path = "kistore";
    for (const std::string& w : o->command) path += " " + w;
    for (const auto& [p, spec] : pages)
      if (p == path) {
        std::string text = page(p, *spec, root, version);
        std::fwrite(text.data(), 1, text.size(), stdout);
        return kOk;
      }
    throw InvalidInput("no command \"" + path.substr(std::min<std::size_t>(path.size(), 8)) +
                       "\" (`kistore --help` lists the commands)");
  }};
});

}  // namespace
}  // namespace kistore::cli
