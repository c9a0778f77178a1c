#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# `kistore check` (docs/statistics.md, "Checking new runs"): the Liger
# sample's liger_tiled run (0.6.3) and six later revisions of it; then one
# commit adds 0.7.0, 23 % slower (a regression), and a huggingface run 30 %
# faster than the group's other huggingface run (an improvement). check finds
# both, worst first, in text, JSON and Markdown; exits 1 for the regression
# unless --min-level puts it below the gate; --since and --since-ref choose
# the range; after a pull, check looks at what the pull brought; a
# controlled rerun that reproduces the regression marks it confirmed.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in work
use_store "$W/store"
run=628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354   # liger_tiled 0.6.3, 2.606 ms
assert_exit 0 ks init
assert_exit 0 ks import liger "$SRC/tests/data/liger/sample.csv"
ks show "$run" --canonical >"$W/bundle.json"
hf=$(ks --json rank "$run" | jq -r '.members[] | select(.implementation == "huggingface") | .run')
ks show "$hf" --canonical >"$W/hf.json"

# variants BUNDLE OUT REV:DAY:MS... : copies of BUNDLE's run at revision REV,
# observed on day DAY of November 2025, median MS with p20/p80 0.05 % apart.
variants() {
    "$PY" - "$@" <<'PY'
import hashlib, json, sys
b = json.load(open(sys.argv[1]))
out = open(sys.argv[2], "w")
def jcs(doc):
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
for arg in sys.argv[3:]:
    rev, day, ms = arg.split(":")
    c = json.loads(json.dumps(b))
    impl = c["implementation"]
    impl.pop("metadata", None)
    impl["spec"]["revision"] = rev
    s = c["run"]["spec"]
    s["implementationDigest"] = "sha256:" + hashlib.sha256(jcs(impl)).hexdigest()
    s.pop("sourceNative", None)
    ns = round(float(ms) * 1e6)
    s["timing"]["latencyNs"]["median"] = ns
    s["measurements"] = [{"metric": "latency", "statistic": "p20", "unit": "ns", "value": ns - 600},
                         {"metric": "latency", "statistic": "p80", "unit": "ns", "value": ns + 600}]
    s["observedAt"] = f"2025-11-{int(day):02d}T06:00:00.000Z"
    out.write(json.dumps(c) + "\n")
PY
}
variants "$W/bundle.json" "$W/history.jsonl" 0.6.4:12:2.600 0.6.5:13:2.612 0.6.6:14:2.596 0.6.7:15:2.608 \
    0.6.8:16:2.603 0.6.9:17:2.598
assert_exit 0 ks add "$W/history.jsonl"
base=$(head_of "$S")
variants "$W/bundle.json" "$W/new.jsonl" 0.7.0:20:3.200
variants "$W/hf.json" "$W/hf-new.jsonl" 4.54:21:1.085
cat "$W/hf-new.jsonl" >>"$W/new.jsonl"
assert_exit 0 ks add "$W/new.jsonl"
slow=$(ks digest "$W/new.jsonl" | awk '$3 == "run" {print $1}' | head -1)
fast=$(ks digest "$W/new.jsonl" | awk '$3 == "run" {print $1}' | tail -1)
pass "a series of seven points, then a commit with a slower and a faster run"

assert_exit 1 ks --json check
assert_eq "last commit $base" "$(jv '"\(.basis) \(.since)"')" "default: the last commit"
assert_eq "2 1 1" "$(jv '"\(.newRuns) \(.regressions | length) \(.improvements | length)"')" "two new runs: one of each"
assert_eq "$slow Liger-Kernel/liger_tiled slower prediction reported" \
  "$(jv '.regressions[0] | "\(.run) \(.implementation) \(.verdict) \(.method) \(.level)"')" "the regression"
assert_eq "123 7 0.7.0" "$(jv '.regressions[0] | "\(.ratio * 100 | round) \(.baselinePoints) \(.revision)"')" \
  "ratio against the median of the seven points before it"
assert_eq true "$(jv '.regressions[0] | (.baseline > 2.59e6 and .baseline < 2.61e6 and .value == 3.2e6)')" "baseline and value in ns"
assert_eq "$fast faster 1" "$(jv '.improvements[0] | "\(.run) \(.verdict) \(.baselinePoints)"')" \
  "the improvement: one earlier point, the two runs' own spreads"
assert_eq null "$(jv '.regressions[0].rerun')" "no rerun yet"
assert_eq true "$(jv '.failed')" "the gate failed"
pass "check of the last commit: one regression, one improvement (--json)"

assert_exit 1 ks check
assert_contains "$OUT" "2 runs added in 1 group: 1 regression, 1 improvement" "text summary"
assert_contains "$OUT" "regressions, worst first" "text section"
assert_contains "$OUT" "1.229  slower (prediction, p = 1.5e-10)" "text row: ratio, verdict, method and p"
assert_contains "$OUT" "${slow:7:12}" "text names the run"
assert_exit 1 ks check --format markdown
assert_contains "$OUT" "### kistore check: 1 regression, 1 improvement" "markdown heading"
assert_contains "$OUT" "| regression | \`${slow:7:12}\` | Liger-Kernel/liger\\_tiled | 0.7.0 |" "markdown row names the run"
assert_contains "$OUT" "|---|" "markdown table"
pass "text and markdown forms"

