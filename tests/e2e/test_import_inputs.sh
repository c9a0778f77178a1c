#!/usr/bin/env bash
# `kistore import` on the inputs harnesses really leave, with the real binary:
# zstd-compressed files (told by their first bytes, not their name) import as
# the plain file does; tritonbench's `--output` CSV imports as the same
# documents as its `--output-json` file (one run's two files share every
# comparison group). Then hostile inputs, each refused with exit 2, a message
# naming the file and line, and the store byte for byte as it was: a zstd bomb,
# a truncated or corrupt frame, a ragged CSV row, an oversize cell, a CSV with
# only its `average` row, a CSV without --op, a cell, an option or a path that
# is not UTF-8.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
DATA=$KISTORE_SOURCE_DIR/tests/data
TB=$DATA/tritonbench
ENV_H200=$TB/env-h200.json
export KISTORE_AUTHOR="Importer Test <import@example.org>"
work_in import-inputs in
use_store "$W/store"
assert_exit 0 ks init

runs_of() { ks --store "$1" ls --kind run --format tsv | tail -n +2 | cut -f1 | sort; }

# ============================== zstd inputs ===================================
ref=$DATA/nvbench/test_ref.cut.json
assert_exit 0 ks init "$W/plain"
assert_exit 0 ks --store "$W/plain" --json import nvbench "$ref"
assert_exit 0 ks --json import nvbench "$ref.zst"
assert_eq "[]" "$(jv -c .rejected)" "nothing rejected"
assert_eq 6 "$(runs_of "$S" | wc -l)" "6 states -> 6 runs, as from the plain file"
assert_eq "$(runs_of "$W/plain")" "$(runs_of "$S")" "the same run digests as the plain file (externalId: the decompressed file's digest)"
pass "zstd: a compressed nvbench file imports as the plain one"
# Told by content, not by name: a compressed file named .json, a plain one named .zst.
cp "$ref.zst" "$W/in/looks-plain.json"
cp "$ref" "$W/in/looks-compressed.json.zst"
head=$(head_of "$S")
assert_exit 0 ks --json import nvbench "$W/in/looks-plain.json" "$W/in/looks-compressed.json.zst"
assert_eq "[]" "$(jv -c .rejected)" "both read"
assert_eq "$head" "$(head_of "$S")" "the same runs again: nothing new, no commit"
pass "zstd: compression is told by the magic number, not the file's name"
# Every other importer reads compressed input too.
zstd -q -f "$DATA/flashinfer-bench/traces.sample.jsonl" -o "$W/in/traces.jsonl.zst"
assert_exit 0 ks --json import flashinfer-bench "$W/in/traces.jsonl.zst"
assert_eq "[]" "$(jv -c .rejected)" "flashinfer-bench: nothing rejected"
zstd -q -f "$DATA/kernelbench/eval_results.sample.json" -o "$W/in/eval_results.json.zst"
assert_exit 0 ks --json import kernelbench --level 1 --run-name z "$W/in/eval_results.json.zst"
assert_eq "[]" "$(jv -c .rejected)" "kernelbench: nothing rejected"
zstd -q -f "$DATA/liger/sample.csv" -o "$W/in/liger.csv.zst"
assert_exit 0 ks init "$W/liger-plain"
assert_exit 0 ks --store "$W/liger-plain" import liger "$DATA/liger/sample.csv"
assert_exit 0 ks init "$W/liger-zst"
assert_exit 0 ks --store "$W/liger-zst" import liger "$W/in/liger.csv.zst"
assert_eq "$(runs_of "$W/liger-plain")" "$(runs_of "$W/liger-zst")" "liger: the same runs from the compressed table"
pass "zstd: flashinfer-bench, kernelbench and liger read compressed files"

