#!/usr/bin/env bash
# `kistore check` after a pull of 1,000 runs into an N-run store (docs/benchmarks.md, issue 33
# "Speed": check must touch the groups of the new runs, not the whole store).
#
#   bench/check.sh [KISTORE] [N] [NEW]     defaults: build/kistore, N = 100000, NEW = 1000
#
# Builds a store of N runs (bench/gen.py, groups of 4..12 runs), copies it, adds to the copy NEW
# runs that are later points of existing series (every (N/NEW)-th generated run again, observed
# in 2027, its median times 0.7 .. 1.3, a new upstream id), pulls the copy into the store (a
# fast-forward) and times `kistore check` (what the last pull brought) REPS times. Prints each
# time, the median, and the report's counts.
#
# Environment: BENCH_WORK (default /tmp/kistore-bench-check), REPS (5), KEEP=1 keeps the folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
KS=$(readlink -f "${1:-$root/build/kistore}")
n=${2:-100000}
new=${3:-1000}
WORK=${BENCH_WORK:-/tmp/kistore-bench-check}
REPS=${REPS:-5}
rm -rf "$WORK"; mkdir -p "$WORK/home"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
# shellcheck source=lib.sh
source "$here/lib.sh"

python3 "$here/gen.py" "$n" --out "$WORK/data/" >/dev/null
echo "== check after a pull of $new runs into $n; $KS; load $(cut -d' ' -f1-3 /proc/loadavg)"
"$KS" init "$WORK/store" >/dev/null 2>&1
m "add $n runs" "$KS" --store "$WORK/store" --quiet --no-progress add "$WORK/data"
python3 - "$WORK/data" "$WORK/new.jsonl" "$n" "$new" <<'PY'
import glob, json, random, sys
src, out, n, new = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
step = max(1, n // new)
rng = random.Random(33)
lines = []
for path in sorted(glob.glob(src + "/part-*.jsonl")):
    with open(path) as f:
        lines.extend(f)
with open(out, "w") as o:
    for k, line in enumerate(lines[::step][:new]):
        b = json.loads(line)
        s = b["run"]["spec"]
        factor = rng.uniform(0.7, 1.3)
        s["observedAt"] = "2027-01-01T00:%02d:%02d.000Z" % (k // 60 % 60, k % 60)
        s["sourceNative"]["externalId"] += "/again"
        if "timing" in s:
            s["timing"]["latencyNs"]["median"] = round(s["timing"]["latencyNs"]["median"] * factor)
        for m in s["measurements"]:
            m["value"] = round(m["value"] * factor, 6) if m["unit"] != "ns" else round(m["value"] * factor)
        o.write(json.dumps(b) + "\n")
PY
cp -a "$WORK/store" "$WORK/other"
"$KS" --store "$WORK/other" --quiet --no-progress add "$WORK/new.jsonl" >/dev/null
m "pull of $new runs" "$KS" --store "$WORK/store" --quiet --no-progress pull "$WORK/other"

times=()
for _ in $(seq "$REPS"); do
  t0=$EPOCHREALTIME
  rc=0; "$KS" --store "$WORK/store" --json check >"$WORK/check.json" || rc=$?
  [ "$rc" -le 1 ] || { echo "FAILED: check exit $rc" >&2; exit 3; }
  times+=("$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.3f", b - a}')")
done
median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
echo "  check (last pull), $REPS runs: ${times[*]} s; median $median s"
m "check (peak memory)" bash -c '"$0" --store "$1" --json check >/dev/null; [ $? -le 1 ]' "$KS" "$WORK/store"
jq -c '{basis, newRuns, groups, regressions: (.regressions | length), improvements: (.improvements | length),
        same, ambiguous, firstPoints, leftOut}' "$WORK/check.json"
