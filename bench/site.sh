#!/usr/bin/env bash
# The static site's speed (issue 16): `kistore site` of the Liger corpus (3,897 runs), the rebuild
# with nothing new, and the rebuild after one add (an attestation) into the same folder; with
# N given, also a store of N synthetic runs from bench/gen.py.
#
#   bench/site.sh [N]     e.g. bench/site.sh 100000
#
# Each figure is the median of REPS (3) runs: wall-clock seconds and user+sys CPU seconds (the
# machine is shared: CPU time is the steadier figure), and the files the build wrote.
# Env: KISTORE (default build/kistore), BENCH_WORK (default /tmp/site-bench), LIGER_DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
K=$(readlink -f "${KISTORE:-$root/build/kistore}")
WORK=${BENCH_WORK:-/tmp/site-bench}
REPS=${REPS:-3}
LIGER_DIR=${LIGER_DIR:-/work/shared/data/liger}
export KISTORE_AUTHOR="Bench <bench@example.org>" HOME=$WORK/home GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
rm -rf "$WORK" && mkdir -p "$WORK/home"

# timed LABEL CMD...: runs CMD REPS times; prints the median wall and CPU seconds and what it wrote.
timed() {
  local label=$1; shift
  local walls=() cpus=() out w u sy
  for _ in $(seq "$REPS"); do
    out=$( { /usr/bin/time -f '%e %U %S' "$@" >"$WORK/last.json"; } 2>&1 | tail -1)
    read -r w u sy <<<"$out"
    walls+=("$w"); cpus+=("$(echo "$u + $sy" | bc)")
  done
  local mw mc
  mw=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (REPS + 1) / 2 ))p")
  mc=$(printf '%s\n' "${cpus[@]}" | sort -n | sed -n "$(( (REPS + 1) / 2 ))p")
  printf '%-44s wall %6.2f s  cpu %6.2f s  written %s\n' "$label" "$mw" "$mc" "$(jq -r .written "$WORK/last.json")"
}

bench_store() {  # bench_store NAME STORE
  local name=$1 s=$2 site=$WORK/site-$1
  rm -rf "$site"
  REPS=1 timed "$name: full site (into a fresh folder)" "$K" --no-progress --json --store "$s" site "$site"
  timed "$name: rebuild, nothing new" "$K" --no-progress --json --store "$s" site "$site"
  local run
  run=$("$K" --store "$s" ls --kind BenchmarkRun | head -1 | cut -d' ' -f1)
  # The add is not timed: one attestation, then the rebuild.
  local walls=() cpus=()
  for _ in $(seq "$REPS"); do
    "$K" --no-progress --store "$s" attest "$run" --note "bench $RANDOM $RANDOM" >/dev/null
    out=$( { /usr/bin/time -f '%e %U %S' "$K" --no-progress --json --store "$s" site "$site" >"$WORK/last.json"; } 2>&1 | tail -1)
    read -r w u s2 <<<"$out"; walls+=("$w"); cpus+=("$(echo "$u + $s2" | bc)")
  done
  printf '%-44s wall %6.2f s  cpu %6.2f s  written %s\n' "$name: rebuild after one add (attestation)" \
    "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (REPS + 1) / 2 ))p")" \
    "$(printf '%s\n' "${cpus[@]}" | sort -n | sed -n "$(( (REPS + 1) / 2 ))p")" "$(jq -r .written "$WORK/last.json")"
  KISTORE_SITE_TIMING=1 "$K" --no-progress --store "$s" site "$site" 2>&1 >/dev/null | tr '\n' ' '; echo
  echo "$name: $(du -sh "$site" | cut -f1) in $(find "$site" -type f | wc -l) files"
}

"$K" --no-progress init "$WORK/liger" >/dev/null
"$K" --no-progress --store "$WORK/liger" import liger "$LIGER_DIR"/*.csv >/dev/null
bench_store liger "$WORK/liger"
if [[ -n ${1:-} ]]; then
  python3 "$here/gen.py" "$1" --out "$WORK/data$1/" >/dev/null
  "$K" --no-progress init "$WORK/s$1" >/dev/null
  "$K" --no-progress --store "$WORK/s$1" add "$WORK/data$1/" >/dev/null
  REPS=1 bench_store "$1" "$WORK/s$1"
fi
