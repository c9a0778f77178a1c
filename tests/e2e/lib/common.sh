# shellcheck shell=bash disable=SC2034
# Setup shared by the e2e tests that drive kistore; lib/preamble.sh sources it (after
# lib/servers.sh and servers_init, with $here set to the tests/e2e folder). Sets KISTORE
# (absolute), SRC, DATA, FX, PY; a private HOME and TMPDIR and no machine git config
# (lib/isolate.sh); fixed git identities; and the helpers ks, mkruns, head_of, jv, gd,
# nlines, work_in, use_store, and index_file, index_line, index_keys and set_line for
# format 3's index files.
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
# gd GITDIR GIT-ARGS... : stock git on a bare repository (a store's git folder).
gd() { git --git-dir="$1" "${@:2}"; }
# nlines TEXT : how many lines TEXT has (0 for the empty string).
nlines() { if [[ -z $1 ]]; then echo 0; else printf '%s\n' "$1" | wc -l | tr -d ' '; fi; }
# work_in NAME [FOLDER...] : the test's work folder: sets W=$SERVERS_DIR/NAME,
# makes it, and each FOLDER (relative to W, or absolute), and changes to W.
work_in() {
    W=$SERVERS_DIR/$1
    shift
    mkdir -p "$W"
    cd "$W" || fail "cannot change to $W"
    if (($#)); then mkdir -p -- "$@"; fi
}
# use_store DIR : the test's store: sets S=DIR and exports KISTORE_DIR=DIR, so
# that ks without --store works on it (the folder is made by `ks init`).
use_store() {
    S=$1
    export KISTORE_DIR=$1
}
# tree_with REPO BASE < INDEX-INFO : prints the id of a tree written to REPO:
# BASE's tree changed by the `git update-index --index-info` lines on stdin
# ("MODE SP ID TAB PATH"; mode 0 with the null id removes PATH), made with
# stock git and a scratch index.
tree_with() {
    local idx=$SERVERS_DIR/scratch.index
    rm -f "$idx"
    GIT_INDEX_FILE=$idx gd "$1" read-tree "$2"
    GIT_INDEX_FILE=$idx gd "$1" update-index --index-info
    GIT_INDEX_FILE=$idx gd "$1" write-tree
    rm -f "$idx"
}
# commit_index_info REPO MSG [PARENT] < INDEX-INFO : moves REPO's main to a new
# commit whose tree is main's changed by the --index-info lines on stdin
# (tree_with), with parent PARENT (default main) and message MSG; MSG "-"
# keeps main's message (with PARENT main^: main amended). Prints the commit.
commit_index_info() {
    local repo=$1 msg=$2 parent=${3:-main} tree commit
    tree=$(tree_with "$repo" main)
    if [[ $msg == - ]]; then
        commit=$(gd "$repo" cat-file commit main | sed '1,/^$/d' | gd "$repo" commit-tree "$tree" -p "$parent")
    else
        commit=$(gd "$repo" commit-tree "$tree" -p "$parent" -m "$msg")
    fi
    gd "$repo" update-ref refs/heads/main "$commit"
    printf '%s\n' "$commit"
}
# cacheinfo_lines MODE,BLOB,PATH... : the --index-info lines that add (or
# replace) these entries, as `update-index --add --cacheinfo` takes them.
cacheinfo_lines() {
    local e mode id path
    for e in "$@"; do
        IFS=, read -r mode id path <<<"$e"
        printf '%s %s\t%s\n' "$mode" "$id" "$path"
    done
}
# commit_with REPO MSG MODE,BLOB,PATH... : commit_index_info REPO MSG with main's
# tree and these entries added (or replaced). Prints the commit.
commit_with() { cacheinfo_lines "${@:3}" | commit_index_info "$1" "$2"; }
# Format 3's index with stock git (tests/e2e/lib/index_lines.py says more):
# index_file REPO FAMILY KEY : the path of the file holding KEY's line;
# index_line REPO FAMILY KEY : that line; index_keys REPO FAMILY [PREFIX] : the
# keys; set_line REPO FAMILY KEY LINE|- : the --index-info line of that file
# with KEY's line replaced (inserted in order) or removed, its blob written.
# Forge with `set_line ... | commit_index_info REPO MSG`.
index_file() { "$PY" "$here/lib/index_lines.py" file "$@"; }
index_line() { "$PY" "$here/lib/index_lines.py" line "$@"; }
index_keys() { "$PY" "$here/lib/index_lines.py" keys "$@"; }
set_line() { "$PY" "$here/lib/index_lines.py" set "$@"; }
# reframe_added REPO COMMIT DICT : every object COMMIT added (below objects/,
# against its first parent) re-compressed by `zstd --check -D DICT` and written
# to REPO with stock git; prints the --index-info lines that put those frames
# at the objects' paths.
reframe_added() {
    local repo=$1 c=$2 p plain=$SERVERS_DIR/reframe.plain framed=$SERVERS_DIR/reframe.zst
    while IFS= read -r p; do
        gd "$repo" cat-file blob "$c:$p" | zstd -q -d -c >"$plain"
        zstd -q -f --check -D "$3" "$plain" -o "$framed"
        printf '100644 %s\t%s\n' "$(gd "$repo" hash-object -w "$framed")" "$p"
    done < <(gd "$repo" diff-tree -r --name-only --diff-filter=A "$c^" "$c" -- objects/)
    rm -f "$plain" "$framed"
}
# rerun_bundle BUNDLE MEDIAN_NS [NAME] : prints BUNDLE (a run's `show
# --canonical`) as a controlled rerun of it: the run's median latency
# MEDIAN_NS, observed at 2026-11-30T09:00:00.000Z, no sourceNative, and with
# NAME, metadata {"name": NAME}.
rerun_bundle() {
    "$PY" - "$@" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
r = b["run"]
r["spec"]["timing"]["latencyNs"]["median"] = int(sys.argv[2])
r["spec"]["observedAt"] = "2026-11-30T09:00:00.000Z"
del r["spec"]["sourceNative"]
if len(sys.argv) > 3:
    r["metadata"] = {"name": sys.argv[3]}
print(json.dumps(b))
PY
}
# source_key SOURCE EXTERNALID : the key of that upstream id's claim in
# refs/sources (format 3): hex of sha256(SOURCE NUL EXTERNALID), computed here.
source_key() { printf '%s\0%s' "$1" "$2" | sha256sum | cut -c1-64; }
# source_run REPO SOURCE EXTERNALID : the run ("sha256:<hex>") that claims that
# upstream id, read with stock git from its line; fails when none does.
source_run() { index_line "$1" sources "$(source_key "$2" "$3")" | jq -r .run; }
