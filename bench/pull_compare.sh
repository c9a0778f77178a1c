#!/usr/bin/env bash
# Pull of one new run into an N-run store, over a path and over git://, with two kistore
# binaries (docs/benchmarks.md, issue 12 "Speed": checking in quarantine must cost what is new,
# not the store).
#
#   bench/pull_compare.sh OLD_KISTORE NEW_KISTORE [N]     default N = 20000 (bench/gen.py)
#
# Builds the store once (with NEW), a bare remote holding it plus one new run, served by
# `git daemon` on 127.0.0.1 (tests/e2e/lib/servers.sh); then, REPS times and alternating the
# binaries, pulls that run into a fresh copy of the store from the path and from git://.
# Prints medians of wall-clock seconds and the ratio NEW / OLD.
#
# Environment: BENCH_WORK (default /tmp/kistore-bench-pull), REPS (5), KEEP=1 keeps the folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
OLD=$(readlink -f "$1") NEW=$(readlink -f "$2")
n=${3:-20000}
WORK=${BENCH_WORK:-/tmp/kistore-bench-pull}
REPS=${REPS:-5}
export KISTORE_AUTHOR="Bench <bench@example.org>" LC_ALL=C

rm -rf "$WORK"; mkdir -p "$WORK/served"
# shellcheck source=../tests/e2e/lib/servers.sh
source "$root/tests/e2e/lib/servers.sh"
servers_init
[ "${KEEP:-0}" = 1 ] || servers_on_exit "rm -rf '$WORK'"
start_git_daemon "$WORK/served"

python3 "$here/gen.py" "$n" --out "$WORK/data/" --extra "$WORK/single.jsonl" >/dev/null
"$NEW" init "$WORK/store" >/dev/null 2>&1
"$NEW" --store "$WORK/store" --quiet --no-progress add "$WORK/data"
git clone -q --bare "$WORK/store" "$WORK/served/r.git"
"$NEW" --quiet --no-progress clone "$WORK/served/r.git" "$WORK/other" >/dev/null
"$NEW" --store "$WORK/other" --quiet --no-progress add "$WORK/single.jsonl" >/dev/null
"$NEW" --store "$WORK/other" --quiet --no-progress push origin >/dev/null
echo "== pull of one run into $n runs; old $OLD, new $NEW; load $(cut -d' ' -f1-3 /proc/loadavg)"

t() {  # t OUTFILE CMD...: appends wall seconds
  local out=$1; shift
  local t0=$EPOCHREALTIME
  "$@" >"$WORK/last.log" 2>&1 || { echo "FAILED: $*" >&2; tail -20 "$WORK/last.log" >&2; exit 3; }
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.4f\n", b - a}' >>"$out"
}
median() { sort -g "$1" | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else printf "%.4f\n", (v[NR/2] + v[NR/2+1]) / 2}'; }
pull_once() {  # pull_once BIN NAME URL OUTFILE
  rm -rf "$WORK/s"; cp -a "$WORK/store" "$WORK/s"
  "$1" --store "$WORK/s" remote add src "$3" >/dev/null 2>&1
  t "$4" "$1" --store "$WORK/s" --quiet --no-progress pull src
  [ "$(git --git-dir="$WORK/s" rev-parse main)" = "$(git --git-dir="$WORK/served/r.git" rev-parse main)" ] ||
    { echo "FAILED: $2 did not bring the new run" >&2; exit 3; }
}
for via in path git; do : >"$WORK/$via.old"; : >"$WORK/$via.new"; done
for ((i = 0; i < REPS; i++)); do
  order=(old new); ((i % 2)) && order=(new old)
  for which in "${order[@]}"; do
    bin=$OLD; [ "$which" = new ] && bin=$NEW
    pull_once "$bin" "$which" "$WORK/served/r.git" "$WORK/path.$which"
    pull_once "$bin" "$which" "$GIT_DAEMON_URL/r.git" "$WORK/git.$which"
  done
done
for via in path git; do
  o=$(median "$WORK/$via.old"); w=$(median "$WORK/$via.new")
  printf '%-5s old %7.3f s, new %7.3f s, new/old %5s   (median of %d)\n' "$via:" "$o" "$w" \
    "$(awk -v a="$w" -v b="$o" 'BEGIN {printf "%.2f", a / b}')" "$REPS"
done
