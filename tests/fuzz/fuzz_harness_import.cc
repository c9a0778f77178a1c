// libFuzzer target for the harness importers (store/ingest/import_nvbench.h,
// import_tritonbench.h, import_kernelbench.h, import_flashinfer.h), what
// `kistore import nvbench|tritonbench|kernelbench|flashinfer-bench` runs on a
// file it was handed: any bytes must end in records or in errors — never a
// crash, a sanitizer report, a hang or an exception other than
// Error(kInvalidInput) — and:
//   - every error names the file ("fuzz.json…");
//   - a record's bundle is a bundle the command can add, or is refused as
//     input (cli/cmd_import.cc lists it as rejected);
//   - the mapping is deterministic.
//
// Input: the first byte's low two bits choose the importer (0 nvbench,
// 1 tritonbench, 2 kernelbench at level 1, 3 flashinfer-bench, JSON Lines);
// the rest is the file. tritonbench gets an environment document, as
// --environment gives it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "objects/document.h"
#include "objects/error.h"
#include "objects/json.h"
#include "store/ingest/harness_import.h"
#include "store/ingest/import_flashinfer.h"
#include "store/ingest/import_kernelbench.h"
#include "store/ingest/import_nvbench.h"
#include "store/ingest/import_tritonbench.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s\n", what, detail.c_str());
  std::abort();
}

const kistore::Json& environment() {
  static const kistore::Json env = kistore::parse_json(
      R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"ExecutionEnvironment","spec":{"hardware":{"vendor":"nvidia","product":"NVIDIA H200","architecture":"sm_90"},"software":{"driver":"580.159.04","torch":"2.11.0+cu130","triton":"3.6.0"}}})",
      "env.json");
  return env;
}

kistore::HarnessImport run(unsigned which, std::string_view text) {
  kistore::HarnessOptions options;
  options.file_digest = std::string(64, 'a');
  options.run_name = "fuzz";
  if (which == 3) return kistore::import_flashinfer(text, "fuzz.jsonl", options);
  const kistore::Json root = kistore::parse_json(text, "fuzz.json");
  if (which == 0) return kistore::import_nvbench(root, "fuzz.json", options);
  if (which == 1) {
    options.environment = &environment();
    return kistore::import_tritonbench(root, "fuzz.json", options);
  }
  options.level = 1;
  return kistore::import_kernelbench(root, "fuzz.json", options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned which = data[0] & 3;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  kistore::HarnessImport got;
  try {
    got = run(which, text);
  } catch (const kistore::Error& e) {
    if (e.code() != kistore::ErrorCode::kInvalidInput) fail("not an input error", e.what());
    if (std::string_view(e.what()).rfind("fuzz.json", 0) != 0) fail("error does not name the file", e.what());
    return 0;
  }
  for (const kistore::HarnessError& e : got.errors)
    if (e.message.find("fuzz.json") == std::string::npos && e.where.find("fuzz.json") == std::string::npos)
      fail("a record's error does not name the file", e.where + " " + e.message);
  const kistore::HarnessImport again = run(which, text);
  if (again.records.size() != got.records.size() || again.errors.size() != got.errors.size())
    fail("the mapping is not deterministic", "");
  for (std::size_t i = 0; i < got.records.size(); ++i) {
    const kistore::Json json = got.records[i].bundle.to_json();
    if (kistore::canonical(again.records[i].bundle.to_json()) != kistore::canonical(json))
      fail("a record's bundle is not deterministic", got.records[i].where);
    // The documents the importer made are those Bundle::from_json makes of
    // their JSON, digest for digest (what the import hands the store).
    const kistore::Bundle checked = kistore::Bundle::from_json(json, kistore::Location{got.records[i].where, ""});
    const auto& made = got.records[i].bundle.documents();
    if (checked.documents().size() != made.size()) fail("a record's bundle reads back otherwise", got.records[i].where);
    for (std::size_t d = 0; d < made.size(); ++d)
      if (checked.documents()[d].digest() != made[d].digest() || checked.documents()[d].canonical() != made[d].canonical())
        fail("a record's document was made with other bytes or digest than its JSON gives", got.records[i].where);
  }
  return 0;
}