# A document met twice in one batch with other metadata (nvbench's two devices
# share a workload) is noted, not a crash: the bulk add once looked up where
# the first came from before it knew (a segmentation fault in `kistore add` too).
bundle_of() { ks show "$1" | sed -n '/^{/,/^}/p' | jq -c .; }
simple0=$(source_run "$S" nvbench "nvbench.example.axes/simple/Device=0/Quadro GV100/$(sha256sum "$ref" | cut -c1-16)")
simple1=$(source_run "$S" nvbench "nvbench.example.axes/simple/Device=1/Quadro GP100/$(sha256sum "$ref" | cut -c1-16)")
{ bundle_of "$simple0"; bundle_of "$simple1" | jq -c '.workload.metadata.title = "another title"'; } >"$W/in/two.jsonl"
assert_eq 1 "$(jq -r .run.spec.workloadDigest "$W/in/two.jsonl" | sort -u | wc -l)" "the two bundles share their workload"
assert_exit 0 ks init "$W/twice"
assert_exit 0 ks --store "$W/twice" add "$W/in/two.jsonl"
assert_contains "$ERR" "two.jsonl:2: sha256:" "the repeat is noted"
assert_contains "$ERR" "appears again with other metadata than at $W/in/two.jsonl:1" "naming where it was first"
pass "add: a document repeated in one batch with other metadata is noted where it was first seen"

# =========================== tritonbench CSV ==================================
assert_exit 0 ks init "$W/tb"
assert_exit 0 ks --store "$W/tb" --json import tritonbench --environment "$ENV_H200" "$TB/tb-softmax.json"
assert_exit 0 ks --store "$W/tb" --json import tritonbench --environment "$ENV_H200" --op softmax "$TB/tb-softmax.csv"
assert_eq "[]" "$(jv -c .rejected)" "CSV: nothing rejected"
# Each run of the CSV has a twin from the JSON: same workload, implementation,
# protocol, environment, status, measurements; only the externalId differs.
for r in $(runs_of "$W/tb"); do ks --store "$W/tb" cat "$r"; echo; done >"$W/tb-runs.jsonl"
SRC=$W/tb-runs.jsonl python3 - <<'PY' || fail "the CSV's runs are not the JSON's"
import json, os, collections
runs = [json.loads(l) for l in open(os.environ["SRC"]) if l.strip()]
assert len(runs) == 2 * 2 * 98, len(runs)  # 98 inputs x 2 backends, from each file
by = collections.defaultdict(list)
for r in runs:
    s = r["spec"]
    ext = s["sourceNative"]["externalId"]
    key = ext.rsplit("/", 1)[0]
    same = {k: s[k] for k in ("workloadDigest", "implementationDigest", "protocolDigest", "environmentDigest",
                              "status", "measurements", "timing", "correctness")}
    by[key].append((ext, json.dumps(same, sort_keys=True), s["sourceNative"]["metrics"]))
assert len(by) == 196, len(by)
for key, pair in by.items():
    assert len(pair) == 2, (key, pair)
    (e1, d1, m1), (e2, d2, m2) = pair
    assert e1 != e2, key
    assert d1 == d2, (key, d1, d2)
    assert m1 == m2, (key, m1, m2)
PY
pass "tritonbench CSV: every run is the JSON's run of the same input and backend, but for its externalId"
first=$(runs_of "$W/tb" | sed -n 1p)  # sed reads to the end: no SIGPIPE under pipefail
assert_exit 0 ks --store "$W/tb" --json rank "$first"
assert_eq 4 "$(jv '.members | length')" "one group per size: naive and triton softmax, from the CSV and the JSON"
assert_eq "naive_softmax naive_softmax triton_softmax triton_softmax" \
    "$(jv -r '[.members[].implementation] | sort | join(" ")')" "both backends, twice"
pass "tritonbench CSV: naive and triton softmax of one size on one H200 share a group with the JSON's runs"
# The vector_add CSV: gbps tuples "(12.8, 11.5, 13.9)" -> their median, as the JSON's lists.
assert_exit 0 ks --store "$W/tb" --json import tritonbench --environment "$ENV_H200" --op vector_add "$TB/tb-vector_add.csv"
csv_sha=$(sha256sum "$TB/tb-vector_add.csv" | cut -c1-16)
t=$(source_run "$W/tb" tritonbench "vector_add_fwd/x_4096/torch_add/$csv_sha")
assert_eq 12.800000323355205 "$(ks --store "$W/tb" cat "$t" | jq '.spec.measurements[] | select(.metric=="memory-throughput") | .value')" \
    "a tuple's median"
