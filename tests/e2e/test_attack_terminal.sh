#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# What reaches a terminal, attacked: documents whose every shown string field is
# hostile (escape sequences that clear the screen and set the window title, a
# newline followed by a fake table line, C1 controls, DEL, bidi overrides, a
# megabyte) are added and then shown by rank, ls, log, show, groups and
# verify. Each command exits as usual; no raw ESC, C1 control, bidi override
# or field-splitting newline reaches stdout or stderr; no line is longer than
# the documented bounds (200 characters a field); --json keeps the exact text.
# Errors that quote a file name or a remote name are escaped the same way.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/servers.sh
. "$here/lib/servers.sh"
servers_init
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
# shellcheck source=lib/fingerprint.sh
. "$here/lib/fingerprint.sh"

S=$SERVERS_DIR/store
W=$SERVERS_DIR/work
mkdir -p "$W"
export KISTORE_DIR=$S

# assert_tame WHAT FILE... : no byte a terminal acts on in the files (a
# command's captured stdout and stderr): no ESC, BEL, CR, other C0 controls
# but newline and tab... (tab is escaped too), no DEL, no C1 control (raw or
# as UTF-8), no bidi override or isolate; and no line longer than LIMIT bytes
# (default 4096: a field is cut at 200 characters, a message at 2000).
assert_tame() {
    local what=$1
    shift
    "$PY" - "${LIMIT:-4096}" "$@" <<'PY' || fail "$what: raw control bytes or an unbounded line reached the terminal"
import re, sys
limit = int(sys.argv[1])
bad = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")
ok = True
for path in sys.argv[2:]:
    data = open(path, "rb").read()
    for m in bad.finditer(data):
        print(f"  {path}: byte {m.start()}: {m.group()!r} in {data[max(0, m.start() - 40):m.end() + 40]!r}",
              file=sys.stderr)
        ok = False
        break
    for n, line in enumerate(data.split(b"\n"), 1):
        if len(line) > limit:
            print(f"  {path}: line {n} is {len(line)} bytes long", file=sys.stderr)
            ok = False
            break
sys.exit(0 if ok else 1)
PY
}
# run_tame CODE WHAT cmd... : assert_exit CODE, then assert_tame on both streams
run_tame() {
    local code=$1 what=$2
    shift 2
    assert_exit "$code" "$@"
    assert_tame "$what" "$OUT_FILE" "$ERR_FILE"
}

assert_exit 0 ks init
"$PY" "$here/lib/hostile_documents.py" "$FX" "$W/hostile.json" "$W/attack"
# shellcheck disable=SC2016
export KISTORE_AUTHOR=$'Mallory \e[2J\e]0;owned\a\xe2\x80\xae <m@example.invalid>'
run_tame 0 "add of the hostile bundle" ks add "$W/hostile.json"
unset KISTORE_AUTHOR
assert_exit 0 ks --json ls --kind BenchmarkRun
run=$(jv '.documents[0].digest')
[[ $run == sha256:* ]] || fail "the hostile run was stored: $OUT"
pass "a bundle with hostile strings in every shown field is added"

# ---- --json keeps the exact text ------------------------------------------------
# exact JQ-PATH WHAT : the string at JQ-PATH of $OUT_FILE is the attack, byte for byte
exact() { jq -j "$1" "$OUT_FILE" | cmp -s - "$W/attack" || fail "$2: not the exact text"; }
assert_exit 0 ks --json ls --kind Implementation
exact '.documents[0].title' "ls --json"
assert_exit 0 ks --json rank "$run"
exact '.members[0].implementation' "rank --json"
assert_exit 0 ks --json ls --kind BenchmarkRun
jq -j '.documents[0].title' "$OUT_FILE" >"$W/title"
assert_eq $((1048576 + $(wc -c <"$W/attack"))) "$(wc -c <"$W/title")" "ls --json: the megabyte title is whole"
pass "--json keeps hostile text exact, the megabyte title whole"

# ---- every printer escapes and bounds it ----------------------------------------
run_tame 0 "rank" ks rank "$run"
assert_contains "$OUT" '\x1b[2J\x1b[H\x1b]0;pwned\x07 evil\nlevel reproduced \u{202e}exe.txt' \
    "rank: the implementation name is shown escaped"
