#include <cstdio>
#include <ctime>

#include "cli/common.h"
#include "cli/signing.h"
#include "cli/table.h"
#include "cli/terminal.h"
#include "store/history.h"
#include "store/query.h"
#include "store/run_story.h"
#include "store/trust.h"

namespace kistore::cli {
namespace {

std::string iso_time(std::int64_t t, int offset_minutes) {
  std::time_t shifted = static_cast<std::time_t>(t + offset_minutes * 60);
  std::tm tm{};
  gmtime_r(&shifted, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char zone[16];  // "+hh:mm"; room for any int the compiler cannot rule out
  if (offset_minutes == 0) return std::string(buf) + "Z";
  int a = offset_minutes < 0 ? -offset_minutes : offset_minutes;
  std::snprintf(zone, sizeof zone, "%c%02d:%02d", offset_minutes < 0 ? '-' : '+', a / 60, a % 60);
  return std::string(buf) + zone;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("log", "Show the audit history, newest first");
  app->footer(
      "Every change to a store is one commit. For each: the commit id, time, author, operation\n"
      "(add, import, attest, rerun, merge, upgrade), who signed it and whether that signer is\n"
      "trusted, and its summary. --run REF tells one run's whole story: when and by whom it was\n"
      "added, every level change, every attestation and rerun, each with its commit id.\n"
      "For scripts: --format tsv (a header line, then one line per commit, its fields separated\n"
      "by tabs) or --json.");
  struct Opts {
    std::string run, op;
    int n = -1;  // -1: no -n, every entry
  };
  auto o = std::make_shared<Opts>();
  app->add_option("--run", o->run, "Only the history of this run (digest or 8+ hex prefix)")->type_name("REF");
  app->add_option("--op", o->op, "Only commits of this operation")
      ->choices({"add", "import", "attest", "rerun", "merge", "upgrade", "compact"});
  app->add_option("-n", o->n, "At most N entries (as git log -n: 0 shows none)")->type_name("N")->range(0, 1e9);
  add_format_option(app, g, "commit, parents, time, author, op, signed, summary, changes (with --run)");
  return Command{app, [&g, o]() -> int {
    Store store = open_store(g);
    LogQuery q;
    q.limit = o->n > 0 ? static_cast<std::size_t>(o->n) : 0;
    q.op = o->op;
    std::optional<Digest> run;
    if (!o->run.empty()) {
      run = store.snapshot().resolve(o->run);
      q.paths = run_story_paths(*run);
      q.with_changes = true;
    }
    std::vector<LogEntry> entries = o->n == 0 ? std::vector<LogEntry>() : read_history(store, q);
    SignatureJudge judge = signature_judge(load_trust(store));
    ListFormat format = list_format(g);
    if (format == ListFormat::kTsv) {
      Table table({"commit", "parents", "time", "author", "op", "signed", "summary", "changes"});
      for (const LogEntry& e : entries) {
        std::string parents, changes;
        for (const auto& p : e.parents) parents += (parents.empty() ? "" : " ") + p;
        for (const PathChange& c : e.changes) changes += (changes.empty() ? "" : "; ") + story_change_text(c);
        table.add({e.id, parents, iso_time(e.time, e.offset_minutes), e.author, e.op, judge(e).text(), e.summary,
                   changes});
      }
      std::string text = table.tsv();
      std::fwrite(text.data(), 1, text.size(), stdout);
      return kOk;
    }
    if (format == ListFormat::kJson) {
      Json list = Json::array();
      for (const LogEntry& e : entries) {
        Json j = Json::object();
        j.set("commit", e.id);
        Json parents = Json::array();
        for (const auto& p : e.parents) parents.push_back(p);
        j.set("parents", std::move(parents));
        j.set("time", iso_time(e.time, e.offset_minutes));
        j.set("author", e.author);
        j.set("op", e.op);
        j.set("summary", e.summary);
        j.set("signature", judge(e).to_json());
        if (run) {
          Json changes = Json::array();
          for (const PathChange& c : e.changes) changes.push_back(story_change_text(c));
          j.set("changes", std::move(changes));
        }
        list.push_back(std::move(j));
      }
      Json out = Json::object();
      out.set("entries", std::move(list));
      print_json(out);
      return kOk;
    }
    std::string text;
    for (const LogEntry& e : entries) {
      text += "commit " + e.id + (e.parents.size() > 1 ? " (merge)" : "") + "\n";
      text += "Date:   " + iso_time(e.time, e.offset_minutes) + "\n";
      text += "Author: " + shown(e.author) + "\n";
      text += "Op:     " + (e.op.empty() ? std::string("(none)") : shown(e.op)) + "\n";
      text += "Signed: " + shown_message(judge(e).text()) + "\n";
      text += "\n    " + shown(e.summary) + "\n";
      for (const PathChange& c : e.changes) text += "    " + shown(story_change_text(c)) + "\n";
      text += "\n";
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
