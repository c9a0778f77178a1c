#!/usr/bin/env bash
# `kistore import nvbench|kernelbench` on real outputs of each harness
# (tests/data/{nvbench,kernelbench}, cut from the published files): what each
# record becomes (status, measurements in ns, environment, source id), one
# commit, a second import adding nothing; then hostile files, table-driven:
# each must exit 2, name the file and the JSON pointer (or line), and leave
# the store byte for byte as it was.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
DATA_NV=$KISTORE_SOURCE_DIR/tests/data/nvbench
DATA_KB=$KISTORE_SOURCE_DIR/tests/data/kernelbench
export KISTORE_AUTHOR="Importer Test <import@example.org>"
work_in harnesses in
use_store "$W/store"
assert_exit 0 ks init

# run_field SOURCE EXTERNAL-ID JQ : a field of the run that claims that id.
run_of() { source_run "$S" "$1" "$2"; }
run_field() { ks cat "$(run_of "$1" "$2")" | jq -r "$3"; }

# ================================ nvbench =====================================
ref=$DATA_NV/test_ref.cut.json
ref_sha=$(sha256sum "$ref" | cut -c1-16)
assert_exit 0 ks --json import nvbench "$ref"
assert_eq "[]" "$(jv -c .rejected)" "nothing rejected"
assert_eq 6 "$(ks ls --kind run --format tsv | tail -n +2 | wc -l)" "6 states -> 6 runs"
id="nvbench.example.axes/simple/Device=0/Quadro GV100/$ref_sha"
assert_eq passed "$(run_field nvbench "$id" .spec.status)" "a measured state is passed"
# nv/cold/time/gpu/mean "0.0010034715849794225" s -> ns
assert_eq 1003471.5849794225 "$(run_field nvbench "$id" .spec.timing.latencyNs.mean)" "GPU mean in ns"
assert_eq "mean" "$(run_field nvbench "$id" .spec.timing.primaryStatistic)" "primary statistic: nvbench's mean"
assert_eq 0.0010034715849794225 "$(run_field nvbench "$id" '.spec.sourceNative.metrics["nv/cold/time/gpu/mean"]')" \
    "sourceNative keeps nvbench's own string"
assert_eq "499 samples" "$(run_field nvbench "$id" '.spec.measurements[] | select(.metric=="latency" and .statistic=="count") | "\(.value) \(.unit)"')" \
    "the cold sample count is a measurement"
env=$(ks cat "$(run_field nvbench "$id" .spec.environmentDigest)")
assert_eq "nvidia Quadro GV100 sm_70" "$(jq -r '.spec.hardware | "\(.vendor) \(.product) \(.architecture)"' <<<"$env")" \
    "environment from /devices: sm_version 700 -> sm_70"
gp=$(run_field nvbench "nvbench.example.axes/simple/Device=1/Quadro GP100/$ref_sha" .spec.environmentDigest)
assert_eq sm_60 "$(ks cat "$gp" | jq -r .spec.hardware.architecture)" "the second device is its own environment"
axis_run=$(ks ls --kind run --format tsv | grep -c single_float64_axis || true)
assert_eq 4 "$axis_run" "four states of single_float64_axis"
pass "nvbench: one run per state, GPU mean in ns, environment per device, nvbench's numbers kept"
wl=$(ks cat "$(ks cat "$(run_of nvbench "nvbench.example.axes/single_float64_axis/Device=0 Duration=0/Quadro GV100/$ref_sha")" | jq -r .spec.workloadDigest)")
assert_eq '{"definition":"single_float64_axis","parameters":{"Duration":0}}' "$(jq -c .spec <<<"$wl")" \
    "workload: the benchmark and its axis values, numbers as numbers"
pass "nvbench: workload = benchmark name + axis values"

head=$(head_of "$S")
assert_exit 0 ks --json import nvbench "$ref"
assert_eq 0 "$(jv .added)" "re-import adds nothing"
assert_eq "$head" "$(head_of "$S")" "re-import makes no commit"
pass "nvbench: a second import changes nothing"

# The compare file is a second run of the same build: its states join the
# reference's groups.
assert_exit 0 ks --json import nvbench "$DATA_NV/test_cmp.cut.json"
assert_exit 0 ks --json rank "$(run_of nvbench "$id")"
assert_eq 2 "$(jv '.members | length')" "ref and cmp of one state share a comparison group"
pass "nvbench: two files of one benchmark compare"

