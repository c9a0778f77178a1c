#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# `kistore series` (docs/statistics.md, "Series and change points"): the
# Liger sample's liger_tiled run (revision 0.6.3) and six later revisions of
# it in the same group, one 20 % faster from 0.6.6 on; a run without
# observedAt is left out; the change point
# is found at the step with its ratio and verdict; a group key needs
# --implementation; bad options are exit 2.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in work
use_store "$SERVERS_DIR/store"
run=628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354   # liger_tiled 0.6.3, 2.606 ms, 2025-11-11
assert_exit 0 ks init
assert_exit 0 ks import liger "$SRC/tests/data/liger/sample.csv"
ks show "$run" --canonical >"$W/bundle.json"
"$PY" - "$W/bundle.json" "$W/later.jsonl" <<'PY'
import hashlib, json, sys
b = json.load(open(sys.argv[1]))
out = open(sys.argv[2], "w")
def jcs(doc):
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
# revision, day of November 2025, median in ms (None: no observedAt)
for rev, day, ms in [("0.6.4", 12, 2.600), ("0.6.5", 13, 2.610), ("0.6.6", 14, 2.080),
                     ("0.6.7", 15, 2.090), ("0.6.8", 16, 2.070), ("0.6.9", 17, 2.085), ("0.7.0", None, 2.0)]:
    c = json.loads(json.dumps(b))
    impl = c["implementation"]
    impl.pop("metadata", None)
    impl["spec"]["revision"] = rev
    s = c["run"]["spec"]
    s["implementationDigest"] = "sha256:" + hashlib.sha256(jcs(impl)).hexdigest()
    del s["sourceNative"]
    ns = round(ms * 1e6)
    s["timing"]["latencyNs"]["median"] = ns
    s["measurements"] = [{"metric": "latency", "statistic": "p20", "unit": "ns", "value": ns - 1000},
                         {"metric": "latency", "statistic": "p80", "unit": "ns", "value": ns + 1000}]
    if day is None:
        del s["observedAt"]
    else:
        s["observedAt"] = f"2025-11-{day}T06:00:00.000Z"
    out.write(json.dumps(c) + "\n")
PY
assert_exit 0 ks add "$W/later.jsonl"
pass "seven later revisions of liger_tiled in the fixture's group"

assert_exit 0 ks --json series "$run"
assert_eq "liger_tiled Liger-Kernel 7" "$(jv '[.implementation, .project, (.points | length | tostring)] | join(" ")')" "seven points"
assert_eq "0.6.3 0.6.4 0.6.5 0.6.6 0.6.7 0.6.8 0.6.9" "$(jv '[.points[].revision] | join(" ")')" "ordered by observedAt"
assert_eq "ns source-native" "$(jv '[.points[0].unit, .points[0].level] | join(" ")')" "unit and level"
assert_eq 1 "$(jv '.changePoints | length')" "one change point"
assert_eq "3 0.6.6" "$(jv '.changePoints[0] as $c | "\($c.index) \(.points[$c.index].revision)"')" "at 0.6.6"
assert_eq "80 faster quantiles" "$(jv '.changePoints[0] | "\(.ratio * 100 | round) \(.verdict) \(.method)"')" "ratio, verdict, method"
assert_eq "$(jv '.changePoints[0].run')" "$(jv '.points[3].run')" "the run after the step"
assert_eq "no observedAt" "$(jv '.leftOut[0].reason')" "0.7.0 has no date"
pass "a run's series: points in order, one change point at the step"

assert_exit 0 ks series "$run"
assert_contains "$OUT" "series Liger-Kernel/liger_tiled in group" "text header"
assert_contains "$OUT" "change point: 2.606 ms -> 2.083 ms, ratio 0.799, faster (quantiles)" "text change point"
assert_contains "$OUT" "left out" "text left out"
pass "text form"

