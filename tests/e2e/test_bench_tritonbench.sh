#!/usr/bin/env bash
# kistore bench tritonbench without a GPU: tests/e2e/gpu_double/ stands in for the GPU (nvidia-smi
# and PyTorch of an H200 host) and for tritonbench's run.py (the real H200 output of vector_add and
# softmax, gpu_double/tritonbench/README.md). The kistore under test is the real binary. What the
# runner writes is hostile input: a link, a FIFO, 17 MiB, a JSON text cut short are refused, and
# the store is unchanged byte for byte when nothing is added.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
data="$here/../data"
double="$here/gpu_double"
checkout="$double/tritonbench"
export KISTORE_AUTHOR="Bench Test <bench@example.org>"
use_store "$SERVERS_DIR/store"
cd "$SERVERS_DIR"
export PATH="$double:$PATH"
assert_exit 0 ks init
cp "$data/keys/controller" "$data/keys/controller.pub" .
chmod 600 controller
assert_exit 0 ks trust add controller@example.org controller.pub
before_checkout=$(store_fingerprint "$checkout")
store_before=$(store_fingerprint "$KISTORE_DIR")

# --- refused before anything runs ---------------------------------------------------------------
assert_exit 2 ks bench tritonbench softmax
assert_contains "$ERR" "--tritonbench DIR is required" "no checkout"
assert_exit 2 ks bench tritonbench --tritonbench "$SERVERS_DIR" softmax
assert_contains "$ERR" "expected a tritonbench checkout (with run.py and tritonbench/)" "not a checkout"
for op in --help ../../etc/passwd "-x" "soft max" ""; do
  assert_exit 2 ks bench tritonbench --tritonbench "$checkout" -- "$op"
  assert_contains "$ERR" "expected the name of a tritonbench operator" "operator $op refused"
done
assert_exit 2 ks bench tritonbench --tritonbench "$checkout" softmax --mode sideways
assert_contains "$ERR" "--mode \"sideways\": expected fwd, bwd, fwd_bwd or fwd_no_grad" "bad mode"
assert_exit 2 ks bench tritonbench --tritonbench "$checkout" softmax --rerun
assert_contains "$ERR" "bench tritonbench --rerun: controlled reruns must be signed" "--rerun needs --sign"
assert_exit 2 ks bench tritonbench --tritonbench "$checkout" --liger "$checkout" softmax
assert_contains "$ERR" "--liger is for bench liger" "options of the other suite"
assert_store_unchanged "$store_before" "$KISTORE_DIR" "refused before running"
pass "bench tritonbench: bad usage refused before anything runs, nothing written"

# --- what the runner writes is read as hostile input ---------------------------------------------
assert_exit 2 "$KISTORE" bench tritonbench --tritonbench "$checkout" fails hangs silent linked fifo huge garbled \
    --timeout 2
assert_contains "$ERR" "fails: exit 1 after" "failed operator: exit code"
assert_contains "$ERR" "CUDA out of memory" "failed operator: stderr tail"
assert_contains "$ERR" "hangs: timed out after 2 s" "hung operator: timed out"
assert_contains "$ERR" "silent: exit 0, but it wrote no results (--output-json)" "no output"
assert_contains "$ERR" "linked: exit 0, but results (--output-json) is a symbolic link" "a link is not followed"
assert_contains "$ERR" "fifo: exit 0, but results (--output-json) is not a regular file" "a FIFO is not waited on"
assert_contains "$ERR" "huge: exit 0, but results (--output-json) is larger than 16 MiB" "17 MiB refused"
assert_contains "$ERR" "garbled:garbled.json" "a JSON text cut short: named"
assert_contains "$ERR" "bench tritonbench: the operators wrote no usable row; nothing was added" "nothing added"
assert_store_unchanged "$store_before" "$KISTORE_DIR" "hostile outputs"
assert_eq "$before_checkout" "$(store_fingerprint "$checkout")" "the checkout is not written"
pass "bench tritonbench: failures, a link, a FIFO, 17 MiB and a cut JSON text never become runs; store unchanged"

# A process the operator started outside its group (setsid) is adopted by kistore and ended with it.
assert_exit 2 "$KISTORE" bench tritonbench --env GPU_DOUBLE_PIDS="$PWD/daemon.pid" --tritonbench "$checkout" daemon
assert_contains "$ERR" "daemon: exit 0, but it wrote no results (--output-json)" "the daemon operator ran"
[[ -s daemon.pid ]] || fail "the daemon operator wrote no pid"
if kill -0 "$(cat daemon.pid)" 2>/dev/null; then
  kill "$(cat daemon.pid)"
  fail "the process the operator left outside its group (setsid) runs on after kistore"
