#!/usr/bin/env bash
# kistore capture and kistore bench liger without a GPU: tests/e2e/gpu_double/ stands in for
# the GPU (nvidia-smi printing what the real one printed on an H200 host, a python3 whose
# PyTorch sees that H200, and a Liger-Kernel checkout whose scripts write rows as Liger's
# utils.py does). The doubles are of the GPU; the kistore under test is the real binary.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
data="$here/../data"
double="$here/gpu_double"
export KISTORE_AUTHOR="Bench Test <bench@example.org>"
use_store "$SERVERS_DIR/store"
cd "$SERVERS_DIR"
export PATH="$double:$PATH"

# --- capture -----------------------------------------------------------------
assert_exit 0 ks capture --json
env_doc=$OUT
python3 - "$OUT" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
h, s = d["spec"]["hardware"], d["spec"]["software"]
assert d["kind"] == "ExecutionEnvironment"
assert h == {"vendor": "nvidia", "product": "NVIDIA H200", "architecture": "sm_90", "memoryMiB": 143771,
             "smCount": 132, "maxClocksMHz": {"sm": 1980, "memory": 3201}, "powerLimitW": 700}, h
assert s == {"driver": "580.159.04", "cuda": "13.0", "python": "3.12.3", "torch": "2.11.0+cu130",
             "triton": "3.6.0"}, s