assert_eq 3839.9999029934406 "$(ks --store "$W/tb" cat "$t" | jq .spec.timing.latencyNs.median)" "p50 ms -> ns"
pass "tritonbench CSV: gbps tuples are read as the JSON's lists"
# --mode names the pass the CSV does not; it is the workload's.
assert_exit 0 ks --store "$W/tb" --json import tritonbench --environment "$ENV_H200" --op vector_add --mode bwd "$TB/tb-vector_add.csv"
[[ $(jv .added) -ge 32 ]] || fail "--mode bwd: 32 new runs and their workloads, added $(jv .added)"
t=$(source_run "$W/tb" tritonbench "vector_add_bwd/x_4096/torch_add/$csv_sha")
assert_eq bwd "$(ks --store "$W/tb" cat "$(ks --store "$W/tb" cat "$t" | jq -r .spec.workloadDigest)" | jq -r .spec.parameters.mode)" "mode bwd"
pass "tritonbench CSV: --mode sets the workload's mode"
# A backend that failed at an input: its message in its first column, its other cells empty.
printf 'x_val;torch_add-latency;torch_add-gbps;triton_add-latency;triton_add-gbps\r\n4096;0.0038;(12.8, 11.5, 13.9);CUDA error: out of memory;\r\naverage;;;;\r\n' >"$W/in/failed.csv"
assert_exit 0 ks --store "$W/tb" --json import tritonbench --environment "$ENV_H200" --op vector_add "$W/in/failed.csv"
f_sha=$(sha256sum "$W/in/failed.csv" | cut -c1-16)
t=$(source_run "$W/tb" tritonbench "vector_add_fwd/x_4096/triton_add/$f_sha")
assert_eq "runtime_error" "$(ks --store "$W/tb" cat "$t" | jq -r .spec.status)" "a failed backend is a runtime_error run"
assert_eq "tritonbench: CUDA error: out of memory" "$(ks --store "$W/tb" cat "$t" | jq -r .spec.error)" "with its message"
pass "tritonbench CSV: a failed backend is kept as runtime_error with tritonbench's message"
assert_exit 0 ks --store "$W/tb" verify
assert_contains "$OUT" "0 problems" "verify is clean"

# =============================== hostile ======================================
# refused NAME NEEDLE FORMAT ARGS... FILE : exit 2, the file and NEEDLE in the
# message, the store byte for byte as it was.
refused() {
    local name=$1 needle=$2 before file=${*: -1}
    shift 2
    before=$(store_fingerprint "$S")
    assert_exit 2 ks import "$@"
    assert_contains "$ERR" "$file" "$name: names the file"
    assert_contains "$ERR" "$needle" "$name: says where and what ($needle)"
    assert_store_unchanged "$before" "$S" "$name: the store is unchanged"
    pass "hostile: $name -> exit 2, $needle, store unchanged"
}
# A bomb: 64 MiB of spaces in 2 KiB. Refused at 16 MiB, a JSON text's limit.
head -c $((64 << 20)) /dev/zero | tr '\0' ' ' | zstd -q -19 >"$W/in/bomb.json.zst"
[[ $(stat -c %s "$W/in/bomb.json.zst") -lt 100000 ]] || fail "the bomb is not small"
refused zstd-bomb "expected at most 16777216 bytes once decompressed" nvbench "$W/in/bomb.json.zst"
# The same bomb as a CSV: a 64 MiB cell is cut at 1 MiB, reading a block at a time.
{ printf 'x_val;a-latency\n'; head -c $((64 << 20)) /dev/zero | tr '\0' 'x'; printf ';1\n'; } | zstd -q -19 >"$W/in/bomb.csv.zst"
refused csv-bomb "bomb.csv.zst:2:1: field 1: expected a cell of at most 1048576 bytes" \
    tritonbench --environment "$ENV_H200" --op a "$W/in/bomb.csv.zst"
size=$(stat -c %s "$ref.zst")
head -c $((size - 40)) "$ref.zst" >"$W/in/truncated.json.zst"
refused zstd-truncated "the compressed file is truncated" nvbench "$W/in/truncated.json.zst"
{ head -c 4 "$ref.zst"; head -c 300 /dev/urandom; } >"$W/in/corrupt.json.zst"
refused zstd-corrupt "expected zstd-compressed data" nvbench "$W/in/corrupt.json.zst"
# A compressed JSON with an error: named by the line in the decompressed text.
printf '{\n  "devices": [\n    1,\n  ]\n}\n' | zstd -q >"$W/in/bad-line.json.zst"
refused zstd-json-error "bad-line.json.zst:4:" nvbench "$W/in/bad-line.json.zst"

