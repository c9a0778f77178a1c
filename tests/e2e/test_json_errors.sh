#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# --json errors (SPEC §3), table-driven: for every kind of failure — a usage
# error (with --json before the command, after it, or after its arguments),
# an input error (a bad JSON file), a REF that is not found, a store error and
# a remote that cannot be reached — kistore prints exactly one JSON document
# on stdout, {"error":{"code":N,"message":"…"}}, exits N, and prints nothing
# else there. The message is the exact text (JSON-escaped, never escaped for a
# terminal): a file name holding an escape sequence comes back byte for byte.
# Failures that are also results (rejected inputs of add, a refused pull)
# carry the same "error" member in their own document.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in w
S=$W/store
assert_exit 0 ks --store "$S" init
assert_exit 0 ks --store "$S" add "$FX"
printf '{"a":' >bad.json
printf 'not a store\n' >afile
CLOSED_PORT=$(free_port)

# check_error CODE MESSAGE-PART ARGS... : kistore ARGS exits CODE and its
# stdout is one line, the document {"error":{"code":CODE,"message":…}} and
# nothing more, the message holding MESSAGE-PART.
check_error() {
    local code=$1 part=$2
    shift 2
    assert_exit "$code" ks "$@"
    assert_eq 1 "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" "one line on stdout: $*"
    assert_eq '["error"]' "$(jv -c 'keys')" "only an error member: $*"
    assert_eq '["code","message"]' "$(jv -c '.error | keys')" "code and message: $*"
    assert_eq "$code" "$(jv '.error.code')" "the code is the exit status: $*"
    assert_contains "$(jv '.error.message')" "$part" "the message: $*"
    [[ -n $ERR ]] || fail "a human line on stderr too: $*"
}

# ---- usage errors, wherever --json stands
check_error 2 'unknown command "pusj"; did you mean "push"?' --json pusj
check_error 2 'unknown command "pusj"' pusj --json
check_error 2 'REF is required' --store "$S" rank --json
check_error 2 'frobnicate' --store "$S" ls --frobnicate --json
check_error 2 'frobnicate' --json --store "$S" ls --frobnicate
check_error 2 'kistore needs a command' --json
check_error 2 'unknown command "remote frob"' --store "$S" remote frob origin --json
pass "usage errors are one JSON document, --json before or after the command"

# ---- input errors
check_error 2 'bad.json:1:6: expected a JSON value' canon bad.json --json
check_error 2 'bad.json:1:6:' digest --json bad.json
# add's own document carries the error member beside what was rejected.
BEFORE=$(head_of "$S")
assert_exit 2 ks --store "$S" add --json bad.json
assert_eq 2 "$(jv '.error.code')" "add: the error member"
assert_contains "$(jv '.error.message')" "bad.json:1:6:" "add: the first rejection"
assert_eq "bad.json" "$(jv '.rejected[0].source')" "add: what was rejected"
assert_eq "$BEFORE" "$(head_of "$S")" "add: nothing written"
pass "input errors are one JSON document with the file, line and column"

# ---- the message is exact: a file name with an escape sequence
ESC_NAME=$'bad\e]0;owned\a.json'
cp bad.json "$ESC_NAME"
check_error 2 "$ESC_NAME:1:6:" canon "$ESC_NAME" --json
assert_contains "$OUT" '\u001b]0;owned\u0007.json' "JSON escapes of ESC and BEL"
assert_not_contains "$ERR" $'\e' "stderr escapes it for a terminal"
assert_contains "$ERR" 'bad\x1b]0;owned\x07.json' "stderr shows \\x1b"
# Bytes that are not UTF-8 cannot be a JSON string: U+FFFD stands for each.
BAD_UTF8=$'bad\xff.json'
cp bad.json "$BAD_UTF8"
check_error 2 $'bad\xef\xbf\xbd.json:1:6:' canon "$BAD_UTF8" --json
pass "messages are exact JSON strings, never terminal escapes"

# ---- not found, store errors, remote errors
check_error 1 'REF "deadbeefdeadbeef": no object in the store matches' --store "$S" --json show deadbeefdeadbeef
check_error 1 'no object in the store matches' --store "$S" cat 0123456789abcdef --json
check_error 3 'no store here' --store "$W/afile" ls --json
check_error 3 'creating the store' --json init /dev/null/store
check_error 4 "git://127.0.0.1:$CLOSED_PORT/x.git" --json clone "git://127.0.0.1:$CLOSED_PORT/x.git" "$W/c"
[[ ! -e $W/c ]] || fail "a failed clone left $W/c"
assert_exit 0 ks --store "$S" remote add gone "git://127.0.0.1:$CLOSED_PORT/x.git"
check_error 4 'cannot connect to remote gone' --store "$S" pull gone --json
# libgit2 1.5 leaks a remote when a push cannot connect (tests/sanitizers/lsan.supp names it by
# git_remote_connect_ext): under the sanitizers, whole stacks let the suppression see it.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0" \
    check_error 4 'cannot connect to remote gone' --store "$S" --json push gone
pass "not found (1), store (3) and remote (4) errors are one JSON document"

# ---- without --json, nothing on stdout
assert_exit 2 ks canon bad.json
assert_eq "" "$OUT" "no --json: stdout empty"
assert_contains "$ERR" "error: bad.json:1:6:" "no --json: the error on stderr"
pass "without --json errors stay on stderr"

summary
