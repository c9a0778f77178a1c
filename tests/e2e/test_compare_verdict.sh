#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# `kistore compare`'s verdict (docs/statistics.md) on runs of one group of
# the Liger sample: Liger's quantiles (ratio of medians, spreads), runs with
# raw samples (Mann-Whitney U), runs with mean/stdev/count (Welch's test),
# --threshold, and hostile figures (a count of 1, a negative sample) that give
# "ambiguous" with the run and JSON pointer named; bad options are exit 2.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in work
use_store "$SERVERS_DIR/store"
run=628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354   # liger_tiled, 2.606 ms, p20-p80 2.605-2.607 ms
assert_exit 0 ks init
assert_exit 0 ks import liger "$SRC/tests/data/liger/sample.csv"
ks show "$run" --canonical >"$W/bundle.json"
# Runs of the same group (same workload, protocol, environment digests), each
# its own spec: the source's own id removed so that each is a new run.
"$PY" - "$W/bundle.json" "$W" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
s = b["run"]["spec"]
del s["sourceNative"]
def write(name, timing, measurements):
    c = json.loads(json.dumps(b))
    c["run"]["spec"]["timing"] = timing
    c["run"]["spec"]["measurements"] = measurements
    json.dump(c, open(f"{sys.argv[2]}/{name}.json", "w"))
def samples(name, values):
    write(name, {"latencyNs": {"median": sorted(values)[len(values) // 2]}, "samplesNs": values, "primaryStatistic": "median"}, [])
def m(stat, unit, value):
    return {"metric": "latency", "statistic": stat, "unit": unit, "value": value}
def moments(name, mean, sd, count):
    write(name, {"latencyNs": {"mean": mean}, "primaryStatistic": "mean"},
          [m("mean", "ns", mean), m("stdev", "ns", sd), m("count", "samples", count)])
base = [2000000 + 1000 * i for i in range(12)]
samples("samples-a", base)
samples("samples-b", [v * 1.1 + 37 for v in base])          # 10 % slower
samples("samples-bad", [2000000, -1, 2100000])
moments("moments-a", 2000000, 20000, 200)
moments("moments-b", 2040000, 20000, 200)                     # 2 % slower, significant
moments("count-1", 2000000, 20000, 1)
PY
digest_of() { ks digest "$W/$1.json" | awk '$3 == "run" {print $1}'; }
for f in samples-a samples-b samples-bad moments-a moments-b count-1; do
  assert_exit 0 ks add "$W/$f.json"
done
sa=$(digest_of samples-a) sb=$(digest_of samples-b) sbad=$(digest_of samples-bad)
ma=$(digest_of moments-a) mb=$(digest_of moments-b) c1=$(digest_of count-1)
hf=$(ks --json rank "$run" | jq -r '.members[] | select(.implementation == "huggingface") | .run')
pass "a group with quantile, sample, moment and hostile runs"

assert_exit 0 ks --json compare "$run" "$hf"
assert_eq "faster quantiles null" "$(jv '[.verdict, .method, (.p | tostring)] | join(" ")')" "liger quantiles: faster"
assert_eq true "$(jv '.interval[0] <= .ratio and .ratio <= .interval[1] and .interval[1] < 0.95')" "interval around the ratio"
assert_eq "quantiles quantiles source-native" "$(jv '[.a.statistics, .b.statistics, .b.level] | join(" ")')" "each side's evidence"
assert_exit 0 ks compare "$run" "$hf"
assert_contains "$OUT" "verdict  faster: B takes less than A; ratio B/A 0.59" "text verdict"
assert_contains "$OUT" "method   ratio of medians, overlap of the spreads" "text method"
assert_contains "$OUT" "why      the spreads do not overlap" "text reason"
assert_contains "$OUT" "level   source-native" "text level"
pass "quantiles: ratio of medians with the interval the spreads allow"

assert_exit 0 ks --json compare "$sa" "$sb"
assert_eq "slower mann-whitney" "$(jv '[.verdict, .method] | join(" ")')" "samples: a rank test"
assert_eq true "$(jv '.p < 0.01 and .interval[0] <= .ratio and .ratio <= .interval[1]')" "p and interval"
assert_eq 110 "$(jv '.ratio * 100 | round')" "Hodges-Lehmann ratio 1.10"
assert_exit 0 ks --json compare "$run" "$sa"
assert_eq "quantiles faster" "$(jv '[.method, .verdict] | join(" ")')" "samples against quantiles: the samples' quantiles"
pass "samples: Mann-Whitney U, Hodges-Lehmann ratio"

assert_exit 0 ks --json compare "$ma" "$mb"
assert_eq "welch same" "$(jv '[.method, .verdict] | join(" ")')" "2 % apart, significant, its interval within 5 %"
assert_eq true "$(jv '.p < 0.01')" "significant"
assert_exit 0 ks --json compare "$ma" "$mb" --threshold 0.01
assert_eq slower "$(jv .verdict)" "--threshold 0.01 makes 2 % a difference"
assert_exit 0 ks --json compare "$ma" "$mb" --threshold 0.021
assert_eq ambiguous "$(jv .verdict)" "--threshold 0.021: 2 % is under it, yet its interval reaches beyond it"
pass "moments: Welch's t-test, --threshold"

assert_exit 0 ks --json compare "$ma" "$c1"
assert_eq "ambiguous none" "$(jv '[.verdict, .method] | join(" ")')" "a count of 1 cannot decide"
assert_contains "$(jv '.b.notes[0]')" "/spec/measurements/2/value: expected a whole count of samples from 2 to 2^53, found 1" "pointer named"
assert_exit 0 ks compare "$ma" "$c1"
assert_contains "$OUT" "set aside B ${c1:7:12}: /spec/measurements/2/value" "text names the run and the pointer"
assert_exit 0 ks --json compare "$sbad" "$sa"
assert_contains "$(jv '.a.notes[0]')" "/spec/timing/samplesNs/1: expected a positive finite number, found -1 ns" "negative sample"
assert_eq "ambiguous" "$(jv .verdict)" "a bad sample set cannot decide"
pass "hostile figures: ambiguous, with the run and JSON pointer named"

assert_exit 2 ks compare "$ma" "$mb" --threshold 2
assert_contains "$ERR" "--threshold: expected a number greater than 0 and less than 1, found 2" "bad threshold"
assert_exit 2 ks compare "$ma" "$mb" --alpha 0
assert_contains "$ERR" "--alpha: expected a number greater than 0 and less than 0.5, found 0" "bad alpha"
assert_exit 2 ks compare "$ma" "$mb" --threshold nan
assert_exit 0 ks compare --help
assert_contains "$OUT" "--threshold" "help names the options"
assert_contains "$OUT" "ambiguous" "help says what the verdicts are"
pass "bad options are exit 2; --help explains the verdict"
summary
