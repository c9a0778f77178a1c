#include <cstdio>
#include <ctime>

#include "cli/common.h"
#include "cli/output/describe.h"
#include "cli/signing.h"
#include "cli/table.h"
#include "cli/output/terminal.h"
#include "objects/error.h"
#include "store/query/group_story.h"
#include "store/history/history.h"
#include "store/query/query.h"
#include "store/query/run_story.h"
#include "store/history/trust.h"

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

// A commit as log shows it: the words for what it changed (--run, --group)
// and, for --group, the same as members of its JSON.
struct Shown {
  LogEntry entry;
  std::vector<std::string> changes;
  Json detail = Json::object();
};

// ---- --group: the JSON of what a commit changed in the group ----

Json run_member(const Digest& run, const std::string& implementation) {
  Json j = Json::object();
  j.set("run", run.str());
  j.set("implementation", implementation);
  return j;
}
Json rank_json(int rank) { return rank ? Json(rank) : Json(); }  // null: unrankable
Json level_json(const std::optional<Level>& level) { return level ? Json(level_name(*level)) : Json(); }

Json run_changes_json(const std::vector<GroupRunChange>& changes) {
  Json list = Json::array();
  for (const GroupRunChange& c : changes) {
    Json j = run_member(c.run, c.implementation);
    j.set("value", c.primary ? Json(c.primary->value) : Json());
    j.set("unit", c.primary ? Json(c.primary->unit) : Json());
    j.set("rank", rank_json(c.rank));
    j.set("level", level_json(c.level));
    list.push_back(std::move(j));
  }
  return list;
}

Json group_detail(const GroupStoryEntry& e) {
  Json out = Json::object();
  out.set("members", static_cast<long long>(e.members));
  out.set("ranked", static_cast<long long>(e.ranked));
  out.set("added", run_changes_json(e.added));
  out.set("removed", run_changes_json(e.removed));
  Json ranks = Json::array(), levels = Json::array(), attestations = Json::array(), reruns = Json::array();
  for (const GroupRankChange& r : e.ranks) {
    Json j = run_member(r.run, r.implementation);
    j.set("from", rank_json(r.from));
    j.set("to", rank_json(r.to));
    ranks.push_back(std::move(j));
  }
  for (const GroupLevelChange& l : e.levels) {
    Json j = run_member(l.run, l.implementation);
    j.set("from", level_json(l.from));
    j.set("to", level_json(l.to));
    j.set("evidence", l.evidence ? Json(l.evidence->str()) : Json());
    levels.push_back(std::move(j));
  }
  for (const GroupAttestationChange& a : e.attestations) {
    Json j = run_member(a.run, a.implementation);
    j.set("attestation", a.attestation.str());
    j.set("added", a.added);
    attestations.push_back(std::move(j));
  }
  for (const GroupRerunChange& r : e.reruns) {
    Json j = run_member(r.run, r.implementation);
    j.set("rerun", r.rerun.rerun.str());
    j.set("added", r.added);
    j.set("verdict", r.rerun.readable ? Json(level_name(r.rerun.verdict)) : Json());
    j.set("ratio", r.rerun.readable ? Json(r.rerun.ratio) : Json());
    reruns.push_back(std::move(j));
  }
  out.set("ranks", std::move(ranks));
  out.set("levels", std::move(levels));
  out.set("attestations", std::move(attestations));
  out.set("reruns", std::move(reruns));
  return out;
}

// The group --group names, as rank resolves its REF; errors say which option
// was at fault and what it takes.
GroupRef resolve_group_option(const Snapshot& snap, const std::string& ref) {
  try {
    return resolve_group_ref(snap, ref);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kNotFound)
      throw NotFound("--group \"" + ref +
                     "\": no comparison group or run in the store matches; expected a group key as kistore groups "
                     "or rank print it (a full digest or 8+ hex digits), or a run");
    std::string message = e.what();
    if (message.rfind("REF ", 0) == 0) message.erase(0, 4);
    throw Error(e.code(), "--group " + message);
  }
}

std::vector<Shown> group_log(const Store& store, const GroupRef& group, const LogQuery& q) {
  std::vector<Shown> out;
  for (GroupStoryEntry& e : read_group_story(store, group.key, GroupStoryQuery{q.limit, q.op})) {
    std::vector<std::string> changes = group_story_texts(e, human_value);
    Json detail = group_detail(e);
    out.push_back(Shown{std::move(e.commit), std::move(changes), std::move(detail)});
  }
  return out;
}

std::vector<Shown> plain_log(const Store& store, const LogQuery& q) {
  std::vector<Shown> out;
  for (LogEntry& e : read_history(store, q)) {
    std::vector<std::string> changes;
    for (const PathChange& c : e.changes) changes.push_back(story_change_text(c));
    out.push_back(Shown{std::move(e), std::move(changes)});
  }
  return out;
}

// ---- the three forms of output ----

std::string tsv_text(const std::vector<Shown>& items, const SignatureJudge& judge) {
  Table table({"commit", "parents", "time", "author", "op", "signed", "summary", "changes"});
  for (const Shown& s : items) {
    const LogEntry& e = s.entry;
    std::string parents, changes;
    for (const auto& p : e.parents) parents += (parents.empty() ? "" : " ") + p;
    for (const std::string& c : s.changes) changes += (changes.empty() ? "" : "; ") + c;
    table.add({e.id, parents, iso_time(e.time, e.offset_minutes), e.author, e.op, judge(e).text(), e.summary, changes});
  }
  return table.tsv();
}

