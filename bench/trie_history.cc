// Format 3's T, measured: writes the index (refs/) of a store of synthetic
// runs as a `git fast-import` stream, one commit per add, with the trie of
// refs/index_trie.h at a given T. bench/trie_t.sh feeds it to git for each T
// and measures the repository (docs/benchmarks.md "Format 3's T").
//
//   bench_trie_history T RUNS SINGLES BATCH > stream
//
// The history: SINGLES commits of one run each, then commits of BATCH runs
// until RUNS, then one last commit of one run (the add whose cost is
// measured). Each run brings the lines a run of bench/gen.py's data brings:
// its metadata, its group line and its source line, and the first run of a
// group also its workload's metadata (groups of about 8 runs, RUNS/8 of
// them, as gen.py draws them). Deterministic: the same arguments give the
// same stream. Only refs/ is written: the objects are the same at every T.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "objects/digest.h"
#include "objects/json.h"
#include "refs/index_lines.h"
#include "refs/index_trie.h"

namespace {

using namespace kistore;

const char* const kGpus[] = {"nvidia-a100-sxm4-80gb", "nvidia-h100-80gb-hbm3", "amd-instinct-mi300x",
                             "nvidia-geforce-rtx-4090", "nvidia-l40s", "nvidia-b200"};
const char* const kKernels[] = {"geglu", "swiglu", "rms_norm", "layer_norm", "cross_entropy", "rope", "fused_linear_ce"};

// One family's lines (sorted by key) and the files they make.
struct FamilyState {
  std::vector<KeyedLine> lines;
  TrieFiles files;
  std::set<char> touched;  // first digits changed since the last commit
};

void add_line(FamilyState& f, const IndexFact& fact) {
  KeyedLine line{fact_key(fact), render_line(fact)};
  auto at = std::lower_bound(f.lines.begin(), f.lines.end(), line.key,
                             [](const KeyedLine& l, const std::string& k) { return l.key < k; });
  if (at != f.lines.end() && at->key == line.key) return;
  f.touched.insert(line.key[0]);
  f.lines.insert(at, std::move(line));
}

// The commands of one commit for one family: its files under each touched
// first digit rebuilt (a first digit's files depend on its lines alone),
// removals before writes so that a file turned folder, or back, is replaced.
void emit_changes(const std::string& dir, std::size_t t, FamilyState& f, std::string& removals, std::string& writes) {
  for (char digit : f.touched) {
    std::vector<KeyedLine> part;
    auto lo = std::lower_bound(f.lines.begin(), f.lines.end(), std::string(1, digit),
                               [](const KeyedLine& l, const std::string& k) { return l.key < k; });
    for (auto it = lo; it != f.lines.end() && it->key[0] == digit; ++it) part.push_back(*it);
    const TrieFiles built = build_trie(part, t);
    const std::string start(1, digit);
    for (auto it = f.files.lower_bound(start); it != f.files.end() && it->first[0] == digit;) {
      if (!built.contains(it->first)) {
        removals += "D " + dir + it->first + "\n";
        it = f.files.erase(it);
      } else {
        ++it;
      }
    }
    for (const auto& [path, bytes] : built) {
      auto [it, added] = f.files.try_emplace(path, bytes);
      if (!added && it->second == bytes) continue;
      it->second = bytes;
      writes += "M 100644 inline " + dir + path + "\ndata " + std::to_string(bytes.size()) + "\n" + bytes + "\n";
    }
  }
  f.touched.clear();
}

struct Store {
  FamilyState metadata, groups, sources;
  std::set<std::uint64_t> workloads;
  std::mt19937_64 rng{20261203};
  std::size_t groups_total;
  std::size_t next_run = 0;
  std::size_t commits = 0;

  void add_run() {
    const std::size_t i = next_run++;
    const std::uint64_t workload = rng() % groups_total;
    const std::string kernel = kKernels[workload % 7], gpu = kGpus[workload / 7 % 6];
    const std::string shape = "batch" + std::to_string(1 << (workload % 5 + 8)) + "-hidden" + std::to_string(workload);
    const Digest run = Digest::of("run " + std::to_string(i));
    const Digest key = Digest::of("group " + std::to_string(workload));
    Json labels = Json::object();
    labels.set("liger_version", "0.6.3");
    Json meta = Json::object();
    meta.set("labels", labels);
    meta.set("name", "liger-" + kernel + "-forward-speed-liger-" + gpu + "-" + shape + "-" + std::to_string(i));
    meta.set("title", kernel + " (benchmark) \u00b7 liger \u00b7 forward \u00b7 speed");
    add_line(metadata, MetadataFact{run, canonical(meta)});
    if (workloads.insert(workload).second) {
      Json wmeta = Json::object();
      wmeta.set("name", "liger-" + kernel + "-" + shape + "-fp16");
      wmeta.set("title", kernel + " (benchmark) \u00b7 " + shape + "-fp16");
      add_line(metadata, MetadataFact{Digest::of("workload " + std::to_string(workload)), canonical(wmeta)});
    }
    const double value = std::uniform_real_distribution<double>(0.01, 40.0)(rng);
    add_line(groups, GroupFact{key, run, Measurement{"latency", "median", "ms", value}});
    add_line(sources, SourceFact{"liger-kernel-bench",
                                 kernel + "/forward/speed/liger/" + gpu + "/" + shape + "/" + std::to_string(i), run});
  }

  void commit(std::size_t t, std::size_t count) {
    for (std::size_t k = 0; k < count; ++k) add_run();
    std::string removals, writes;
    emit_changes("refs/metadata/", t, metadata, removals, writes);
    emit_changes("refs/groups/", t, groups, removals, writes);
    emit_changes("refs/sources/", t, sources, removals, writes);
    ++commits;
    const std::string message = "add: " + std::to_string(count) + " runs\n\nKistore-Op: add\n";
    std::string out = "commit refs/heads/main\nmark :" + std::to_string(commits) +
                      "\ncommitter kistore <kistore@localhost> " + std::to_string(1700000000 + commits) +
                      " +0000\ndata " + std::to_string(message.size()) + "\n" + message;
    if (commits > 1) out += "from :" + std::to_string(commits - 1) + "\n";
    out += removals + writes + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: bench_trie_history T RUNS SINGLES BATCH > stream\n";
    return 2;
  }
  const std::size_t t = std::strtoul(argv[1], nullptr, 10), runs = std::strtoul(argv[2], nullptr, 10),
                    singles = std::strtoul(argv[3], nullptr, 10), batch = std::strtoul(argv[4], nullptr, 10);
  if (t == 0 || batch == 0 || singles > runs) {
    std::cerr << "bench_trie_history: T and BATCH must be positive, SINGLES at most RUNS\n";
    return 2;
  }
  Store store;
  store.groups_total = std::max<std::size_t>(1, (runs + 1) / 8);
  for (std::size_t i = 0; i < singles; ++i) store.commit(t, 1);
  for (std::size_t done = singles; done < runs; done += batch) store.commit(t, std::min(batch, runs - done));
  store.commit(t, 1);
  std::cerr << "commits " << store.commits << " runs " << store.next_run << " files "
            << store.metadata.files.size() + store.groups.files.size() + store.sources.files.size() << "\n";
  return 0;
}
