#include <cstdio>

#include "cli/common.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("canon", "Print the RFC 8785 canonical form of any JSON");
  app->footer(
      "Reads one JSON text (a file, or - for standard input) and writes its RFC 8785 (JCS) form:\n"
      "members sorted, no whitespace, numbers in their shortest form. The bytes are written exactly,\n"
      "without a final newline, so `kistore canon f.json | sha256sum` is the digest of the whole text.\n"
      "No store is needed. Input JCS cannot represent (duplicate names, lone surrogates, ...) is\n"
      "refused with exit 2.");
  auto file = std::make_shared<std::string>("-");
  app->add_option("FILE", *file, "The JSON file (default: standard input)");
  return Command{app, [file]() -> int {
    std::string text = read_input_file(*file, kMaxInputBytes);  // one JSON text: no more is read
    std::string out = canonical(parse_json(text, *file == "-" ? "<stdin>" : *file));
    std::fwrite(out.data(), 1, out.size(), stdout);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