cp "$TB/tb-vector_add.csv" "$W/in/ragged.csv"
sed -i '3s/;[^;]*\r$/\r/' "$W/in/ragged.csv"
refused csv-ragged "ragged.csv:3: expected 5 fields separated by ';', as the header on line 1 has, found 4" \
    tritonbench --environment "$ENV_H200" --op vector_add "$W/in/ragged.csv"
{ printf 'x_val;a-latency\n4096;'; head -c $((2 << 20)) /dev/zero | tr '\0' '7'; printf '\n'; } >"$W/in/huge-field.csv"
refused csv-huge-field "huge-field.csv:2:6: field 2: expected a cell of at most 1048576 bytes" \
    tritonbench --environment "$ENV_H200" --op a "$W/in/huge-field.csv"
printf 'x_val;naive_softmax-latency;triton_softmax-latency\r\naverage;;\r\n' >"$W/in/average-only.csv"
refused csv-average-only "average-only.csv:2: expected at least one row of an input's measurements" \
    tritonbench --environment "$ENV_H200" --op softmax "$W/in/average-only.csv"
refused csv-no-op "pass --op" tritonbench --environment "$ENV_H200" "$TB/tb-softmax.csv"
# Not a failed backend's message: its other cell (gbps) holds a value.
sed '2s/^4096;[^;]*;/4096;fast;/' "$TB/tb-vector_add.csv" >"$W/in/bad-cell.csv"
refused csv-bad-cell "bad-cell.csv:2: column 2 (torch_add-latency): expected a number written as a string" \
    tritonbench --environment "$ENV_H200" --op vector_add "$W/in/bad-cell.csv"
printf 'x_val;latency\n1;2\n' >"$W/in/no-backend.csv"
refused csv-no-backend 'no-backend.csv:1: column 2: expected a column "<backend>-<metric>"' \
    tritonbench --environment "$ENV_H200" --op a "$W/in/no-backend.csv"
# A damaged number is not a backend's failure message: it once became a
# runtime_error run whose error was the number ("tritonbench: 0.04abc").
for v in 1e999 0.04abc ' 0.04' 0x10 1_000; do
    printf '{"tritonbench_softmax_fwd[x_1-a]_latency": "%s"}' "$v" >"$W/in/damaged.json"
    refused "damaged-number-'$v'" "_latency: expected" tritonbench --environment "$ENV_H200" "$W/in/damaged.json"
done
# A name with an escaped NUL: the message once ended at it (what() is a C
# string), before what was expected and found.
printf '{"tritonbench_softmax_fwd[x_2176.0-naive\\u0000_softmax]_latency": "0.1"}' >"$W/in/nul-key.json"
refused json-nul-key 'naive\u0000_softmax]_latency: expected a key "tritonbench_<op>_<mode>[x_<x_val>-<backend>]_<metric>"' \
    tritonbench --environment "$ENV_H200" "$W/in/nul-key.json"
refused json-op-mismatch 'expected the operator that --op names' \
    tritonbench --environment "$ENV_H200" --op softmax "$TB/tb-vector_add.json"

# Bytes that are not UTF-8 in a cell: refused where the cell is, by every CSV
# importer (a document is UTF-8 text; such a cell once made a store that
# `verify` and `ls` then refused).
printf 'x_val;naive_softmax-latency\r\n21\xc0\xaf;0.0432\r\n' >"$W/in/bad-utf8.csv"
refused csv-not-utf8 "bad-utf8.csv:2:1: field 1: expected UTF-8 text, found invalid UTF-8 byte 0xc0" \
    tritonbench --environment "$ENV_H200" --op softmax "$W/in/bad-utf8.csv"
sed '2s/^tiled_geglu,liger,/tiled_\xff_geglu,liger,/' "$DATA/liger/sample.csv" >"$W/in/liger-bad-utf8.csv"
refused liger-not-utf8 "liger-bad-utf8.csv:2:1: field 1: expected UTF-8 text, found invalid UTF-8 byte 0xff" \
    liger "$W/in/liger-bad-utf8.csv"
