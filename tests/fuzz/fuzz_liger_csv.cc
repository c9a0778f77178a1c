// libFuzzer target for the CSV reader (store/ingest/csv.h) and the Liger importer's
// row → bundle mapping (store/ingest/import_liger.h), what `kistore import liger`
// runs on a table it was handed: any bytes must end in records, rows and
// bundles or in errors — never a crash, a sanitizer report, a hang or an
// exception other than Error(kInvalidInput) — and:
//   - the reader always advances, and no record breaks its bounds;
//   - a row the lenient parser accepts maps onto a bundle without error (its
//     contract: validated rows map), and the mapping is deterministic.
//
// Input: the first byte's bit 0 says whether to put Liger's header line in
// front of the rest (so that mutations reach the rows rather than stop at
// the header check); the rest is the table.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "objects/document.h"
#include "objects/error.h"
#include "objects/json.h"
#include "store/ingest/csv.h"
#include "store/ingest/import_liger.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s\n", what, detail.c_str());
  std::abort();
}

void read_records(std::string_view text) {
  kistore::CsvReader reader(text, "fuzz.csv");
  kistore::CsvRecord record;
  std::string error;
  // Every record or error consumes at least one byte, but the last call
  // (kEnd) may consume none.
  for (std::size_t calls = 0; calls <= text.size() + 1; ++calls) {
    switch (reader.next(record, error)) {
      case kistore::CsvStatus::kEnd:
      case kistore::CsvStatus::kFatal:
        return;
      case kistore::CsvStatus::kError:
        if (error.rfind("fuzz.csv:", 0) != 0) fail("error does not name the source", error);
        break;
      case kistore::CsvStatus::kRecord:
        if (record.fields.size() > kistore::kMaxCsvFields) fail("too many fields", std::to_string(record.fields.size()));
        for (const std::string& f : record.fields)
          if (f.size() > kistore::kMaxCsvCellBytes) fail("oversize cell", std::to_string(f.size()));
        break;
    }
  }
  fail("the reader does not advance", std::string(text.substr(0, 200)));
}

std::string header() {
  std::string line;
  for (std::string_view column : kistore::kLigerColumns) line += std::string(line.empty() ? "" : ",") += column;
  return line + "\n";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const std::string kHeader = header();
  std::string text = (data[0] & 1) ? kHeader : std::string();
  text.append(reinterpret_cast<const char*>(data) + 1, size - 1);
  read_records(text);
  kistore::LigerParse parsed;
  try {
    parsed = kistore::parse_liger_csv_lenient(text, "fuzz.csv");
  } catch (const kistore::Error& e) {
    if (e.code() != kistore::ErrorCode::kInvalidInput) fail("not an input error", e.what());
    return 0;
  }
  for (const kistore::LigerRow& row : parsed.rows) {
    kistore::Json bundle;
    try {
      bundle = kistore::liger_bundle(row);
    } catch (const kistore::Error& e) {
      fail("a row the parser accepted does not map", e.what());
    }
    if (kistore::canonical(kistore::liger_bundle(row)) != kistore::canonical(bundle)) fail("mapping is not deterministic", "");
    try {
      kistore::Bundle checked = kistore::Bundle::from_json(bundle, kistore::Location{"fuzz.csv", ""});
      if (checked.documents().size() != 5) fail("a row's bundle lost a document", kistore::canonical(bundle));
    } catch (const kistore::Error& e) {
      // The command reports such a row as rejected (cli/cmd_import.cc).
      if (e.code() != kistore::ErrorCode::kInvalidInput) fail("not an input error", e.what());
    }
  }
  return 0;
}
