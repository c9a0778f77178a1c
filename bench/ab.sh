#!/usr/bin/env bash
# Two kistore binaries side by side on the same data: what a change did to the speed of the
# commands users run most. For each operation the two binaries run alternately (A, B, A, B, ...)
# in this one invocation, each on a fresh copy where the operation writes; the figure is the
# median of REPS runs, wall-clock and user+sys CPU, with the ratio B / A.
#
#   bench/ab.sh A_KISTORE B_KISTORE [N]     N synthetic bundles from bench/gen.py (default 20000)
#
# Operations: add (everything into an empty store), verify, one add (a bundle into the full
# store), push (to an empty bare repository, by path), pull (into an empty store, by path),
# site (into an empty folder). Environment: BENCH_WORK (scratch, default /tmp/kistore-ab),
# REPS (default 5), KEEP=1 keeps the scratch folder.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
A=$(readlink -f "$1") B=$(readlink -f "$2") N=${3:-20000}
WORK=${BENCH_WORK:-/tmp/kistore-ab}
REPS=${REPS:-5}
export KISTORE_AUTHOR="Bench <bench@example.org>"
export GIT_CONFIG_NOSYSTEM=1 HOME=$WORK/home LC_ALL=C
rm -rf "$WORK"; mkdir -p "$WORK" "$HOME"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT

# t OUTFILE CMD...: runs CMD and appends "wall cpu" seconds to OUTFILE.
t() {
  local out=$1; shift
  local t0=$EPOCHREALTIME
  /usr/bin/time -f "%U %S" -o "$WORK/time.tmp" "$@" >"$WORK/last.log" 2>&1 || {
    echo "FAILED: $*" >&2; tail -20 "$WORK/last.log" >&2; exit 3; }
  local t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" '{printf "%.4f %.2f\n", b - a, $1 + $2}' "$WORK/time.tmp" >>"$out"
}
median() {
  sort -g -k"$2","$2" "$1" | awk -v c="$2" '{v[NR]=$c} END {
    if (NR % 2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2] + v[NR/2+1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.3f", b / a; else print "inf" }'; }
report() {
  local name=$1 aw bw ac bc
  aw=$(median "$WORK/$name.A" 1); bw=$(median "$WORK/$name.B" 1)
  ac=$(median "$WORK/$name.A" 2); bc=$(median "$WORK/$name.B" 2)
  printf '%-8s A %8.3f s  B %8.3f s  B/A %s   (cpu: A %.2f s, B %.2f s, B/A %s; median of %d)\n' \
    "$name:" "$aw" "$bw" "$(ratio "$aw" "$bw")" "$ac" "$bc" "$(ratio "$ac" "$bc")" "$REPS"
}

data=$WORK/data single=$WORK/single.jsonl
python3 "$here/gen.py" "$N" --out "$data/" --extra "$single" >/dev/null
echo "== $N bundles; A = $A, B = $B; $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"

# The full store each binary reads (made once by A; both read the same bytes).
"$A" init "$WORK/full" >/dev/null 2>&1
"$A" --store "$WORK/full" --no-progress --quiet add "$data" >/dev/null

for op in add verify oneadd push pull site; do : >"$WORK/$op.A"; : >"$WORK/$op.B"; done
for ((i = 0; i < REPS; i++)); do
  for side in A B; do
    k=${!side} s=$WORK/s-$side
    rm -rf "$s"; "$k" init "$s" >/dev/null 2>&1
    t "$WORK/add.$side" "$k" --store "$s" --no-progress --quiet add "$data"
    t "$WORK/verify.$side" "$k" --store "$WORK/full" --no-progress --quiet verify
    rm -rf "$s"; cp -a "$WORK/full" "$s"
    t "$WORK/oneadd.$side" "$k" --store "$s" --no-progress --quiet add "$single"
    rm -rf "$WORK/bare-$side"; git init -q --bare "$WORK/bare-$side"
    t "$WORK/push.$side" "$k" --store "$WORK/full" --no-progress --quiet push "$WORK/bare-$side"
    rm -rf "$s"; "$k" init "$s" >/dev/null 2>&1
    t "$WORK/pull.$side" "$k" --store "$s" --no-progress --quiet pull "$WORK/bare-$side"
    rm -rf "$WORK/site-$side"
    t "$WORK/site.$side" "$k" --store "$WORK/full" --no-progress --quiet site "$WORK/site-$side"
  done
done
for op in add verify oneadd push pull site; do report "$op"; done
