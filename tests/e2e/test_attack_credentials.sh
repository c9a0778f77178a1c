#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# KISTORE_TOKEN goes only where it is bound (issue "Trust 3": every new way in
# gets a gate). The attack: with a token set for the user's own server, a
# pull or clone of someone else's URL that answers 401 used to receive it
# (Basic, in clear over plain http). Now the token is offered only over https
# to a URL within KISTORE_TOKEN_URL (scheme, host and port equal, the path at
# or below the prefix's), never over plain http, never to another origin,
# never after a redirect to one.
#
# Servers on loopback (tests/e2e/lib/auth_probe_server.py: each answers 401
# with a Basic challenge to every request and logs every Authorization header
# it receives):
#   A        https://127.0.0.1:PA, the token's server (KISTORE_TOKEN_URL=https://127.0.0.1:PA/team)
#   B        https://127.0.0.1:PB, another origin (another port of the same host)
#   PLAIN    http://127.0.0.1:PP, plain http
#   REDIR    https://127.0.0.1:PR, redirects every request to B
# Both https servers present one self-signed certificate that the client
# trusts through KISTORE_SSL_CAINFO. Pull, clone and push against B, PLAIN
# and REDIR exit 4 saying that no credentials were offered to that origin and
# why, leave the store byte for byte as it was (a clone leaves no folder), and
# their logs hold no Authorization header at all; A, asked the same way, gets
# the token.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
work_in cred
LOG=$W/authorization.log
: >"$LOG"

make_tls_cert "$W/tls"
# probe NAME PORT ARGS... : an auth_probe_server, recorded for cleanup; waits until it listens.
probe() {
    local name=$1 port=$2 ready=$W/ready-$1
    shift 2
    _servers_spawn "probe-$name" "$W/probe-$name.log" "$PY" "$here/lib/auth_probe_server.py" "$name" "$port" "$LOG" \
        "$ready" "$@"
    for _ in $(seq 200); do [[ -e $ready ]] && return 0; sleep 0.05; done
    fail "probe server $name did not start: $(cat "$W/probe-$name.log")"
}
PA=$(free_port) && probe A "$PA" --tls "$W/tls/cert.pem" "$W/tls/key.pem"
PB=$(free_port) && probe B "$PB" --tls "$W/tls/cert.pem" "$W/tls/key.pem"
PP=$(free_port) && probe PLAIN "$PP"
PR=$(free_port) && probe REDIR "$PR" --tls "$W/tls/cert.pem" "$W/tls/key.pem" --redirect "https://127.0.0.1:$PB"

TOKEN=T0ken-for-A-only-q7
export KISTORE_TOKEN=$TOKEN KISTORE_TOKEN_URL=https://127.0.0.1:$PA/team KISTORE_SSL_CAINFO=$W/tls/cert.pem
b64() { printf '%s' "$1" | base64 -w0; }

S=$W/store
assert_exit 0 ks init "$S"
assert_exit 0 ks --store "$S" add "$FX"

# withheld WHAT URL NEEDLE... : pull (by URL and as a named remote), clone and push of URL exit 4,
# each saying "no credentials were offered to" and every NEEDLE, the store unchanged, no clone folder.
withheld() {
    local what=$1 url=$2 before n
    shift 2
    assert_exit 0 ks --store "$S" remote add other "$url"
    before=$(store_fingerprint "$S")
    for cmd in "pull $url" "pull other" "--json pull other" "push other" "push $url"; do
        # shellcheck disable=SC2086
        assert_exit 4 ks --store "$S" $cmd
        assert_contains "$OUT$ERR" "no credentials were offered to" "$what, $cmd: says so"
        for n in "$@"; do assert_contains "$OUT$ERR" "$n" "$what, $cmd: says why ($n)"; done
        assert_not_contains "$OUT$ERR" "$TOKEN" "$what, $cmd: the token is not printed"
    done
    assert_store_unchanged "$before" "$S" "$what: pull and push"
    assert_exit 0 ks --store "$S" remote remove other
    rm -rf "$W/cloned"
    assert_exit 4 ks clone "$url" "$W/cloned"
    assert_contains "$ERR" "no credentials were offered to" "$what, clone: says so"
    for n in "$@"; do assert_contains "$ERR" "$n" "$what, clone: says why ($n)"; done
    [[ ! -e $W/cloned ]] || fail "$what: a refused clone left $W/cloned"
}

# no_auth NAME : NAME's log has requests, and none carried an Authorization header.
no_auth() {
    grep -q "^$1 " "$LOG" || fail "$1 was never asked: $(cat "$LOG")"
    if grep "^$1 " "$LOG" | grep -v ' auth=-$' >&2; then fail "an Authorization header reached $1"; fi
}

withheld "another origin (https, another port)" "https://127.0.0.1:$PB/team/s.git" \
    "https://127.0.0.1:$PB" "KISTORE_TOKEN is for https://127.0.0.1:$PA"
no_auth B
pass "pull, push and clone of another https origin that asks for credentials: exit 4, nothing offered, B received no Authorization header"

withheld "plain http" "http://127.0.0.1:$PP/team/s.git" "never sent over plain http (http://127.0.0.1:$PP)"
no_auth PLAIN
pass "pull, push and clone over plain http: exit 4, 'never sent over plain http', no Authorization header received"

withheld "the token's origin outside its path" "https://127.0.0.1:$PA/teamwork/s.git" "/teamwork/s.git is not below it"
no_auth A
pass "pull, push and clone of the token's origin outside its path prefix: exit 4, A received no Authorization header"

