#include <cstdio>

#include "cli/common.h"
#include "store/query/stats.h"

namespace kistore::cli {
namespace {

std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string per_run(std::uint64_t bytes, std::uint64_t runs) {
  if (!runs) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(bytes) / static_cast<double>(runs));
  return buf;
}

double ratio(std::uint64_t content, std::uint64_t stored) {
  return stored ? static_cast<double>(content) / static_cast<double>(stored) : 0.0;
}

// bytes / runs, or null for a store without runs.
Json per_run_json(std::uint64_t bytes, std::uint64_t runs) {
  if (!runs) return Json();
  return Json(static_cast<double>(bytes) / static_cast<double>(runs));
}

Json part_json(const StoreStats::Part& p, std::uint64_t runs) {
  Json j = Json::object();
  j.set("count", static_cast<long long>(p.count));
  j.set("bytes", static_cast<long long>(p.bytes));
  j.set("bytes_per_run", per_run_json(p.bytes, runs));
  return j;
}

StoreStats::Part sum(std::initializer_list<StoreStats::Part> parts) {
  StoreStats::Part total;
  for (const StoreStats::Part& p : parts) total.count += p.count, total.bytes += p.bytes;
  return total;
}

int print_stats(const Globals& g, const StoreStats& s) {
  const StoreStats::Part trees = sum({s.object_trees, s.index_trees, s.other_trees});
  const StoreStats::Part total = sum({s.objects, s.dictionaries, s.metadata, s.index, trees});
  if (g.json) {
    Json out = Json::object();
    out.set("runs", static_cast<long long>(s.runs));
    out.set("commits", static_cast<long long>(s.commits));
    Json objects = part_json(s.objects, s.runs);
    objects.set("content_bytes", static_cast<long long>(s.content_bytes));
    objects.set("with_dictionary", static_cast<long long>(s.frames_with_dictionary));
    out.set("objects", std::move(objects));
    Json dictionaries = part_json(s.dictionaries, s.runs);
    Json::Array ids;
    for (std::uint32_t id : s.dictionary_ids) ids.emplace_back(static_cast<double>(id));
    dictionaries.set("ids", Json(std::move(ids)));
    out.set("dictionaries", std::move(dictionaries));
    out.set("metadata", part_json(s.metadata, s.runs));
    out.set("index", part_json(s.index, s.runs));
    Json tree_json = part_json(trees, s.runs);
    tree_json.set("objects", part_json(s.object_trees, s.runs));
    tree_json.set("index", part_json(s.index_trees, s.runs));
    tree_json.set("other", part_json(s.other_trees, s.runs));
    out.set("trees", std::move(tree_json));
    out.set("total", part_json(total, s.runs));
    Json disk = Json::object();
    disk.set("files", static_cast<long long>(s.disk_files));
    disk.set("bytes", static_cast<long long>(s.disk_bytes));
    disk.set("bytes_per_run", per_run_json(s.disk_bytes, s.runs));
    out.set("disk", std::move(disk));
    out.set("compression_ratio", Json(ratio(s.content_bytes, s.objects.bytes)));
    print_json(out);
    return kOk;
  }
  std::string text;
  auto row = [&](const std::string& what, const StoreStats::Part& p) {
    char line[160];
    std::snprintf(line, sizeof line, "%-22s %12s %16s %12s\n", what.c_str(), grouped(p.count).c_str(),
                  grouped(p.bytes).c_str(), per_run(p.bytes, s.runs).c_str());
    text += line;
  };
  text += grouped(s.runs) + " runs, " + grouped(s.commits) + " commits\n";
  char head[160];
  std::snprintf(head, sizeof head, "%-22s %12s %16s %12s\n", "", "git objects", "bytes", "bytes/run");
  text += head;
  row("objects (zstd frames)", s.objects);
  row("dictionaries", s.dictionaries);
  row("metadata", s.metadata);
  row("index (refs/)", s.index);
  row("trees", trees);
  row("  below objects/", s.object_trees);
  row("  below refs/", s.index_trees);
  row("  other", s.other_trees);
  row("head tree, all told", total);
  row("on disk (objects/)", {s.disk_files, s.disk_bytes});
  char line[200];
  std::snprintf(line, sizeof line, "compression: %s bytes of documents in %s bytes of frames (%.2fx); %s of %s frames name a dictionary",
                grouped(s.content_bytes).c_str(), grouped(s.objects.bytes).c_str(), ratio(s.content_bytes, s.objects.bytes),
                grouped(s.frames_with_dictionary).c_str(), grouped(s.objects.count).c_str());
  text += line;
  std::string ids;
  for (std::uint32_t id : s.dictionary_ids) ids += (ids.empty() ? " (dictionaries/" : ", dictionaries/") + std::to_string(id);
  text += ids.empty() ? "\n" : ids + ")\n";
  if (!g.quiet) std::fputs(text.c_str(), stdout);
  return kOk;
}

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("stats", "Show where the store's bytes go");
  app->footer(
      "Counts the git objects of the branch's tree by part of the store: the documents' zstd\n"
      "frames (objects/), the zstd dictionaries they are compressed with (dictionaries/), their\n"
      "metadata (refs/metadata/), the rest of the index (refs/) and the trees that hold them, each\n"
      "object once, in bytes and bytes per run; then what the repository's objects/ folder holds\n"
      "on disk (every pack and loose object: all of history), and how well the frames compress.\n"
      "Read-only. --json prints the same figures as one JSON document.\n\n"
      "Example: kistore stats --json");
  return Command{app, [&g]() -> int {
    Store store = open_store(g);
    return print_stats(g, store_stats(store));
  }};
});

}  // namespace
}  // namespace kistore::cli
