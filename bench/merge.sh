#!/usr/bin/env bash
# The merge of two stores that each added N new runs apart (issue 13: "the merge of two
# stores each with 100,000 new runs takes seconds, not minutes"), and git's own merge of the
# same two histories for scale.
#
#   bench/merge.sh [N]      default N = 100000
#
# A shared base store (1,000 bundles), cloned twice; each clone bulk-adds N bundles of its own
# (bench/gen.py with different seeds, so no run is shared); then, REPS times on fresh copies:
#   kistore: `kistore --store A pull B` (path remote): receives B's pack into the quarantine,
#            checks every new commit, and writes the merge commit of the two index trees;
#   git:     `git fetch B main` then `git merge-tree --write-tree main FETCH_HEAD` in a copy of A
#            (git's merge of the same two trees, writing the merged tree, no work tree). In format 3
#            both sides add lines to the same index files, which git's merge cannot join: it
#            reports add/add conflicts (exit 1) after doing the same work; the bench takes that.
# Prints wall time and peak RSS of each, and checks the merged store verifies.
# Environment: KISTORE (binary; default build/kistore), BENCH_WORK (default /tmp/kistore-merge),
# REPS (3), KEEP=1 keeps the scratch folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
KISTORE=$(readlink -f "${KISTORE:-$root/build/kistore}")
WORK=${BENCH_WORK:-/tmp/kistore-merge}
REPS=${REPS:-3}
N=${1:-100000}
. "$here/lib.sh"
rm -rf "$WORK"; mkdir -p "$WORK" "$HOME"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT

python3 "$here/gen.py" 1000 --seed 1 --out "$WORK/base.jsonl" >/dev/null
python3 "$here/gen.py" "$N" --seed 2 --out "$WORK/a/" >/dev/null
python3 "$here/gen.py" "$N" --seed 3 --out "$WORK/b/" >/dev/null
"$KISTORE" init "$WORK/base" >/dev/null
"$KISTORE" --store "$WORK/base" --quiet --no-progress add "$WORK/base.jsonl"
git clone -q --bare "$WORK/base" "$WORK/A0"; git clone -q --bare "$WORK/base" "$WORK/B"
"$KISTORE" --store "$WORK/A0" --quiet --no-progress add "$WORK/a"
"$KISTORE" --store "$WORK/B" --quiet --no-progress add "$WORK/b"
echo "== merge of two stores, each $N new runs on a shared 1,000; $("$KISTORE" --version), $(git --version);" \
     "$(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 1; i <= REPS; i++)); do
  rm -rf "$WORK/A" "$WORK/G"; cp -a "$WORK/A0" "$WORK/A"; cp -a "$WORK/A0" "$WORK/G"
  m "kistore pull (merge), rep $i" "$KISTORE" --store "$WORK/A" --no-progress pull "$WORK/B"
  m "git fetch, rep $i" git --git-dir="$WORK/G" fetch -q "$WORK/B" main
  m "git merge-tree --write-tree, rep $i" bash -c '"$@"; [ $? -le 1 ]' _ \
    git --git-dir="$WORK/G" merge-tree --write-tree main FETCH_HEAD
done
want=$(( (N * 2 + 1000) ))
runs=$("$KISTORE" --store "$WORK/A" --json verify | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["ok"], r["objects"])')
echo "  merged store: verify ok/objects = $runs (runs: $want, with their protocols and environments)"
echo "  \$ kistore --store A pull B        \$ git fetch B main && git merge-tree --write-tree main FETCH_HEAD"
