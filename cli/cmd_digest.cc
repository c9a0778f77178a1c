#include <cstdio>

#include "cli/common.h"
#include "cli/output/terminal.h"

namespace kistore::cli {
namespace {

// Prints every error of a parse and fails with exit 2 if there were any
// (with --json, one error document naming the first).
int report_errors(const Globals& g, const ParsedInput& parsed) {
  if (parsed.errors.empty()) return kOk;
  for (const InputError& e : parsed.errors) std::fprintf(stderr, "error: %s\n", shown_message(e.message).c_str());
  if (g.json) {
    std::string message = parsed.errors.front().message;
    if (parsed.errors.size() > 1) message += " (and " + std::to_string(parsed.errors.size() - 1) + " more)";
    Json out = Json::object();
    out.set("error", error_member(kUsage, message));
    print_json(out);
  }
  return kUsage;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("digest", "Print the digest, kind and role of every document in the inputs");
  app->footer(
      "For each document in the given bundles, documents, JSON arrays or JSON Lines files, prints\n"
      "  <digest> <kind> <role>\n"
      "where the digest is sha256 of the document's RFC 8785 form without its metadata. No store\n"
      "is needed. A folder is read recursively (*.json, *.jsonl); - reads standard input.");
  auto paths = std::make_shared<std::vector<std::string>>();
  app->add_option("PATH", *paths, "Files, folders, or - for standard input")->required();
  return Command{app, [&g, paths]() -> int {
    ParsedInput parsed;
    parse_paths(*paths, parsed);
    if (int rc = report_errors(g, parsed)) return rc;
    Json list = Json::array();
    std::string text;
    auto emit = [&](const Document& d, const InputItem& item) {
      if (g.json) {
        Json o = Json::object();
        o.set("digest", d.digest().str());
        o.set("kind", std::string(kind_name(d.kind())));
        o.set("role", std::string(role_name(d.kind())));
        o.set("source", item.where.source);
        list.push_back(std::move(o));
      } else {
        text += d.digest().str() + " " + std::string(kind_name(d.kind())) + " " +
                std::string(role_name(d.kind())) + "\n";
      }
    };
    for (const InputItem& item : parsed.items) {
      if (auto* b = std::get_if<Bundle>(&item.value))
        for (const Document& d : b->documents()) emit(d, item);
      else
        emit(std::get<Document>(item.value), item);
    }
    return print_listing(g, "documents", std::move(list), text);
  }};
});

}  // namespace
}  // namespace kistore::cli
