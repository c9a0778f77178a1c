#!/usr/bin/env bash
# A pull's memory against the number of commits it brings (issue 29: "a pull's memory does not
# grow with the number of commits pulled").
#
#   bench/pull_commits.sh [N...]      default: 20000 200000
#
# A store of 1,000 bundles (bench/gen.py) and a bare clone of it; then, for each N, a copy of the
# store gets N empty commits on top of its branch (each the tree of its parent: `git fast-import`,
# no file changes), and the clone pulls them: `kistore --store CLONE pull ORIGIN` (path remote),
# which receives the commits into its quarantine and checks each one. Prints wall time and peak
# RSS (/usr/bin/time -v) per N, and `git fetch` of the same commits into a copy of the clone.
# Environment: KISTORE (binary; default build/kistore), BENCH_WORK (default
# /tmp/kistore-pull-commits), KEEP=1 keeps the scratch folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
KISTORE=$(readlink -f "${KISTORE:-$root/build/kistore}")
WORK=${BENCH_WORK:-/tmp/kistore-pull-commits}
. "$here/lib.sh"
[ $# -gt 0 ] || set -- 20000 200000
rm -rf "$WORK"; mkdir -p "$WORK" "$HOME"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT

# empty_commits N: a fast-import stream of N commits on refs/heads/main, each with its parent's tree.
empty_commits() {
  python3 - "$1" <<'EOF'
import sys
n = int(sys.argv[1])
out = sys.stdout.buffer
for i in range(n):
    msg = b"empty %d\n" % i
    out.write(b"commit refs/heads/main\ncommitter Bench <bench@example.org> %d +0000\ndata %d\n%s"
              % (1700000000 + i, len(msg), msg))
    if i == 0:
        out.write(b"from refs/heads/main^0\n")
    out.write(b"\n")
EOF
}

python3 "$here/gen.py" 1000 --seed 1 --out "$WORK/base.jsonl" >/dev/null
"$KISTORE" init "$WORK/origin0" >/dev/null
"$KISTORE" --store "$WORK/origin0" --quiet --no-progress add "$WORK/base.jsonl"
git clone -q --bare "$WORK/origin0" "$WORK/clone0"
echo "== a pull of N empty commits onto a 1,000-bundle store; $("$KISTORE" --version), $(git --version);" \
     "$(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "$@"; do
  rm -rf "$WORK/origin" "$WORK/clone" "$WORK/gitclone"
  cp -a "$WORK/origin0" "$WORK/origin"; cp -a "$WORK/clone0" "$WORK/clone"; cp -a "$WORK/clone0" "$WORK/gitclone"
  empty_commits "$n" | git --git-dir="$WORK/origin" fast-import --quiet
  m "kistore pull of $n commits" "$KISTORE" --store "$WORK/clone" --no-progress pull "$WORK/origin"
  got=$(git --git-dir="$WORK/clone" rev-list --count main)
  [ "$got" = "$(git --git-dir="$WORK/origin" rev-list --count main)" ] || { echo "the clone has $got commits" >&2; exit 3; }
  m "git fetch of $n commits" git --git-dir="$WORK/gitclone" fetch -q "$WORK/origin" main
done
echo "  \$ kistore --store CLONE pull ORIGIN        \$ git fetch ORIGIN main"
