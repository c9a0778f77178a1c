// libFuzzer target for the CSV reader (store/ingest/csv.h) fed a block at a
// time, and tritonbench's CSV importer (store/ingest/import_tritonbench.h),
// what `kistore import tritonbench --op OP FILE.csv` runs on a file it was
// handed. Any bytes must end in records or errors — never a crash, a
// sanitizer report, a hang, or an exception other than Error(kInvalidInput) —
// and:
//   - every error names the file ("fuzz.csv…");
//   - reading the bytes a few at a time (the first byte picks how many, as a
//     large or compressed file is read) gives exactly what reading them whole
//     gives: the same records, the same errors, the same bundles;
//   - a record's bundle is a bundle the command can add, or is refused as input.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "objects/document.h"
#include "objects/error.h"
#include "objects/json.h"
#include "store/ingest/csv.h"
#include "store/ingest/harness_import.h"
#include "store/ingest/import_tritonbench.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s\n", what, detail.c_str());
  std::abort();
}

const kistore::Json& environment() {
  static const kistore::Json env = kistore::parse_json(
      R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"ExecutionEnvironment","spec":{"hardware":{"vendor":"nvidia","product":"NVIDIA H200","architecture":"sm_90"}}})",
      "env.json");
  return env;
}

struct Outcome {
  kistore::HarnessImport got;
  std::string thrown;  // the message of an Error(kInvalidInput), or ""
};

Outcome run(std::string_view text, std::size_t block) {
  kistore::HarnessOptions options;
  options.file_digest = std::string(64, 'a');
  options.environment = &environment();
  options.op = "softmax";
  Outcome out;
  try {
    if (block == 0) {
      out.got = kistore::import_tritonbench_csv(text, "fuzz.csv", options);
    } else {
      std::size_t pos = 0;
      kistore::CsvReader reader(
          [&](char* buffer, std::size_t size) {
            std::size_t n = std::min({size, block, text.size() - pos});
            std::memcpy(buffer, text.data() + pos, n);
            pos += n;
            return n;
          },
          "fuzz.csv", ';');
      kistore::import_tritonbench_csv(reader, "fuzz.csv", options, kistore::collect_into(out.got));
    }
  } catch (const kistore::Error& e) {
    if (e.code() != kistore::ErrorCode::kInvalidInput) fail("not an input error", e.what());
    if (std::string_view(e.what()).rfind("fuzz.csv", 0) != 0) fail("error does not name the file", e.what());
    out.thrown = e.what();
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t block = 1 + (data[0] & 15);
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Outcome whole = run(text, 0);
  const Outcome blocks = run(text, block);
  if (whole.thrown != blocks.thrown) fail("read a block at a time, it throws differently", whole.thrown + " | " + blocks.thrown);
  if (whole.got.records.size() != blocks.got.records.size() || whole.got.errors.size() != blocks.got.errors.size())
    fail("read a block at a time, it gives other records", "");
  for (std::size_t i = 0; i < whole.got.errors.size(); ++i) {
    const auto& e = whole.got.errors[i];
    if (e.message != blocks.got.errors[i].message) fail("read a block at a time, an error differs", e.message);
    if (e.message.find("fuzz.csv") == std::string::npos) fail("a row's error does not name the file", e.message);
  }
  for (std::size_t i = 0; i < whole.got.records.size(); ++i) {
    const auto& r = whole.got.records[i];
    const kistore::Json json = r.bundle.to_json();
    if (kistore::canonical(json) != kistore::canonical(blocks.got.records[i].bundle.to_json()))
      fail("read a block at a time, a bundle differs", r.where);
    const kistore::Bundle checked = kistore::Bundle::from_json(json, kistore::Location{r.where, ""});
    for (std::size_t d = 0; d < r.bundle.documents().size(); ++d)
      if (checked.documents().at(d).digest() != r.bundle.documents()[d].digest())
        fail("a record's document was made with another digest than its JSON gives", r.where);
  }
  return 0;
}