fi
# A child kistore had before it started anything (a shell that exec'd it left it one) is not its to end.
sh -c 'sleep 300 & echo $! > inherited.pid; exec "$0" bench tritonbench --env GPU_DOUBLE_PIDS="$1/daemon.pid" \
    --tritonbench "$2" daemon' "$KISTORE" "$PWD" "$checkout" >/dev/null 2>&1 || true
if ! kill -0 "$(cat inherited.pid)" 2>/dev/null; then fail "kistore ended a child it did not start"; fi
kill "$(cat inherited.pid)"
if kill -0 "$(cat daemon.pid)" 2>/dev/null; then
  kill "$(cat daemon.pid)"
  fail "exec'd by a shell: the process the operator left outside its group runs on after kistore"
fi

# The same when kistore is interrupted while the operator still runs.
rm -f daemon.pid
"$KISTORE" bench tritonbench --env GPU_DOUBLE_PIDS="$PWD/daemon.pid" --env GPU_DOUBLE_HANG=1 \
    --tritonbench "$checkout" daemon >/dev/null 2>interrupted.err &
bench_pid=$!
for _ in $(seq 200); do [[ -s daemon.pid ]] && break; sleep 0.05; done
[[ -s daemon.pid ]] || fail "the hanging daemon operator wrote no pid"
kill -TERM "$bench_pid"  # a background command of a script ignores SIGINT
rc=0
wait "$bench_pid" || rc=$?
assert_eq 130 "$rc" "interrupted: exit 130"
assert_contains "$(cat interrupted.err)" "error: interrupted; nothing was written" "interrupted: said so"
if kill -0 "$(cat daemon.pid)" 2>/dev/null; then
  kill "$(cat daemon.pid)"
  fail "interrupted: the process the operator left outside its group runs on after kistore"
fi
# And when the operator ignores SIGTERM, holding its own child in a session of its own: that child
# is never adopted while the operator lives, and is ended with the operator's tree.
rm -f daemon.pid
"$KISTORE" bench tritonbench --env GPU_DOUBLE_PIDS="$PWD/daemon.pid" --tritonbench "$checkout" stubborn \
    >/dev/null 2>interrupted.err &
bench_pid=$!
for _ in $(seq 200); do [[ -s daemon.pid ]] && break; sleep 0.05; done
[[ -s daemon.pid ]] || fail "the stubborn operator wrote no pid"
kill -TERM "$bench_pid"
rc=0
wait "$bench_pid" || rc=$?
assert_eq 130 "$rc" "interrupted, the operator ignoring SIGTERM: exit 130"
sleep 0.2
if kill -0 "$(cat daemon.pid)" 2>/dev/null; then
  kill "$(cat daemon.pid)"
  fail "interrupted: the child a stubborn operator kept in a session of its own runs on after kistore"
fi
assert_store_unchanged "$store_before" "$KISTORE_DIR" "an operator that leaves a process behind"
pass "bench tritonbench: a process an operator leaves outside its group (setsid) does not outlive kistore"

mkdir victim
assert_exit 2 "$KISTORE" bench tritonbench --env GPU_DOUBLE_VICTIM="$PWD/victim" --env GPU_DOUBLE_FAIL_ESCAPES=1 \
    --tritonbench "$checkout" othermode outlink escapes
assert_contains "$ERR" 'expected the mode that --mode names, "fwd", found the key "tritonbench_othermode_bwd' \
    "a file of another mode than the one that ran (fwd, run.py's default) is refused"
assert_contains "$ERR" "outlink: exit 0, but it wrote no results (--output-json)" \
    "an output folder swapped for a link: its output is not read through the link"
assert_eq 1 "$(find victim -type f | wc -l)" "the file behind the link is neither read nor removed"
assert_contains "$ERR" '\x1b]0;window title\x07\x1b[2Jcleared' "the failed operator's stderr, escaped"
if grep -q $'\x1b' <<<"$ERR"; then fail "a raw escape sequence reached the terminal"; fi
assert_exit 2 "$KISTORE" bench tritonbench --tritonbench "$checkout" escapes
assert_contains "$ERR" 'warning: row left out: escapes:escapes.json: /tritonbench_escapes_fwd[x_1-\x1b]0;owned' \
    "a rejected key's pointer, escaped"
if grep -q $'\x1b' <<<"$ERR"; then fail "a raw escape sequence reached the terminal"; fi
assert_store_unchanged "$store_before" "$KISTORE_DIR" "another mode, a swapped folder, escapes"
pass "bench tritonbench: another mode refused, a swapped output folder not followed, escape sequences escaped"

