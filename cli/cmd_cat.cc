#include <cstdio>

#include "cli/common.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("cat", "Print an object's exact stored bytes");
  app->footer(
      "Prints the decompressed bytes of one object: the RFC 8785 form of the document without its\n"
      "metadata, exactly the bytes its digest names (no final newline). The bytes are re-hashed\n"
      "first; a mismatch is an error. REF is a full digest or a unique prefix of 8+ hex digits.\n"
      "Example: kistore cat 334face3 | sha256sum");
  auto ref = std::make_shared<std::string>();
  app->add_option("REF", *ref, "Digest or unique hex prefix (8+)")->required();
  return Command{app, [&g, ref]() -> int {
    Store store = open_store_for_reading(g);
    Snapshot snap = store.snapshot();
    std::string bytes = snap.object_bytes(snap.resolve(*ref));
    std::fwrite(bytes.data(), 1, bytes.size(), stdout);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
