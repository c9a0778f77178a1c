#!/usr/bin/env bash
# kistore at scale: the figures of issue 13 (docs/benchmarks.md, "At scale").
#
#   bench/scale.sh N          e.g. bench/scale.sh 1000000; bench/scale.sh 20000 is a smoke run (~1 min)
#
# N synthetic bundles from bench/gen.py (5 documents each, written to JSON Lines shards on disk,
# never held in memory), then, each with its wall time and peak resident memory (/usr/bin/time -v):
#   1. bulk add of all N into an empty store vs `git fast-import` of the same canonical documents
#      at the same paths into an empty bare repository;
#   2. verify of that store vs `git fsck --full` of it;
#   3. one add of a new bundle into an empty store, a 100,000-run store (when N > 100,000) and the
#      N-run store, REPS times each (a different new bundle each time), with the bytes it wrote
#      (`du -sb` of objects/ before and after);
#   4. rank of a run's group (REPS times; process start included);
#   5. store size (objects/, bytes) vs the fast-import repository's.
# Environment: KISTORE (binary; default build/kistore), BENCH_WORK (scratch; default
# /tmp/kistore-scale), REPS (3), KEEP=1 keeps the scratch folder.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
N=${1:?usage: bench/scale.sh N}
KISTORE=$(readlink -f "${KISTORE:-$root/build/kistore}")
WORK=${BENCH_WORK:-/tmp/kistore-scale}
REPS=${REPS:-3}
MID=100000

export KISTORE_AUTHOR="Bench <bench@example.org>"
export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.org
export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.org
export GIT_CONFIG_NOSYSTEM=1 HOME=$WORK/home LC_ALL=C

[ -x "$KISTORE" ] || { echo "no kistore binary at $KISTORE (build it, or set KISTORE)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench/scale.sh needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
rm -rf "$WORK"; mkdir -p "$WORK" "$HOME"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT

# m LABEL CMD...: runs CMD (stdout and stderr to $WORK/last.log); prints LABEL, wall seconds and
# peak RSS, and leaves "wall rss_kib" in $WORK/m.last.
m() {
  local label=$1; shift
  /usr/bin/time -v -o "$WORK/time.tmp" "$@" >"$WORK/last.log" 2>&1 || {
    echo "FAILED: $*" >&2; tail -20 "$WORK/last.log" >&2; exit 3; }
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i] }
              /Maximum resident set size/ { r = $2 }
              END { printf "%.3f %d\n", s, r }' "$WORK/time.tmp" >"$WORK/m.last"
  read -r wall rss <"$WORK/m.last"
  printf '  %-44s %9.3f s   peak RSS %8.1f MiB\n' "$label" "$wall" "$(awk -v r="$rss" 'BEGIN {print r / 1024}')"
}
objbytes() { du -sb "$1/objects" | cut -f1; }

# ---- data: N bundles in shards, plus REPS new bundles for the single adds -----------------------
data=$WORK/data
echo "kistore at scale: N = $N; $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo);" \
     "kistore $("$KISTORE" --version 2>/dev/null | awk '{print $2}'), $(git --version); $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$here/gen.py" $((N + REPS)) --out "$data/"
last=$(ls "$data"/part-*.jsonl | tail -1)
tail -n "$REPS" "$last" >"$WORK/singles.jsonl"
head -n -"$REPS" "$last" >"$last.tmp" && mv "$last.tmp" "$last"
for i in $(seq 1 "$REPS"); do sed -n "${i}p" "$WORK/singles.jsonl" >"$WORK/single-$i.jsonl"; done
if [ "${SKIP_GIT:-0}" != 1 ]; then
  python3 "$here/git_stream.py" fast-import "$data" >"$WORK/stream.fi"
  echo "  data: $(cat "$data"/part-*.jsonl | wc -l) bundles, $(du -sh "$data" | cut -f1) of JSON Lines;" \
       "$(grep -c '^blob$' "$WORK/stream.fi") distinct documents"