# ============================== KernelBench ===================================
eval_file=$DATA_KB/eval_results.sample.json
assert_exit 2 ks import kernelbench "$eval_file"
assert_contains "$ERR" "$eval_file" "names the file"
assert_contains "$ERR" "--level" "says how to give the level"
pass "kernelbench: eval results without --level are refused, saying what to pass"
assert_exit 0 ks --json import kernelbench --level 1 --run-name codex_l1 "$eval_file"
assert_eq 5 "$(ks ls --kind run --format tsv | grep -c KernelBench)" "5 samples -> 5 runs"
st() { run_field kernelbench "codex_l1/level1/problem$1/sample0" .spec.status; }
assert_eq "passed incorrect runtime_error runtime_error" "$(st 1) $(st 14) $(st 62) $(st 93)" \
    "statuses from compiled/correctness and the error members"
assert_eq 4670000 "$(run_field kernelbench codex_l1/level1/problem1/sample0 .spec.timing.latencyNs.mean)" "runtime 4.67 ms -> ns"
assert_eq "(0 / 5)" "$(run_field kernelbench codex_l1/level1/problem14/sample0 .spec.correctness.trials)" "the failed check's trials kept"
assert_eq "false" "$(run_field kernelbench codex_l1/level1/problem14/sample0 .spec.correctness.passed)" "correctness.passed false"
assert_contains "$(run_field kernelbench codex_l1/level1/problem62/sample0 .spec.error)" "illegal memory access" "the error is kept"
assert_contains "$(run_field kernelbench codex_l1/level1/problem93/sample0 .spec.error)" "torch.OutOfMemoryError" "with its exception's name"
pass "kernelbench: incorrect and failed samples are stored with their status and error"
reported=$(ks ls --kind run --level reported --format tsv | grep -c KernelBench || true)
assert_eq 3 "$reported" "the three failed samples are reported, not source-native"
pass "kernelbench: a sample that is not passed is at level reported (SPEC §1)"
env=$(ks cat "$(run_field kernelbench codex_l1/level1/problem1/sample0 .spec.environmentDigest)")
assert_eq "NVIDIA GeForce RTX 4090 sm_89" "$(jq -r '.spec.hardware | "\(.product) \(.architecture)"' <<<"$env")" \
    "environment from metadata.hardware"
head=$(head_of "$S")
assert_exit 0 ks --json import kernelbench --level 1 --run-name codex_l1 "$eval_file"
assert_eq 0 "$(jv .added)" "re-import adds nothing"
assert_eq "$head" "$(head_of "$S")" "no commit"
pass "kernelbench: a second import changes nothing"
assert_exit 0 ks --json import kernelbench --level 1 "$DATA_KB/eval_results.legacy.sample.json"
assert_eq 9 "$(ks ls --kind run --format tsv | grep -c KernelBench)" "legacy shape: 4 more runs"
assert_eq passed "$(run_field kernelbench eval_results.legacy.sample/level1/problem1/sample0 .spec.status)" \
    "the shape before pass@k: one sample per problem; run name from the file name"
pass "kernelbench: the legacy shape imports"
assert_exit 0 ks --json import kernelbench "$DATA_KB/baseline_time_torch.sample.json"
b=baseline/baseline_time_torch.sample/level1/1_Square_matrix_multiplication_.py
assert_eq 2660000 "$(run_field kernelbench "$b" .spec.timing.latencyNs.mean)" "baseline mean 2.66 ms -> ns"
impl=$(ks cat "$(run_field kernelbench "$b" .spec.implementationDigest)" | jq -r .spec.name)
assert_eq "PyTorch eager" "$impl" "the baseline is PyTorch eager"
pass "kernelbench: baseline timings are PyTorch eager runs of the same workloads"
assert_exit 0 ks verify
pass "verify is clean after every import"

