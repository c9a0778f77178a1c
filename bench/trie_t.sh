#!/usr/bin/env bash
# Format 3's T (SPEC §2: between 64 and 1,024), measured: for each T, the index (refs/) of a
# store of RUNS synthetic runs written by bench_trie_history as a history of SINGLES one-run
# commits, then commits of BATCH runs, then one last one-run add; `git fast-import` makes the
# repository. Prints per T: git objects per run (all of the history, after `git repack -adf`),
# objects per run in the head tree, the repository's packed bytes (`du -sb objects/pack` after
# `git repack -adf`), and what the last one-run add wrote: its new objects' bytes (uncompressed,
# and deflated at zlib level 6 as git writes a loose object) and how many.
#
#   bench/trie_t.sh [RUNS] [SINGLES] [BATCH] [T...]     defaults: 20000 2000 1000 64 128 256 512 1024
#
# Environment: KISTORE_BUILD_DIR (default build/, where the bench is built), BENCH_WORK
# (scratch; default /tmp/kistore-bench-trie), KEEP=1 keeps it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KISTORE_BUILD_DIR:-$root/build}
RUNS=${1:-20000}
SINGLES=${2:-2000}
BATCH=${3:-1000}
shift $(($# < 3 ? $# : 3))
ts=("$@")
[ ${#ts[@]} -gt 0 ] || ts=(64 128 256 512 1024)
WORK=${BENCH_WORK:-/tmp/kistore-bench-trie}
export GIT_CONFIG_NOSYSTEM=1 HOME=$WORK/home LC_ALL=C
mkdir -p "$WORK" "$HOME"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
KISTORE_BUILD_DIR=$build bash "$root/scripts/build.sh" bench_trie_history >/dev/null

printf '%s\n' "runs $RUNS, $SINGLES one-run commits then commits of $BATCH, then one add"
printf '| T | objects / run (history) | objects / run (head tree) | packed bytes | bytes / run | one add: objects | one add: bytes | one add: deflated |\n'
printf '| --- | --- | --- | --- | --- | --- | --- | --- |\n'
for t in "${ts[@]}"; do
  repo=$WORK/t$t.git
  rm -rf "$repo"
  git init -q --bare "$repo"
  "$build/bench_trie_history" "$t" "$RUNS" "$SINGLES" "$BATCH" 2>"$WORK/gen.log" |
    git -C "$repo" fast-import --quiet
  # The last add's new objects, before any repack: the commit, its new trees and blobs.
  git -C "$repo" rev-list --objects main --not main~1 | cut -d' ' -f1 |
    git -C "$repo" cat-file --batch='%(objecttype) %(objectsize)' >"$WORK/last.objects"
  read -r add_objects add_bytes add_deflated < <(python3 - "$WORK/last.objects" <<'EOF'
import sys, zlib
data = open(sys.argv[1], 'rb').read()
count = size = deflated = 0
while data:
    header, _, rest = data.partition(b'\n')
    kind, n = header.split()
    n = int(n)
    body, data = rest[:n], rest[n + 1:]
    count += 1
    size += n
    deflated += len(zlib.compress(kind + b' ' + str(n).encode() + b'\0' + body, 6))
print(count, size, deflated)
EOF
)
  git -C "$repo" repack -adf -q
  objects=$(git -C "$repo" count-objects -v | awk '/^in-pack:/ {print $2}')
  head_objects=$(( $(git -C "$repo" ls-tree -r -t main | wc -l) + 1 ))
  packed=$(du -sb "$repo/objects/pack" | cut -f1)
  total_runs=$((RUNS + 1))
  awk -v t="$t" -v o="$objects" -v h="$head_objects" -v p="$packed" -v n="$total_runs" \
      -v ao="$add_objects" -v ab="$add_bytes" -v ad="$add_deflated" \
      'BEGIN {printf "| %d | %.2f | %.3f | %d | %.1f | %d | %d | %d |\n", t, o / n, h / n, p, p / n, ao, ab, ad}'
done
