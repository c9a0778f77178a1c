#include "objects/bundle_check.h"

#include <utility>

#include "objects/document.h"
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

}  // namespace

void check_bundle_text(std::string_view text, std::string_view source, BundleFileCheck& out) {
  Json value = parse_json(text, source);
  Location root{std::string(source), ""};
  std::vector<std::pair<Location, Json*>> items;
  if (value.is_array())
    for (std::size_t i = 0; i < value.as_array().size(); ++i) items.emplace_back(root.child(i), &value.as_array()[i]);
  else
    items.emplace_back(root, &value);
  for (auto& [where, item] : items) {
    if (item->is_object() && item->find("run") && !item->find("kind")) {
      check_bundle(*item, where, out);
    } else {
      parse_item(std::move(*item), where);
      ++out.documents;
    }
  }
}

}  // namespace kistore
