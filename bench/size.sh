#!/usr/bin/env bash
# Issue 29 §3: the size of a store against git's own copies of the same documents, and git
# objects per document in its head tree.
#
#   bench/size.sh [SET...]   SET: a bundle count (bench/gen.py) or `liger`; default 20000 100000 liger
#
# Per set: `du -sb objects/` of a store right after one `kistore add` (no gc) against
#   - a `git gc`'d repository of the same documents as pretty-printed JSON (bench/git_stream.py
#     pretty, then `git repack -adf && git gc`, as bench/dictionary.sh), and
#   - the `git fast-import` repository of the same canonical documents (bench/git_stream.py);
# the head tree's git objects (`git ls-tree -r -t`, plus the root) per document; and
# `kistore stats` (where the bytes go, per part).
# Environment: KISTORE (binary; default build/kistore), BENCH_WORK (scratch; default
# /tmp/kistore-bench-size), LIGER_DIR, KEEP=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
KISTORE=$(readlink -f "${KISTORE:-$root/build/kistore}")
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(20000 100000 liger)
WORK=${BENCH_WORK:-/tmp/kistore-bench-size}
LIGER_DIR=${LIGER_DIR:-$root/../shared/data/liger}
export KISTORE_AUTHOR="Bench <bench@example.org>"
export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.org
export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.org
export GIT_CONFIG_NOSYSTEM=1 HOME=$WORK/home LC_ALL=C
[ -x "$KISTORE" ] || { echo "no kistore binary at $KISTORE (build it, or set KISTORE)" >&2; exit 2; }
rm -rf "$WORK"; mkdir -p "$WORK" "$HOME"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
bytes() { du -sb "$1/objects" | cut -f1; }

echo "kistore $("$KISTORE" --version | awk '{print $2}') at $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), $(git --version); $(date -u +%FT%TZ)"
for set in "${sets[@]}"; do
  d=$WORK/$set
  mkdir -p "$d"
  "$KISTORE" init "$d/store" >/dev/null 2>&1
  if [ "$set" = liger ]; then
    "$KISTORE" --store "$d/store" --quiet --no-progress import liger "$LIGER_DIR"/*.csv >/dev/null
    python3 "$here/git_stream.py" from-store "$d/store" "$d/stream.fi" "$d/pretty.fi"
  else
    python3 "$here/gen.py" "$set" --out "$d/data/"
    "$KISTORE" --store "$d/store" --quiet --no-progress add "$d/data" >/dev/null
    python3 "$here/git_stream.py" fast-import "$d/data" >"$d/stream.fi"
    python3 "$here/git_stream.py" pretty "$d/data" >"$d/pretty.fi"
  fi
  docs=$(grep -c '^blob$' "$d/stream.fi")
  store=$(bytes "$d/store")
  git init -q --bare "$d/pretty" && git -C "$d/pretty" fast-import --quiet <"$d/pretty.fi"
  git -C "$d/pretty" repack -q -a -d -f && git -C "$d/pretty" gc -q
  pretty=$(bytes "$d/pretty")
  git init -q --bare "$d/fi" && git -C "$d/fi" fast-import --quiet <"$d/stream.fi"
  fi=$(bytes "$d/fi")
  tree_objects=$(( $(git -C "$d/store" ls-tree -r -t main | wc -l) + 1 ))
  echo "== $set: $docs documents"
  echo "  store objects/ $store B; git gc'd pretty JSON $pretty B: $(ratio "$store" "$pretty")x;" \
       "git fast-import $fi B: $(ratio "$store" "$fi")x"
  echo "  head tree: $tree_objects git objects, $(ratio "$tree_objects" "$docs") a document;" \
       "$(git -C "$d/store" count-objects -v | awk '/^in-pack/ {print $2}') objects in the store"
  "$KISTORE" --store "$d/store" stats | sed 's/^/  /'
  [ "${KEEP:-0}" = 1 ] || rm -rf "$d"
done
