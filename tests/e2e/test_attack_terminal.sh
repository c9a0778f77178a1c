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
# Hostile remotes: an http remote that redirects to another origin (it and
# the origin it sends to log every Authorization header: none may arrive) is
# refused with exit 4 naming both; a git:// server that answers with ERR
# packets full of escapes, or with garbage, is exit 4 with the text escaped; a
# pack cut short or corrupted on the way is exit 1 (refused remote data); a
# server without report-status is refused in kistore's words; each leaves the
# store as it was. A tour (init, add, push, pull, clone, log, verify) over an
# http server with a planted token and password: no byte kistore prints or
# writes holds either.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in work
use_store "$SERVERS_DIR/store"

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
export KISTORE_AUTHOR='kistore e2e <e2e@example.invalid>'
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
if have_tool script; then
    for cmd in "rank $run" "ls" "log -n 2" "groups" "export" "export --format jsonl"; do
        script -qec "$KISTORE --no-progress $cmd" /dev/null >"$W/tty.out" 2>&1 </dev/null ||
            fail "on a terminal: kistore $cmd failed: $(head -c 500 "$W/tty.out")"
        # script turns \n into \r\n: drop CR before the check.
        tr -d '\r' <"$W/tty.out" >"$W/tty.clean"
        assert_tame "on a terminal: kistore $cmd" "$W/tty.clean"
    done
    pass "on a terminal (script -qc): rank, ls, log, groups, export (CSV and JSON Lines) print nothing raw"
    # Into a file or a pipe export stays exact: the bytes a program reads.
    assert_exit 0 ks export
    [[ $OUT == *$'\e'* ]] || fail "export into a pipe: the data's own bytes (ESC) were changed"
    pass "export into a pipe: the documents' bytes exactly"
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

# ---- hostile remotes ----------------------------------------------------------
# start_hostile NAME SCRIPT ARGS... : a hostile server, recorded for cleanup;
# waits for its READY file (the script's last argument before any upstream).
start_hostile() {
    local name=$1 ready=$SERVERS_DIR/ready-$1
    shift
    _servers_spawn "hostile-$name" "$SERVERS_DIR/hostile-$name.log" "$PY" "$@"
    for _ in $(seq 100); do [[ -e $ready ]] && return 0; sleep 0.05; done
    fail "hostile server $name did not start: $(cat "$SERVERS_DIR/hostile-$name.log")"
}
export KISTORE_TOKEN=Planted-T0ken-zq8
secret=Planted-Passw0rd-x7
auth_log=$SERVERS_DIR/authorization.log
: >"$auth_log"
# assert_no_authorization WHAT: no Authorization header reached either server
# (checked before any message: a leaked secret is the failure that matters).
assert_no_authorization() {
    if grep -v 'auth=-$' "$auth_log" >&2; then
        fail "$1: an Authorization header reached the hostile servers" \
            "(libgit2 $(dpkg-query -W -f='${Version}' libgit2-1.5 2>/dev/null || echo '?'))"
    fi
}
# Another host: libgit2 refuses the redirect itself; nothing reaches it.
p_redirect=$(free_port) && p_elsewhere=$(free_port)
start_hostile redirect "$here/lib/hostile_http_server.py" "$p_redirect" 127.0.0.2 "$p_elsewhere" "$auth_log" \
    "$SERVERS_DIR/ready-redirect"
redirecting="http://alice:$secret@127.0.0.1:$p_redirect/store.git"
run_tame 4 "clone from a remote that redirects to another host" ks clone "$redirecting" "$W/redirected"
assert_no_authorization clone
assert_contains "$ERR" "it redirected to another host (cannot redirect from '127.0.0.1' to '127.0.0.2')" \
    "clone: the redirect is refused naming both hosts"
