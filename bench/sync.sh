#!/usr/bin/env bash
# kistore push/pull over a network remote vs git, on one data set (docs/benchmarks.md).
#
#   bench/sync.sh [N]      default N = 20000 synthetic bundles (bench/gen.py)
#
# Starts `git daemon` on 127.0.0.1 (tests/e2e/lib/servers.sh; receive-pack enabled) and
# times, alternating kistore and git in this one invocation:
#   push:     a store of N bundles to an empty bare repository over git://, vs `git push` of the
#             same repository to another empty one over git://
#   pull-one: one new run (pushed by a second store) into a copy of the big store over git://,
#             vs `git fetch` of the same commit into another copy
# Figures are medians (REPS, default 3) of wall-clock seconds and the ratio kistore / git.
#
# Environment: KISTORE (binary; default build/kistore), BENCH_WORK (default /tmp/kistore-bench-sync),
# REPS (3), KEEP=1 keeps the scratch folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
KISTORE=$(readlink -f "${KISTORE:-$root/build/kistore}")
WORK=${BENCH_WORK:-/tmp/kistore-bench-sync}
REPS=${REPS:-3}
n=${1:-20000}

export KISTORE_AUTHOR="Bench <bench@example.org>"
export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.org
export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.org
export LC_ALL=C

rm -rf "$WORK"; mkdir -p "$WORK/served"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
# shellcheck source=../tests/e2e/lib/servers.sh
source "$root/tests/e2e/lib/servers.sh"
servers_init
[ "${KEEP:-0}" = 1 ] || servers_on_exit "rm -rf '$WORK'"
start_git_daemon "$WORK/served"

t() {  # t OUTFILE CMD...: appends wall seconds
  local out=$1; shift
  local t0=$EPOCHREALTIME
  "$@" >"$WORK/last.log" 2>&1 || { echo "FAILED: $*" >&2; tail -20 "$WORK/last.log" >&2; exit 3; }
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.4f\n", b - a}' >>"$out"
}
median() { sort -g "$1" | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else printf "%.4f\n", (v[NR/2] + v[NR/2+1]) / 2}'; }
report() {
  local k g; k=$(median "$2"); g=$(median "$3")
  printf '%-9s kistore %8.3f s, git %8.3f s, ratio %5s   (median of %d)\n' "$1:" "$k" "$g" \
    "$(awk -v a="$k" -v b="$g" 'BEGIN {printf "%.2f", a / b}')" "$REPS"
}

python3 "$here/gen.py" "$n" --out "$WORK/data/" --extra "$WORK/single.jsonl" >/dev/null
"$KISTORE" init "$WORK/store" >/dev/null 2>&1
"$KISTORE" --store "$WORK/store" --quiet --no-progress add "$WORK/data"
echo "== sync over git:// ($GIT_DAEMON_URL), $n bundles; $("$KISTORE" --version), $(git --version), load $(cut -d' ' -f1-3 /proc/loadavg)"

: >"$WORK/push.k"; : >"$WORK/push.g"
for ((i = 0; i < REPS; i++)); do
  rm -rf "$WORK/served/k.git" "$WORK/served/g.git" "$WORK/store1"
  git init -q --bare "$WORK/served/k.git"; git init -q --bare "$WORK/served/g.git"
  cp -a "$WORK/store" "$WORK/store1"
  "$KISTORE" --store "$WORK/store1" remote add bench "$GIT_DAEMON_URL/k.git" >/dev/null 2>&1
  t "$WORK/push.k" "$KISTORE" --store "$WORK/store1" --quiet --no-progress push bench
  t "$WORK/push.g" git -C "$WORK/store" push -q "$GIT_DAEMON_URL/g.git" main
done
report push "$WORK/push.k" "$WORK/push.g"
echo "          \$ kistore --store STORE push bench      (bench = $GIT_DAEMON_URL/k.git, empty)"
echo "          \$ git -C STORE push $GIT_DAEMON_URL/g.git main"

# One new run, pushed by a second store, then pulled into copies of the big store.
"$KISTORE" --quiet clone "$GIT_DAEMON_URL/k.git" "$WORK/other" >/dev/null 2>&1
"$KISTORE" --store "$WORK/other" --quiet --no-progress add "$WORK/single.jsonl" >/dev/null
"$KISTORE" --store "$WORK/other" --quiet --no-progress push origin >/dev/null
: >"$WORK/pull.k"; : >"$WORK/pull.g"
for ((i = 0; i < REPS; i++)); do
  rm -rf "$WORK/store1" "$WORK/store2"
  cp -a "$WORK/store" "$WORK/store1"; cp -a "$WORK/store" "$WORK/store2"
  "$KISTORE" --store "$WORK/store1" remote add bench "$GIT_DAEMON_URL/k.git" >/dev/null 2>&1
  t "$WORK/pull.k" "$KISTORE" --store "$WORK/store1" --quiet --no-progress pull bench
  t "$WORK/pull.g" git -C "$WORK/store2" fetch -q "$GIT_DAEMON_URL/k.git" main
done
report pull-one "$WORK/pull.k" "$WORK/pull.g"
echo "          \$ kistore --store STORE pull bench      (the remote holds STORE + one new run)"
echo "          \$ git -C STORE fetch $GIT_DAEMON_URL/k.git main"