group=$(ks --json rank "$run" | jq -r .group)
assert_exit 2 ks series "$group"
assert_contains "$ERR" "is a group: expected --implementation NAME, one of:" "a group needs a name"
assert_contains "$ERR" "liger_tiled" "names listed"
assert_exit 0 ks --json series "$group" --implementation liger_tiled
assert_eq 7 "$(jv '.points | length')" "by name"
assert_exit 0 ks --json series "$group" --implementation huggingface
assert_eq "1 0" "$(jv '"\(.points | length) \(.changePoints | length)"')" "a series of one point"
assert_exit 2 ks series "$group" --implementation nobody
assert_contains "$ERR" "--implementation: expected one of the group's implementations" "unknown name"
assert_exit 2 ks series "$run" --threshold 0
assert_contains "$ERR" "--threshold: expected a number greater than 0 and less than 1, found 0" "bad threshold"
assert_exit 1 ks series deadbeefdeadbeef
assert_exit 0 ks series --help
assert_contains "$OUT" "binary segmentation" "help says how"
pass "group keys, --implementation, bad options"

# Ties in observedAt: the order of the commits that added them, not of digests.
"$PY" - "$W/bundle.json" "$W" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
s = b["run"]["spec"]
del s["sourceNative"]
s["observedAt"] = "2025-12-01T00:00:00Z"
for i, ns in enumerate([2080001, 2080002]):
    s["timing"]["latencyNs"]["median"] = ns
    json.dump(b, open(f"{sys.argv[2]}/tie-{i}.json", "w"))
PY
t0=$(ks digest "$W/tie-0.json" | awk '$3 == "run" {print $1}') t1=$(ks digest "$W/tie-1.json" | awk '$3 == "run" {print $1}')
if [[ $t0 < $t1 ]]; then first=tie-1 second=tie-0; else first=tie-0 second=tie-1; fi   # digest order reversed
assert_exit 0 ks add "$W/$first.json"
assert_exit 0 ks add "$W/$second.json"
assert_exit 0 ks --json series "$run"
want="$(ks digest "$W/$first.json" | awk '$3 == "run" {print $1}') $(ks digest "$W/$second.json" | awk '$3 == "run" {print $1}')"
assert_eq "$want" "$(jv '[.points[] | select(.observedAt == "2025-12-01T00:00:00Z") | .run] | join(" ")')" "ties in commit order"
pass "points observed at one instant follow the commits that added them"

hf=$(ks --json rank "$run" | jq -r '.members[] | select(.implementation == "huggingface") | .run')
assert_exit 0 ks --json compare --series "$run" "$hf"
assert_eq "quantiles faster 9 1" "$(jv '[.method, .verdict, (.a.points | tostring), (.b.points | tostring)] | join(" ")')" \
  "seven points as samples (their quantiles) against one run's p20-p80"
assert_eq "Liger-Kernel/liger_tiled 1 8" "$(jv '[.a.implementation, (.a.levels["source-native"] | tostring), (.a.levels.reported | tostring)] | join(" ")')" \
  "each side's evidence levels"
assert_eq true "$(jv '.interval[0] <= .ratio and .ratio <= .interval[1]')" "interval around the ratio"
assert_exit 0 ks --json compare --series "$run" "$run"
assert_eq "mann-whitney ambiguous 1" "$(jv '[.method, .verdict, (.p | tostring)] | join(" ")')" \
  "a series against itself: p = 1, and a 20 % step inside makes the interval too wide for same"
assert_exit 0 ks compare --series "$run" "$hf"
assert_contains "$OUT" "A Liger-Kernel/liger_tiled (series of 628643ba9218)" "text names the series"
assert_contains "$OUT" "9 points, 2025-11-11 - 2025-12-01" "text: points and dates"
assert_contains "$OUT" "levels  8 reported, 1 source-native" "text: levels"
assert_contains "$OUT" "verdict  faster" "text: verdict"
assert_exit 2 ks compare --series "$group" "$hf"
assert_contains "$ERR" "RUN_A \"$group\": expected a run, found the group key" "a group key is not a run"
fwd=$(ks export --format jsonl --benchmark tiled_geglu/backward/memory --gpu 4090 | head -1 | jq -r .run)
assert_exit 2 ks compare --series "$run" "$fwd"
assert_contains "$ERR" "--series: expected two runs of one comparison group" "other groups refused"
pass "compare --series: two implementations of one group over time"
summary
