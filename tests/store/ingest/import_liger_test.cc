// Liger-Kernel CSV rows -> KernelIndex bundles (store/ingest/import_liger.h).
// Reads only tests/data/ and ../shared/ beside the checkout.
#include "store/ingest/import_liger.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "objects/digest.h"
#include "objects/document.h"
#include "objects/error.h"
#include "objects/json.h"

namespace kistore {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const std::string kSampleCsv = KISTORE_SOURCE_DIR "/tests/data/liger/sample.csv";
// The seed fixture, byte for byte (tests/data/e2e/README.md); the published
// corpus is the shared data beside the checkout (SPEC.md, data/liger).
const std::string kFixture = KISTORE_SOURCE_DIR "/tests/data/e2e/seed-run-tiled-geglu-backward.json";
const std::string kCorpusDir = KISTORE_SOURCE_DIR "/../shared/data/liger";

std::vector<LigerRow> sample_rows() {
  return parse_liger_csv(read_text(kSampleCsv), "sample.csv");
}

const LigerRow& row_at(const std::vector<LigerRow>& rows, std::size_t line) {
  for (const auto& r : rows)
    if (r.line == line) return r;
  FAIL("no row on line " << line);
  return rows.front();
}

const Json& member(const Json& j, std::string_view name) {
  const Json* m = j.find(name);
  INFO("member " << name);
  REQUIRE(m != nullptr);
  return *m;
}

const Json& spec_of(const Json& bundle, std::string_view role) {
  return member(member(bundle, role), "spec");
}

std::string body_canonical(const Json& doc) {
  Json body = doc;
  body.erase("metadata");
  return canonical(body);
}

std::string digest_of(const Json& doc) { return Digest::of(body_canonical(doc)).str(); }

std::string str(const Json& bundle, std::string_view role, std::string_view name) {
  return member(spec_of(bundle, role), name).as_string();
}

std::string external_id(const Json& bundle) {
  return member(spec_of(bundle, "run"), "sourceNative").find("externalId")->as_string();
}

// The sample's rows, by line (see tests/data/liger/sample.csv).
constexpr std::size_t kFixtureLine = 3;  // tiled_geglu liger_tiled backward speed, seq 1024, RTX 4090
constexpr std::size_t kGroupLines[] = {2, 3, 4, 5};         // its 4 providers
constexpr std::size_t kMemoryGroupLines[] = {6, 7, 8, 9};   // the same, memory
constexpr std::size_t kSpeedLine = 10, kMemoryLine = 11;    // one timestamp, speed and memory

}  // namespace

TEST_CASE("liger: the seed fixture's row reproduces the fixture", "[liger]") {
  Json fixture = parse_json(read_text(kFixture), "seed-run-tiled-geglu-backward.json");
  auto rows = sample_rows();
  const LigerRow& row = row_at(rows, kFixtureLine);
  REQUIRE(row.kernel_provider == "liger_tiled");
  Json bundle = liger_bundle(row);

  const Json& run = member(bundle, "run");
  const Json& want_run = member(fixture, "run");
  CHECK(member(run, "apiVersion") == member(want_run, "apiVersion"));
  CHECK(member(run, "kind") == member(want_run, "kind"));
  for (std::string_view name : {"status", "timing", "observedAt", "measurements", "sourceNative",
                                "protocolDigest", "environmentDigest"}) {
    INFO("run.spec." << name << ": got " << pretty(member(member(run, "spec"), name)));
    CHECK(member(member(run, "spec"), name) == member(member(want_run, "spec"), name));
  }
  CHECK(member(run, "metadata") == member(want_run, "metadata"));

  for (std::string_view role : {"protocol", "environment"}) {
    INFO(role);
    CHECK(body_canonical(member(bundle, role)) == body_canonical(member(fixture, role)));
    CHECK(member(member(bundle, role), "metadata") == member(member(fixture, role), "metadata"));
  }
  CHECK(digest_of(member(bundle, "protocol")) ==
        "sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8");
  CHECK(digest_of(member(bundle, "environment")) ==
        "sha256:e2646efafa5e5fbd428b49a99b1c076c10d51654a549c4e50ec36da7662d4328");

  // The documents the fixture names only by digest are carried here, and
  // the run's references match what is carried.
  CHECK(str(bundle, "run", "protocolDigest") == digest_of(member(bundle, "protocol")));
  CHECK(str(bundle, "run", "environmentDigest") == digest_of(member(bundle, "environment")));
  CHECK(str(bundle, "run", "workloadDigest") == digest_of(member(bundle, "workload")));
  CHECK(str(bundle, "run", "implementationDigest") == digest_of(member(bundle, "implementation")));
}

