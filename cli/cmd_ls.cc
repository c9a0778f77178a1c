#include <cctype>
#include <cstdio>

#include "cli/common.h"
#include "cli/output/describe.h"
#include "cli/table.h"
#include "cli/output/terminal.h"
#include "refs/level.h"
#include "store/history/level_audit.h"
#include "store/query/query.h"
#include "store/history/trust.h"

namespace kistore::cli {
namespace {

std::string title_of(const Document& d) {
  if (d.metadata()) {
    for (const char* key : {"title", "name"})
      if (const Json* v = d.metadata()->find(key); v && v->is_string()) return v->as_string();
  }
  return "";
}

// --kind takes a kind's name as documents spell it (BenchmarkRun) or its role
// as people say it (run), in any case.
std::optional<Kind> kind_named(const std::string& word) {
  auto lower = [](std::string_view text) {
    std::string out;
    for (char c : text) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  for (Kind k : {Kind::kRun, Kind::kProtocol, Kind::kEnvironment, Kind::kWorkload, Kind::kImplementation,
                 Kind::kAttestation})
    if (lower(word) == lower(kind_name(k)) || lower(word) == role_name(k)) return k;
  return std::nullopt;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("ls", "List the documents in the store");
  app->footer(
      "Prints one line per document: <digest> <kind> <title>. --kind keeps one kind\n"
      "(BenchmarkRun, BenchmarkProtocol, ExecutionEnvironment, Workload, Implementation,\n"
      "Attestation, or by its role: run, protocol, environment, workload, implementation,\n"
      "attestation); --level keeps runs at exactly that evidence level (disputed, reported,\n"
      "source-native, reproduced): the level the signed history gives under the store's trust\n"
      "list, as verify computes it. A stored level entry that the trust list no longer justifies\n"
      "is shown beside it: [reported (stored: reproduced, not justified by the trust list:\n"
      "signer not trusted)].\n"
      "For scripts: --format tsv (a header line, then digest, kind, title and level separated by tabs)\n"
      "or --json.");
  struct Opts {
    std::string kind, level;
  };
  auto o = std::make_shared<Opts>();
  app->add_option("--kind", o->kind, "Only documents of this kind")->type_name("KIND");
  app->add_option("--level", o->level, "Only runs at this evidence level")->type_name("LEVEL");
  add_format_option(app, g, "digest, kind, title, level (with --level)");
  return Command{app, [&g, o]() -> int {
    std::optional<Kind> kind;
    if (!o->kind.empty() && !(kind = kind_named(o->kind)))
      throw InvalidInput("--kind: expected one of " + known_kinds() + " (or run, protocol, environment, workload, "
                         "implementation, attestation), found \"" + o->kind + "\"");
    std::optional<Level> level;
    if (!o->level.empty() && !(level = parse_level(o->level)))
      throw InvalidInput("--level: expected one of " + std::string(level_names()) + ", found \"" + o->level + "\"");
    if (level && kind && *kind != Kind::kRun)
      throw InvalidInput("--level applies to runs only; --kind " + o->kind + " has no level");
    Store store = open_store_for_reading(g);
    Snapshot snap = store.snapshot();
    std::vector<Digest> digests = level ? runs_at_level(snap, *level) : snap.object_digests();
    if (level) {
      // A run stored at reproduced or disputed whose entry the trust list no
      // longer justifies stands at another level (level_standing): the
      // candidates for any level include them, and the level decides.
      for (Level other : {Level::kReproduced, Level::kDisputed})
        if (other != *level)
          for (const Digest& d : runs_at_level(snap, other)) digests.push_back(d);
    }
    AuditOnDemand audit(store, load_trust(store));
    ListFormat format = list_format(g);
    Json list = Json::array();
    std::string text;
    Table tsv({"digest", "kind", "title", "level"});
    for (const Digest& d : digests) {
      Document doc = snap.document(d);
      if (kind && doc.kind() != *kind) continue;
      // Listed by level: a level no valid rerun commit gives is marked so.
      std::optional<LevelStanding> standing;
      if (level && doc.kind() == Kind::kRun) {
        standing = level_standing(snap, audit, doc);
        if (standing->level != *level) continue;
      }
      if (format == ListFormat::kTsv) {
        tsv.add({d.str(), std::string(kind_name(doc.kind())), title_of(doc), standing ? level_text(*standing) : ""});
      } else if (format == ListFormat::kJson) {
        Json item = Json::object();
        item.set("digest", d.str());
        item.set("kind", std::string(kind_name(doc.kind())));
        item.set("title", title_of(doc));
        if (standing && standing->checked) set_level_json(item, *standing);
        list.push_back(std::move(item));
      } else {
        text += d.str() + " " + std::string(kind_name(doc.kind())) + " " + shown(title_of(doc));
        if (standing && !standing->justified) text += "  [" + shown(level_text(*standing)) + "]";
        text += "\n";
      }
    }
    if (format == ListFormat::kTsv) text = tsv.tsv();
    if (format == ListFormat::kJson) {
      Json out = Json::object();
      out.set("documents", std::move(list));
      print_json(out);
      return kOk;
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
