#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Each harness's runs on the site, in `export` and in `compare` (issue 32):
# a store of KernelBench (eval results and the PyTorch baseline), tritonbench
# (twice: as measured, and a copy where triton_add at x=8192 failed its
# accuracy check), nvbench (the reference and the compare file of one build)
# and FlashInfer-Bench imports.
#
#   site:    a group page shows each run's value in its unit under the
#            group's statistic ("mean" for nvbench and KernelBench), and a
#            correctness column (passed, failed, not checked) with the lines
#            `kistore rank` prints under its table (how many checked, by what);
#   export:  csv and jsonl carry unit, status, correctness and correctnessBy,
#            as rank --json reads them;
#   compare: two runs of one group from two imports of one harness (nvbench's
#            ref and cmp: Welch's test on their mean, stdev and count;
#            tritonbench's two files: the same value, ratio 1).
# Hostile: a run whose correctness text and status hold <script>, quotes and
# terminal escape bytes is shown escaped on its page and neutralised in CSV.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in work in
use_store "$SERVERS_DIR/store"
O=$W/site
CHECK="$PY $here/lib/site_check.py"
DATA=$KISTORE_SOURCE_DIR/tests/data
run_of() { source_run "$S" "$1" "$2"; }
row_of() { grep "<tr id=\"run-${2:7:12}\">" "$1"; }
page_of() { echo "$O/groups/$(ks --json rank "$1" | jq -r .group | cut -d: -f2).html"; }

assert_exit 0 ks init
assert_exit 0 ks import kernelbench --level 1 --run-name codex_l1 "$DATA/kernelbench/eval_results.sample.json"
assert_exit 0 ks import kernelbench "$DATA/kernelbench/baseline_time_torch.sample.json"
tb=$DATA/tritonbench/tb-vector_add.json
SRC_TB=$tb OUTF=$W/in/tb-accuracy.json "$PY" -c "import json, os
d = json.load(open(os.environ['SRC_TB']))
d['tritonbench_vector_add_fwd[x_8192-triton_add]_accuracy'] = 0
d['tritonbench_vector_add_fwd[x_8192-torch_add]_accuracy'] = 1
open(os.environ['OUTF'], 'w').write(json.dumps(d))"
assert_exit 0 ks import tritonbench --environment "$DATA/tritonbench/env-h200.json" "$tb"
assert_exit 0 ks import tritonbench --environment "$DATA/tritonbench/env-h200.json" "$W/in/tb-accuracy.json"
assert_exit 0 ks import nvbench "$DATA/nvbench/test_ref.cut.json"
assert_exit 0 ks import nvbench "$DATA/nvbench/test_cmp.cut.json"
assert_exit 0 ks import flashinfer-bench "$DATA/flashinfer-bench/traces.sample.jsonl"
pass "a store of four harnesses' imports"

# ---- compare across two imports of one harness -------------------------------------------
ref_sha=$(sha256sum "$DATA/nvbench/test_ref.cut.json" | cut -c1-16)
cmp_sha=$(sha256sum "$DATA/nvbench/test_cmp.cut.json" | cut -c1-16)
nv_a=$(run_of nvbench "nvbench.example.axes/simple/Device=0/Quadro GV100/$ref_sha")
nv_b=$(run_of nvbench "nvbench.example.axes/simple/Device=0/Quadro GV100/$cmp_sha")
[[ $nv_a == sha256:* && $nv_b == sha256:* && $nv_a != "$nv_b" ]] || fail "the state's run in each nvbench file: $nv_a $nv_b"
assert_exit 0 ks --json compare "$nv_a" "$nv_b"
assert_eq "true welch" "$(jv '"\(.sameGroup) \(.method)"')" "one group; Welch's test on nvbench's mean, stdev and sample count"
assert_contains "faster slower same ambiguous" "$(jv .verdict)" "a verdict"
assert_eq "moments moments" "$(jv '"\(.a.statistics) \(.b.statistics)"')" "each side's strongest evidence: its moments"
[[ $(jv '.p') != null ]] || fail "Welch's test gives a p-value"
assert_exit 0 ks compare "$nv_a" "$nv_b"
assert_contains "$OUT" "same comparison group" "text: same group"
assert_contains "$OUT" "Welch" "text: the method"
tb_sha=$(sha256sum "$tb" | cut -c1-16)
acc_sha=$(sha256sum "$W/in/tb-accuracy.json" | cut -c1-16)
tb_a=$(run_of tritonbench "vector_add_fwd/x_4096/torch_add/$tb_sha")
tb_b=$(run_of tritonbench "vector_add_fwd/x_4096/torch_add/$acc_sha")
assert_exit 0 ks --json compare "$tb_a" "$tb_b"
assert_eq "true 1" "$(jv '"\(.sameGroup) \(.ratio)"')" "tritonbench's two files: one group, the same p50"
pass "compare: two imports of nvbench (Welch's test) and of tritonbench (ratio 1), each pair in one group"