TEST_CASE("liger: workload and implementation documents", "[liger]") {
  auto rows = sample_rows();
  Json bundle = liger_bundle(row_at(rows, kFixtureLine));
  const Json want_workload = parse_json(
      R"json({"definition":"GeGLU MLP (tiled benchmark)","parameters":{"bsz":2,
          "hidden_size":2048,"intermediate_size":4096,"hidden_act":"gelu_pytorch_tanh",
          "activation_type":"geglu","num_shards":4,"dtype":"torch.bfloat16","T":1024}})json",
      "want");
  CHECK(spec_of(bundle, "workload") == want_workload);
  CHECK(member(member(member(bundle, "workload"), "metadata"), "name").as_string() ==
        "liger-tiled-geglu-batch2-hidden2048-intermediate4096-seq1024-bf16");
  CHECK(spec_of(bundle, "implementation") ==
        parse_json(R"({"name":"liger_tiled","project":"Liger-Kernel","revision":"0.6.3"})", "want"));
  CHECK(spec_of(liger_bundle(row_at(rows, 4)), "implementation") ==
        parse_json(R"({"name":"huggingface","project":"transformers"})", "want"));

  // The x variable supersedes a config member of its name (fused_moe's "T": null).
  Json moe = liger_bundle(row_at(rows, 12));
  CHECK(member(member(spec_of(moe, "workload"), "parameters"), "T") == Json(128));
  // A named configuration stays a string.
  Json model = liger_bundle(row_at(rows, 14));
  CHECK(member(member(spec_of(model, "workload"), "parameters"), "model_config") ==
        Json("llama_2_7b"));
}

TEST_CASE("liger: workload slugs name what the row varies", "[liger]") {
  auto rows = sample_rows();
  struct Case {
    std::size_t line;
    std::string slug;
  };
  const Case cases[] = {
      {3, "batch2-hidden2048-intermediate4096-seq1024-bf16"},
      {10, "batch8-seq2048-vocab4096"},
      {12, "experts128-hidden2048-intermediate768-k8-seq128-bf16"},
      {13, "batch2-dilation1-heads8-hidden512-kernel-size7-seq64-fp32"},
      {14, "batch1-model-llama-2-7b-seq2048"},
      {16, "batch1-hidden4096-intermediate14336-seq1024-bf16"},  // x T=1024 over seq_len 8192
      {17, "batch1-hidden4096-seq-len8192-t1024-vocab128256-bf16"},  // T and seq_len disagree
  };
  for (const auto& c : cases) {
    INFO("sample.csv:" << c.line);
    CHECK(liger_workload_slug(row_at(rows, c.line)) == c.slug);
  }
}

TEST_CASE("liger: the fixture's row ranks 3 of 4 in one comparison group", "[liger]") {
  auto rows = sample_rows();
  std::map<std::string, double> median_by_provider;
  std::set<std::string> protocols, environments, workloads, implementations;
  for (std::size_t line : kGroupLines) {
    Json b = liger_bundle(row_at(rows, line));
    protocols.insert(str(b, "run", "protocolDigest"));
    environments.insert(str(b, "run", "environmentDigest"));
    workloads.insert(str(b, "run", "workloadDigest"));
    implementations.insert(str(b, "run", "implementationDigest"));
    const Json& timing = member(spec_of(b, "run"), "timing");
    median_by_provider[row_at(rows, line).kernel_provider] =
        member(member(timing, "latencyNs"), "median").as_number();
  }
  CHECK(protocols.size() == 1);
  CHECK(environments.size() == 1);
  CHECK(workloads.size() == 1);
  CHECK(implementations.size() == 4);
  CHECK(median_by_provider.size() == 4);
  int rank = 1;
  for (const auto& [provider, median] : median_by_provider)
    if (median < median_by_provider.at("liger_tiled")) ++rank;
  CHECK(rank == 3);
}