[[ ! -e $W/redirected ]] || fail "a refused clone left $W/redirected behind"
assert_exit 0 ks remote add redirector "$redirecting"
before=$(store_fingerprint "$S")
run_tame 4 "pull from a remote that redirects" ks pull redirector
assert_contains "$ERR" "to '127.0.0.2'" "pull: the redirect is refused"
run_tame 4 "pull --json from a remote that redirects" ks --json pull redirector
assert_store_unchanged "$before" "$S" "pulls refused at a redirect"
grep -q "127.0.0.1:$p_redirect GET" "$auth_log" || fail "the redirecting server was not asked: $(cat "$auth_log")"
if grep "127.0.0.2:" "$auth_log" >&2; then fail "a request reached the other host"; fi
assert_exit 0 ks remote remove redirector
# The same host on another port: followed by libgit2, and the credential
# callback refuses to offer anything to the origin it landed on.
p_hop=$(free_port) && p_port=$(free_port)
start_hostile hop "$here/lib/hostile_http_server.py" "$p_hop" 127.0.0.1 "$p_port" "$auth_log" \
    "$SERVERS_DIR/ready-hop"
hopping="http://alice:$secret@127.0.0.1:$p_hop/store.git"
run_tame 4 "clone from a remote that redirects to another port" ks clone "$hopping" "$W/hopped"
assert_no_authorization "clone (another port)"
assert_contains "$ERR" "redirected from http://127.0.0.1:$p_hop to http://127.0.0.1:$p_port" \
    "clone: the redirect to another port is refused naming both origins"
[[ ! -e $W/hopped ]] || fail "a refused clone left $W/hopped behind"
assert_exit 0 ks remote add hopper "$hopping"
before=$(store_fingerprint "$S")
run_tame 4 "pull from a remote that redirects to another port" ks pull hopper
assert_contains "$ERR" "to http://127.0.0.1:$p_port" "pull: the redirect to another port is refused"
assert_store_unchanged "$before" "$S" "pulls refused at a redirect to another port"
grep -q "127.0.0.1:$p_port GET" "$auth_log" || fail "the redirect to another port was not followed: $(cat "$auth_log")"
assert_no_authorization "clone and pulls"
for f in "$OUT_FILE" "$ERR_FILE"; do
    if grep -aF -e "$secret" -e "$KISTORE_TOKEN" "$f" >&2; then fail "a secret was printed"; fi
done
assert_exit 0 ks remote remove hopper
pass "http redirects: to another host refused before any request there; to another port, no credentials offered; exit 4; store unchanged"

p_err=$(free_port)
start_hostile err "$here/lib/hostile_git_server.py" err "$p_err" "$SERVERS_DIR/ready-err"
run_tame 4 "clone from a git:// server sending ERR with escapes" ks clone "git://127.0.0.1:$p_err/x.git" "$W/err-clone"
assert_contains "$ERR" 'the server said: remote error: \x1b[2J\x1b[H\x1b]0;pwned\x07 access denied | error: fake second line \u{202e}' \
    "ERR packet: shown escaped, its line break no line of its own"
assert_contains "$ERR" "…" "ERR packet: 65 KB of text cut with an ellipsis"
[[ ! -e $W/err-clone ]] || fail "a refused clone left $W/err-clone behind"
assert_exit 0 ks remote add errs "git://127.0.0.1:$p_err/x.git"
before=$(store_fingerprint "$S")
run_tame 4 "pull from the ERR server" ks pull errs
run_tame 4 "push to the ERR server" ks push errs
assert_store_unchanged "$before" "$S" "pull and push refused by an ERR server"
p_garbage=$(free_port)
start_hostile garbage "$here/lib/hostile_git_server.py" garbage "$p_garbage" "$SERVERS_DIR/ready-garbage"
run_tame 4 "clone from a git:// server sending garbage" ks clone "git://127.0.0.1:$p_garbage/x.git" "$W/garbage-clone"
[[ ! -e $W/garbage-clone ]] || fail "a refused clone left $W/garbage-clone behind"
pass "git:// ERR packets and garbage: exit 4, text escaped and cut, store unchanged"

