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
# Environment: KISTORE (binary; default build/kistore), BENCH_WORK (default /tmp/kistore-wtpull),
# REPS (3), KEEP=1 keeps the scratch folder. Pin it with taskset to compare machines.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
KISTORE=$(readlink -f "${KISTORE:-$root/build/kistore}")
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
for ((i = 1; i <= REPS; i++)); do
  rm -rf "$WORK/wt" "$WORK/wtg" "$WORK/s" "$WORK/b"
  cp -a "$WORK/wt0" "$WORK/wt"; cp -a "$WORK/wt0" "$WORK/wtg"; cp -a "$WORK/s0" "$WORK/s"; cp -a "$WORK/b0" "$WORK/b"
  sync
  m "kistore pull, work tree, rep $i" bash -c 'cd "$1" && "$2" --quiet --no-progress pull origin' _ "$WORK/wt" "$KISTORE"
  m "kistore pull, bare clone, rep $i" "$KISTORE" --quiet --no-progress --store "$WORK/b" pull origin
  m "kistore pull, bare store, rep $i" "$KISTORE" --quiet --no-progress --store "$WORK/s" pull "$WORK/r.git"
  m "git pull --ff-only, work tree, rep $i" git -C "$WORK/wtg" pull -q --ff-only
  [ -z "$(git -C "$WORK/wt" status --porcelain)" ] || { echo "work tree not clean after the pull" >&2; exit 3; }
  git -C "$WORK/wt" status | grep -q "up to date with 'origin/main'" || { echo "work tree not up to date" >&2; exit 3; }
done
echo "  work tree: $(git -C "$WORK/wt" ls-files | wc -l) files; clean and up to date with origin/main"
