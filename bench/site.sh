#!/usr/bin/env bash
# The static site's speed and size (issues 16 and 30): `kistore site` of the Liger corpus (3,897
# runs), the rebuild with nothing new, and the rebuild after one add (an attestation) into the same
# folder; with N given, also a store of N synthetic runs from bench/gen.py (several N: each).
#
#   bench/site.sh [N...]     e.g. bench/site.sh 20000 50000 100000
#
# Each figure is the median of REPS (3) runs (a full build: one run): wall-clock seconds, CPU
# seconds as user + system (the machine is shared: CPU time is the steadier figure), the files
# the build wrote, and the load average when it started. Then the phases of one more rebuild
# (KISTORE_SITE_TIMING) and the site's size.
#
# A folder left by an earlier run is removed first, then the script waits a minute: ext4
# without a journal (this machine's disk) skips inodes freed in the last minute when it makes a
# file, so files made just after deleting a big site cost several times the system time.
# Env: KISTORE (default build/kistore), BENCH_WORK (default /tmp/site-bench), LIGER_DIR, REPS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
K=$(readlink -f "${KISTORE:-$root/build/kistore}")
WORK=${BENCH_WORK:-/tmp/site-bench}
REPS=${REPS:-3}
LIGER_DIR=${LIGER_DIR:-/work/shared/data/liger}
export KISTORE_AUTHOR="Bench <bench@example.org>" HOME=$WORK/home GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
if [[ -e $WORK ]]; then
  echo "removing $WORK (an earlier run's), then waiting 60 s for ext4 to reuse its inodes" >&2
  rm -rf "$WORK" && sync && sleep 60
fi
mkdir -p "$WORK/home"

median() { sort -n | sed -n "$(( (REPS + 1) / 2 ))p"; }

# timed LABEL BEFORE CMD...: runs BEFORE (untimed) then CMD, REPS times; prints the median wall
# time, the median CPU time with its user and system parts, what the build wrote, and the load.
timed() {
  local label=$1 before=$2; shift 2
  local runs=() load t_wall t_user t_sys
  load=$(cut -d' ' -f1 /proc/loadavg)
  for _ in $(seq "$REPS"); do
    $before
    read -r t_wall t_user t_sys < <({ /usr/bin/time -f '%e %U %S' "$@" >"$WORK/last.json"; } 2>&1 | tail -1)
    runs+=("$(echo "$t_user + $t_sys" | bc) $t_wall $t_user $t_sys")
  done
  local mw cpu
  mw=$(printf '%s\n' "${runs[@]}" | cut -d' ' -f2 | median)
  read -r cpu _ t_user t_sys < <(printf '%s\n' "${runs[@]}" | median)
  printf '%-44s wall %6.2f s  cpu %6.2f s (user %.2f + sys %.2f)  written %s  load %s\n' "$label" "$mw" "$cpu" \
    "$t_user" "$t_sys" "$(jq -r .written "$WORK/last.json")" "$load"
}

bench_store() {  # bench_store NAME STORE
  local name=$1 store=$2 site=$WORK/site-$1
  local site_cmd=("$K" --no-progress --json --store "$store" site "$site")
  REPS=1 timed "$name: full site (into a fresh folder)" : "${site_cmd[@]}"
  timed "$name: rebuild, nothing new" : "${site_cmd[@]}"
  attested=$("$K" --store "$store" ls --kind BenchmarkRun | head -1 | cut -d' ' -f1)
  attest_once() { "$K" --no-progress --store "$store" attest "$attested" --note "bench $RANDOM $RANDOM" >/dev/null; }
  timed "$name: rebuild after one add (attestation)" attest_once "${site_cmd[@]}"
  KISTORE_SITE_TIMING=1 "$K" --no-progress --store "$store" site "$site" 2>&1 >/dev/null | tr '\n' ' '; echo
  local bytes runs
  bytes=$(du -sb "$site" | cut -f1)
  runs=$(jq -r .runs "$WORK/last.json")
  echo "$name: $bytes bytes (du -sb; $(du -sh "$site" | cut -f1) on disk) in $(find "$site" -type f | wc -l) files," \
       "$runs runs: $((bytes / runs)) bytes a run"
}

"$K" --no-progress init "$WORK/liger" >/dev/null
"$K" --no-progress --store "$WORK/liger" import liger "$LIGER_DIR"/*.csv >/dev/null
bench_store liger "$WORK/liger"
for n in "$@"; do
  python3 "$here/gen.py" "$n" --out "$WORK/data$n/" >/dev/null
  "$K" --no-progress init "$WORK/s$n" >/dev/null
  "$K" --no-progress --store "$WORK/s$n" add "$WORK/data$n/" >/dev/null
  rm -rf "$WORK/data$n"
  bench_store "$n" "$WORK/s$n"
done
