#!/usr/bin/env python3
"""Synthetic inputs for bench/importers.sh: each harness's real file replicated with varied
parameters, so that every record is a new run (and most a new workload).

    importers_gen.py ROOT OUT RUNS BIG_MB

ROOT is the checkout (its tests/data and ../shared/data are read); OUT is written: nvbench/*.json,
tritonbench/*.json, tritonbench.csv, kernelbench/*.json, flashinfer.jsonl, liger.csv, big.jsonl
(about BIG_MB MB of new runs), rep.jsonl (as large, 20,000
distinct traces repeated), their .zst copies, and NAME.runs beside each: how many runs it holds."""
import copy, csv, io, json, os, subprocess, sys, uuid

root, out, runs, big_mb = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
shared = os.path.join(root, "..", "shared", "data")
os.makedirs(out, exist_ok=True)
JSON_FILE_RUNS = 4000  # a JSON file holds one text of at most 16 MiB
NVBENCH_FILE_STATES = 3000  # 4.4 KB a state as nvbench indents it: 13 MB a file


def count(name, n):
    open(os.path.join(out, name + ".runs"), "w").write(str(n))


def chunks(n, size):
    for start in range(0, n, size):
        yield start, min(n, start + size)


# nvbench: single_float64_axis's first state, with Duration = i * 1e-9 (one workload each).
ref = json.load(open(os.path.join(shared, "nvbench", "test_ref.first2.json")))
bench = ref["benchmarks"][1]
state = bench["states"][0]
os.makedirs(os.path.join(out, "nvbench"), exist_ok=True)
for f, (a, b) in enumerate(chunks(runs, NVBENCH_FILE_STATES)):
    doc = copy.deepcopy(ref)
    bb = copy.deepcopy(bench)
    bb["states"] = []
    for i in range(a, b):
        s = copy.deepcopy(state)
        v = repr(i * 1e-9)
        s["name"] = "Device=0 Duration=" + v
        s["axis_values"][0]["value"] = v
        bb["states"].append(s)
    doc["benchmarks"] = [bb]
    json.dump(doc, open(os.path.join(out, "nvbench", "part%04d.json" % f), "w"), indent=2)
count("nvbench", runs)

# tritonbench: vector_add's x values, two backends each (torch_add, triton_add).
tb = json.load(open(os.path.join(shared, "tritonbench", "tb-vector_add.json")))
lat = tb["tritonbench_vector_add_fwd[x_4096-torch_add]_latency"]
gbps = tb["tritonbench_vector_add_fwd[x_4096-torch_add]_gbps"]
os.makedirs(os.path.join(out, "tritonbench"), exist_ok=True)
xs = (runs + 1) // 2
for f, (a, b) in enumerate(chunks(xs, JSON_FILE_RUNS // 2)):
    doc = {}
    for x in range(a, b):
        for backend in ("torch_add", "triton_add"):
            doc["tritonbench_vector_add_fwd[x_%d-%s]_latency" % (4096 + x, backend)] = lat
            doc["tritonbench_vector_add_fwd[x_%d-%s]_gbps" % (4096 + x, backend)] = gbps
    json.dump(doc, open(os.path.join(out, "tritonbench", "part%04d.json" % f), "w"), indent=4)
count("tritonbench-json", 2 * xs)
with open(os.path.join(out, "tritonbench.csv"), "w", newline="") as fh:
    fh.write("x_val;torch_add-latency;torch_add-gbps;triton_add-latency;triton_add-gbps\r\n")
    g = "(" + ", ".join(repr(v) for v in gbps) + ")"
    for x in range(xs):
        fh.write("%d;%s;%s;%s;%s\r\n" % (4096 + x, lat, g, lat, g))
    fh.write("average;;;;\r\n")
count("tritonbench-csv", 2 * xs)

# KernelBench eval results: problem ids 1..RUNS, one sample each.
kb = json.load(open(os.path.join(root, "tests", "data", "kernelbench", "eval_results.sample.json")))
sample = kb["1"][0]
os.makedirs(os.path.join(out, "kernelbench"), exist_ok=True)
for f, (a, b) in enumerate(chunks(runs, JSON_FILE_RUNS)):
    json.dump({str(p + 1): [sample] for p in range(a, b)}, open(os.path.join(out, "kernelbench", "part%04d.json" % f), "w"), indent=2)
count("kernelbench", runs)


# FlashInfer-Bench: the first trace with axis M = i and its own workload uuid.
trace = json.loads(open(os.path.join(root, "tests", "data", "flashinfer-bench", "traces.sample.jsonl")).readline())
def traces(path, n):
    with open(path, "w") as fh:
        for i in range(n):
            t = copy.deepcopy(trace)
            t["workload"]["axes"]["M"] = i + 1
            t["workload"]["uuid"] = str(uuid.UUID(int=i + 1))
            fh.write(json.dumps(t) + "\n")
traces(os.path.join(out, "flashinfer.jsonl"), runs)
count("flashinfer", runs)
line_bytes = len(json.dumps(trace)) + 1
big = big_mb * 1000 * 1000 // line_bytes
traces(os.path.join(out, "big.jsonl"), big)  # BIG_MB MB, every trace a new run
count("big", big)
# BIG_MB MB of 20,000 distinct traces, repeated (as tests/e2e/test_bulk_add.sh repeats its bundles):
# what an import holds must not grow with the input, only with what is new.
traces(os.path.join(out, "distinct.jsonl"), 20000)
block = open(os.path.join(out, "distinct.jsonl")).read()
with open(os.path.join(out, "rep.jsonl"), "w") as fh:
    for _ in range(max(1, big // 20000)):
        fh.write(block)
count("rep", max(1, big // 20000) * 20000)
for name in ("big.jsonl", "rep.jsonl"):
    subprocess.run(["zstd", "-q", "-f", "-3", os.path.join(out, name), "-o", os.path.join(out, name + ".zst")], check=True)

# Liger: the sample table's first speed row with x_value = 1..RUNS.
rows = list(csv.reader(open(os.path.join(root, "tests", "data", "liger", "sample.csv"), newline="")))
header, row = rows[0], rows[1]
xv = header.index("x_value")
with open(os.path.join(out, "liger.csv"), "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(header)
    for i in range(runs):
        r = list(row)
        r[xv] = str(i + 1)
        w.writerow(r)
count("liger", runs)

# One bad record per format, for the "importer alone" figures: passed before the real files, it
# makes the import refuse (exit 2) after reading, mapping and checking every record, so that the
# time is all but the store's writing.
bad = os.path.join(out, "bad")
os.makedirs(bad, exist_ok=True)
doc = copy.deepcopy(ref)
doc["benchmarks"][0]["states"] = [dict(doc["benchmarks"][0]["states"][0], device="x")]
doc["benchmarks"] = doc["benchmarks"][:1]
json.dump(doc, open(os.path.join(bad, "nvbench.json"), "w"))
json.dump({"tritonbench_vector_add[x_1-a]_latency": "1"}, open(os.path.join(bad, "tritonbench.json"), "w"))
open(os.path.join(bad, "tritonbench.csv"), "w").write("x_val;torch_add-latency;torch_add-gbps;triton_add-latency;triton_add-gbps\r\n1;2\r\n")
json.dump({"x1": []}, open(os.path.join(bad, "kernelbench.json"), "w"))
open(os.path.join(bad, "flashinfer.jsonl"), "w").write("{\"solution\": \"x\"}\n")
open(os.path.join(bad, "liger.csv"), "w").write(",".join(header) + "\n" + "a,b\n")