Json log_json(std::vector<Shown>& items, const SignatureJudge& judge, bool with_changes) {
  Json list = Json::array();
  for (Shown& s : items) {
    const LogEntry& e = s.entry;
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
    if (with_changes) {
      Json changes = Json::array();
      for (const std::string& c : s.changes) changes.push_back(c);
      j.set("changes", std::move(changes));
    }
    for (auto& [name, value] : s.detail.as_object()) j.set(name, std::move(value));
    list.push_back(std::move(j));
  }
  Json out = Json::object();
  out.set("entries", std::move(list));
  return out;
}

std::string log_text(const std::vector<Shown>& items, const SignatureJudge& judge) {
  std::string text;
  for (const Shown& s : items) {
    const LogEntry& e = s.entry;
    text += "commit " + e.id + (e.parents.size() > 1 ? " (merge)" : "") + "\n";
    text += "Date:   " + iso_time(e.time, e.offset_minutes) + "\n";
    text += "Author: " + shown(e.author) + "\n";
    text += "Op:     " + (e.op.empty() ? std::string("(none)") : shown(e.op)) + "\n";
    text += "Signed: " + shown_message(judge(e).text()) + "\n";
    text += "\n    " + shown(e.summary) + "\n";
    for (const std::string& c : s.changes) text += "    " + shown(c) + "\n";
    text += "\n";
  }
  return text;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("log", "Show the audit history, newest first");
  app->footer(
      "Every change to a store is one commit. For each: the commit id, time, author, operation\n"
      "(add, import, attest, rerun, merge, upgrade), who signed it and whether that signer is\n"
      "trusted, and its summary. --run REF tells one run's whole story: when and by whom it was\n"
      "added, every level change, every attestation and rerun, each with its commit id, under\n"
      "the run's level now (as rank and verify give it under this store's trust list).\n"
      "--group KEY tells a comparison group's story: every commit that changed it, with the runs\n"
      "it added (implementation, median, level, rank), the ranks it moved (\"rank 3 → 4\": the\n"
      "group ranked as of that commit and of its parent), its members' level changes with the\n"
      "rerun that justified them, and their attestations. KEY is a group key as `kistore groups`\n"
      "and `rank` print it (a full digest or 8+ hex digits), or a run, meaning that run's group.\n"
      "For scripts: --format tsv (a header line, then one line per commit, its fields separated\n"
      "by tabs) or --json.");
  struct Opts {
    std::string run, group, op;
    int n = -1;  // -1: no -n, every entry
  };
  auto o = std::make_shared<Opts>();
  app->add_option("--run", o->run, "Only the history of this run (digest or 8+ hex prefix)")->type_name("REF");
  app->add_option("--group", o->group, "Only the history of this comparison group (its key or one of its runs)")
      ->type_name("KEY");
  app->add_option("--op", o->op, "Only commits of this operation")
      ->choices({"add", "import", "attest", "rerun", "merge", "upgrade", "compact"});
  app->add_option("-n", o->n, "At most N entries (as git log -n: 0 shows none)")->type_name("N")->range(0, 1e9);
  add_format_option(app, g, "commit, parents, time, author, op, signed, summary, changes (with --run or --group)");
  return Command{app, [&g, o]() -> int {
    if (!o->run.empty() && !o->group.empty())
      throw InvalidInput("--run and --group: expected one of them, found both (a run's story or a group's)");
    Store store = open_store(g);
    LogQuery q;
    q.limit = o->n > 0 ? static_cast<std::size_t>(o->n) : 0;
    q.op = o->op;
    std::optional<GroupRef> group;
    // With --run, the run's level now, as every reader gives it
    // (level_standing): the story below is how it got there.
    std::optional<std::pair<Digest, LevelStanding>> run_level_now;
    if (!o->run.empty()) {
      Snapshot snap = store.snapshot();
      Digest run = snap.resolve(o->run);
      q.paths = run_story_paths(run);
      q.with_changes = true;
      Document doc = snap.document(run, false);
      if (doc.kind() == Kind::kRun) {
        AuditOnDemand audit(store, load_trust(store));
        run_level_now.emplace(run, level_standing(snap, audit, doc));
      }
    } else if (!o->group.empty()) {
      group = resolve_group_option(store.snapshot(), o->group);
    }
    std::vector<Shown> items;
    if (o->n != 0) items = group ? group_log(store, *group, q) : plain_log(store, q);
    SignatureJudge judge = signature_judge(load_trust(store));
    ListFormat format = list_format(g);
    std::string text;
    if (format == ListFormat::kJson) {
      Json out = log_json(items, judge, q.with_changes || group);
      if (group) out.set("group", group->key.str());
      if (run_level_now) {
        out.set("run", run_level_now->first.str());
        set_level_json(out, run_level_now->second);
      }
      print_json(out);
      return kOk;
    }
    if (format == ListFormat::kTsv) text = tsv_text(items, judge);
    else
      text = (group ? "group " + group->key.str() + "\n\n" : std::string()) +
             (run_level_now ? "run " + run_level_now->first.str() + "\nlevel: " +
                                  shown(level_text(run_level_now->second)) + "\n\n"
                            : std::string()) +
             log_text(items, judge);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
