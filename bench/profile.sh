#!/usr/bin/env bash
# Profiles kistore's add, verify, one-add, rank or push with perf (DWARF call stacks) and prints where
# the time goes, by category (bench/perf_categories.py).
#
#   bench/profile.sh add|verify|one-add|rank|push|push-git N     e.g. bench/profile.sh add 20000
#
# push goes to an empty bare repository by path, push-git to one served by `git daemon` on
# 127.0.0.1 (only kistore's side is profiled, not the server's receive-pack).
#
# Environment: KISTORE (binary; default build-bench/kistore), BENCH_WORK (scratch; default
# /tmp/kistore-profile, kept: the store of `add` is reused by the other operations), FREQ (perf
# sampling rate, default 500 Hz), PERF_OUT (keep perf.data there).
# For instruction counts instead of samples (steady on a busy machine, but 50x slower):
#   valgrind --tool=callgrind --callgrind-out-file=cg.out kistore --store S add DATA/
#   callgrind_annotate --inclusive=yes --tree=calling cg.out | less
# (callgrind counts every iteration of `rep stosb` as an instruction, so it overstates memset.)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
KISTORE=$(readlink -f "${KISTORE:-$root/build-bench/kistore}")
WORK=${BENCH_WORK:-/tmp/kistore-profile}
FREQ=${FREQ:-500}
op=${1:?usage: bench/profile.sh add|verify|one-add|rank|push|push-git N}
n=${2:?usage: bench/profile.sh add|verify|one-add|rank|push|push-git N}
export KISTORE_AUTHOR="Bench <bench@example.org>"

d=$WORK/$n
mkdir -p "$d"
[ -f "$d/single.jsonl" ] || python3 "$here/gen.py" "$n" --out "$d/data/" --extra "$d/single.jsonl"
if [ "$op" != add ] && [ ! -d "$d/store" ]; then
  "$KISTORE" init "$d/store" >/dev/null 2>&1
  "$KISTORE" --store "$d/store" --quiet --no-progress add "$d/data"
fi

case $op in
  add)
    rm -rf "$d/store"; "$KISTORE" init "$d/store" >/dev/null 2>&1
    cmd=("$KISTORE" --store "$d/store" --quiet --no-progress add "$d/data") ;;
  verify)
    cmd=("$KISTORE" --store "$d/store" --quiet --no-progress verify) ;;
  one-add)
    rm -rf "$d/store1"; cp -a "$d/store" "$d/store1"
    cmd=("$KISTORE" --store "$d/store1" --quiet --no-progress add "$d/single.jsonl") ;;
  push)
    rm -rf "$d/store1" "$d/remote"; cp -a "$d/store" "$d/store1"; git init -q --bare "$d/remote"
    "$KISTORE" --store "$d/store1" remote add bench "$d/remote" >/dev/null 2>&1
    cmd=("$KISTORE" --store "$d/store1" --quiet --no-progress push bench) ;;
  push-git)
    # shellcheck source=../tests/e2e/lib/servers.sh
    source "$root/tests/e2e/lib/servers.sh"
    servers_init
    rm -rf "$d/store1" "$d/served"; mkdir -p "$d/served"; cp -a "$d/store" "$d/store1"
    git init -q --bare "$d/served/remote.git"
    start_git_daemon "$d/served"
    "$KISTORE" --store "$d/store1" remote add bench "$GIT_DAEMON_URL/remote.git" >/dev/null 2>&1
    cmd=("$KISTORE" --store "$d/store1" --quiet --no-progress push bench) ;;
  rank)
    run=$(git -C "$d/store" ls-tree -r --name-only main refs/groups | awk -F/ 'NR == 1 {print $6}')  # refs/groups/<key fanned out>/<run>
    cmd=("$KISTORE" --store "$d/store" rank "${run:0:12}") ;;
  *) echo "unknown operation $op" >&2; exit 2 ;;
esac

out=${PERF_OUT:-$d/perf.$op}
echo "\$ ${cmd[*]}"
/usr/bin/time -f "wall %e s, user %U s, sys %S s, max RSS %M KiB" \
  perf record -q --call-graph dwarf,32768 -F "$FREQ" -o "$out" -- "${cmd[@]}" >/dev/null
perf script -i "$out" 2>/dev/null | python3 "$here/perf_categories.py" --unmatched 8
[ -n "${PERF_OUT:-}" ] || rm -f "$out"