TEST_CASE("liger: memory rows", "[liger]") {
  auto rows = sample_rows();
  Json speed = liger_bundle(row_at(rows, kSpeedLine));
  Json memory = liger_bundle(row_at(rows, kMemoryLine));
  REQUIRE(row_at(rows, kSpeedLine).timestamp == row_at(rows, kMemoryLine).timestamp);

  CHECK(external_id(speed) ==
        "cross_entropy/full/huggingface/nvidia-a100-sxm4-80gb/batch8-seq2048-vocab4096/"
        "2024-09-03-15-31-42");
  CHECK(external_id(memory) ==
        "cross_entropy/full/memory/huggingface/nvidia-a100-sxm4-80gb/batch8-seq2048-vocab4096/"
        "2024-09-03-15-31-42");
  const Json& run = spec_of(memory, "run");
  CHECK(member(member(run, "sourceNative"), "benchmark") == Json("cross_entropy/full/memory"));
  CHECK(member(member(run, "sourceNative"), "metrics") ==
        parse_json(R"({"mb_20":1280.1259765625,"mb_50":1280.1259765625,"mb_80":1280.1259765625})",
                   "want"));
  CHECK(run.find("timing") == nullptr);
  const Json& first = member(run, "measurements").as_array().at(0);
  const Json want_first = parse_json(
      R"({"metric":"memory","statistic":"median","unit":"MB","value":1280.1259765625})", "want");
  CHECK(first == want_first);
  CHECK(str(memory, "run", "workloadDigest") == str(speed, "run", "workloadDigest"));
  CHECK(str(memory, "run", "environmentDigest") == str(speed, "run", "environmentDigest"));
  CHECK(str(memory, "run", "protocolDigest") != str(speed, "run", "protocolDigest"));
  CHECK(member(member(member(memory, "protocol"), "metadata"), "name") ==
        Json("liger-bench-peak-memory-full"));
  CHECK(member(member(member(speed, "protocol"), "metadata"), "name") ==
        Json("liger-bench-do-bench-full"));

  // The memory rows of the fixture's configuration form their own group of 4.
  std::set<std::string> keys;
  for (std::size_t line : kMemoryGroupLines) {
    Json b = liger_bundle(row_at(rows, line));
    keys.insert(str(b, "run", "protocolDigest") + str(b, "run", "environmentDigest") +
                str(b, "run", "workloadDigest"));
  }
  CHECK(keys.size() == 1);
}

TEST_CASE("liger: every sample bundle validates as a bundle", "[liger]") {
  auto rows = sample_rows();
  REQUIRE(rows.size() == 17);
  std::set<std::string> protocols;
  for (const auto& row : rows) {
    INFO("sample.csv:" << row.line);
    Json b = liger_bundle(row);
    Bundle bundle = Bundle::from_json(b, Location{"sample.csv:" + std::to_string(row.line), ""});
    CHECK(bundle.external_roles().empty());
    CHECK(member(member(member(b, "run"), "metadata"), "name").as_string().size() <= 100);
    protocols.insert(str(b, "run", "protocolDigest"));
  }
  // backward speed, backward memory, full speed, full memory, forward speed, no-grad-forward speed.
  CHECK(protocols.size() == 6);
}

TEST_CASE("liger: GPU table", "[liger]") {
  auto rows = sample_rows();
  LigerRow row = row_at(rows, kFixtureLine);
  struct Case {
    std::string gpu, vendor, architecture;
  };
  const Case cases[] = {
      {"NVIDIA A100-SXM4-80GB", "nvidia", "sm_80"}, {"NVIDIA H100 PCIe", "nvidia", "sm_90"},
      {"NVIDIA H100 80GB HBM3", "nvidia", "sm_90"}, {"NVIDIA GeForce RTX 3090", "nvidia", "sm_86"},
      {"NVIDIA GeForce RTX 4090", "nvidia", "sm_89"}, {"NVIDIA B200", "nvidia", "sm_100"},
      {"AMD Instinct MI300X", "amd", "gfx942"},
  };
  for (const auto& c : cases) {
    INFO(c.gpu);
    row.gpu_name = c.gpu;
    Json hw = member(spec_of(liger_bundle(row), "environment"), "hardware");
    CHECK(hw == Json(Json::Object{{"vendor", Json(c.vendor)},
                                  {"product", Json(c.gpu)},
                                  {"architecture", Json(c.architecture)}}));
  }
  row.gpu_name = "NVIDIA Imaginary 9000";
  CHECK_THROWS_WITH(liger_bundle(row),
                    Catch::Contains("sample.csv:3: gpu_name: expected a known GPU") &&
                        Catch::Contains("found \"NVIDIA Imaginary 9000\""));
}