# ---- a hostile correctness text and status ------------------------------------------------
hostile=$'<script>alert(1)</script>"\e]8;;http://x\a\e[31m'
kb_ok=$(run_of kernelbench codex_l1/level1/problem1/sample0)
ks show "$kb_ok" --canonical | jq --arg h "$hostile" '
  .run.spec.correctness.by = ("by " + $h) | .run.spec.status = ("=cmd|" + $h) | .run.spec.correctness.passed = false
  | .run.spec.sourceNative.externalId = "hostile/1" | del(.run.metadata)' >"$W/in/hostile.json"
assert_exit 0 ks add "$W/in/hostile.json"
kb_bad=$(run_of kernelbench hostile/1)
[[ $kb_bad == sha256:* ]] || fail "the hostile run is stored"
pass "a run whose correctness text and status hold markup and terminal escapes"

# ---- the site ------------------------------------------------------------------------------
assert_exit 0 ks --json site "$O"
assert_exit 0 $CHECK links "$O"
if have_tool tidy; then
  assert_exit 0 $CHECK tidy "$O"
fi
pass "the site of the harnesses' store: every link resolves, every page well formed"

kb_wrong=$(run_of kernelbench codex_l1/level1/problem14/sample0)
kb_page=$(page_of "$kb_ok")
assert_contains "$(cat "$kb_page")" '<th>mean</th>' "KernelBench's statistic heads the value column"
assert_contains "$(cat "$kb_page")" "<th>correctness</th>" "a correctness column"
assert_contains "$(row_of "$kb_page" "$kb_ok")" "4.670 ms" "the value in its unit (4.67 ms, stored as 4670000 ns)"
assert_contains "$(row_of "$kb_page" "$kb_ok")" '<td class="correct-passed">passed</td>' "a checked, passed run"
assert_contains "$(cat "$kb_page")" "KernelBench: outputs compared with the PyTorch reference" "by what, as rank says"
assert_contains "$(cat "$kb_page")" "Correctness of the outputs, as each harness recorded it:" "the correctness lines under the table"
wrong_page=$(page_of "$kb_wrong")
assert_contains "$(row_of "$wrong_page" "$kb_wrong")" '<td class="correct-failed">failed</td>' "an incorrect KernelBench sample: failed"
assert_contains "$(row_of "$wrong_page" "$kb_wrong")" 'unrankable: status' "and unrankable, with the reason"
ks rank "$kb_ok" >"$W/rank.txt"
way=$(sed -n 's/^  \(checked, [0-9]* runs* ([0-9]* passed)\): KernelBench.*/\1/p' "$W/rank.txt")
[[ -n $way ]] || fail "rank prints the KernelBench way: $(cat "$W/rank.txt")"
assert_contains "$(cat "$kb_page")" "<li>$way: KernelBench" "the site's line is rank's: $way"
pass "site, KernelBench: mean in ms, a correctness column (passed, failed) and rank's correctness lines"

