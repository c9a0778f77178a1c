#include "cli/output/describe.h"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <utility>
#include <vector>

#include "objects/error.h"
#include "objects/shown_text.h"
#include "refs/compare.h"
#include "refs/index.h"
#include "store/history/level_audit.h"
#include "store/query/query.h"

namespace kistore::cli {
namespace {

struct Evidence {
  LevelStanding standing;
  int rank = 0;
  std::size_t of = 0;      // ranked members of the group
  std::string unrankable;  // why the run has no rank, when it has none
  Digest group = Digest::of("");
  std::size_t attestations = 0;
};

Evidence evidence_of(const Snapshot& snap, AuditOnDemand& audit, const Document& run) {
  Evidence e;
  e.standing = level_standing(snap, audit, run);
  e.group = comparison_key(run.spec());
  auto ranked = rank_group(group_members(snap, e.group));
  e.of = ranked_count(ranked);
  for (const RankedMember& r : ranked)
    if (r.member.run == run.digest()) e.rank = r.rank, e.unrankable = r.unrankable;
  e.attestations = attestations_of(snap, run.digest()).size();
  return e;
}

// An attestation indexed under a run, as show prints it: its type, author and
// body (a note, or "reproduction <digest>"). One that cannot be read is shown
// by its digest and "(unreadable; see kistore verify)".
struct AttestationLine {
  Digest digest;
  std::string type, author, body;
};

// `text` on one line: a line break or other control character in what a
// document says (an attestation's note) becomes a space, so that it can never
// print a line of its own ("level: reproduced") in show's evidence.
std::string one_line(std::string text) {
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return text;
}

std::vector<AttestationLine> attestation_lines(const Snapshot& snap, const Digest& run) {
  std::vector<AttestationLine> lines;
  for (const Digest& d : attestations_of(snap, run)) {
    AttestationLine line{d, "?", "?", "(unreadable; see `kistore verify`)"};
    try {
      Document doc = snap.document(d, false);
      auto text = [&](const char* member) {
        const Json* v = doc.spec().find(member);
        return v && v->is_string() ? v->as_string() : std::string("?");
      };
      line.type = text("type"), line.author = text("author"), line.body = text("body");
    } catch (const Error&) {
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace

Json stored_bundle(const Snapshot& snap, const Document& run) {
  Json out = Json::object();
  out.set("run", run.with_metadata());
  for (const char* role : {"protocol", "environment", "workload", "implementation"}) {
    auto d = run_reference(run, role);
    if (d && snap.has_object(*d)) out.set(role, snap.document(*d).with_metadata());
  }
  return out;
}

std::string stored_text(const LevelStanding& standing) {
  if (standing.justified) return {};
  return "stored: " + std::string(level_name(standing.stored)) + ", not justified by the trust list" +
         (standing.why.empty() ? "" : ": " + standing.why);
}

std::string level_text(const LevelStanding& standing) {
  std::string out(level_name(standing.level));
  if (!standing.justified) out += " (" + stored_text(standing) + ")";
  return out;
}

void set_level_json(Json& out, const LevelStanding& standing) {
  out.set("level", std::string(level_name(standing.level)));
  if (!standing.checked) return;
  out.set("verified", standing.justified);
  if (standing.justified) return;
  out.set("storedLevel", std::string(level_name(standing.stored)));
  out.set("why", standing.why);
}

Json reruns_json(const std::vector<RerunInfo>& reruns) {
  Json list = Json::array();
  for (const RerunInfo& r : reruns) {
    Json m = Json::object();
    m.set("run", r.rerun.str());
    m.set("level", r.readable ? Json(std::string(level_name(r.verdict))) : Json());
    m.set("ratio", r.readable ? Json(r.ratio) : Json());
    list.push_back(std::move(m));
  }
  return list;
}

std::string rerun_text(const RerunInfo& rerun) {
  if (!rerun.readable) return "rerun (unreadable entry; see `kistore verify`)  " + rerun.rerun.hex().substr(0, 12);
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "x%.3f", rerun.ratio);
  std::string level(level_name(rerun.verdict));
  level.resize(std::max<std::size_t>(level.size(), 10), ' ');
  return "rerun " + level + "  " + ratio + "  " + rerun.rerun.hex().substr(0, 12);
}

Json run_evidence_json(const Snapshot& snap, AuditOnDemand& audit, const Document& run) {
  Evidence e = evidence_of(snap, audit, run);
  Json out = Json::object();
  set_level_json(out, e.standing);
  out.set("rank", e.rank ? Json(e.rank) : Json());
  out.set("of", static_cast<long long>(e.of));
  if (!e.rank && !e.unrankable.empty()) out.set("reason", e.unrankable);
  out.set("group", e.group.str());
  out.set("attestations", static_cast<long long>(e.attestations));
  Json attestations = Json::array();
  for (const AttestationLine& a : attestation_lines(snap, run.digest())) {
    Json one = Json::object();
    one.set("digest", a.digest.str());
    one.set("type", a.type);
    one.set("author", a.author);
    one.set("body", a.body);
    attestations.push_back(std::move(one));
  }
  out.set("attestation_list", std::move(attestations));
  out.set("reruns", reruns_json(reruns_of(snap, run.digest())));
  return out;
}

std::string run_evidence_text(const Snapshot& snap, AuditOnDemand& audit, const Document& run) {
  Evidence e = evidence_of(snap, audit, run);
  std::string out = "level: " + level_text(e.standing) + "\n";
  out += "rank: " + (e.rank ? std::to_string(e.rank) : std::string("unranked")) + " of " +
         std::to_string(e.of) + " in group " + e.group.str();
  if (!e.rank && !e.unrankable.empty()) out += " (unrankable: " + e.unrankable + ")";
  out += "\n";
  out += "attestations: " + std::to_string(e.attestations) + "\n";
  for (const AttestationLine& a : attestation_lines(snap, run.digest()))
    out += one_line("attestation " + a.type + "  " + a.digest.hex().substr(0, 12) + "  " + a.author + ": " +
                    cut_text(a.body)) +
           "\n";
  for (const RerunInfo& r : reruns_of(snap, run.digest())) out += rerun_text(r) + "\n";
  return out;
}

}  // namespace kistore::cli

namespace kistore::cli {

std::string human_value(double value, const std::string& unit) {
  char buf[64];
  if (unit == "ns") {
    if (value >= 1e6) std::snprintf(buf, sizeof buf, "%.3f ms", value / 1e6);
    else if (value >= 1e3) std::snprintf(buf, sizeof buf, "%.3f us", value / 1e3);
    else std::snprintf(buf, sizeof buf, "%.0f ns", value);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.4g %s", value, unit.c_str());
  return buf;
}

std::optional<std::pair<double, double>> spread_values(const Document& run, const std::string& unit) {
  std::optional<Spread> s = primary_spread(run.spec(), unit);
  if (!s) return std::nullopt;
  return std::make_pair(s->low, s->high);
}

std::string spread_text(const Document& run, const std::string& unit) {
  auto spread = spread_values(run, unit);
  return spread ? human_value(spread->first, unit) + " - " + human_value(spread->second, unit) : "";
}

GroupLabel group_label(const Snapshot& snap, const Document& run) {
  // Only the protocol's metadata is used (its title names the timed pass).
  auto load = [&](const char* role) -> std::optional<Document> {
    auto d = run_reference(run, role);
    if (!d || !snap.has_object(*d)) return std::nullopt;
    return snap.document(*d, std::string_view(role) == "protocol");
  };
  return group_label(run, load("workload"), load("environment"), load("protocol"));
}

GroupLabel group_label(const Document& run, const std::optional<Document>& workload,
                       const std::optional<Document>& environment, const std::optional<Document>& protocol) {
  GroupLabel label;
  if (const Json* native = run.spec().find("sourceNative"))
    if (const Json* b = native->find("benchmark"); b && b->is_string()) label.benchmark = cut_text(b->as_string());
  if (const auto& w = workload) {
    if (const Json* def = w->spec().find("definition"); def && def->is_string()) label.definition = cut_text(def->as_string());
    if (const Json* params = w->spec().find("parameters"); params && params->is_object()) label.parameters = cut_json(*params);
  }
  if (label.benchmark.empty()) label.benchmark = label.definition;
  if (const auto& e = environment)
    if (const Json* hw = e->spec().find("hardware"))
      if (const Json* p = hw->find("product"); p && p->is_string()) label.gpu = cut_text(p->as_string());
  if (const auto& p = protocol; p && p->metadata())
    for (const char* k : {"title", "name"})
      if (const Json* v = p->metadata()->find(k); v && v->is_string()) {
        label.pass = cut_text(v->as_string());
        break;
      }
  return label;
}

}  // namespace kistore::cli
