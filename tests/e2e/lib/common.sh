# shellcheck shell=bash disable=SC2034
# Setup shared by the e2e tests that drive kistore alone (test_core, test_bad_input,
# test_concurrency, test_tamper). Source it after lib/servers.sh and servers_init, with
# $here set to the tests/e2e folder. Sets KISTORE (absolute), SRC, DATA, FX, PY; a private
# HOME and TMPDIR and no machine git config (lib/isolate.sh); fixed git identities; and the helpers ks, mkruns, head_of, jv.
# E2E_KEEP_GOING=1 records a failed check and goes on (to see every failure).
: "${KISTORE:?set KISTORE to the kistore binary}"
[[ $KISTORE == /* ]] || KISTORE=$PWD/$KISTORE
[[ -x $KISTORE ]] || fail "KISTORE=$KISTORE is not an executable"
SRC=${KISTORE_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
DATA=$SRC/tests/data/e2e
FX=$DATA/seed-run-tiled-geglu-backward.json
PY=$(command -v /usr/bin/python3 || command -v python3)
# shellcheck source=lib/isolate.sh
. "$here/lib/isolate.sh"
export TMPDIR=$SERVERS_DIR/tmp
mkdir -p "$TMPDIR"
export KISTORE_AUTHOR='kistore e2e <e2e@example.invalid>'
if [[ -n ${E2E_KEEP_GOING:-} ]]; then
    fail() { printf 'FAIL: %s\n' "$*" >&2; TESTS_FAILED=$((TESTS_FAILED + 1)); _E2E_BAD=1; }
    pass() {
        if ((${_E2E_BAD:-0})); then printf 'not ok - %s\n' "$*"; _E2E_BAD=0; return 0; fi
        TESTS_PASSED=$((TESTS_PASSED + 1)); _TESTS_LAST_PASS=$*
        printf 'ok %d - %s\n' "$TESTS_PASSED" "$*"
    }
fi
ks() { "$KISTORE" --no-progress "$@"; }
mkruns() { "$PY" "$DATA/make_runs.py" "$FX" "$@"; }
head_of() { git --git-dir="$1" rev-parse -q --verify refs/heads/main || echo none; }
# jv [JQ-OPTION...] EXPR : jq -r on the last command's stdout ($OUT)
jv() { jq -r "$@" <<<"$OUT" 2>/dev/null || echo "<not JSON: ${OUT:0:200}>"; }