# ============================== tritonbench ===================================
DATA_TB=$KISTORE_SOURCE_DIR/tests/data/tritonbench
tb=$DATA_TB/tb-vector_add.json
tb_sha=$(sha256sum "$tb" | cut -c1-16)
before=$(store_fingerprint "$S")
assert_exit 2 ks import tritonbench "$tb"
assert_contains "$ERR" "$tb" "names the file"
assert_contains "$ERR" "kistore capture" "says how to get an environment"
assert_store_unchanged "$before" "$S" "nothing written"
pass "tritonbench: a file without --environment is refused, saying how to get one"
assert_exit 0 ks --json import tritonbench --environment "$DATA_TB/env-h200.json" "$tb"
assert_eq "[]" "$(jv -c .rejected)" "nothing rejected"
assert_eq 32 "$(ks ls --kind run --format tsv | grep -c 'vector_add ·')" "16 inputs x 2 backends; the average row is no input"
t=vector_add_fwd/x_4096/torch_add/$tb_sha
assert_eq 3839.9999029934406 "$(run_field tritonbench "$t" .spec.timing.latencyNs.median)" "p50 latency \"0.0038399999029934406\" ms -> ns"
assert_eq '{"mode":"fwd","x_val":4096}' "$(ks cat "$(run_field tritonbench "$t" .spec.workloadDigest)" | jq -c .spec.parameters)" "workload: x value and mode"
assert_eq "NVIDIA H200" "$(ks cat "$(run_field tritonbench "$t" .spec.environmentDigest)" | jq -r .spec.hardware.product)" "environment from --environment"
assert_eq 12.800000323355205 "$(run_field tritonbench "$t" '.spec.measurements[] | select(.metric=="memory-throughput") | .value')" \
    "gbps list -> its median"
pass "tritonbench: one run per input and backend, p50 in ns, environment from --environment"

# tritonbench's own accuracy check, as a real run on an H100 wrote it (--metrics latency,accuracy):
# every triton_add run checked and passed, the baseline (torch_add) not checked by it.
h100=$DATA_TB/tb-vector_add-h100.json
h100_sha=$(sha256sum "$h100" | cut -c1-16)
assert_exit 0 ks --json import tritonbench --environment "$DATA_TB/env-h100.json" "$h100"
assert_eq "[]" "$(jv -c .rejected)" "nothing rejected"
checked=$(run_of tritonbench "vector_add_fwd/x_4096/triton_add/$h100_sha")
assert_eq passed "$(ks cat "$checked" | jq -r .spec.status)" "accuracy 1.0 -> passed"
assert_eq true "$(ks cat "$checked" | jq -r .spec.correctness.passed)" "correctness checked by tritonbench's accuracy metric"
assert_eq 4416.000097990036 "$(ks cat "$checked" | jq -r .spec.timing.latencyNs.median)" "p50 \"0.004416000097990036\" ms -> ns"
assert_eq "NVIDIA H100 80GB HBM3" "$(ks cat "$(run_field tritonbench "vector_add_fwd/x_4096/triton_add/$h100_sha" .spec.environmentDigest)" | jq -r .spec.hardware.product)" "the H100's environment"
base=$(run_of tritonbench "vector_add_fwd/x_4096/torch_add/$h100_sha")
assert_eq false "$(ks cat "$base" | jq -r .spec.correctness.checked)" "the baseline itself is not checked"
pass "tritonbench: a real H100 run with --metrics accuracy: each backend checked against the baseline, passed"

# A fast wrong kernel cannot take rank 1: at x=8192 triton_add (4.800 us) is
# faster than torch_add (4.896 us), but its accuracy is 0.
SRC=$tb OUTF=$W/in/tb-accuracy.json python3 -c "import json, os
d = json.load(open(os.environ['SRC']))
d['tritonbench_vector_add_fwd[x_8192-triton_add]_accuracy'] = 0
d['tritonbench_vector_add_fwd[x_8192-torch_add]_accuracy'] = 1
open(os.environ['OUTF'], 'w').write(json.dumps(d))"
acc_sha=$(sha256sum "$W/in/tb-accuracy.json" | cut -c1-16)
assert_exit 0 ks --json import tritonbench --environment "$DATA_TB/env-h200.json" "$W/in/tb-accuracy.json"
wrong=$(run_of tritonbench "vector_add_fwd/x_8192/triton_add/$acc_sha")
assert_eq incorrect "$(ks cat "$wrong" | jq -r .spec.status)" "accuracy 0 -> incorrect"
assert_eq false "$(ks cat "$wrong" | jq -r .spec.correctness.passed)" "correctness checked, not passed"
assert_exit 0 ks --json rank "$wrong"
# The group also holds the first file's runs of x=8192 (no accuracy measured).
assert_eq "null" "$(jv -r --arg r "$wrong" '.members[] | select(.run==$r) | .rank')" "the wrong run has no rank"
assert_eq "$wrong" "$(jv -r '.members[-1].run')" "it is listed after every ranked run"
assert_eq 1 "$(jv -r '[.members[] | select(.rank==null)] | length')" "the only unrankable member"
assert_eq "2" "$(jv -r '[.members[] | select(.implementation=="torch_add") | .rank] | unique | .[0]')" \
    "the correct torch_add runs keep their place behind the unchecked triton_add (4.800 us), ahead of the wrong one"