# A real git daemon behind a proxy that cuts or corrupts its pack.
B=$SERVERS_DIR/base
mkdir -p "$B"
git init -q --bare -b main "$B/good.git"
git init -q --bare -b main "$B/empty.git"
start_git_daemon "$B"
ks init "$W/source" >/dev/null 2>&1
assert_exit 0 ks --store "$W/source" add "$FX"
assert_exit 0 ks --store "$W/source" import liger "$DATA/liger-sample.csv"
assert_exit 0 ks --store "$W/source" remote add daemon "$GIT_DAEMON_URL/good.git"
assert_exit 0 ks --store "$W/source" push daemon
for mode in truncate corrupt; do
    port=$(free_port)
    start_hostile "$mode" "$here/lib/hostile_git_server.py" "$mode" "$port" "$SERVERS_DIR/ready-$mode" "$GIT_DAEMON_PORT"
    run_tame 1 "clone of a $mode pack" ks clone "git://127.0.0.1:$port/good.git" "$W/$mode-clone"
    assert_contains "$ERR" "the remote's pack" "$mode pack: refused as remote data"
    [[ ! -e $W/$mode-clone ]] || fail "a refused clone left $W/$mode-clone behind"
    assert_exit 0 ks remote add "$mode" "git://127.0.0.1:$port/good.git"
    before=$(store_fingerprint "$S")
    run_tame 1 "pull of a $mode pack" ks pull "$mode"
    assert_store_unchanged "$before" "$S" "pull of a $mode pack"
done
port=$(free_port)
start_hostile nrs "$here/lib/hostile_git_server.py" no-report-status "$port" "$SERVERS_DIR/ready-nrs" "$GIT_DAEMON_PORT"
assert_exit 0 ks --store "$W/source" remote add nrs "git://127.0.0.1:$port/empty.git"
run_tame 4 "push to a server without report-status" ks --store "$W/source" push nrs
assert_contains "$ERR" "does not offer report-status" "no report-status: kistore's own words"
assert_not_contains "$ERR" "t->rpc" "no report-status: no libgit2 assertion text"
assert_eq "" "$(git --git-dir="$B/empty.git" for-each-ref)" "no report-status: nothing was pushed"
pass "a truncated or corrupt pack is exit 1 (store unchanged); no report-status is refused, exit 4"

