#include "store/write/rerun.h"

#include <cmath>
#include <cstdio>
#include <variant>
#include <vector>

#include "objects/error.h"
#include "refs/index.h"
#include "refs/layout.h"
#include "store/write/add.h"
#include "store/query/query.h"
#include "store/history/trust.h"

#include <ctime>

namespace kistore {
namespace {

// An unknown RUN is bad input here (exit 2): nothing can be rerun against it.
Document resolve_run(const Snapshot& snap, std::string_view run_ref) {
  Digest digest = [&] {
    try {
      return snap.resolve(run_ref);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kNotFound) throw InvalidInput(e.what());
      throw;
    }
  }();
  Document run = snap.document(digest);
  if (run.kind() != Kind::kRun)
    throw InvalidInput("RUN \"" + std::string(run_ref) + "\": expected a run, found a " +
                       std::string(kind_name(run.kind())));
  return run;
}

// The rerun's documents, as add_documents takes them, and where in the input
// its run document sits ("/run" in a bundle).
struct RerunDocuments {
  std::vector<AddedDocument> docs;
  const Document* run = nullptr;
  std::string pointer;
};

RerunDocuments rerun_documents(const InputItem& item) {
  RerunDocuments out;
  const std::string& file = item.where.source;
  if (auto* b = std::get_if<Bundle>(&item.value)) {
    for (const Document& d : b->documents())
      out.docs.push_back({&d, file, item.where.pointer + "/" + std::string(role_name(d.kind()))});
    out.run = &b->run();
    out.pointer = item.where.pointer + "/run";
    return out;
  }
  const Document& d = std::get<Document>(item.value);
  if (d.kind() != Kind::kRun)
    throw InvalidInput(file + ": " + item.where.pointer + "/kind: expected \"BenchmarkRun\" (or a bundle), found \"" +
                       std::string(kind_name(d.kind())) + "\"");
  out.docs.push_back({&d, file, item.where.pointer});
  out.run = &d;
  out.pointer = item.where.pointer;
  return out;
}

// The relative difference of the rerun's primary value from the run's, once
// the rerun is shown to be a controlled rerun of the run.
double checked_difference(const Document& run, const Document& rerun, const std::string& file,
                          const std::string& pointer) {
  if (rerun.digest() == run.digest())
    throw InvalidInput(file + ": the rerun is RUN itself (" + run.digest().str() + "); a rerun is a new measurement");
  Digest key_run = comparison_key(run.spec()), key_rerun = comparison_key(rerun.spec());
  if (key_run != key_rerun)
    throw InvalidInput(file + ": " + pointer + "/spec: expected a rerun in RUN's comparison group " + key_run.str() +
                       " (same protocol, environment and workload), found group " + key_rerun.str());
  auto impl_run = run_reference(run, "implementation"), impl_rerun = run_reference(rerun, "implementation");
  if (impl_run != impl_rerun)
    throw InvalidInput(file + ": " + pointer + "/spec/implementationDigest: expected RUN's implementation " +
                       impl_run->str() + " (a controlled rerun times the same code), found " + impl_rerun->str());
  auto original = primary_measurement(run.spec()), measured = primary_measurement(rerun.spec());
  if (!original || original->value == 0)
    throw InvalidInput("RUN " + run.digest().str() + " has no primary measurement to reproduce");
  if (!measured || measured->unit != original->unit)
    throw InvalidInput(file + ": " + pointer + "/spec: expected a primary measurement in " + original->unit +
                       ", found " + (measured ? measured->unit : std::string("none")));
  return std::fabs(measured->value - original->value) / std::fabs(original->value);
}

void check_controller(const Store& store, const RerunOptions& options) {
  if (!options.key)
    throw InvalidInput("rerun: a controlled rerun must be signed: pass --sign KEY or set `kistore config sign.key PATH`");
  // Judged now: the commit about to be made is signed now, and readers judge
  // its key at its committer time.
  const std::vector<AllowedSigner> trust = load_trust(store);
  const SigningTime now = signing_time(static_cast<std::int64_t>(std::time(nullptr)));
  SignerLookup found = lookup_signer(trust, options.key->public_key(), "git", &now);
  if (!found.signer)
    throw InvalidInput(options.key_source + ": key " + options.key->public_key().fingerprint() +
                       " is not a controller of this store" + (found.refused.empty() ? "" : " (" + found.refused + ")") +
                       "; add it with `kistore trust add PRINCIPAL KEY.pub`");
}

std::string commit_summary(const RerunResult& r, double tolerance) {
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.2f%%", r.difference * 100);
  return "rerun: " + r.run.str() + " " + std::string(level_name(r.level)) + " (" + pct + " off, tolerance " +
         std::to_string(static_cast<int>(std::lround(tolerance * 100))) + "%)";
}

}  // namespace

