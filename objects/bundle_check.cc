#include "objects/bundle_check.h"

#include <algorithm>
#include <utility>

#include "objects/document.h"
#include "objects/error.h"
#include "objects/input.h"
#include "objects/json.h"

namespace kistore {
namespace {

constexpr const char* kReferencedRoles[] = {"protocol", "environment", "workload", "implementation"};

// "<source>: <pointer>", or "<source>" for the whole text.
std::string path_of(const Location& where) {
  return where.pointer.empty() ? where.source : where.source + ": " + where.pointer;
}

void check_bundle(Json& bundle, const Location& where, BundleFileCheck& out) {
  Location run_at = where.child("run");
  Document run = Document::from_json(*bundle.find("run"), run_at);
  ++out.documents;
  for (const char* role : kReferencedRoles) {
    auto recorded = run_reference(run, role);
    std::string pointer = path_of(run_at.child("spec").child(std::string(role) + "Digest"));
    Json* member = bundle.find(role);
    if (!member) {
      out.warnings.push_back({"external-reference", pointer,
                              "the bundle does not carry the run's " + std::string(role) + " " + recorded->str()});
      continue;
    }
    Document doc = Document::from_json(std::move(*member), where.child(role));
    ++out.documents;
    if (doc.digest() != *recorded)
      out.problems.push_back({"digest-mismatch", pointer,
                              "bundle's " + std::string(role) + " hashes to " + doc.digest().str() + ", run says " +
                                  recorded->str()});
  }
}

// One bundle or document of an input.
void check_item(Json& item, const Location& where, BundleFileCheck& out) {
  if (item.is_object() && item.find("run") && !item.find("kind")) {
    check_bundle(item, where, out);
  } else {
    parse_item(std::move(item), where);
    ++out.documents;
  }
}

}  // namespace

void check_bundle_text(std::string_view text, std::string_view source, BundleFileCheck& out, InputFormat format) {
  bool lines = format == InputFormat::kJsonLines;
  Json value;
  if (!lines) {
    try {
      value = parse_json(text, source);
    } catch (const Error&) {
      if (format != InputFormat::kAuto || !looks_like_json_lines(text)) throw;
      lines = true;
    }
  }
  if (lines) {
    std::size_t pos = 0, line_no = 0;
    while (pos < text.size()) {
      std::size_t end = std::min(text.find('\n', pos), text.size());
      std::string_view line = text.substr(pos, end - pos);
      pos = end + 1;
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      const std::string where = std::string(source) + ":" + std::to_string(line_no);
      Json item = parse_json(line, where);
      check_item(item, Location{where, ""}, out);
    }
    return;
  }
  Location root{std::string(source), ""};
  if (value.is_array()) {
    for (std::size_t i = 0; i < value.as_array().size(); ++i) check_item(value.as_array()[i], root.child(i), out);
    return;
  }
  check_item(value, root, out);
}

}  // namespace kistore