# ---- credentials: a tour with a planted token and password ---------------------
# Over https (the token never goes over plain http), trusting the server's own certificate, and
# bound to its origin (KISTORE_TOKEN_URL).
start_http_git "$B" --tls --auth alice "$KISTORE_TOKEN"
hostport=${HTTP_GIT_URL#https://}
export KISTORE_SSL_CAINFO=$HTTP_GIT_CA KISTORE_TOKEN_URL=https://$hostport/
git init -q --bare -b main "$B/tour.git"
T=$SERVERS_DIR/tour
mkdir -p "$T"
tour() {
    local want=$1
    shift
    assert_exit "$want" "$@"
    cat "$OUT_FILE" "$ERR_FILE" >>"$T/printed"
}
with_password="https://alice:$secret@$hostport/tour.git"
with_token_password="https://alice:$KISTORE_TOKEN@$hostport/tour.git"
tour 0 ks --store "$T/a" init
tour 0 ks --store "$T/a" add "$FX"
tour 0 ks --store "$T/a" remote add origin "https://alice@$hostport/tour.git"
tour 0 ks --store "$T/a" push
tour 0 ks --store "$T/a" --json push
tour 0 ks --store "$T/a" pull
tour 0 ks --store "$T/a" --json pull
tour 0 ks clone "https://alice@$hostport/tour.git" "$T/b"
tour 0 ks --json clone "https://alice@$hostport/tour.git" "$T/c"
tour 0 ks --store "$T/b" log
tour 0 ks --store "$T/b" --json log
tour 0 ks --store "$T/b" verify
tour 0 ks --store "$T/a" remote list
tour 0 ks --store "$T/a" --json remote list
# A URL works where a remote's name does (as with git): its password is used
# for that one command; a wrong one is an authentication failure (exit 4).
tour 4 env -u KISTORE_TOKEN "$KISTORE" --no-progress --store "$T/a" push "$with_password"
tour 4 env -u KISTORE_TOKEN "$KISTORE" --no-progress --store "$T/a" --json pull "$with_password"
tour 0 env -u KISTORE_TOKEN "$KISTORE" --no-progress --store "$T/a" push "$with_token_password"
tour 0 env -u KISTORE_TOKEN "$KISTORE" --no-progress --store "$T/a" --json pull "$with_token_password"
for url in "$with_password" "$with_token_password"; do
    tour 2 ks --store "$T/a" remote remove "$url"
    tour 2 ks --store "$T/a" --json remote remove "$url"
done
# A password given to remote add or clone is used or noted, never written:
# the config keeps the URL without it, and KISTORE_TOKEN supplies it.
tour 0 ks --store "$T/a" remote add withpw "$with_token_password"
assert_contains "$ERR" "the password in the URL was not saved" "remote add: says the password was not saved"
assert_eq "https://alice@$hostport/tour.git" "$(git --git-dir="$T/a" config remote.withpw.url)" \
    "remote add: the config holds the URL without its password"
tour 0 ks --store "$T/a" --json remote add withpw2 "$with_password"
tour 0 ks --store "$T/a" push withpw
tour 0 ks --store "$T/a" --json pull withpw
tour 4 env KISTORE_TOKEN="$secret" "$KISTORE" --no-progress --store "$T/a" --json pull withpw2
assert_eq 4 "$(jv '.error.code')" "a wrong password: a --json error"
tour 2 ks --store "$T/a" remote add withpw "$with_password"
tour 2 ks --store "$T/a" --json remote add 'bad name' "$with_password"
# clone: the URL's password authenticates this clone alone.
tour 0 env -u KISTORE_TOKEN "$KISTORE" --no-progress clone "$with_token_password" "$T/d"
assert_contains "$ERR" "used for this clone, not saved" "clone: says the password was not saved"
assert_eq "https://alice@$hostport/tour.git" "$(git --git-dir="$T/d" config remote.origin.url)" \
    "clone: the new store's config holds the URL without its password"
tour 0 env -u KISTORE_TOKEN "$KISTORE" --no-progress --json clone "$with_token_password" "$T/e"
tour 4 env -u KISTORE_TOKEN "$KISTORE" --no-progress --json clone "$with_password" "$T/f"
[[ ! -e $T/f ]] || fail "a clone refused at authentication left $T/f"
tour 0 ks --store "$T/d" pull
tour 0 ks --store "$T/d" --json push
assert_contains "$(cat "$T/printed")" "no remote named \"https://alice@$hostport/tour.git\"" \
    "a URL where a remote name belongs is shown without its password"
env -u KISTORE_TOKEN "$KISTORE" --no-progress --store "$T/a" pull >>"$T/printed" 2>&1 && fail "pull without a token"
tour 4 env KISTORE_TOKEN="$secret" "$KISTORE" --store "$T/a" pull
b64() { printf '%s' "$1" | base64 -w0; }
for s in "$secret" "$KISTORE_TOKEN" "$(b64 "alice:$secret")" "$(b64 "alice:$KISTORE_TOKEN")" \
    "$(b64 "kistore:$KISTORE_TOKEN")"; do
    if grep -raF -- "$s" "$T/printed" "$T/a" "$T/b" "$T/c" "$T/d" "$T/e" "$HOME" "$TMPDIR" >&2; then
        fail "a credential appears in kistore's output or in what it wrote ($s)"
    fi
done
pass "a tour with a planted token and password: neither appears in any output or file kistore wrote"

summary