# What a command line or a path puts into documents is checked too.
before=$(store_fingerprint "$S")
assert_exit 2 ks import kernelbench --level 1 --run-name $'run\xffname' "$DATA/kernelbench/eval_results.sample.json"
assert_contains "$ERR" "--run-name: expected UTF-8 text, found invalid UTF-8 byte 0xff" "--run-name: named, and what was found"
assert_exit 2 ks import tritonbench --environment "$ENV_H200" --op $'soft\xc3' "$W/in/bad-utf8.csv"
assert_contains "$ERR" "--op: expected UTF-8 text, found invalid UTF-8 byte 0xc3" "--op: named, and what was found"
mkdir -p "$W/in/run"$'\xff'
cp "$DATA/kernelbench/eval_results.sample.json" "$W/in/run"$'\xff'"/eval_results.json"
assert_exit 2 ks import kernelbench --level 1 "$W/in/run"$'\xff'"/eval_results.json"
assert_contains "$ERR" "expected a run name in UTF-8 text (taken from the path: pass --run-name NAME)" "a run name from the path"
assert_store_unchanged "$before" "$S" "not UTF-8 on the command line or in a path: the store is unchanged"
pass "hostile: --run-name, --op and a path that are not UTF-8 -> exit 2, named, store unchanged"

# Streams: standard input, a pipe, a FIFO. The FlashInfer-Bench and tritonbench
# importers open their input more than once (to tell its kind, to hash it):
# a stream is read once, whole, and read again from memory. Each once read
# as empty the second time (nothing imported, exit 0) or, for a FIFO, waited
# for ever.
FIB=$DATA/flashinfer-bench/traces.sample.jsonl
assert_exit 0 "$KISTORE" init "$W/fib-file"
assert_exit 0 "$KISTORE" --no-progress --store "$W/fib-file" import flashinfer-bench "$FIB"
for how in stdin pipe fifo; do
    assert_exit 0 "$KISTORE" init "$W/fib-$how"
    case $how in
        stdin) assert_exit 0 timeout 60 bash -c '"$1" --no-progress --store "$2" import flashinfer-bench - <"$3"' _ \
                   "$KISTORE" "$W/fib-$how" "$FIB" ;;
        pipe) assert_exit 0 timeout 60 bash -c '"$1" --no-progress --store "$2" import flashinfer-bench <(cat "$3")' _ \
                  "$KISTORE" "$W/fib-$how" "$FIB" ;;
        fifo) rm -f "$W/in/fifo"; mkfifo "$W/in/fifo"
              (cat "$FIB" >"$W/in/fifo" &)
              assert_exit 0 timeout 60 "$KISTORE" --no-progress --store "$W/fib-$how" import flashinfer-bench "$W/in/fifo" ;;
    esac
    assert_eq "$(runs_of "$W/fib-file")" "$(runs_of "$W/fib-$how")" "flashinfer-bench from $how: the runs of the file"
done
assert_exit 0 "$KISTORE" init "$W/tb-pipe"
assert_exit 0 timeout 60 bash -c '"$1" --no-progress --store "$2" import tritonbench --environment "$3" --op vector_add <(cat "$4")' _ \
    "$KISTORE" "$W/tb-pipe" "$ENV_H200" "$TB/tb-vector_add.csv"
assert_eq 32 "$(runs_of "$W/tb-pipe" | wc -l)" "tritonbench CSV from a pipe: its 32 runs"
# A stream is held to a bound: a JSON text's 16 MiB here, refused at once.
before=$(store_fingerprint "$S")
assert_exit 2 timeout 60 "$KISTORE" --no-progress import nvbench /dev/zero
assert_contains "$ERR" "/dev/zero: expected at most 16777216 bytes" "an endless stream: refused at the bound"
# So is an --environment document (once read whole first: 8 GB of memory for
# /dev/zero), and canon's one JSON text.
assert_exit 2 timeout 60 "$KISTORE" --no-progress import liger --environment /dev/zero "$DATA/liger/sample.csv"
assert_contains "$ERR" "/dev/zero: expected at most 16777216 bytes, found more" "--environment /dev/zero: refused at the bound"
assert_exit 2 timeout 60 "$KISTORE" canon /dev/zero
assert_contains "$ERR" "/dev/zero: expected at most 16777216 bytes, found more" "canon /dev/zero: refused at the bound"
assert_store_unchanged "$before" "$S" "an endless stream: the store is unchanged"
pass "streams (standard input, a pipe, a FIFO) import as the file does; an endless one is refused at its bound"