PY
assert_not_contains "$OUT" "GPU-0000" "no UUID"
host=$(hostname)
((${#host} < 6)) || assert_not_contains "$OUT" "$host" "no host name"  # (a short name may occur by chance)
pass "capture: the H200 fixtures, every field"

assert_exit 0 ks capture --python /usr/bin/python3
assert_contains "$ERR" "warning: PyTorch is not installed for /usr/bin/python3" "no torch: said on stderr"
assert_contains "$OUT" '"driver": "580.159.04"' "no torch: the driver part"
assert_not_contains "$OUT" smCount "no torch: no smCount"
assert_not_contains "$OUT" '"torch"' "no torch: no torch version"
pass "capture without torch: the hardware part alone, said on stderr"

assert_exit 2 env PATH=/usr/bin:/bin "$KISTORE" capture
assert_eq "" "$OUT" "no GPU: nothing on stdout"
assert_eq 1 "$(wc -l <<<"$ERR")" "no GPU: one line"
assert_contains "$ERR" "nvidia-smi: not found on PATH" "no GPU: says what is missing"
pass "capture without nvidia-smi: exit 2, one line"

assert_exit 2 "$KISTORE" capture --env GPU_DOUBLE_FAIL=9
assert_contains "$ERR" "nvidia-smi -q -x: exit 9 (NVIDIA-SMI has failed" "failing nvidia-smi"
head -c 4000 "$data/gpu-env/nvidia-smi-q.xml" > cut.xml
assert_exit 2 "$KISTORE" capture --env GPU_DOUBLE_XML=$PWD/cut.xml
assert_eq "" "$OUT" "cut-off XML: no document"
assert_contains "$ERR" "nvidia-smi -q -x: <nvidia_smi_log>" "cut-off XML: named"
assert_exit 2 ks capture --python /nonexistent/python
assert_contains "$ERR" "/nonexistent/python" "a missing --python is named"
pass "capture: failing or malformed tools -> exit 2, no document"

# --- import liger --environment ------------------------------------------------
printf '%s\n' "$env_doc" > h200.json
assert_exit 0 ks init
assert_exit 2 ks --json import liger "$data/liger/sample.csv" --environment h200.json
assert_contains "$ERR$OUT" "gpu_name: expected the environment's GPU \"NVIDIA H200\"" "rows of other GPUs refused"
assert_eq 0 "$(ks ls --kind BenchmarkRun | wc -l)" "nothing imported"
pass "import liger --environment: rows of another GPU are refused, nothing written"

# The same row imported plain and with the captured environment: two runs that differ in their
# environment alone, which compare says (issue 18: comparability is honest).
{ head -1 "$data/liger/sample.csv"; sed -n 2p "$data/liger/sample.csv" | sed 's/NVIDIA GeForce RTX 4090/NVIDIA H200/'; } > h200-row.csv
assert_exit 0 ks --store cmp init
assert_exit 0 ks --store cmp import liger h200-row.csv
assert_exit 0 ks --store cmp --json ls --kind BenchmarkRun
plain=$(jq -r '.documents[0].digest' <<<"$OUT")
assert_exit 0 ks --store cmp import liger h200-row.csv --environment h200.json
assert_exit 0 ks --store cmp --json ls --kind BenchmarkRun
captured=$(jq -r --arg p "$plain" '[.documents[].digest | select(. != $p)][0]' <<<"$OUT")
assert_exit 0 ks --store cmp --json compare "$plain" "$captured"
assert_eq '["environment"]' "$(jq -c .differs <<<"$OUT")" "the captured and the imported run differ in their environment alone"
assert_exit 0 ks --store cmp compare "$plain" "$captured"
assert_contains "$OUT" "different comparison groups: environment differs" "compare says so"
pass "compare: a captured run and the imported one differ only in environment, and compare says so"

# --- bench liger -----------------------------------------------------------------
checkout="$double/liger"
cp "$data/keys/controller" "$data/keys/controller.pub" .
chmod 600 controller
assert_exit 0 ks trust add controller@example.org controller.pub
before_checkout=$(store_fingerprint "$checkout")
store_before=$(store_fingerprint "$KISTORE_DIR")

assert_exit 2 "$KISTORE" bench liger --env "GPU_DOUBLE_TIME=2026-01-01 09:00:00" --liger "$checkout" \
    benchmark_double_fails.py benchmark_double_hangs.py --timeout 2
assert_contains "$ERR" "benchmark_double_fails.py: exit 1 after" "failed script: exit code"
assert_contains "$ERR" "CUDA out of memory" "failed script: stderr tail"
assert_contains "$ERR" "benchmark_double_hangs.py: timed out after 2 s" "hung script: timed out"
assert_contains "$ERR" "no script succeeded; nothing was added" "none succeeded"
assert_store_unchanged "$store_before" "$KISTORE_DIR" "no script succeeded"
pass "bench: failed and timed-out scripts never become runs; nothing committed when none succeeded"

assert_exit 2 ks bench liger --liger "$checkout" benchmark_double_geglu.py --rerun
assert_contains "$ERR" "must be signed" "--rerun needs --sign"
assert_exit 2 ks bench liger --liger "$checkout" benchmark_nope.py
assert_contains "$ERR" "benchmark_nope.py" "unknown script named"
assert_store_unchanged "$store_before" "$KISTORE_DIR" "refused before running"
pass "bench: bad usage refused before anything runs"

: >upgrade
assert_exit 2 "$KISTORE" bench liger --env GPU_DOUBLE_UPGRADE=$PWD/upgrade --env "GPU_DOUBLE_TIME=2026-01-01 09:30:00" \
    --liger "$checkout" benchmark_double_geglu.py
assert_contains "$ERR" "the environment changed while the benchmarks ran (software.driver \"580.159.04\" -> \"580.200.01\")" "driver change"
assert_store_unchanged "$store_before" "$KISTORE_DIR" "environment changed"
pass "bench: a driver change between the two captures refuses the rows"

start=$(date +%s)
assert_exit 1 "$KISTORE" --json bench liger --env "GPU_DOUBLE_TIME=2026-01-01 10:00:00" --liger "$checkout" \
    benchmark_double_geglu.py benchmark_double_fails.py
assert_contains "$ERR" "bench: [1/2] benchmark_double_geglu.py: running" "progress line"
assert_contains "$ERR" "bench: [2/2] benchmark_double_fails.py: FAILED, exit 1" "progress line of the failure"
python3 - "$OUT" "$env_doc" <<'PY'
import json, sys
r, env = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert r["rows"] == 12 and r["added"] > 12, r
assert [s["succeeded"] for s in r["scripts"]] == [True, False], r["scripts"]
env.pop("metadata", None); r["environment"].pop("metadata", None)
assert r["environment"]["spec"]["hardware"] == env["spec"]["hardware"]
assert r["environment"]["spec"]["software"]["liger-kernel"] == "0.8.2"  # the checkout's version, seen by Python
assert r["reruns"]["reproduced"] == 0 and r["reruns"]["disputed"] == 0
PY
assert_eq 12 "$(ks ls --kind BenchmarkRun | wc -l)" "12 runs"
assert_eq "$before_checkout" "$(store_fingerprint "$checkout")" "the checkout is not written"
assert_exit 0 ks verify
pass "bench: the rows of the script that succeeded become runs, one commit; the checkout untouched"

assert_exit 0 "$KISTORE" --json bench liger --env "GPU_DOUBLE_TIME=2026-01-01 11:00:00" --env GPU_DOUBLE_SLOWER=1.5 \
    --liger "$checkout" benchmark_double_geglu.py --rerun --sign controller
python3 - "$OUT" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
reruns = r["reruns"]
assert (reruns["reproduced"], reruns["disputed"]) == (8, 4), reruns
assert r["added"] == 0 and r["commit"] is None, r
disputed = [x for x in reruns["list"] if x["level"] == "disputed"]
assert all(abs(x["difference"] - 0.5) < 1e-6 for x in disputed), disputed
PY
assert_eq 8 "$(ks ls --kind BenchmarkRun --level reproduced | wc -l)" "8 reproduced"
assert_eq 4 "$(ks ls --kind BenchmarkRun --level disputed | wc -l)" "4 disputed"
assert_eq 12 "$(git --git-dir="$KISTORE_DIR" log --format=%s main | grep -c '^rerun: ')" "a signed commit per rerun"
assert_exit 0 ks verify
assert_exit 0 ks bench liger --liger "$checkout" benchmark_double_geglu.py --rerun --sign controller
assert_contains "$OUT" "12 controlled reruns: 12 reproduced within 10 %, 0 disputed" "summary line"
pass "bench --rerun: each row a signed controlled rerun of its stored run; reproduced/disputed counted"
printf 'bench e2e took %s s\n' $(( $(date +%s) - start ))
summary