namespace {

std::string header() {
  std::string h;
  for (auto c : kLigerColumns) h += std::string(h.empty() ? "" : ",") + std::string(c);
  return h;
}

// The fixture's row as it stands in the CSV, split into its fields.
const std::vector<std::string> kGoodFields = {
    "tiled_geglu", "liger_tiled", "backward", "speed", "ms", "T", "sequence length", "1024",
    "2.6060800552368164", "2.6053311824798584", "2.607308864593506",
    R"("{""bsz"": 2, ""hidden_size"": 2048, ""intermediate_size"": 4096, ""hidden_act"": ""gelu_pytorch_tanh"", ""activation_type"": ""geglu"", ""num_shards"": 4, ""dtype"": ""torch.bfloat16""}")",
    "NVIDIA GeForce RTX 4090", "2025-11-11 06:22:57", "0.6.3"};

std::string joined(const std::vector<std::string>& f) {
  std::string out;
  for (std::size_t i = 0; i < f.size(); ++i) out += (i ? "," : "") + f[i];
  return out;
}

std::string line_with(std::size_t column, std::string value) {
  std::vector<std::string> f = kGoodFields;
  f[column] = std::move(value);
  return joined(f);
}

std::string good_line() { return line_with(0, kGoodFields[0]); }

// A memory row (metric memory, unit MB) with `value` in `column`.
std::string memory_line_with(std::size_t column, std::string value) {
  std::vector<std::string> f = kGoodFields;
  f[3] = "memory";
  f[4] = "MB";
  f[column] = std::move(value);
  return joined(f);
}

}  // namespace