std::optional<std::string> tolerance_problem(double tolerance) {
  if (std::isfinite(tolerance) && tolerance > 0 && tolerance <= 1) return std::nullopt;
  char found[64];
  std::snprintf(found, sizeof found, "%g", tolerance);
  return std::string("expected a finite number greater than 0 and at most 1 (0.10 is 10 %), found ") + found;
}

RerunResult record_rerun(Store& store, std::string_view run_ref, const InputItem& item, const RerunOptions& options) {
  if (auto problem = tolerance_problem(options.tolerance)) throw InvalidInput("rerun tolerance: " + *problem);
  check_controller(store, options);
  Snapshot snap = store.snapshot();
  Document run = resolve_run(snap, run_ref);
  RerunDocuments rerun = rerun_documents(item);
  double difference = checked_difference(run, *rerun.run, item.where.source, rerun.pointer);
  if (snap.has_object(rerun.run->digest()))
    throw InvalidInput(item.where.source + ": " + rerun.pointer + ": the rerun " + rerun.run->digest().str() +
                       " is already in the store; a controlled rerun is a new measurement, added by `kistore rerun`");
  const double ratio = *rerun_ratio(run.spec(), rerun.run->spec());  // checked_difference: same unit, not 0
  const Digest rerun_key = comparison_key(rerun.run->spec());
  RerunResult result{run.digest(), rerun.run->digest(),
                     difference <= options.tolerance ? Level::kReproduced : Level::kDisputed, difference,
                     std::nullopt};

  AddOptions opts;
  opts.op = "rerun";
  opts.inputs = {item.where.source};
  opts.summary = commit_summary(result, options.tolerance);
  opts.commit_without_new_documents = true;
  opts.commit.author = options.author;
  opts.commit.time = options.time;
  std::shared_ptr<const SshPrivateKey> key = options.key;
  opts.commit.sign = [key](std::string_view payload) { return key->sign(payload, "git"); };
  // The level moves in the same commit, computed on the head it applies to.
  opts.also_index = [&result, ratio, rerun_key](const Snapshot&, IndexChanges& changes) {
    // Format 3: the level line (a second verdict replaces the first), the
    // rerun line, and no group line for the rerun.
    changes.unput(Family::kGroups, rerun_key.hex() + result.rerun.hex());
    changes.put(LevelFact{result.run, result.level, result.rerun});
    changes.put(RerunFact{result.run, result.rerun, result.level, ratio});
  };
  opts.also = [&result, ratio, rerun_key](const Snapshot& head, ChangeSet& change) {
    if (head.format() == Format::k3) return;  // also_index did it
    // A second verdict at the same level rewrites the entry in place: a
    // removal of the same path would drop it.
    const Format f = Format::k2;
    if (auto old = recorded_level(head, result.run); old && *old != result.level)
      change.removals.push_back(level_path(f, *old, result.run));
    change.upserts[level_path(f, result.level, result.run)] = level_entry(result.rerun);
    // The rerun is evidence about the run, not a competitor in its group.
    change.upserts.erase(group_path(f, rerun_key, result.rerun));
    change.upserts[rerun_path(result.run, result.rerun)] = rerun_entry(result.level, ratio);
  };
  result.commit = add_documents(store, rerun.docs, opts).commit;
  return result;
}

}  // namespace kistore
