#!/usr/bin/env bash
# A pull in the work tree of a plain `git clone` against the same pull into a bare store (issue 30:
# "a pull costs what it costs in a bare store (±20 %)"), and git's own pull of the same commits.
#
#   bench/worktree_pull.sh [BASE [NEW]]      default BASE = 20000, NEW = 40000 bench/gen.py runs
#
# A store of BASE runs is pushed to a bare repository R, cloned with `git clone` (a work tree: WT)
# with `git clone --bare` (B: the same pack as WT's) and pulled by kistore into a bare store (S);
# then NEW more runs are added elsewhere and pushed to R. Then REPS times, on fresh copies, back
# to back:
#   work tree:  (cd WT && kistore pull origin)      kistore's checkout writes what changed
#   bare clone: kistore --store B pull origin       the same objects, no work tree: the checkout's cost is the difference
#   bare store: kistore --store S pull R            a store kistore itself filled
#   git:        (cd WT' && git pull --ff-only)     on another copy of the clone
# and `git status` of the work tree afterwards must be clean and up to date with origin/main.
# Each line gives wall and CPU (user + system) seconds; each rep ends with the work tree's ratio to
# the bare clone and to the bare store, in wall and in CPU, and the load average before the rep (on a
# machine shared with other work the CPU ratio is the steadier figure).
# Environment: KISTORE (binary; default build/kistore), KISTORE_BEFORE (another binary, say the
# code before a change: its work-tree and bare-clone pulls are timed too, on their own copies, the
# two binaries' pairs back to back, their order alternating), BENCH_WORK (default
# /tmp/kistore-wtpull; a tmpfs keeps other programs' disk traffic out), REPS (3), KEEP=1 keeps the
# scratch folder. Pin it with taskset to compare machines.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
KISTORE=$(readlink -f "${KISTORE:-$root/build/kistore}")
BEFORE=${KISTORE_BEFORE:+$(readlink -f "$KISTORE_BEFORE")}
WORK=${BENCH_WORK:-/tmp/kistore-wtpull}
REPS=${REPS:-3}
BASE=${1:-20000}
NEW=${2:-40000}
. "$here/lib.sh"
rm -rf "$WORK"; mkdir -p "$WORK" "$HOME"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
ks() { "$KISTORE" --quiet --no-progress "$@"; }

python3 "$here/gen.py" "$BASE" --seed 1 --out "$WORK/a.jsonl" >/dev/null
python3 "$here/gen.py" "$NEW" --seed 2 --out "$WORK/b.jsonl" >/dev/null
"$KISTORE" init "$WORK/s1" >/dev/null
ks --store "$WORK/s1" add "$WORK/a.jsonl"
git init -q --bare "$WORK/r.git"
ks --store "$WORK/s1" push "$WORK/r.git"
git clone -q "$WORK/r.git" "$WORK/wt0"
git clone -q --bare "$WORK/r.git" "$WORK/b0"
"$KISTORE" init "$WORK/s0" >/dev/null
ks --store "$WORK/s0" pull "$WORK/r.git"
ks --store "$WORK/s1" add "$WORK/b.jsonl"
ks --store "$WORK/s1" push "$WORK/r.git"
echo "== pull of $NEW new runs onto $BASE; $("$KISTORE" --version), $(git --version); $(nproc) cores;" \
     "load $(cut -d' ' -f1-3 /proc/loadavg)"
# t LABEL CMD...: as m (lib.sh), printing wall and CPU seconds; "wall cpu" left in $took.
t() {
  local label=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$WORK/time.tmp" "$@" >"$WORK/last.log" 2>&1 || {
    echo "FAILED: $*" >&2; tail -20 "$WORK/last.log" >&2; exit 3; }
  took=$(awk '{ printf "%.2f %.2f", $1, $2 + $3 }' "$WORK/time.tmp")
  printf "  %-44s %6.2f s wall %6.2f s CPU\n" "$label" $took
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%.2f wall, %.2f CPU", x[1] / y[1], x[2] / y[2] }'; }
clean() {
  [ -z "$(git -C "$1" status --porcelain)" ] || { echo "$1: work tree not clean after the pull" >&2; exit 3; }
  git -C "$1" status | grep -q "up to date with 'origin/main'" || { echo "$1: work tree not up to date" >&2; exit 3; }
}
# pair BIN NAME: BIN's pull in a copy of the work tree, then in a copy of the bare clone.
pair() {
  t "$2 pull, work tree, rep $i" bash -c 'cd "$1" && "$2" --quiet --no-progress pull origin' _ "$WORK/wt-$2" "$1"
  eval "wt_$2=\$took"
  t "$2 pull, bare clone, rep $i" "$1" --quiet --no-progress --store "$WORK/b-$2" pull origin
  eval "bare_$2=\$took"
  clean "$WORK/wt-$2"
}
for ((i = 1; i <= REPS; i++)); do
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  rm -rf "$WORK"/wt-* "$WORK"/b-* "$WORK/wtg" "$WORK/s"
  for k in kistore ${BEFORE:+before}; do cp -a "$WORK/wt0" "$WORK/wt-$k"; cp -a "$WORK/b0" "$WORK/b-$k"; done
  cp -a "$WORK/wt0" "$WORK/wtg"; cp -a "$WORK/s0" "$WORK/s"
  sync
  if [ -n "$BEFORE" ] && ((i % 2 == 0)); then pair "$BEFORE" before; fi
  pair "$KISTORE" kistore
  if [ -n "$BEFORE" ] && ((i % 2 == 1)); then pair "$BEFORE" before; fi
  t "kistore pull, bare store, rep $i" "$KISTORE" --quiet --no-progress --store "$WORK/s" pull "$WORK/r.git"
  bare_store=$took
  t "git pull --ff-only, work tree, rep $i" git -C "$WORK/wtg" pull -q --ff-only
  echo "  rep $i (load $load): work tree / bare clone $(ratio "$wt_kistore" "$bare_kistore");" \
       "/ bare store $(ratio "$wt_kistore" "$bare_store")${BEFORE:+; before: $(ratio "$wt_before" "$bare_before")}"
done
echo "  work tree: $(git -C "$WORK/wt-kistore" ls-files | wc -l) files; clean and up to date with origin/main"