assert_contains "$(jv -r '.members[] | select(.implementation=="triton_add" and .rank==null) | .reason')" 'status "incorrect"' "the reason names the status"
# rank says which runs were checked for correctness, and by what: --json per
# member, the text under the table.
assert_eq incorrect "$(jv -r --arg r "$wrong" '.members[] | select(.run==$r) | .status')" "--json: the member's status"
assert_eq false "$(jv -r --arg r "$wrong" '.members[] | select(.run==$r) | .correctness.passed')" "--json: its correctness"
assert_contains "$(jv -r --arg r "$wrong" '.members[] | select(.run==$r) | .correctness.by')" "accuracy" "--json: checked by what"
assert_exit 0 ks rank "$wrong"
assert_contains "$OUT" "correctness of the outputs, as each harness recorded it:" "text: the correctness lines"
grep -Eq '^  checked, [0-9]+ runs? \(1 passed\): .*accuracy' <<<"$OUT" || fail "text: the checked runs, how many passed, by what: $OUT"
grep -Eq '^  not checked, [0-9]+ runs?: ' <<<"$OUT" || fail "text: the runs the first file did not check: $OUT"
pass "rank: a run its harness found incorrect is unrankable, never above a correct one; rank says what was checked, by what"

# ============================ FlashInfer-Bench ================================
DATA_FI=$KISTORE_SOURCE_DIR/tests/data/flashinfer-bench
assert_exit 0 ks --json import flashinfer-bench "$DATA_FI/traces.sample.jsonl" "$DATA_FI/traces.legacy.sample.jsonl"
assert_eq "[]" "$(jv -c .rejected)" "nothing rejected"
fi_id() { ks cat "$1" | jq -r .spec.sourceNative.externalId; }
fi_runs=$(ks ls --kind run --format tsv | grep -E 'gemm|dsa_topk' | cut -f1)
assert_eq 6 "$(nlines "$fi_runs")" "4 current traces + 2 first-schema traces"
statuses=$(for r in $fi_runs; do ks cat "$r" | jq -r '.spec.sourceNative.metrics.status + ">" + .spec.status'; done | sort | uniq -c | awk '{print $1, $2}' | tr '\n' ' ')
assert_eq "1 COMPILE_ERROR>compile_error 1 INCORRECT_NUMERICAL>incorrect 4 PASSED>passed " "$statuses" "statuses mapped"
wrong=$(for r in $fi_runs; do ks cat "$r" | jq -r 'select(.spec.status=="incorrect") | .spec.correctness.passed, (.spec.measurements[] | select(.metric=="relative-error") | .value)'; done | tr '\n' ' ')
assert_eq "false 1277.6507568359375 " "$wrong" "INCORRECT_NUMERICAL: correctness false, its max relative error kept"
fid=gemm_n128_k2048/gpt-5_gemm_n128_k2048_cuda_optimized_r8_c0_high/6ba7c7de-dc5a-48d2-8ada-1382feb5ceac/2026-03-17T14:19:52.543776
ok=$(run_field flashinfer-bench "$fid" 'select(.spec.measuredWith=="cuda_events") | .spec.timing.latencyNs.mean')
assert_eq 92160.00139713287 "$ok" "latency_ms 0.09216000139713287 -> ns; the log's CUDA-events fallback recorded"
assert_eq "sm_80" "$(ks cat "$(run_field flashinfer-bench "$fid" .spec.environmentDigest)" | jq -r .spec.hardware.architecture)" "A800 -> sm_80"
pass "flashinfer-bench: statuses, correctness, latency in ns, both schemas"

