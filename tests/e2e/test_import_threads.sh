#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The store's bytes do not depend on how many threads made them: `kistore
# import` (whose importer reads the next records on one thread while another
# checks, compresses and writes the last ones) and `kistore add` (which
# compresses and hashes on every core) give the same tree and the same pack,
# object for object and offset for offset, as on one thread. One thread is
# what kistore uses under an address-space limit too small for a second one
# (objects/parallel.h, worker_threads: 200 MiB), so that is how the test
# gets it. Everything but the commit (its time) is compared.
#
# Under AddressSanitizer no address-space limit can hold (test_bulk_add.sh
# says why): there only the threaded runs are made and checked to verify.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
export KISTORE_AUTHOR="Threads Test <threads@example.org>"
work_in threads

# Liger rows with their own x value each (a new run and workload a row):
# more than a batch of the importer (1,024 bundles) and of the bulk add.
"$PY" "$SRC/tests/e2e/lib/liger_rows.py" "$SRC/tests/data/liger/sample.csv" "$W/liger.csv" 3000
"$PY" "$SRC/bench/gen.py" 3000 --out "$W/runs.jsonl"

one_thread() { bash -c 'ulimit -v $((200 << 10)) && exec "$@"' _ "$@"; }

# made STORE : the tree of its head and every object of its packs but the
# commit (id, type, size, size in the pack, offset), as `git verify-pack` lists them.
made() {
    git --git-dir="$1" rev-parse 'HEAD^{tree}'
    for p in "$1"/objects/pack/*.pack; do git verify-pack -v "$p"; done |
        awk '$2 != "commit" && NF >= 5 { print $1, $2, $3, $4, $5 }' | sort
}

# compare WHAT ARGS... : the command into a fresh store with threads and on
# one thread; the stores' trees and packs must be the same.
compare() {
    local what=$1
    shift
    rm -rf "$W/threads" "$W/one"
    assert_exit 0 ks init "$W/threads"
    assert_exit 0 ks --store "$W/threads" "$@"
    [[ $(ks --store "$W/threads" --json verify | jq -r .ok) == true ]] || fail "$what: the store does not verify"
    if [[ ${KISTORE_SANITIZED:-0} == 1 ]]; then
        pass "$what: made with threads, verifies (one thread is not tried under the sanitizers)"
        return
    fi
    assert_exit 0 ks init "$W/one"
    one_thread "$KISTORE" --no-progress --store "$W/one" "$@" >/dev/null || fail "$what: failed on one thread"
    local a b
    a=$(made "$W/threads")
    b=$(made "$W/one")
    [[ $(wc -l <<<"$a") -gt 3000 ]] || fail "$what: expected thousands of objects, found $(wc -l <<<"$a") lines"
    [[ $a == "$b" ]] || fail "$what: the tree or the pack differs between threads and one thread: $(diff <(echo "$a") <(echo "$b") | head -5)"
    pass "$what: the same tree $(head -1 <<<"$a" | cut -c1-12) and pack ($(($(wc -l <<<"$a") - 1)) objects) on one thread"
}

compare "import liger" import liger "$W/liger.csv"
compare "add" add "$W/runs.jsonl"