# A file's name goes into the commit's body ("from NAME"): a line break there
# once added lines of the file's choosing (a trailer), and escape sequences
# reached the terminal of whoever ran `git log`.
evil="$W/in/"$'x\e]0;PWNED\a\n\nKistore-Op: rerun\nSigned-off-by: Mallory <m@example.org>'
cp "$TB/tb-vector_add.json" "$evil"
assert_exit 0 "$KISTORE" init "$W/named"
assert_exit 0 "$KISTORE" --no-progress --store "$W/named" import tritonbench --environment "$ENV_H200" "$evil"
body=$(git --git-dir="$W/named" log -1 --format=%B)
assert_eq 1 "$(grep -c '^Kistore-Op:' <<<"$body")" "one Kistore-Op line: the commit's own"
assert_eq "Kistore-Op: import" "$(grep '^Kistore-Op:' <<<"$body")" "the trailer is the import's"
assert_eq 0 "$(grep -c '^Signed-off-by' <<<"$body")" "no line the name made"
[[ $body != *$'\e'* && $body != *$'\a'* ]] || fail "an escape or bell byte in the commit message"
assert_contains "$body" 'from x\x1b]0;PWNED\x07\x0a\x0aKistore-Op: rerun\x0aSigned-off-by' "the name, escaped, on one line"
pass "a file name with line breaks and escape sequences: one line of the commit body, escaped"

# Many names in one record: an nvbench state of 200,000 summaries (10 MB, under
# a JSON text's limit) and FlashInfer-Bench traces of 50,000 libs each. Each
# name was once looked up among the names before it, minutes of CPU for one
# file; now linear (under a second here), bounded below by a timeout far
# above that.
"$PY" - "$DATA/nvbench/test_cmp.cut.json" "$W/in/many-summaries.json" "$DATA/flashinfer-bench/traces.sample.jsonl" \
    "$W/in/many-libs.jsonl" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
state = d["benchmarks"][0]["states"][0]
d["benchmarks"][0]["states"] = [state]
state["summaries"] += [{"tag": "extra/%x" % i, "data": [{"name": "value", "type": "float64", "value": "1"}]}
                       for i in range(200000)]
open(sys.argv[2], "w").write(json.dumps(d, separators=(",", ":")))
trace = json.loads(open(sys.argv[3]).readline())
trace["evaluation"]["environment"]["libs"] = {"lib%x" % i: "1.0" for i in range(50000)}
with open(sys.argv[4], "w") as out:
    for i in range(8):
        trace["solution"] = "s%d" % i
        out.write(json.dumps(trace) + "\n")
PY
assert_exit 0 "$KISTORE" init "$W/many"
assert_exit 0 timeout 60 "$KISTORE" --no-progress --store "$W/many" --json import nvbench "$W/in/many-summaries.json"
assert_eq "[]" "$(jv -c .rejected)" "200,000 summaries: nothing rejected"
assert_exit 0 timeout 60 "$KISTORE" --no-progress --store "$W/many" --json import flashinfer-bench "$W/in/many-libs.jsonl"
assert_eq "[]" "$(jv -c .rejected)" "50,000 libs a trace: nothing rejected"
assert_exit 0 "$KISTORE" --no-progress --store "$W/many" verify
pass "many names in one record (200,000 nvbench summaries, 50,000 libs a trace): imported in linear time"

# --keep-going: the ragged row is listed, the good rows go in.
assert_exit 0 ks --json import tritonbench --keep-going --environment "$ENV_H200" --op vector_add "$W/in/ragged.csv"
assert_eq 1 "$(jv '.rejected | length')" "one row rejected"
assert_contains "$(jv -r '.rejected[0].source')" "ragged.csv:3" "named by file:line"
assert_eq 30 "$(ks ls --kind run --format tsv | grep -c 'vector_add ·')" "15 good rows x 2 backends"
pass "--keep-going: a ragged row is listed, the others imported"
assert_exit 0 ks verify
assert_contains "$OUT" "0 problems" "verify is clean"
pass "verify is clean after every import"
summary