# ============================ hostile files ===================================
# case FORMAT NAME POINTER [IMPORT-ARGS...] < python that writes $f from $src
bad() {
    local format=$1 name=$2 pointer=$3
    shift 3
    local f=$W/in/$name.json before
    cat >"$W/in/$name.py"
    SRC_NV=$ref SRC_KB=$eval_file OUTF=$f python3 "$W/in/$name.py"
    before=$(store_fingerprint "$S")
    assert_exit 2 ks import "$format" "$@" "$f"
    assert_contains "$ERR" "$f" "$name: names the file"
    assert_contains "$ERR" "$pointer" "$name: names where ($pointer)"
    assert_contains "$ERR" "expected" "$name: says what was expected"
    assert_store_unchanged "$before" "$S" "$name: the store is unchanged"
    pass "$format hostile: $name -> exit 2 at $pointer, store unchanged"
}
pre='import json, os
d = json.load(open(os.environ["SRC_NV"]))
st = d["benchmarks"][0]["states"][0]
def out(x): open(os.environ["OUTF"], "w").write(json.dumps(x))'
prek='import json, os
d = json.load(open(os.environ["SRC_KB"]))
def out(x): open(os.environ["OUTF"], "w").write(json.dumps(x))'
bad nvbench nan-string '/benchmarks/0/states/0/summaries/3/data/0/value' <<<"$pre
st['summaries'][3]['data'][0]['value'] = 'NaN'; out(d)"
bad nvbench huge-time '/benchmarks/0/states/0/summaries/3/data/0/value' <<<"$pre
st['summaries'][3]['data'][0]['value'] = '1e300'; out(d)"
bad nvbench number-not-string '/benchmarks/0/states/0/summaries/3/data/0/value' <<<"$pre
st['summaries'][3]['data'][0]['value'] = 0.001; out(d)"
bad nvbench devices-string '/devices' <<<"$pre
d['devices'] = 'Quadro'; out(d)"
bad nvbench no-benchmarks '/: expected a member "benchmarks"' <<<"$pre
del d['benchmarks']; out(d)"
bad nvbench device-type '/benchmarks/0/states/0/device' <<<"$pre
st['device'] = '0'; out(d)"
bad nvbench unknown-device '/benchmarks/0/states/0/device' <<<"$pre
st['device'] = 7; out(d)"
bad nvbench sm-huge '/devices/0/sm_version' <<<"$pre
d['devices'][0]['sm_version'] = 1e300; out(d)"
bad nvbench axis-int '/benchmarks/1/states/0/axis_values/0/value' <<<"$pre
a = d['benchmarks'][1]['states'][0]['axis_values'][0]; a['type'] = 'int64'; a['value'] = '1.5'; out(d)"
bad nvbench not-json "$W/in/not-json.json:1:" <<<"open(__import__('os').environ['OUTF'], 'w').write('{\"devices\": [')"
bad nvbench too-big 'at most 16777216 bytes' <<<"import os
open(os.environ['OUTF'], 'w').write('{\"pad\": \"' + 'x' * (17 << 20) + '\"}')"
bad kernelbench correctness-string '/1/0/correctness' --level 1 <<<"$prek
d['1'][0]['correctness'] = 'yes'; out(d)"
bad kernelbench runtime-huge '/1/0/runtime' --level 1 <<<"$prek
d['1'][0]['runtime'] = 1e300; out(d)"
bad kernelbench stats-nan '/1/0/runtime_stats/mean' --level 1 <<<"$prek
d['1'][0]['runtime_stats']['mean'] = 'NaN'; out(d)"
bad kernelbench no-metadata '/2/0: expected a member "metadata"' --level 1 <<<"$prek
del d['2'][0]['metadata']; out(d)"
bad kernelbench unknown-gpu '/14/0/metadata/hardware' --level 1 <<<"$prek
d['14'][0]['metadata']['hardware'] = 'Imaginary GPU 9000'; out(d)"
assert_contains "$ERR" "--environment" "an unknown GPU: the message says how to name it"
bad kernelbench problem-key '/x1' --level 1 <<<"$prek
d['x1'] = d['1']; out(d)"
bad kernelbench not-object '/: expected an object' --level 1 <<<"$prek
out([d])"

