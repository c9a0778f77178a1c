// libFuzzer target for the strict JSON parser and RFC 8785 canonical form
// (objects/json.h): any bytes must parse or end in Error(kInvalidInput) —
// never a crash, a sanitizer report or another exception — and a value that
// parsed must keep its meaning through the canonical and pretty forms:
//   parse(canon(v)) == v, canon(parse(canon(v))) == canon(v),
//   canon(parse(pretty(v))) == canon(v), and canonical text is its own
//   canonical form (no other bytes name the same document); and
//   is_canonical_json(text) holds exactly when the text parsed and is its
//   own canonical form.
//
// Input: the JSON text, as is.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "objects/error.h"
#include "objects/json.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s\n", what, detail.c_str());
  std::abort();
}

// Parses text that kistore itself wrote: it must not be refused.
kistore::Json reparse(const std::string& text, const char* what) {
  try {
    return kistore::parse_json(text, "<reparse>");
  } catch (const kistore::Error& e) {
    fail(what, e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  kistore::Json value;
  try {
    value = kistore::parse_json(text, "fuzz.json");
  } catch (const kistore::Error& e) {
    if (e.code() != kistore::ErrorCode::kInvalidInput) fail("not an input error", e.what());
    if (kistore::is_canonical_json(text)) fail("a text parse_json refuses read as canonical", e.what());
    return 0;
  }
  const std::string canon = kistore::canonical(value);
  const kistore::Json again = reparse(canon, "canonical form refused");
  if (!(again == value)) fail("canonical form changed the value", canon);
  if (kistore::canonical(again) != canon) fail("canonical form is not a fixed point", canon);
  const std::string pretty = kistore::pretty(value);
  if (kistore::canonical(reparse(pretty, "pretty form refused")) != canon) fail("pretty form changed the value", pretty);
  // A text that is already canonical is exactly its canonical form.
  if (text == canon && kistore::canonical(value) != text) fail("canonical text rewritten", canon);
  if (kistore::is_canonical_json(text) != (text == canon))
    fail(text == canon ? "canonical text not read as canonical" : "a text read as canonical that is not", canon);
  (void)kistore::quoted_excerpt(text, 40);
  return 0;
}
