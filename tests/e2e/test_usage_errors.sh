#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Usage errors in kistore's own shape (issue: newcomer 2): every mistake on the
# command line -- no command, a misspelt option, a missing argument, a stray
# word -- is one "error:" line naming the command, what was wrong, the nearest
# option or command where one is near, and where to read more; exit 2; the
# store byte for byte as it was. None of CLI11's own wording ("A subcommand is
# required", "The following arguments were not expected", "Run with --help")
# reaches the user.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in w
S=$W/store
assert_exit 0 ks --store "$S" init
assert_exit 0 ks --store "$S" add "$FX"

# usage_error WHAT NEEDLE... -- ARGS... : kistore --store $S ARGS exits 2, says
# "error: " first and every NEEDLE on stderr, prints nothing on stdout, shows
# none of CLI11's wording, and leaves the store unchanged.
usage_error() {
    local what=$1 needles=()
    shift
    while [[ $1 != -- ]]; do needles+=("$1"); shift; done
    shift
    assert_exit_unchanged 2 "$S" "$what" ks --store "$S" "$@"
    [[ $ERR == "error: "* ]] || fail "$what: stderr begins with error: (got: ${ERR:0:120})"
    local n
    for n in "${needles[@]}"; do assert_contains "$ERR" "$n" "$what"; done
    assert_eq "" "$OUT" "$what: nothing on stdout"
    for n in "A subcommand is required" "were not expected" "Run with --help"; do
        assert_not_contains "$ERR" "$n" "$what: none of the parser's own wording"
    done
}

# No command: a short usage with every command and what it does.
usage_error "no command" "kistore needs a command" "usage: kistore" "  add " "  verify " "kistore help COMMAND" --
usage_error "a group without its command" "kistore trust needs a command" "  add " "  list " "kistore trust --help" -- trust
# A misspelt option: the nearest one is suggested, before or after the arguments.
usage_error "misspelt option" 'unknown option "--frmat" for kistore log; did you mean "--format"?' \
    "kistore log --help" -- log --frmat tsv
usage_error "misspelt option after an argument" 'unknown option "--kep-going" for kistore add; did you mean "--keep-going"?' \
    -- add "$FX" --kep-going
usage_error "misspelt global option" 'did you mean "--quiet"?' -- verify --quite
usage_error "an option nothing is near" 'unknown option "--frobnicate" for kistore ls' "kistore ls --help" -- ls --frobnicate
# A missing argument, a stray word: the command, what, and where to read.
usage_error "missing argument" "kistore add: PATH is required" "kistore add --help" -- add
usage_error "stray word" 'kistore log: unexpected argument "tsv"' -- log tsv
usage_error "misspelt command" 'unknown command "pul"; did you mean "pull"?' -- pul
pass "usage errors: error: first, the command, the nearest name, exit 2, nothing written"

# A folder with nothing add reads is no empty success: exit 2 saying what it holds.
mkdir -p "$W/tables/more" "$W/empty"
echo "kernel,ms" >"$W/tables/a.csv" && echo notes >"$W/tables/more/notes.txt"
usage_error "a folder of CSV files" "tables: expected *.json or *.jsonl files in this folder (or below it), found a.csv, more/notes.txt; nothing was written" \
    "kistore import" -- add "$W/tables"
usage_error "an empty folder" "empty: expected *.json or *.jsonl files" "found no file; nothing was written" -- add "$W/empty"
pass "add of a folder with nothing to read: exit 2 naming what it holds, nothing written"

# What is not a mistake stays accepted: "-" for standard input, a value that
# begins with a dash, --help and --version anywhere.
assert_exit 0 ks --store "$S" add - <"$FX"
assert_exit 0 ks --store "$S" help add
assert_contains "$OUT" "Usage: kistore add" "help add"
assert_exit 0 ks --store "$S" log --help
assert_exit 0 ks --version
# ls --kind takes a kind as documents spell it or by its role, in any case.
assert_exit 0 ks --store "$S" ls --kind BenchmarkRun
full=$OUT
[[ -n $full ]] || fail "ls --kind BenchmarkRun lists the run"
for k in run Run benchmarkrun; do
    assert_exit 0 ks --store "$S" ls --kind "$k"
    assert_eq "$full" "$OUT" "ls --kind $k is --kind BenchmarkRun"
done
usage_error "an unknown kind" '--kind: expected one of BenchmarkRun' '(or run, protocol' 'found "runs"' -- ls --kind runs
pass "standard input, help, version and --kind run are not usage errors"

summary