bad tritonbench tb-nan '/tritonbench_vector_add_fwd[x_4096-torch_add]_latency' --environment "$DATA_TB/env-h200.json" <<<"import json, os
d = json.load(open('$tb')); d['tritonbench_vector_add_fwd[x_4096-torch_add]_latency'] = 'NaN'
open(os.environ['OUTF'], 'w').write(json.dumps(d))"
bad tritonbench tb-key '/tritonbench_vector_add[x_1-a]_latency' --environment "$DATA_TB/env-h200.json" <<<"import json, os
d = json.load(open('$tb')); d['tritonbench_vector_add[x_1-a]_latency'] = '1'
open(os.environ['OUTF'], 'w').write(json.dumps(d))"
bad tritonbench tb-accuracy-huge '/tritonbench_vector_add_fwd[x_4096-torch_add]_accuracy' --environment "$DATA_TB/env-h200.json" <<<"import json, os
d = json.load(open('$tb')); d['tritonbench_vector_add_fwd[x_4096-torch_add]_accuracy'] = 1e300
open(os.environ['OUTF'], 'w').write(json.dumps(d))"
fi_line() { printf '%s\n' "import json, os
lines = open('$DATA_FI/traces.sample.jsonl').read().splitlines()
t = json.loads(lines[0])
$1
lines[0] = json.dumps(t)
open(os.environ['OUTF'], 'w').write('\\n'.join(lines) + '\\n')"; }
bad flashinfer-bench fi-status ':1: /evaluation/status' < <(fi_line "t['evaluation']['status'] = 'GREAT'")
bad flashinfer-bench fi-latency ':1: /evaluation/performance/latency_ms' < <(fi_line "t['evaluation']['performance']['latency_ms'] = '0.1'")
bad flashinfer-bench fi-error-string ':1: /evaluation/correctness/max_relative_error' < <(fi_line "t['evaluation']['correctness']['max_relative_error'] = 'lots'")
bad flashinfer-bench fi-no-definition ':1: /: expected a member "definition"' < <(fi_line "del t['definition']")
bad flashinfer-bench fi-axis ':1: /workload/axes/M' < <(fi_line "t['workload']['axes']['M'] = 1e300")

# --keep-going: the good records go in, the bad one is listed with its pointer.
SRC_KB=$eval_file OUTF=$W/in/one-bad.json python3 -c "$prek
d['2'][0]['compiled'] = 3; out(d)"
assert_exit 0 ks --json import kernelbench --level 1 --run-name keep --keep-going "$W/in/one-bad.json"
assert_eq 1 "$(jv '.rejected | length')" "one rejected"
assert_contains "$(jv '.rejected[0].error')" "/2/0/compiled: expected true or false, found the number 3" "with its pointer and what was found"
assert_eq passed "$(run_field kernelbench keep/level1/problem1/sample0 .spec.status)" "the good samples were added"
pass "--keep-going adds the good records and names the bad one"

# Every real output in ../shared/data imports into one store, which then verifies
# clean; a second import of each adds nothing.
shared=$KISTORE_SOURCE_DIR/../shared/data
[[ -d $shared/nvbench ]] || fail "the shared data is not at $shared"
ALL=$W/all-harnesses
assert_exit 0 ks init "$ALL"
# nvbench's files as published: zstd-compressed, read as they are.
import_all() {
    assert_exit 0 ks --store "$ALL" --json import nvbench "$shared"/nvbench/*.json "$shared"/nvbench/*.json.zst
    assert_exit 0 ks --store "$ALL" --json import tritonbench --environment "$DATA_TB/env-h200.json" \
        "$shared/tritonbench/tb-softmax.json" "$shared/tritonbench/tb-vector_add.json"
    assert_exit 0 ks --store "$ALL" --json import tritonbench --environment "$DATA_TB/env-h200.json" --op softmax \
        "$shared/tritonbench/tb-softmax.csv"
    assert_exit 0 ks --store "$ALL" --json import tritonbench --environment "$DATA_TB/env-h200.json" --op vector_add \
        "$shared/tritonbench/tb-vector_add.csv"
    assert_exit 0 ks --store "$ALL" --json import kernelbench "$shared/kernelbench/baseline_time_torch.H100_Modal.json"
    assert_exit 0 ks --store "$ALL" --json import kernelbench --level 1 \
        "$shared"/kernelbench/eval_results.*.json
    # Every file of both schemas: traces, workload-only traces, and the
    # definitions and solutions beside them (which measure nothing).
    assert_exit 0 ks --store "$ALL" --json import flashinfer-bench "$shared"/flashinfer-bench/current/* \
        "$shared"/flashinfer-bench/legacy-2025-08/*
}
import_all
head_before=$(git --git-dir="$ALL" rev-parse HEAD)
assert_exit 0 ks --store "$ALL" verify
assert_contains "$OUT" "0 problems, 0 warnings" "verify of every harness's real output"
import_all
assert_eq "$head_before" "$(git --git-dir="$ALL" rev-parse HEAD)" "a second import of every file commits nothing"
pass "every real harness output in ../shared/data imports; verify is clean; importing again adds nothing"
summary