TEST_CASE("liger: bad rows are rejected with file:line, expected and found", "[liger]") {
  struct Case {
    std::string line;  // the third line of bad.csv
    std::string message;
  };
  const Case cases[] = {
      {good_line().substr(0, good_line().rfind(',')), "bad.csv:3: expected 15 fields, found 14"},
      {good_line() + ",extra", "bad.csv:3: expected 15 fields, found 16"},
      {line_with(8, "abc"),
       "bad.csv:3: y_value_50: expected a time in ms from 0 to 86400000 (a day), found \"abc\""},
      {line_with(9, "nan"), "bad.csv:3: y_value_20: expected a time in ms from 0 to 86400000 (a day), found \"nan\""},
      {line_with(10, "-1.5"), "bad.csv:3: y_value_80: expected a time in ms from 0 to 86400000 (a day), found \"-1.5\""},
      {line_with(8, ""), "bad.csv:3: y_value_50: expected a time in ms from 0 to 86400000 (a day), found \"\""},
      // Past a day (a converted ns once overflowed to -2^63 and the median was lost).
      {line_with(8, "1e8"), "bad.csv:3: y_value_50: expected a time in ms from 0 to 86400000 (a day), found \"1e8\""},
      {line_with(9, "1e300"),
       "bad.csv:3: y_value_20: expected a time in ms from 0 to 86400000 (a day), found \"1e300\""},
      {memory_line_with(8, "2e9"), "bad.csv:3: y_value_50: expected a memory in MB from 0 to 1e9, found \"2e9\""},
      {line_with(2, "sideways"),
       "bad.csv:3: kernel_operation_mode: expected one of forward, backward, full, "
       "no-grad-forward, found \"sideways\""},
      {line_with(3, "power"), "bad.csv:3: metric_name: expected speed or memory, found \"power\""},
      {line_with(4, "MB"), "bad.csv:3: metric_unit: expected \"ms\" for metric speed, found \"MB\""},
      {line_with(13, "2025-02-30 06:22:57"),
       "bad.csv:3: timestamp: expected a time \"YYYY-MM-DD HH:MM:SS\", found \"2025-02-30 06:22:57\""},
      {line_with(13, "2025-11-11T06:22:57"),
       "bad.csv:3: timestamp: expected a time \"YYYY-MM-DD HH:MM:SS\", found \"2025-11-11T06:22:57\""},
      {line_with(13, "2025-11-11 24:00:00"), "bad.csv:3: timestamp: expected a time"},
      {line_with(11, R"("[1, 2]")"),
       "bad.csv:3: extra_benchmark_config_str: expected a JSON object, found an array \"[1, 2]\""},
      {line_with(11, R"("{""B"": 8,")"),
       "bad.csv:3: extra_benchmark_config_str: expected a JSON object, found invalid JSON"},
      {line_with(12, "NVIDIA Imaginary 9000"), "found \"NVIDIA Imaginary 9000\""},
      {line_with(12, "NVIDIA Imaginary 9000"), "bad.csv:3: gpu_name: expected a known GPU ("},
      {line_with(0, "tiled/geglu"), "bad.csv:3: kernel_name: expected a name"},
      {line_with(1, ""), "bad.csv:3: kernel_provider: expected a name"},
      {line_with(1, ".."), "bad.csv:3: kernel_provider: expected a name"},
      {line_with(0, "."), "bad.csv:3: kernel_name: expected a name"},
      {line_with(7, ""), "bad.csv:3: x_value: expected a number or a configuration name, found \"\""},
      {line_with(7, "inf"), "bad.csv:3: x_value: expected a number or a configuration name, found \"inf\""},
      {line_with(14, ""), "bad.csv:3: liger_version: expected a release"},
      {line_with(6, "seq\"len"),
       "bad.csv:3: expected a field quoted from its first character, found a quote inside "
       "unquoted field \"seq\\\"\""},
      {line_with(6, "\"seq\"x"), "bad.csv:3: expected ',' or end of line after a closing quote, found \"x\""},
      {line_with(14, "\"0.6.3"),
       "bad.csv:3: expected a closing quote for the field opened here, found end of file"},
      {"", "bad.csv:3: expected 15 fields, found 1"},
  };
  for (const auto& c : cases) {
    std::string text = header() + "\n" + good_line() + "\n" + c.line + "\n";
    INFO(c.line);
    CHECK_THROWS_WITH(parse_liger_csv(text, "bad.csv"), Catch::Contains(c.message));
  }
}

TEST_CASE("liger: header must be exactly the 15 columns", "[liger]") {
  std::string h = header();
  CHECK_THROWS_WITH(parse_liger_csv("", "bad.csv"),
                    Catch::Contains("bad.csv:1: expected header \"kernel_name,") &&
                        Catch::Contains("found an empty file"));
  std::string reordered = h;
  reordered.replace(0, std::string("kernel_name,kernel_provider").size(),
                    "kernel_provider,kernel_name");
  CHECK_THROWS_WITH(parse_liger_csv(reordered + "\n", "bad.csv"),
                    Catch::Contains("bad.csv:1: the header has the right columns in another order") &&
                        Catch::Contains("expected header \"kernel_name,kernel_provider,") &&
                        Catch::Contains("found \"kernel_provider,kernel_name,"));
  CHECK_THROWS_WITH(parse_liger_csv(h + ",extra\n", "bad.csv"),
                    Catch::Contains("bad.csv:1: the header has unknown column \"extra\"") &&
                        Catch::Contains(",liger_version,extra\""));
  // A column left out is named first.
  std::string without_gpu = h;
  without_gpu.replace(without_gpu.find(",gpu_name"), std::string(",gpu_name").size(), "");
  CHECK_THROWS_WITH(parse_liger_csv(without_gpu + "\n", "bad.csv"),
                    Catch::StartsWith("bad.csv:1: the header lacks column gpu_name; expected header"));
  std::string renamed = h;
  renamed.replace(renamed.find("y_value_50"), std::string("y_value_50").size(), "median");
  CHECK_THROWS_WITH(parse_liger_csv(renamed + "\n", "bad.csv"),
                    Catch::StartsWith("bad.csv:1: the header lacks column y_value_50; it has unknown column \"median\""));
  // A header alone is an empty table.
  CHECK(parse_liger_csv(h + "\n", "ok.csv").empty());
  CHECK(parse_liger_csv(h, "ok.csv").empty());
}

TEST_CASE("liger: CSV syntax: CRLF, BOM, quoted line breaks, no final newline", "[liger]") {
  std::string crlf = read_text(kSampleCsv);  // Liger writes CRLF (Python's csv module)
  REQUIRE(crlf.find("\r\n") != std::string::npos);
  std::string lf;
  for (char c : crlf)
    if (c != '\r') lf += c;
  auto a = parse_liger_csv(lf, "sample.csv");
  auto b = parse_liger_csv("\xEF\xBB\xBF" + crlf, "sample.csv");
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].line == b[i].line);
    CHECK(canonical(liger_bundle(a[i])) == canonical(liger_bundle(b[i])));
  }
  CHECK(parse_liger_csv(lf.substr(0, lf.size() - 1), "sample.csv").size() == a.size());
  CHECK(parse_liger_csv(crlf.substr(0, crlf.size() - 2), "sample.csv").size() == a.size());
  // A stray CR is data, not a line end: here it spoils the header, visibly.
  CHECK_THROWS_WITH(parse_liger_csv(header() + "\r\r\n", "cr.csv"),
                    Catch::Contains("found \"" + header() + "\\r\""));

  // A quoted field may span lines: the row keeps the line it starts on, and
  // later rows are numbered by the file's lines.
  std::string text = header() + "\n" + line_with(6, "\"sequence\nlength\"") + "\n" +
                     line_with(8, "oops") + "\n";
  CHECK_THROWS_WITH(parse_liger_csv(text, "multi.csv"), Catch::Contains("multi.csv:4: y_value_50"));
  auto rows = parse_liger_csv(header() + "\n" + line_with(6, "\"sequence\nlength\"") + "\n" +
                                  line_with(6, "\"a \"\"quoted\"\" label\"") + "\n",
                              "multi.csv");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].line == 2);
  CHECK(rows[0].x_label == "sequence\nlength");
  CHECK(rows[1].line == 4);
  CHECK(rows[1].x_label == "a \"quoted\" label");
}