assert_exit 0 ks check --min-level source-native
assert_contains "$OUT" "1 regression" "still reported"
assert_exit 1 ks --json check --since "$base"
assert_eq "--since 2" "$(jv '"\(.basis) \(.newRuns)"')" "--since the commit before"
assert_exit 1 ks --json check --since "${base:0:7}"
assert_eq "$base" "$(jv .since)" "an abbreviated id"
assert_exit 0 ks --json check --since "$(head_of "$S")"
assert_eq "0 0 false" "$(jv '"\(.newRuns) \(.regressions | length) \(.failed)"')" "since the head: nothing new"
first=$(gd "$S" rev-list --max-parents=0 HEAD)
assert_exit 1 ks --json check --since "$first"
assert_eq "8 1" "$(jv '"\(.newRuns) \(.regressions | length)"')" "since the import: the six revisions and the two runs"
gd "$S" update-ref refs/tags/before "$base"
assert_exit 1 ks --json check --since-ref refs/tags/before
assert_eq "--since-ref $base" "$(jv '"\(.basis) \(.since)"')" "--since-ref"
assert_exit 0 ks check --threshold 0.5
assert_contains "$OUT" "0 regressions" "a 23 % step is under a 50 % threshold"
pass "--since, --since-ref, --threshold, --min-level"

# A pull: the clone C has the history; the store gains the two runs; C pulls
# them, then adds nothing: check in C looks at what the pull brought.
C=$W/C
git clone -q --bare "$S" "$C"
gd "$C" update-ref refs/heads/main "$base"
assert_exit 0 ks --store "$C" pull "$S"
assert_exit 1 ks --store "$C" --json check
assert_eq "last pull $base 2" "$(jv '"\(.basis) \(.since) \(.newRuns)"')" "what the pull brought"
# A pull that merges: D adds a run of its own first, then pulls; the range
# is D's head before the pull .. the merge commit: the two runs that came.
D=$W/D
git clone -q --bare "$S" "$D"
gd "$D" update-ref refs/heads/main "$base"
variants "$W/bundle.json" "$W/local.jsonl" 0.6.95:18:2.601
assert_exit 0 ks --store "$D" add "$W/local.jsonl"
mine=$(head_of "$D")
assert_exit 0 ks --store "$D" pull "$S"
assert_eq "$mine" "$(gd "$D" rev-parse 'main^1')" "a merge commit on top of D's own"
assert_exit 1 ks --store "$D" --json check
assert_eq "last pull $mine $(head_of "$D") 2" "$(jv '"\(.basis) \(.since) \(.to) \(.newRuns)"')" "the merge brought two runs"
assert_eq 8 "$(jv '.regressions[0].baselinePoints')" "D's own run is an earlier point of the series"
# A commit after the pull does not join the range; a rewritten branch drops the record.
variants "$W/bundle.json" "$W/later.jsonl" 0.7.1:22:2.9
assert_exit 0 ks --store "$D" add "$W/later.jsonl"
assert_exit 1 ks --store "$D" --json check
assert_eq "last pull 2" "$(jv '"\(.basis) \(.newRuns)"')" "still what the pull brought"
gd "$D" update-ref refs/heads/main "$mine"
assert_exit 0 ks --store "$D" --json check
assert_eq "last commit 1" "$(jv '"\(.basis) \(.newRuns)"')" "the record is off the branch: the last commit"
pass "after a pull: what it brought"

# The regression reproduced by a controlled rerun: confirmed.
cp "$SRC/tests/data/keys/controller" "$SRC/tests/data/keys/controller.pub" "$W/"
chmod 600 "$W/controller"
assert_exit 0 ks trust add controller@example.org "$W/controller.pub"
ks show "$slow" --canonical >"$W/slow.json"
jq -c '.run.spec.timing.latencyNs.median = 3210000 | .run.spec.observedAt = "2026-11-30T09:00:00.000Z"' \
    "$W/slow.json" >"$W/rerun.json"
assert_exit 0 ks rerun "$slow" "$W/rerun.json" --sign "$W/controller"
assert_exit 1 ks --json check --since "$base"
assert_eq "reproduced confirmed" "$(jv '.regressions[0] | "\(.level) \(.rerun)"')" "a reproduced regression is confirmed"
assert_exit 1 ks check --since "$base"
assert_contains "$OUT" "reproduced, confirmed" "text says so"
jq -c '.run.spec.timing.latencyNs.median = 2605000 | .run.spec.observedAt = "2026-12-01T09:00:00.000Z"' \
    "$W/slow.json" >"$W/rerun2.json"
assert_exit 0 ks rerun "$slow" "$W/rerun2.json" --sign "$W/controller"
assert_exit 0 ks --json check --since "$base"
assert_eq "disputed disputed" "$(jv '.regressions[0] | "\(.level) \(.rerun)"')" "a newer rerun that did not reproduce it: disputed"
assert_eq false "$(jv .failed)" "a disputed run is below the default --min-level"
assert_exit 1 ks --json check --since "$base" --min-level disputed
pass "a rerun that reproduced the regression confirms it; one that did not disputes it"

assert_exit 0 ks check --help
assert_contains "$OUT" "Exit codes:" "help: exit codes"
assert_contains "$OUT" "Examples:" "help: examples"
assert_exit 0 ks help check
summary
