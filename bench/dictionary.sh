#!/usr/bin/env bash
# Issue 15: what dictionary-compressed objects change, kistore before (OLD) against after (NEW)
# on the same data in one invocation, binaries alternating.
#
#   bench/dictionary.sh OLD NEW [SET...]   SET: a bundle count (gen.py) or `liger`; default 20000 liger
#
# Per set: the store size each binary leaves (objects/ as written, no git gc) against a git
# repository of the same documents as pretty-printed JSON after `git repack -adf && git gc`
# (as bench/run.sh measures it), NEW's `kistore stats` (where the bytes go), and the CPU time
# (user + sys, steadier than wall time on a shared machine; wall in brackets) of the bulk add,
# verify and a push to an empty bare repository on a path, with git's fast-import, fsck --full
# and push of the same data beside them. REPS (default 3) runs each, medians.
#
# Environment: BENCH_WORK (scratch; default /tmp/kistore-bench-dict), REPS, LIGER_DIR, KEEP=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OLD=$(readlink -f "${1:?usage: bench/dictionary.sh OLD NEW [SET...]}")
NEW=$(readlink -f "${2:?usage: bench/dictionary.sh OLD NEW [SET...]}")
shift 2
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(20000 liger)
WORK=${BENCH_WORK:-/tmp/kistore-bench-dict}
REPS=${REPS:-3}
LIGER_DIR=${LIGER_DIR:-/work/shared/data/liger}
export KISTORE_AUTHOR="Bench <bench@example.org>"
export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.org
export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.org
export GIT_CONFIG_NOSYSTEM=1 HOME=$WORK/home LC_ALL=C
mkdir -p "$WORK" "$HOME"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT

# t OUT CMD...: appends "cpu wall" seconds of CMD to OUT.
t() {
  local out=$1; shift
  local t0=$EPOCHREALTIME
  /usr/bin/time -f "%U %S" -o "$WORK/time.tmp" "$@" >"$WORK/last.log" 2>&1 || {
    echo "FAILED: $*" >&2; tail -20 "$WORK/last.log" >&2; exit 3; }
  awk -v a="$t0" -v b="$EPOCHREALTIME" '{printf "%.2f %.3f\n", $1 + $2, b - a}' "$WORK/time.tmp" >>"$out"
}
median() { sort -g -k"$2","$2" "$1" | awk -v c="$2" '{v[NR]=$c} END {
  if (NR % 2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2] + v[NR/2+1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }'; }
line() {  # line WHAT OLDFILE NEWFILE GITFILE
  local o n g
  o=$(median "$2" 1); n=$(median "$3" 1); g=$(median "$4" 1)
  printf '%-7s cpu: old %6.2f s, new %6.2f s (new/old %s); git %6.2f s: old/git %s, new/git %s   [wall old %s s, new %s s, git %s s]\n' \
    "$1" "$o" "$n" "$(ratio "$n" "$o")" "$g" "$(ratio "$o" "$g")" "$(ratio "$n" "$g")" \
    "$(median "$2" 2)" "$(median "$3" 2)" "$(median "$4" 2)"
}

run_set() {
  local set=$1 d=$WORK/$1 add
  rm -rf "$d"; mkdir -p "$d"
  if [ "$set" = liger ]; then
    local csvs=("$LIGER_DIR"/*.csv)
    "$NEW" init "$d/ref" >/dev/null 2>&1
    "$NEW" --store "$d/ref" --quiet --no-progress import liger "${csvs[@]}" >/dev/null
    python3 "$here/git_stream.py" from-store "$d/ref" "$d/stream.fi" "$d/pretty.fi"
    rm -rf "$d/ref"
    add=(--quiet --no-progress import liger "${csvs[@]}")
  else
    python3 "$here/gen.py" "$set" --out "$d/data/"
    python3 "$here/git_stream.py" fast-import "$d/data" >"$d/stream.fi"
    python3 "$here/git_stream.py" pretty "$d/data" >"$d/pretty.fi"
    add=(--quiet --no-progress add "$d/data")
  fi
  echo "== $set: $(grep -c '^blob$' "$d/stream.fi") documents; $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
  git init -q --bare "$d/plain"
  git -C "$d/plain" fast-import --quiet <"$d/pretty.fi"
  git -C "$d/plain" repack -q -a -d -f && git -C "$d/plain" gc -q
  local plain; plain=$(du -sb "$d/plain/objects" | cut -f1)
  rm -rf "$d/plain"
  local which
  for f in add.old add.new add.git verify.old verify.new verify.git push.old push.new push.git; do : >"$d/$f"; done
  for ((i = 0; i < REPS; i++)); do
    for which in old new; do
      local bin=$OLD; [ "$which" = new ] && bin=$NEW
      rm -rf "$d/$which"; "$bin" init "$d/$which" >/dev/null 2>&1
      t "$d/add.$which" "$bin" --store "$d/$which" "${add[@]}"
      t "$d/verify.$which" "$bin" --store "$d/$which" --quiet --no-progress verify
      rm -rf "$d/remote"; git init -q --bare "$d/remote"
      cp -a "$d/$which" "$d/copy"
      t "$d/push.$which" "$bin" --store "$d/copy" --quiet --no-progress push "$d/remote"
      rm -rf "$d/copy"
    done
    rm -rf "$d/git"; git init -q --bare "$d/git"
    t "$d/add.git" sh -c "git -C '$d/git' fast-import --quiet <'$d/stream.fi'"
    t "$d/verify.git" git -C "$d/new" fsck --full --no-progress
    rm -rf "$d/remote"; git init -q --bare "$d/remote"
    t "$d/push.git" git -C "$d/new" push -q "$d/remote" main
  done
  line add "$d/add.old" "$d/add.new" "$d/add.git"
  line verify "$d/verify.old" "$d/verify.new" "$d/verify.git"
  line push "$d/push.old" "$d/push.new" "$d/push.git"
  local so sn
  so=$(du -sb "$d/old/objects" | cut -f1); sn=$(du -sb "$d/new/objects" | cut -f1)
  printf 'size    old %d B (%s x git), new %d B (%s x git); git of the pretty JSON after gc %d B\n' \
    "$so" "$(ratio "$so" "$plain")" "$sn" "$(ratio "$sn" "$plain")" "$plain"
  "$NEW" --store "$d/new" stats
  rm -rf "$d"
}

for s in "${sets[@]}"; do run_set "$s"; done