: >upgrade
assert_exit 2 "$KISTORE" bench tritonbench --env GPU_DOUBLE_UPGRADE=$PWD/upgrade --tritonbench "$checkout" softmax
assert_contains "$ERR" "the environment changed while the benchmarks ran" "a driver change refuses the rows"
assert_store_unchanged "$store_before" "$KISTORE_DIR" "environment changed"
pass "bench tritonbench: a driver change between the two captures refuses the rows"

# --- measured: runs with their correctness ----------------------------------------------------------
assert_exit 1 "$KISTORE" --json bench tritonbench --env GPU_DOUBLE_WRONG=triton_softmax --tritonbench "$checkout" \
    softmax vector_add fails
assert_contains "$ERR" "bench: [1/3] softmax: running" "progress line"
assert_contains "$ERR" "bench: [3/3] fails: FAILED, exit 1" "progress line of the failure"
python3 - "$OUT" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
assert [o["succeeded"] for o in r["operators"]] == [True, True, False], r["operators"]
assert r["rows"] == 228, r["rows"]  # softmax: 98 inputs x 2 backends, vector_add: 16 x 2 (no "average")
assert r["environment"]["spec"]["hardware"]["product"] == "NVIDIA H200"
PY
assert_eq 228 "$(ks ls --kind BenchmarkRun | wc -l)" "a run per input and backend"
assert_exit 0 ks verify
# A backend tritonbench found wrong (accuracy 0) is stored as incorrect and never ranked above a
# correct one: in each softmax group the naive (baseline) run is first, the Triton one unranked.
assert_exit 0 ks export --format jsonl --benchmark softmax
python3 - "$OUT" <<'PY'
import json, sys
rows = [json.loads(l) for l in sys.argv[1].splitlines()]
assert len(rows) == 196, len(rows)
for r in rows:
    if "triton_softmax" in r["implementation"]:
        assert (r["status"], r["correctness"], r["rank"]) == ("incorrect", "failed", None), r
    else:
        assert (r["status"], r["correctness"], r["rank"]) == ("passed", "not checked", 1), r
assert all("accuracy" in r["correctnessBy"] for r in rows if r["correctness"] == "failed")
PY
assert_eq "$before_checkout" "$(store_fingerprint "$checkout")" "the checkout is not written"
pass "bench tritonbench: the operators that succeeded become runs, one commit; a wrong backend incorrect, unranked"

# --- a second bench: controlled reruns of the stored runs ----------------------------------------------
assert_exit 0 "$KISTORE" --json bench tritonbench --env GPU_DOUBLE_SLOWER=1.5 --tritonbench "$checkout" vector_add \
    --rerun --sign controller
python3 - "$OUT" <<'PY'
import json, sys
r = json.loads(sys.argv[1])["reruns"]
# The baseline (torch_add) measures the same: reproduced; triton_add 1.5 times slower: disputed.
assert (r["reproduced"], r["disputed"]) == (16, 16), r
PY
assert_eq 16 "$(ks ls --kind BenchmarkRun --level disputed | wc -l)" "16 disputed"
assert_exit 0 ks verify
# An output that holds an input twice (x_4096 and x_4096.0, the second 5 times slower) would make
# two signed reruns of one run, the last verdict standing: neither row is used.
assert_exit 0 ks bench tritonbench --tritonbench "$checkout" twice
before_twice=$(store_fingerprint "$KISTORE_DIR")
assert_exit 0 "$KISTORE" --json bench tritonbench --env GPU_DOUBLE_SLOWER=1.5 --tritonbench "$checkout" twice \
    --rerun --sign controller
assert_contains "$ERR" "as twice:twice.json: /tritonbench_twice_fwd[x_4096-triton_add]_latency does; neither is used" \
    "a run two rows would rerun: both left out, said"
python3 - "$OUT" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
# 16 inputs, x_4096 twice: its four rows left out; at the 15 others torch_add measures as stored
# (reproduced, a rerun of its own: the file differs, so do the externalIds) and triton_add 1.5 times
# slower (disputed).
assert r["leftOut"] == 4 and (r["reruns"]["reproduced"], r["reruns"]["disputed"]) == (15, 15), r
assert not [x for x in r["reruns"]["list"] if "[x_4096-" in x["where"] or "[x_4096.0-" in x["where"]], r
PY
assert_exit 0 ks verify
pass "bench tritonbench --rerun: each row a signed controlled rerun of its stored run"
summary
