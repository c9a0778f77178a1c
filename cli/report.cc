#include "cli/report.h"
#include "cli/output/terminal.h"

#include <cstdio>
#include <unordered_map>

namespace kistore::cli {
namespace {

Json rejected_json(const std::vector<InputError>& errors) {
  Json list = Json::array();
  for (const InputError& e : errors) {
    Json o = Json::object();
    o.set("source", e.source);
    o.set("error", e.message);
    list.push_back(std::move(o));
  }
  return list;
}

std::string summary_line(std::size_t added, std::size_t present, const std::vector<InputError>& rejected,
                         const std::optional<std::string>& commit) {
  std::string text = std::to_string(added) + " new, " + std::to_string(present) + " already present";
  if (!rejected.empty()) text += ", " + std::to_string(rejected.size()) + " rejected";
  text += commit ? "; commit " + commit->substr(0, 12) : "; nothing to commit";
  return text + "\n";
}

}  // namespace

void print_rejections(const Globals& g, const std::vector<InputError>& errors) {
  for (const InputError& e : errors) std::fprintf(stderr, "error: %s\n", shown_message(e.message).c_str());
  std::string summary = std::to_string(errors.size()) + (errors.size() == 1 ? " input" : " inputs") +
                        " rejected; nothing was written";
  std::fprintf(stderr, "error: %s\n", summary.c_str());
  if (g.json) {
    Json out = Json::object();
    // The first rejection's message says what was wrong, as an error document's would.
    out.set("error", error_member(kUsage, errors.empty() ? summary : errors.front().message + " (" + summary + ")"));
    out.set("added", 0);
    out.set("present", 0);
    out.set("rejected", rejected_json(errors));
    out.set("commit", Json());
    print_json(out);
  }
}

void print_add_report(const Globals& g, const AddReport& report, const std::vector<InputError>& rejected,
                      const std::vector<AddedDocument>& docs) {
  for (const std::string& n : report.notes) note(g, "note: " + shown_message(n));
  for (const InputError& e : rejected) std::fprintf(stderr, "rejected: %s\n", shown_message(e.message).c_str());
  if (g.json) {
    Json out = Json::object();
    out.set("added", static_cast<long long>(report.added.size()));
    out.set("present", static_cast<long long>(report.present.size()));
    out.set("rejected", rejected_json(rejected));
    out.set("commit", report.commit ? Json(*report.commit) : Json());
    print_json(out);
    return;
  }
  if (g.quiet) return;
  std::unordered_map<Digest, Kind> kinds;
  for (const AddedDocument& d : docs) kinds.emplace(d.doc->digest(), d.doc->kind());
  std::string text;
  if (report.added.size() + report.present.size() <= kListLimit) {
    for (const Digest& d : report.added) text += "new      " + d.str() + " " + std::string(kind_name(kinds.at(d))) + "\n";
    for (const Digest& d : report.present)
      text += "present  " + d.str() + " " + std::string(kind_name(kinds.at(d))) + "\n";
  }
  text += summary_line(report.added.size(), report.present.size(), rejected, report.commit);
  std::fwrite(text.data(), 1, text.size(), stdout);
}

void print_add_report(const Globals& g, const BulkAddReport& report, const std::vector<InputError>& rejected) {
  for (const std::string& n : report.notes) note(g, "note: " + shown_message(n));
  for (const InputError& e : rejected) std::fprintf(stderr, "rejected: %s\n", shown_message(e.message).c_str());
  if (g.json) {
    Json out = Json::object();
    out.set("added", static_cast<long long>(report.added));
    out.set("present", static_cast<long long>(report.present));
    out.set("rejected", rejected_json(rejected));
    out.set("commit", report.commit ? Json(*report.commit) : Json());
    print_json(out);
    return;
  }
  if (g.quiet) return;
  std::string text;
  if (report.added + report.present <= kListLimit) {
    for (const auto& [d, kind] : report.added_list) text += "new      " + d.str() + " " + std::string(kind_name(kind)) + "\n";
    for (const auto& [d, kind] : report.present_list)
      text += "present  " + d.str() + " " + std::string(kind_name(kind)) + "\n";
  }
  text += summary_line(report.added, report.present, rejected, report.commit);
  std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace kistore::cli
