#!/usr/bin/env bash
# verify of two kistore binaries beside `git fsck --full`, on one store of N synthetic runs,
# pinned to two cores, in rounds (A, B, fsck each round), with wall, user time and peak RSS:
#
#   bench/verify_ab.sh OLD_KISTORE NEW_KISTORE [N]     (N: default 1000000; ROUNDS: default 3)
#
# The store is made once by NEW_KISTORE from bench/gen.py's bundles. Env: BENCH_WORK (scratch,
# default /tmp/kistore-verify-ab), CORES (taskset list, default 0,1).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
A=$(readlink -f "${1:?usage: bench/verify_ab.sh OLD NEW [N]}")
B=$(readlink -f "${2:?usage: bench/verify_ab.sh OLD NEW [N]}")
N=${3:-1000000}
W=${BENCH_WORK:-/tmp/kistore-verify-ab}
CORES=${CORES:-0,1}
export KISTORE_AUTHOR="Bench <bench@example.org>" GIT_CONFIG_NOSYSTEM=1 HOME=$W/home LC_ALL=C
rm -rf "$W"; mkdir -p "$W" "$HOME"
trap 'rm -rf "$W"' EXIT
echo "verify A/B at N = $N on cores $CORES; $(git --version); $(date -u +%FT%TZ)"
python3 "$here/gen.py" "$N" --out "$W/data/" >/dev/null
"$B" init "$W/store" >/dev/null
taskset -c "$CORES" /usr/bin/time -f "add (B) %e s, peak %M KiB" "$B" --store "$W/store" --no-progress --quiet add "$W/data"
rm -rf "$W/data"
for i in $(seq 1 "${ROUNDS:-3}"); do
  taskset -c "$CORES" /usr/bin/time -f "round $i  A     %e s  %U s user  %M KiB" "$A" --store "$W/store" --no-progress --quiet verify
  taskset -c "$CORES" /usr/bin/time -f "round $i  B     %e s  %U s user  %M KiB" "$B" --store "$W/store" --no-progress --quiet verify
  taskset -c "$CORES" /usr/bin/time -f "round $i  fsck  %e s  %U s user  %M KiB" git -C "$W/store" fsck --full --no-progress
done