tb_wrong=$(run_of tritonbench "vector_add_fwd/x_8192/triton_add/$acc_sha")
tb_page=$(page_of "$tb_wrong")
assert_contains "$(cat "$tb_page")" '<th>median</th>' "tritonbench's statistic: the median"
assert_contains "$(row_of "$tb_page" "$tb_wrong")" '<td class="correct-failed">failed</td>' "accuracy 0: failed"
assert_contains "$(row_of "$tb_page" "$tb_wrong")" " us" "its value in microseconds"
tb_unchecked=$(run_of tritonbench "vector_add_fwd/x_8192/triton_add/$tb_sha")
assert_contains "$(row_of "$tb_page" "$tb_unchecked")" '<td class="correct-unchecked">not checked</td>' "no accuracy measured: not checked"
nv_page=$(page_of "$nv_a")
assert_contains "$(cat "$nv_page")" '<th>mean</th>' "nvbench's statistic: the mean"
assert_contains "$(row_of "$nv_page" "$nv_a")" '<td class="correct-unchecked">not checked</td>' "nvbench checks no output"
fi_run=$(ks ls --kind run --format tsv | grep gemm | head -1 | cut -f1)
fi_page=$(page_of "$fi_run")
assert_contains "$(cat "$fi_page")" "<th>correctness</th>" "FlashInfer-Bench: a correctness column"
assert_contains "$(cat "$fi_page")" "FlashInfer-Bench" "by what"
pass "site, tritonbench, nvbench, FlashInfer-Bench: each run's unit and correctness (failed, not checked, passed)"

hostile_page=$(page_of "$kb_bad")
assert_not_contains "$(cat "$hostile_page")" "<script>alert" "no markup from the correctness text or status"
assert_contains "$(cat "$hostile_page")" "by &lt;script&gt;alert(1)&lt;/script&gt;&quot;\\x1b]8;;http://x\\x07\\x1b[31m" \
  "the correctness text as text, escapes as \\xNN"
grep -q $'\e' "$hostile_page" && fail "an escape byte reached the page raw"
pass "site: hostile correctness text and status escaped"

# ---- export ---------------------------------------------------------------------------------
assert_exit 0 ks export
head -1 "$OUT_FILE" >"$W/header.csv"
assert_contains "$(cat "$W/header.csv")" ",value,unit,p20,p80," "the unit column"
assert_contains "$(cat "$W/header.csv")" ",storedLevel,status,correctness,correctnessBy" "status and correctness columns"
"$PY" - "$OUT_FILE" "${kb_ok#sha256:}" "${kb_wrong#sha256:}" "${nv_a#sha256:}" "${kb_bad#sha256:}" <<'PY' || fail "export csv rows"
import csv, sys
rows = {r["run"].split(":")[1]: r for r in csv.DictReader(open(sys.argv[1], newline=""))}
ok, wrong, nv, bad = (rows[h] for h in sys.argv[2:6])
assert (ok["value"], ok["unit"], ok["status"], ok["correctness"]) == ("4670000", "ns", "passed", "passed"), ok
assert ok["correctnessBy"].startswith("KernelBench: outputs compared"), ok
assert (wrong["status"], wrong["correctness"], wrong["rank"]) == ("incorrect", "failed", ""), wrong
assert (nv["unit"], nv["statistic"], nv["correctness"]) == ("ns", "mean", "not checked"), nv
assert bad["status"].startswith("'=cmd|<script>"), bad["status"]   # a formula neutralised, the text exact
assert bad["correctnessBy"].startswith("by <script>alert(1)</script>\"\x1b]8;;"), bad["correctnessBy"]
PY
assert_exit 0 ks export --format jsonl
got=$(printf '%s\n' "$OUT" | jq -r --arg r "$kb_wrong" 'select(.run == $r) | "\(.unit) \(.status) \(.correctness)"')
assert_eq "null incorrect failed" "$got" "jsonl: an untimed incorrect sample has no unit, its status and correctness"
got=$(printf '%s\n' "$OUT" | jq -r --arg r "$tb_a" 'select(.run == $r) | "\(.unit) \(.status) \(.correctness)"')
assert_eq "ns passed not checked" "$got" "jsonl: tritonbench without accuracy"
pass "export: unit, status, correctness and correctnessBy in csv and jsonl, as rank reads them"
summary