# A redirect from an origin the token is bound to, to another one.
export KISTORE_TOKEN_URL=https://127.0.0.1:$PR/
: >"$LOG"
before=$(store_fingerprint "$S")
for cmd in "pull https://127.0.0.1:$PR/team/s.git" "push https://127.0.0.1:$PR/team/s.git"; do
    # shellcheck disable=SC2086
    assert_exit 4 ks --store "$S" $cmd
    assert_contains "$ERR" "redirected from https://127.0.0.1:$PR to https://127.0.0.1:$PB" "redirect, $cmd: named"
done
assert_exit 4 ks clone "https://127.0.0.1:$PR/team/s.git" "$W/cloned"
assert_contains "$ERR" "https://127.0.0.1:$PB" "redirect, clone: named"
[[ ! -e $W/cloned ]] || fail "a refused clone left $W/cloned"
assert_store_unchanged "$before" "$S" "redirect: pull and push"
no_auth REDIR
no_auth B
export KISTORE_TOKEN_URL=https://127.0.0.1:$PA/team
pass "a redirect from the token's origin to another: pull, push and clone exit 4, neither server received an Authorization header"

# Unbound: KISTORE_TOKEN without KISTORE_TOKEN_URL goes nowhere, not even to A.
: >"$LOG"
assert_exit 4 env -u KISTORE_TOKEN_URL "$KISTORE" --no-progress --store "$S" pull "https://127.0.0.1:$PA/team/s.git"
assert_contains "$ERR" "no credentials were offered to https://127.0.0.1:$PA" "unbound: says so"
assert_contains "$ERR" "set KISTORE_TOKEN_URL" "unbound: says what to do"
no_auth A
pass "a token without KISTORE_TOKEN_URL is offered to no server (exit 4, says to set it)"

# The token's own server gets it: the user from the URL, else "kistore".
: >"$LOG"
assert_exit 4 ks --store "$S" pull "https://127.0.0.1:$PA/team/s.git"
grep -qxF "A GET /team/s.git/info/refs?service=git-upload-pack auth=Basic $(b64 "kistore:$TOKEN")" "$LOG" ||
    fail "A did not receive the token: $(cat "$LOG")"
assert_exit 4 ks --store "$S" push "https://alice@127.0.0.1:$PA/team/s.git"
grep -qF "auth=Basic $(b64 "alice:$TOKEN")" "$LOG" || fail "A did not receive alice's token: $(cat "$LOG")"
assert_contains "$ERR" "the server refused the credentials" "A refuses (403): said so"
assert_not_contains "$OUT$ERR" "$TOKEN" "A: the token is not printed"
pass "the token's own server (https, within KISTORE_TOKEN_URL) receives it, as kistore:TOKEN or alice:TOKEN"

# ~/.netrc, as git's https transport reads it: after the token, to the host's
# https origin the remote is configured at, never over plain http, never
# after a redirect, and `default` to no one.
NETRC_PW=Netrc-for-127-only-z9
printf 'machine 127.0.0.1 login ana password %s\ndefault login anyone password %s-default\n' "$NETRC_PW" "$NETRC_PW" \
    >"$HOME/.netrc"
chmod 600 "$HOME/.netrc"
: >"$LOG"
assert_exit 4 env -u KISTORE_TOKEN -u KISTORE_TOKEN_URL "$KISTORE" --no-progress --store "$S" \
    pull "https://127.0.0.1:$PA/team/s.git"
grep -qxF "A GET /team/s.git/info/refs?service=git-upload-pack auth=Basic $(b64 "ana:$NETRC_PW")" "$LOG" ||
    fail "A did not receive ~/.netrc's entry: $(cat "$LOG")"
assert_not_contains "$OUT$ERR" "$NETRC_PW" "netrc: the password is not printed"
: >"$LOG"
assert_exit 4 ks --store "$S" pull "https://127.0.0.1:$PA/team/s.git"
grep -qF "auth=Basic $(b64 "kistore:$TOKEN")" "$LOG" || fail "A did not receive the token first: $(cat "$LOG")"
grep -qF "auth=Basic $(b64 "ana:$NETRC_PW")" "$LOG" || fail "A did not receive ~/.netrc's entry after the token"
pass "~/.netrc: its entry for the host goes to the https remote, after KISTORE_TOKEN, never printed"

: >"$LOG"
assert_exit 4 env -u KISTORE_TOKEN -u KISTORE_TOKEN_URL "$KISTORE" --no-progress --store "$S" \
    pull "http://127.0.0.1:$PP/team/s.git"
assert_contains "$ERR" "~/.netrc's entry for 127.0.0.1 goes over https only" "netrc over plain http: says why"
no_auth PLAIN
assert_exit 4 env -u KISTORE_TOKEN -u KISTORE_TOKEN_URL "$KISTORE" --no-progress --store "$S" \
    pull "https://127.0.0.1:$PR/team/s.git"
no_auth REDIR
no_auth B
assert_exit 4 env -u KISTORE_TOKEN -u KISTORE_TOKEN_URL "$KISTORE" --no-progress --store "$S" \
    pull "https://localhost:$PA/team/s.git"
if grep -F "$(b64 "anyone:$NETRC_PW-default")" "$LOG" >&2; then fail "the default entry was sent"; fi
rm -f "$HOME/.netrc"
pass "~/.netrc: never over plain http, never after a redirect to another origin, and its default entry to no one"

summary