fi

# ---- 1. bulk add vs git fast-import ----------------------------------------------------------
# SKIP_GIT=1 leaves out git fast-import (and its stream) and git fsck; SKIP_VERIFY=1, kistore verify.
store=$WORK/store gitfi=$WORK/gitfi
echo "1. bulk add of $N bundles"
"$KISTORE" init "$store" >/dev/null 2>&1
m "kistore add DATA/" "$KISTORE" --store "$store" --no-progress --quiet add "$data"
read -r kadd krss <"$WORK/m.last"
git init -q --bare "$gitfi"
if [ "${SKIP_GIT:-0}" != 1 ]; then
  m "git fast-import < stream.fi" sh -c "git -C '$gitfi' fast-import --quiet <'$WORK/stream.fi'"
  read -r gadd grss <"$WORK/m.last"
  echo "  ratio $(awk -v a="$kadd" -v b="$gadd" 'BEGIN {printf "%.2f", a / b}')×"
  rm -f "$WORK/stream.fi"
fi

# ---- 2. verify vs git fsck --full ------------------------------------------------------------
echo "2. verify"
if [ "${SKIP_VERIFY:-0}" != 1 ] && [ "${SKIP_GIT:-0}" != 1 ]; then
  m "kistore verify" "$KISTORE" --store "$store" --no-progress --quiet verify
  read -r kver _ <"$WORK/m.last"
  m "git fsck --full (same repository)" git -C "$store" fsck --full --no-progress
  read -r gver _ <"$WORK/m.last"
  echo "  ratio $(awk -v a="$kver" -v b="$gver" 'BEGIN {printf "%.2f", a / b}')×"
fi

# ---- 3. one add into 0 / 100,000 / N runs ------------------------------------------------------
one_adds() {  # STORE LABEL
  local s=$1 label=$2 i before after
  for i in $(seq 1 "$REPS"); do
    before=$(objbytes "$s")
    m "one add into $label (#$i)" "$KISTORE" --store "$s" --no-progress --quiet add "$WORK/single-$i.jsonl"
    after=$(objbytes "$s")
    echo "      wrote $((after - before)) bytes"
  done
}
echo "3. one add"
"$KISTORE" init "$WORK/empty" >/dev/null 2>&1
one_adds "$WORK/empty" "an empty store"
if [ "$N" -gt "$MID" ]; then
  "$KISTORE" init "$WORK/mid" >/dev/null 2>&1
  awk -v n="$MID" 'NR > n { exit } { print }' "$data"/part-*.jsonl >"$WORK/mid.jsonl"   # no SIGPIPE under pipefail
  "$KISTORE" --store "$WORK/mid" --no-progress --quiet add "$WORK/mid.jsonl" >/dev/null
  rm -f "$WORK/mid.jsonl"
  one_adds "$WORK/mid" "$MID runs"
  rm -rf "$WORK/mid"
fi
cp -a "$store" "$WORK/big"
one_adds "$WORK/big" "$N runs"
echo "  loose objects after $REPS single adds: $(git -C "$WORK/big" count-objects -v | awk '/^count|^size:/ {printf "%s %s ", $1, $2}')"
rm -rf "$WORK/big"

# ---- 4. rank ---------------------------------------------------------------------------------
echo "4. rank"
run=$(head -n 1 "$data/part-0000.jsonl" | python3 -c "
import json, sys; sys.path.insert(0, '$here'); import gen
print(gen.digest(json.loads(sys.stdin.readline())['run'])[7:19])")
for i in $(seq 1 "$REPS"); do m "kistore rank $run (#$i)" "$KISTORE" --store "$store" rank "$run"; done

# ---- 5. size ---------------------------------------------------------------------------------
echo "5. store size"
echo "  kistore objects/ $(objbytes "$store") bytes; git fast-import repository objects/ $(objbytes "$gitfi") bytes"