TEST_CASE("liger: lenient parsing keeps the good rows and lists the bad", "[liger]") {
  std::string text = header() + "\n" + good_line() + "\n" + line_with(8, "abc") + "\n" +
                     line_with(6, "seq\"len") + "\n" + line_with(12, "NVIDIA Imaginary 9000") +
                     "\n" + line_with(1, "liger") + "\n";
  LigerParse parsed = parse_liger_csv_lenient(text, "mixed.csv");
  REQUIRE(parsed.rows.size() == 2);
  CHECK(parsed.rows[0].line == 2);
  CHECK(parsed.rows[1].line == 6);
  REQUIRE(parsed.errors.size() == 3);
  CHECK(parsed.errors[0].line == 3);
  CHECK_THAT(parsed.errors[0].message, Catch::StartsWith("mixed.csv:3: y_value_50"));
  CHECK(parsed.errors[1].line == 4);
  CHECK_THAT(parsed.errors[1].message, Catch::StartsWith("mixed.csv:4: expected a field quoted"));
  CHECK(parsed.errors[2].line == 5);
  CHECK_THAT(parsed.errors[2].message, Catch::StartsWith("mixed.csv:5: gpu_name"));

  // An unterminated quote swallows the rest of the file: one error, and the end.
  LigerParse cut = parse_liger_csv_lenient(
      header() + "\n" + line_with(14, "\"open") + "\n" + good_line() + "\n", "cut.csv");
  CHECK(cut.rows.empty());
  REQUIRE(cut.errors.size() == 1);
  CHECK(cut.errors[0].line == 2);
  // A wrong header still throws.
  CHECK_THROWS_AS(parse_liger_csv_lenient("a,b\n", "bad.csv"), Error);
}