assert_eq 0 "$(grep -c '^level reproduced' <<<"$OUT" || true)" "rank: no fake line from a newline in a name"
assert_eq 4 "$(wc -l <<<"$OUT" | tr -d ' ')" "rank: group, label, columns and one row"
assert_contains "$OUT" "MMMM…" "rank: the megabyte benchmark label is cut with an ellipsis"
run_tame 0 "ls" ks ls
assert_eq 5 "$(wc -l <<<"$OUT" | tr -d ' ')" "ls: one line per document, none split by a newline"
title_line=$(grep BenchmarkRun <<<"$OUT")
assert_contains "$title_line" '\u{009b}31m\u{0085}\x7f\r\ttab' "ls: C1, DEL, CR and tab escaped"
((${#title_line} < 600)) || fail "ls: the megabyte title is cut (${#title_line} bytes)"
assert_contains "$title_line" "…" "ls: the cut title ends with an ellipsis"
run_tame 0 "log" ks log
assert_contains "$OUT" 'Author: Mallory \x1b[2J\x1b]0;owned\x07\u{202e} <m@example.invalid>' "log: the author is escaped"
run_tame 0 "log --run" ks log --run "$run"
run_tame 0 "show" ks show "$run"
assert_contains "$OUT" '\u{202e}exe.txt' "show: the bidi override is escaped"
run_tame 0 "show of the implementation" ks show "$(ks --json ls --kind Implementation | jq -r '.documents[0].digest')"
run_tame 0 "groups" ks groups
assert_eq 1 "$(wc -l <<<"$OUT" | tr -d ' ')" "groups: one line for the one group"
run_tame 0 "verify" ks verify
run_tame 0 "attest with a hostile note" ks attest "$run" --note "$(cat "$W/attack")" \
    --author $'Eve \e[31m <e@example.invalid>'
run_tame 0 "show with the attestation" ks show "$run"
run_tame 0 "log after the attestation" ks log -n 1
assert_contains "$OUT" 'Author: Eve \x1b[31m <e@example.invalid>' "log: the attester is escaped"
pass "rank, ls, log, show, groups, verify: hostile text escaped, fields cut, one line per row"

# Under a real terminal too (script gives one): progress or not, nothing raw.
if command -v script >/dev/null; then
    for cmd in "rank $run" "ls" "log -n 2" "groups"; do
        script -qec "$KISTORE --no-progress $cmd" /dev/null >"$W/tty.out" 2>&1 </dev/null ||
            fail "on a terminal: kistore $cmd failed: $(head -c 500 "$W/tty.out")"
        # script turns \n into \r\n: drop CR before the check.
        tr -d '\r' <"$W/tty.out" >"$W/tty.clean"
        assert_tame "on a terminal: kistore $cmd" "$W/tty.clean"
    done
    pass "on a terminal (script -qc): rank, ls, log, groups print nothing raw"
fi

# ---- errors that quote a file name or a name from the command line ---------------
run_tame '!0' "push to a hostile remote name" ks push $'origin\e[2J\n'
assert_contains "$ERR" 'origin\x1b[2J\n' "push: the remote name is shown escaped"
before=$(store_fingerprint "$S")
evil_path=$W/$'evil\e]0;title\a\e[2J\xe2\x80\xae.json'
run_tame '!0' "add of a missing hostile file name" ks add "$evil_path"
assert_contains "$ERR" 'evil\x1b]0;title\x07\x1b[2J\u{202e}.json' "add: the file name is shown escaped"
printf '{"apiVersion":"kernelindex.dev/v1alpha1","kind":"Evil\\u001b[2J\\u202e","spec":{}}' >"$evil_path"
run_tame 2 "add of a document of a hostile kind in a hostile file name" ks add "$evil_path"
assert_contains "$ERR" 'evil\x1b]0;title' "add: the rejected file is named escaped"
run_tame '!0' "unknown command with escapes" ks $'rank\e[2J'
assert_store_unchanged "$before" "$S" "refused inputs"
pass "errors quote file names, kinds and remote names escaped; the store is unchanged"

summary
