#include "cli/args.h"

namespace kistore::cli {

OptionSpec::OptionSpec(std::string names, Target target, std::string help, bool is_flag)
    : names_(std::move(names)), target_(target), help_(std::move(help)), is_flag_(is_flag) {}

OptionSpec* OptionSpec::required() {
  required_ = true;
  return this;
}

OptionSpec* OptionSpec::type_name(std::string name) {
  type_name_ = std::move(name);
  return this;
}

OptionSpec* OptionSpec::excludes(OptionSpec* other) {
  excludes_.push_back(other);
  return this;
}

OptionSpec* OptionSpec::one_per_use() {
  one_per_use_ = true;
  return this;
}

OptionSpec* OptionSpec::choices(std::vector<std::string> values) {
  choices_ = std::move(values);
  return this;
}

OptionSpec* OptionSpec::range(double low, double high) {
  range_ = std::make_pair(low, high);
  return this;
}

std::vector<std::string> OptionSpec::each_name() const {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= names_.size()) {
    std::size_t comma = names_.find(',', start);
    if (comma == std::string::npos) comma = names_.size();
    if (comma > start) out.push_back(names_.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

CommandSpec::CommandSpec(std::string name, std::string description)
    : name_(std::move(name)), description_(std::move(description)) {}

CommandSpec* CommandSpec::footer(std::string text) {
  footer_ = std::move(text);
  return this;
}

CommandSpec* CommandSpec::alias(std::string name) {
  aliases_.push_back(std::move(name));
  return this;
}

CommandSpec* CommandSpec::require_subcommand(int count) {
  required_subcommands_ = count;
  return this;
}

CommandSpec* CommandSpec::add_subcommand(std::string name, std::string description) {
  subcommands_.push_back(std::make_unique<CommandSpec>(std::move(name), std::move(description)));
  return subcommands_.back().get();
}

OptionSpec* CommandSpec::add(std::string names, OptionSpec::Target target, std::string help, bool is_flag) {
  options_.emplace_back(std::move(names), target, std::move(help), is_flag);
  return &options_.back();
}

OptionSpec* CommandSpec::add_option(std::string names, std::string& target, std::string help) {
  return add(std::move(names), &target, std::move(help), false);
}
OptionSpec* CommandSpec::add_option(std::string names, std::vector<std::string>& target, std::string help) {
  return add(std::move(names), &target, std::move(help), false);
}
OptionSpec* CommandSpec::add_option(std::string names, double& target, std::string help) {
  return add(std::move(names), &target, std::move(help), false);
}
OptionSpec* CommandSpec::add_option(std::string names, int& target, std::string help) {
  return add(std::move(names), &target, std::move(help), false);
}
OptionSpec* CommandSpec::add_option(std::string names, std::size_t& target, std::string help) {
  return add(std::move(names), &target, std::move(help), false);
}
OptionSpec* CommandSpec::add_flag(std::string names, bool& target, std::string help) {
  return add(std::move(names), &target, std::move(help), true);
}

const CommandSpec* CommandSpec::subcommand_named(const std::string& word) const {
  for (const auto& sub : subcommands_) {
    if (sub->name_ == word) return sub.get();
    for (const std::string& a : sub->aliases_)
      if (a == word) return sub.get();
  }
  return nullptr;
}

std::vector<std::pair<std::string, const CommandSpec*>> CommandSpec::command_paths() const {
  std::vector<std::pair<std::string, const CommandSpec*>> out{{"", this}};
  for (const auto& sub : subcommands_)
    for (auto& [path, spec] : sub->command_paths())
      out.emplace_back(path.empty() ? sub->name() : sub->name() + " " + path, spec);
  return out;
}

const OptionSpec* CommandSpec::option_named(const std::string& name) const {
  for (const OptionSpec& o : options_)
    if (!o.is_positional())
      for (const std::string& n : o.each_name())
        if (n == name) return &o;
  return nullptr;
}

}  // namespace kistore::cli