TEST_CASE("liger: the whole published corpus maps to distinct runs", "[liger][corpus]") {
  const std::pair<std::string, std::size_t> files[] = {
      {"all_benchmark_data.csv", 2448},
      {"all_benchmark_data_cutedsl.csv", 165},
      {"all_benchmark_data_cutile.csv", 1284},
  };
  std::set<std::string> run_digests, external_ids, names;
  std::map<std::string, int> group_sizes;
  std::string fixture_key;
  std::size_t total = 0;
  for (const auto& [file, count] : files) {
    auto rows = parse_liger_csv(read_text(kCorpusDir + "/" + file), file);
    CHECK(rows.size() == count);
    total += rows.size();
    for (const auto& row : rows) {
      Json b = liger_bundle(row);
      run_digests.insert(digest_of(member(b, "run")));
      external_ids.insert(external_id(b));
      std::string key = str(b, "run", "protocolDigest") + str(b, "run", "environmentDigest") +
                        str(b, "run", "workloadDigest");
      ++group_sizes[key];
      if (file == "all_benchmark_data.csv" && row.line == 1539) {
        CHECK(digest_of(member(b, "protocol")) ==
              "sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8");
        CHECK(digest_of(member(b, "environment")) ==
              "sha256:e2646efafa5e5fbd428b49a99b1c076c10d51654a549c4e50ec36da7662d4328");
        fixture_key = key;
      }
    }
  }
  CHECK(total == 3897);
  CHECK(run_digests.size() == 3897);
  CHECK(external_ids.size() == 3897);
  REQUIRE(!fixture_key.empty());
  CHECK(group_sizes[fixture_key] == 4);
}

}  // namespace kistore

namespace kistore {
namespace {

// A captured environment (kistore capture) for the GPU a row names.
Json captured_environment(const std::string& product) {
  return parse_json(R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"ExecutionEnvironment",
    "spec":{"hardware":{"vendor":"nvidia","product":")" + product + R"(","architecture":"sm_89","memoryMiB":24564},
            "software":{"driver":"580.159.04","cuda":"13.0","torch":"2.11.0+cu130","triton":"3.6.0"}},
    "metadata":{"name":"gpu-captured"}})", "env.json");
}

TEST_CASE("liger: with a captured environment only the environment differs", "[liger][environment]") {
  const std::vector<LigerRow> rows = sample_rows();
  REQUIRE(!rows.empty());
  for (const LigerRow& row : rows) {
    Json env = captured_environment(row.gpu_name);
    Json plain = liger_bundle(row), captured = liger_bundle(row, &env);
    for (const char* role : {"protocol", "workload", "implementation"})
      CHECK(canonical(*plain.find(role)) == canonical(*captured.find(role)));
    CHECK(*captured.find("environment") == env);
    const Json& a = *plain.find("run")->find("spec");
    const Json& b = *captured.find("run")->find("spec");
    for (const auto& [name, value] : a.as_object()) {
      INFO(name);
      if (name == "environmentDigest") CHECK_FALSE(value == *b.find(name));
      else CHECK(value == *b.find(name));
    }
    Json body = env;
    body.erase("metadata");
    CHECK(b.find("environmentDigest")->as_string() == Digest::of(canonical(body)).str());
  }
}

TEST_CASE("liger: a row of another GPU than the captured environment's is refused", "[liger][environment]") {
  Json env = captured_environment("NVIDIA H200");
  std::string text = read_text(kSampleCsv);
  LigerParse parsed = parse_liger_csv_lenient(text, "sample.csv", &env);
  CHECK(parsed.rows.empty());
  REQUIRE(!parsed.errors.empty());
  CHECK_THAT(parsed.errors.front().message, Catch::Contains("gpu_name: expected the environment's GPU \"NVIDIA H200\""));
  // A GPU outside kistore's table is fine when the environment names it.
  // (the sample's rows of its first GPU, renamed)
  const std::string gpu = sample_rows().front().gpu_name;
  std::istringstream lines(text);
  std::string unknown, line;
  std::size_t kept = 0;
  for (bool header = true; std::getline(lines, line); header = false) {
    std::size_t pos = line.find("," + gpu + ",");
    if (!header && pos == std::string::npos) continue;
    if (!header) line.replace(pos + 1, gpu.size(), "NVIDIA H999"), ++kept;
    unknown += line + "\n";
  }
  REQUIRE(kept > 0);
  Json env999 = captured_environment("NVIDIA H999");
  CHECK(parse_liger_csv(unknown, "sample.csv", &env999).size() == kept);
  CHECK_THROWS_WITH(parse_liger_csv(unknown, "sample.csv"), Catch::Contains("expected a known GPU"));
}

}  // namespace
}  // namespace kistore
