#!/usr/bin/env bash
# git fsck --strict over every store the end-to-end suite leaves behind (issue 31: "no dangling
# blob after any command"). Runs `ctest -R e2e` in BUILD (default build) with SERVERS_KEEP=1 and
# TMPDIR set to a fresh folder, so each test's folder stays; then, for every git repository there
# whose HEAD tree holds FORMAT (a kistore store, or a repository a test forged from one), prints
# what `git fsck --strict` reports besides "Checking …" lines, with each dangling commit's
# subject and author, so that a reader can tell kistore's leftovers from a test's own forgeries
# (tests build hostile repositories with stock git, and several reset a branch on purpose).
#
#   scripts/e2e_fsck.sh [BUILD] [KEEP-DIR]      KEEP-DIR default /tmp/kistore-e2e-fsck (emptied)
set -uo pipefail
BUILD=$(readlink -f "${1:-build}")
KEEP=${2:-/tmp/kistore-e2e-fsck}
rm -rf "$KEEP"; mkdir -p "$KEEP"
(cd "$BUILD" && SERVERS_KEEP=1 TMPDIR=$KEEP ctest -j"$(nproc)" -R e2e >"$KEEP/ctest.log" 2>&1) ||
    echo "note: some e2e test failed; see $KEEP/ctest.log"
find "$KEEP" -type f -name HEAD -not -path "*/logs/*" -not -path "*/refs/*" | sort | while read -r head; do
    d=$(dirname "$head")
    [[ -d $d/objects ]] || continue
    git --git-dir="$d" cat-file -e HEAD:FORMAT 2>/dev/null || continue
    out=$(git --git-dir="$d" fsck --strict 2>&1 | grep -v '^Checking')
    [[ -n $out ]] || continue
    echo "== ${d#"$KEEP"/}"
    printf '%s\n' "$out" | sort | uniq -c | sort -rn | head -5 | sed 's/^/   /'
    printf '%s\n' "$out" | awk '/^dangling commit/ {print $3}' | head -3 | while read -r c; do
        echo "   commit ${c:0:12}: $(git --git-dir="$d" log -1 --format='%s | %an' "$c")"
    done
done
