// libFuzzer target for document and bundle validation (objects/document.h,
// objects/input.h, objects/bundle_check.h): any bytes given to `kistore add`,
// `digest` or `verify FILE` must end in validated items or in input errors —
// never a crash, a sanitizer report or an exception — and a validated
// document's digest must be stable: it names its canonical bytes, and
// rebuilding the document from those bytes (as a store read does) or from its
// JSON with metadata (as `show` then `add` does) gives the same digest.
//
// Input: the first byte picks the input format (0 auto, 1 JSON, 2 JSON
// Lines); the rest is the text.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

#include "objects/bundle_check.h"
#include "objects/digest.h"
#include "objects/document.h"
#include "objects/error.h"
#include "objects/input.h"
#include "objects/json.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s\n", what, detail.c_str());
  std::abort();
}

void check_stable(const kistore::Document& doc) {
  if (kistore::Digest::of(doc.canonical()) != doc.digest()) fail("digest does not name the bytes", doc.canonical());
  if (kistore::canonical(doc.body()) != doc.canonical()) fail("canonical bytes are not JCS of the body", doc.canonical());
  const kistore::Location where{"<again>", ""};
  try {
    kistore::Document stored = kistore::Document::from_canonical(doc.canonical(), doc.metadata(), where);
    if (stored.digest() != doc.digest() || stored.kind() != doc.kind()) fail("stored form has another digest", doc.canonical());
    kistore::Document shown = kistore::Document::from_json(doc.with_metadata(), where);
    if (shown.digest() != doc.digest()) fail("document with metadata has another digest", doc.canonical());
    if (!(shown.metadata() == doc.metadata())) fail("metadata changed", doc.canonical());
  } catch (const kistore::Error& e) {
    fail("a validated document was refused", e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static constexpr kistore::InputFormat kFormats[] = {kistore::InputFormat::kAuto, kistore::InputFormat::kJson,
                                                      kistore::InputFormat::kJsonLines};
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  kistore::ParsedInput parsed;
  kistore::parse_input(text, "fuzz.json", kFormats[data[0] % 3], parsed);
  for (const kistore::InputItem& item : parsed.items) {
    if (const auto* doc = std::get_if<kistore::Document>(&item.value)) {
      check_stable(*doc);
    } else {
      const auto& bundle = std::get<kistore::Bundle>(item.value);
      if (bundle.documents().empty() || bundle.run().kind() != kistore::Kind::kRun) fail("bundle without a run", "");
      for (const kistore::Document& d : bundle.documents()) check_stable(d);
    }
  }
  for (const kistore::InputError& e : parsed.errors)
    if (e.message.empty() || e.source.empty()) fail("an error without a message or source", e.message);
  kistore::BundleFileCheck check;
  try {
    kistore::check_bundle_text(text, "fuzz.json", check);
  } catch (const kistore::Error& e) {
    if (e.code() != kistore::ErrorCode::kInvalidInput) fail("not an input error", e.what());
  }
  return 0;
}
